"""The HTML report in headless Chromium: counts, filters, an injected argument that stays text.

The browser is Debian's ``chromium`` package (``make browser-deps``), driven by Playwright with
``executable_path`` — Playwright never downloads a browser here. Off CI the test skips when
/usr/bin/chromium is missing; in CI (``CI`` set) it must run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.report.html import write_html
from harness.run.results import SuiteResult
from tests.harness.compare.conftest import TravelPair
from tests.harness.compare.conftest import travel_pair as travel_pair  # the fixture
from tests.harness.report.test_html_report import INJECTION, run_report_suite

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

if not os.environ.get("CI"):
    if not CHROMIUM.exists():
        pytest.skip(
            f"{CHROMIUM} not found: run `make browser-deps` (apt-get install chromium)",
            allow_module_level=True,
        )
    pytest.importorskip("playwright.sync_api", reason="playwright missing: pip install -e '.[dev]'")

from playwright.sync_api import (  # noqa: E402 - after the skip: playwright may be absent
    BrowserContext,
    ConsoleMessage,
    Dialog,
    Page,
    Playwright,
    sync_playwright,
)


@dataclass
class Watch:
    """Everything the page did that it should not have: dialogs, errors, network requests."""

    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def attach(self, page: Page) -> None:
        def on_dialog(dialog: Dialog) -> None:
            self.dialogs.append(dialog.message)
            dialog.dismiss()

        def on_console(message: ConsoleMessage) -> None:
            if message.type in ("error", "warning"):
                self.errors.append(f"console {message.type}: {message.text}")

        page.on("dialog", on_dialog)
        page.on("console", on_console)
        page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        page.on("request", lambda request: self.requests.append(request.url))


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> SuiteResult:
    return run_report_suite(tmp_path_factory.mktemp("browser-suite"))


@pytest.fixture(scope="module")
def report(result: SuiteResult, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("browser-report") / "report.html"
    write_html(result, path)
    return path


@pytest.fixture(scope="module")
def compared(travel_pair: TravelPair, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The changed demo travel suite run with main's report as its baseline (a real run)."""
    path = tmp_path_factory.mktemp("browser-compared") / "report.html"
    args = ["run", str(travel_pair.head_suite), "-q", "--html", str(path)]
    assert main([*args, "--baseline", str(travel_pair.base)]) == 1
    return path


@pytest.fixture(scope="module")
def playwright(report: Path, compared: Path) -> Iterator[Playwright]:
    # The report is built first: Playwright's sync API keeps an event loop running while it is
    # open, and the runner needs to start its own.
    with sync_playwright() as driver:
        yield driver


def launch(playwright: Playwright, profile: Path, **options: Any) -> BrowserContext:
    """Debian's Chromium with a fresh user-data dir (never a downloaded browser)."""
    return playwright.chromium.launch_persistent_context(
        str(profile),
        executable_path=str(CHROMIUM),
        args=ARGS,
        headless=True,
        viewport={"width": 1280, "height": 900},
        **options,
    )


@pytest.fixture(scope="module")
def context(
    playwright: Playwright, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BrowserContext]:
    browser_context = launch(playwright, tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield browser_context
    finally:
        browser_context.close()


def open_report(context: BrowserContext, report: Path) -> tuple[Page, Watch]:
    page = context.new_page()
    watch = Watch()
    watch.attach(page)
    page.goto(report.as_uri(), wait_until="load")
    return page, watch


def visible_statuses(page: Page) -> list[str]:
    statuses: list[Any] = page.eval_on_selector_all(
        "details.scenario",
        "cards => cards.filter(c => c.offsetParent !== null).map(c => c.dataset.status)",
    )
    return [str(status) for status in statuses]


def test_report_in_chromium(
    context: BrowserContext, report: Path, result: SuiteResult, tmp_path: Path
) -> None:
    page, watch = open_report(context, report)
    total = len(result.scenarios)

    # counts: the tiles and the filter buttons say what the result says
    for status, count in result.counts.items():
        assert page.locator(f'[data-count="{status}"] .n').inner_text() == str(count)
    assert page.locator("h1.summary").inner_text() == result.summary_line()
    assert page.locator("#filters").is_visible()  # the script ran and showed the filter bar
    assert page.locator("#shown").inner_text() == f"{total} of {total} shown"
    assert len(visible_statuses(page)) == total

    # the text filter hides what does not match, and says how many are left
    page.locator("#filter-text").fill("inject")
    assert page.locator("#shown").inner_text() == f"1 of {total} shown"
    assert page.locator("details.scenario:visible .name").inner_text() == (
        "html::injected argument"
    )
    assert page.locator('section[data-group="passed"]').is_hidden()  # empty group hidden
    page.locator("#filter-text").fill("no such scenario anywhere")
    assert page.locator("#no-match").is_visible()
    page.locator("#filter-text").fill("")
    assert len(visible_statuses(page)) == total

    # a status button filters to that status; pressing it again shows everything
    button = page.locator('button[data-filter="failed"]')
    button.click()
    assert button.get_attribute("aria-pressed") == "true"
    assert visible_statuses(page) == ["failed"] * result.counts["failed"]
    page.locator('button[data-filter="error"]').click()
    assert visible_statuses(page) == ["error"] * result.counts["error"]
    page.locator('button[data-filter="error"]').click()
    assert len(visible_statuses(page)) == total

    # the injected argument is shown as the text it was, and nothing ran
    injected = page.locator("details.scenario", has_text="injected argument")
    assert injected.get_attribute("open") is not None  # a failure: shown opened
    argument = injected.locator("table.match code.call").nth(1)
    assert INJECTION in argument.inner_text()
    assert page.locator("script").count() == 1  # only the report's own script
    assert page.locator("img").count() == 0  # the <img onerror> in a scenario name is text
    assert page.get_by_text("<img src=x onerror=alert(2)> in a name").count() == 1
    assert page.evaluate("typeof window.__xss") == "undefined"

    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    assert (tmp_path / "report.png").stat().st_size > 10_000

    assert watch.dialogs == []
    assert watch.errors == []
    assert watch.requests == [report.as_uri()]  # nothing fetched besides the file itself
    page.close()


def test_without_javascript_everything_is_visible(
    playwright: Playwright,
    report: Path,
    result: SuiteResult,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    no_js = launch(playwright, tmp_path_factory.mktemp("chromium-nojs"), java_script_enabled=False)
    try:
        page = no_js.new_page()
        page.goto(report.as_uri(), wait_until="load")
        assert page.locator("#filters").is_hidden()  # a filter bar that cannot work is not shown
        cards = page.locator("details.scenario")
        assert cards.count() == len(result.scenarios)
        assert all(cards.nth(i).is_visible() for i in range(cards.count()))
    finally:
        no_js.close()


def visible_names(page: Page) -> list[str]:
    names: list[Any] = page.eval_on_selector_all(
        "details.scenario",
        "cards => cards.filter(c => c.offsetParent !== null)"
        ".map(c => c.querySelector('.name').textContent)",
    )
    return sorted(str(name) for name in names)


def test_baseline_badges_and_their_filter(context: BrowserContext, compared: Path) -> None:
    """``--baseline``: regressed / fixed / new badges on the cards, a chip per class that
    filters by it (with the status chips narrowing further), the headline under the summary."""
    page, watch = open_report(context, compared)
    assert "2 regressions, 1 fix" in page.locator("p.compared").inner_text()
    badges = {
        kind: page.locator(f"details.scenario .change.ch-{kind}").count()
        for kind in ("regressed", "fixed", "added")
    }
    assert badges == {"regressed": 2, "fixed": 1, "added": 1}
    assert page.locator('details[data-change="added"] .change').inner_text().lower() == "new"
    total = page.locator("details.scenario").count()

    regressed = page.locator('button[data-change="regressed"]')
    regressed.click()
    assert regressed.get_attribute("aria-pressed") == "true"
    assert visible_names(page) == [
        "travel::book the best rated hotel in Lisbon",
        "travel::weather in Berlin tomorrow",
    ]
    assert page.locator("#shown").inner_text() == f"2 of {total} shown"
    page.locator('button[data-filter="passed"]').click()  # no regression passed
    assert visible_names(page) == []
    page.locator('button[data-filter="passed"]').click()
    page.locator('button[data-change="fixed"]').click()  # one class at a time
    assert regressed.get_attribute("aria-pressed") == "false"
    assert visible_names(page) == ["travel::currency named in words"]
    page.locator('button[data-change="fixed"]').click()  # pressed again: everything
    assert len(visible_names(page)) == total

    assert watch.errors == [] and watch.dialogs == []
    assert watch.requests == [compared.as_uri()]
    page.close()
