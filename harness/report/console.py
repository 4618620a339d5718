"""The console report: a summary table, then each failure's reasons and match table (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from harness.report import failure_text, scores_text
from harness.result import ScenarioResult, Status, SuiteResult

STATUS_STYLE: dict[Status, str] = {
    "passed": "green",
    "failed": "bold red",
    "error": "bold red",
    "xfailed": "yellow",
    "xpassed": "yellow",
}


def summary_table(result: SuiteResult) -> Table:
    """One row per scenario: suite, scenario, status, runs passed, scores, time."""
    table = Table(title=None, show_lines=False, expand=False)
    table.add_column("suite", style="cyan", no_wrap=True)
    table.add_column("scenario")
    table.add_column("status", no_wrap=True)
    table.add_column("runs", justify="right", no_wrap=True)
    table.add_column("scores")
    table.add_column("time", justify="right", no_wrap=True)
    for scenario in result.scenarios:
        table.add_row(
            escape(scenario.suite),
            escape(scenario.name),
            Text(scenario.status.upper(), style=STATUS_STYLE[scenario.status]),
            f"{scenario.passes}/{scenario.repeat}",
            escape(scores_text(scenario)),
            f"{scenario.duration:.2f}s",
        )
    return table


def render_failure(console: Console, scenario: ScenarioResult) -> None:
    """The section for one failed or errored scenario, pytest style."""
    style = STATUS_STYLE[scenario.status]
    console.rule(Text(f"{scenario.id}", style=style), characters="_")
    console.print(Text(failure_text(scenario)), highlight=False, soft_wrap=True)


def render_console(result: SuiteResult, console: Console | None = None) -> None:
    """Print the whole report: table, failures in detail, xfail/xpass notes, summary line."""
    out = console or Console()
    if result.scenarios:
        out.print(summary_table(result))
    failures = [s for s in result.scenarios if s.status in ("failed", "error")]
    if failures:
        out.rule(Text("FAILURES", style="bold red"), characters="=")
        for scenario in failures:
            render_failure(out, scenario)
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
        first = scenario.reasons[0] if scenario.reasons else ""
        out.print(
            Text(
                f"{scenario.status.upper()} {scenario.id} - {first}",
                style=STATUS_STYLE[scenario.status],
            ),
            highlight=False,
            soft_wrap=True,
        )
    style = "green" if result.ok and not result.interrupted else "red"
    out.rule(Text(result.summary_line(), style=f"bold {style}"), characters="=")
