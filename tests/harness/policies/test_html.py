"""``eval-traces --rules --html``: a section per policy, rules by rate, each example opening to
its trace's call table; beside ``--scenarios`` the scenario page keeps its own content."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from harness.cli import main
from tests.harness.policies.conftest import Recorded
from tests.harness.policies.test_eval_traces_rules import (
    _policy,
    _refund_without_lookup,
    _shop_policy,
    _violating,
)
from tests.support.paths import ROOT


class _Page(HTMLParser):
    """The rule names of each rules table in order, and each example's call rows."""

    def __init__(self) -> None:
        super().__init__()
        self.rules: list[str] = []
        self.examples: list[list[list[str]]] = []
        self.blamed: list[list[str]] = []
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._in_rules = self._in_calls = False
        self._name = False
        self._marked = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "table" and found.get("class") == "rules":
            self._in_rules = True
        elif tag == "table" and found.get("class") == "calls":
            self._in_calls = True
            self.examples.append([])
            self.blamed.append([])
        elif tag == "tr" and self._in_calls:
            self._row, self._marked = [], found.get("class") == "s-failed"
        elif tag == "td" and self._in_calls:
            self._cell = []
        elif tag == "td" and self._in_rules and found.get("class") == "name":
            self._name = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._in_rules = self._in_calls = False
        elif tag == "td" and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell))
            self._cell = None
        elif tag == "tr" and self._row:
            self.examples[-1].append(self._row)
            if self._marked:
                self.blamed[-1].append(self._row[1])
            self._row = None
        elif tag == "td":
            self._name = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._name:
            self.rules.append(data)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def test_sections_rules_by_rate_examples_with_their_calls(shop: Recorded, tmp_path: Path) -> None:
    html = tmp_path / "r.html"
    argv = ["eval-traces", str(shop.path), "--rules", str(_shop_policy(tmp_path))]
    assert main([*argv, "--html", str(html), "--examples", "50", "-q"]) == 1
    page = _parse(html)
    cancels, refunds = _violating(shop, "cancel_order"), _refund_without_lookup(shop)
    rates = {"no cancelling": len(cancels), "refunds follow a lookup": len(refunds), "budget": 0}
    assert page.rules == sorted(rates, key=lambda rule: -rates[rule])
    assert len(page.examples) == len(cancels) + len(refunds)
    text = html.read_text(encoding="utf-8")
    for trace in cancels | refunds:
        assert f"<code>{trace}</code>" in text
    # each example's table is its trace's calls, in order, the blamed ones marked
    calls = sorted(tuple(row[1] for row in example) for example in page.examples)
    expected = sorted(
        [tuple(shop.tools[t]) for t in cancels] + [tuple(shop.tools[t]) for t in refunds]
    )
    assert calls == expected
    assert sorted(tuple(b) for b in page.blamed if b == ["cancel_order"]) == [
        ("cancel_order",)
    ] * len(cancels)
    assert "<script" not in text and "Content-Security-Policy" in text


def test_beside_scenarios_the_scenario_page_is_kept(shop: Recorded, tmp_path: Path) -> None:
    html, alone = tmp_path / "r.html", tmp_path / "alone.html"
    argv = ["eval-traces", str(shop.path), "--scenarios", str(ROOT / "scenarios" / "orders.yaml")]
    main([*argv, "--html", str(alone), "-q"])
    policy = _shop_policy(tmp_path, "severity: warn", "severity: warn")
    main([*argv, "--rules", str(policy), "--html", str(html), "-q"])
    text, before = html.read_text(encoding="utf-8"), alone.read_text(encoding="utf-8")
    cut = text.index('<div class="policies">')
    end = text.index("</main>")
    strip = re.compile(r"(started|took|in) [0-9][^<·]*")  # times differ between the runs
    assert strip.sub("", text[:cut] + text[end:]) == strip.sub("", before)
    assert "policy shop-support" in text[cut:end]


def test_secrets_are_masked_in_the_call_tables(tmp_path: Path) -> None:
    from tests.harness.span_export.test_run_export import SECRET, write_secret_suite

    suite, trace = write_secret_suite(tmp_path), tmp_path / "t.jsonl"
    argv = ["run", str(suite), "-q", "--workers", "1", "--no-default-redact"]
    assert main([*argv, "--trace-file", str(trace)]) == 1
    assert SECRET in trace.read_text(encoding="utf-8")
    policy = _policy(tmp_path, "policies: p\nrules: [{name: no api, forbid: call_api}]\n")
    html = tmp_path / "r.html"
    assert main(["eval-traces", str(trace), "--rules", str(policy), "--html", str(html)]) == 1
    text = html.read_text(encoding="utf-8")
    assert "call_api" in text and "api_key" in text
    assert SECRET not in text
