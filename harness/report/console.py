"""The console report: a summary table, then each failure's reasons and match table (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from harness.redaction import Redactor
from harness.report import failure_text, scores_text
from harness.result import ScenarioResult, Scrubber, Status, SuiteResult

STATUS_STYLE: dict[Status, str] = {
    "passed": "green",
    "failed": "bold red",
    "error": "bold red",
    "xfailed": "yellow",
    "xpassed": "yellow",
}


def summary_table(result: SuiteResult, max_rows: int | None = None) -> Table:
    """One row per scenario: suite, scenario, status, runs passed, scores, time.

    With more than ``max_rows`` scenarios only those that did not pass get a row (a trace file
    of 100,000 traces should not print 100,000 lines); the caption says how many were left out,
    counting those a sampled result did not keep (``result.omitted``).
    """
    table = Table(title=None, show_lines=False, expand=False)
    table.add_column("suite", style="cyan", no_wrap=True)
    table.add_column("scenario")
    table.add_column("status", no_wrap=True)
    table.add_column("runs", justify="right", no_wrap=True)
    table.add_column("scores")
    table.add_column("time", justify="right", no_wrap=True)
    shown = result.scenarios
    if max_rows is not None and result.total > max_rows:
        shown = tuple(s for s in shown if s.status != "passed")[:max_rows]
    if len(shown) < result.total:
        table.caption = f"{result.total - len(shown)} more not shown (passed or over the limit)"
    for scenario in shown:
        table.add_row(
            escape(scenario.suite),
            escape(scenario.display_name),
            Text(scenario.status.upper(), style=STATUS_STYLE[scenario.status]),
            f"{scenario.passes}/{scenario.repeat}",
            escape(scores_text(scenario)),
            f"{scenario.duration:.2f}s",
        )
    return table


def render_failure(
    console: Console, scenario: ScenarioResult, scrubber: Scrubber | None = None
) -> None:
    """The section for one failed or errored scenario, pytest style, secrets masked."""
    style = STATUS_STYLE[scenario.status]
    console.rule(Text(f"{scenario.id}", style=style), characters="_")
    text = failure_text(scenario, scrubber=scrubber)
    console.print(Text(text), highlight=False, soft_wrap=True)


def render_console(
    result: SuiteResult,
    console: Console | None = None,
    *,
    redactor: Redactor | None = None,
    max_rows: int | None = None,
) -> None:
    """Print the whole report: table, failures in detail, xfail/xpass notes, summary line.

    A sampled result (``harness eval-traces``) shows the failures it kept and says how many
    more there were.
    """
    out = console or Console()
    scrub = Scrubber.for_suite(redactor, result)
    if result.scenarios:
        out.print(summary_table(result, max_rows))
    failures = [s for s in result.scenarios if s.status in ("failed", "error")]
    if failures:
        out.rule(Text("FAILURES", style="bold red"), characters="=")
        for scenario in failures:
            render_failure(out, scenario, scrub)
    unseen = result.omitted.get("failed", 0) + result.omitted.get("error", 0)
    if unseen:
        out.print(
            Text(
                f"{unseen} more failed or errored not shown here (the counts below include "
                "them; the JSON and JUnit reports list every result)",
                style="bold red",
            ),
            soft_wrap=True,
        )
    notes = [s for s in result.scenarios if s.status in ("xfailed", "xpassed")]
    if notes:
        out.rule("short test summary info", characters="=")
        for scenario in notes:
            out.print(
                Text(
                    f"{scenario.status.upper()} {scenario.id} - {scenario.xfail}",
                    style=STATUS_STYLE[scenario.status],
                ),
                highlight=False,
                soft_wrap=True,
            )
    for scenario in failures:
        first = scrub.text(scenario.reasons[0]) if scenario.reasons else ""
        out.print(
            Text(
                f"{scenario.status.upper()} {scenario.id} - {first}",
                style=STATUS_STYLE[scenario.status],
            ),
            highlight=False,
            soft_wrap=True,
        )
    for warning in result.warnings:
        out.print(Text(f"warning: {scrub.text(warning)}", style="yellow"), soft_wrap=True)
    style = "green" if result.ok and not result.interrupted else "red"
    out.rule(Text(result.summary_line(), style=f"bold {style}"), characters="=")
