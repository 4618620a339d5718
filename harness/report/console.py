"""The console report: a summary table, then each failure's reasons and match table (rich)."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from harness.redaction import Redactor
from harness.report.base import ReportFeed
from harness.report.text import failure_text, scores_line
from harness.report.view import ScenarioView, SuiteView
from harness.result import ResultSample, Status, SuiteResult

__all__ = [
    "STATUS_STYLE",
    "ConsoleReporter",
    "render_console",
    "render_failure",
    "scores_cell",
    "summary_table",
]

STATUS_STYLE: dict[Status, str] = {
    "passed": "green",
    "failed": "bold red",
    "error": "bold red",
    "xfailed": "yellow",
    "xpassed": "yellow",
}


class ConsoleReporter:
    """Prints the report when closed, from the views it kept (a :class:`ResultSample`).

    ``keep``: at most this many results are kept, those that did not pass first (``harness
    eval-traces``: the summary counts the rest); None keeps all. ``max_rows``: with more
    results than that, the table lists only those that did not pass. ``quiet`` (``-q``):
    only the summary line.
    """

    def __init__(
        self,
        console: Console,
        *,
        max_rows: int | None = None,
        keep: int | None = None,
        quiet: bool = False,
    ) -> None:
        """Print to ``console``."""
        self.console = console
        self.max_rows = max_rows
        self.quiet = quiet
        self._kept: ResultSample[ScenarioView] = ResultSample(0 if quiet else keep)

    def add(self, result: ScenarioView) -> None:
        """Keep ``result`` if the sample has room for it."""
        self._kept.add(result)

    def close(self, summary: SuiteView) -> None:
        """Print the whole report (``quiet``: its last line)."""
        if self.quiet:
            _summary_line(self.console, summary)
        else:
            _render(self.console, summary, self._kept.scenarios, self.max_rows)
        self._kept = ResultSample(self._kept.limit)

    def abort(self) -> None:
        """Print nothing."""
        self._kept = ResultSample(self._kept.limit)


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
    reporter = ConsoleReporter(console or Console(), max_rows=max_rows)
    ReportFeed.for_suite([reporter], result, redactor).run(result)


def summary_table(
    summary: SuiteView, scenarios: tuple[ScenarioView, ...], max_rows: int | None = None
) -> Table:
    """One row per scenario: suite, scenario, status, runs passed, scores, time.

    With more than ``max_rows`` scenarios only those that did not pass get a row (a trace file
    of 100,000 traces should not print 100,000 lines); the caption says how many were left out,
    counting those a sampled result did not keep (``summary.omitted``).
    """
    shown = scenarios
    if max_rows is not None and summary.total > max_rows:
        shown = tuple(s for s in shown if s.status != "passed")
    cells = [scores_cell(scenario) for scenario in shown]
    table = Table(title=None, show_lines=False, expand=False)
    table.add_column("suite", style="cyan", no_wrap=True)
    table.add_column("scenario")
    table.add_column("status", no_wrap=True)
    table.add_column("runs", justify="right", no_wrap=True)
    # never narrower than its longest metric name and value: at 80 columns the scenario names
    # wrap, a metric name is never cut (rich folds a word wider than its column)
    table.add_column("scores", min_width=max((_widest_item(cell) for cell in cells), default=6))
    table.add_column("time", justify="right", no_wrap=True)
    if len(shown) < summary.total:
        table.caption = f"{summary.total - len(shown)} more not shown (passed or over the limit)"
    for scenario, cell in zip(shown, cells, strict=True):
        table.add_row(
            escape(scenario.suite),
            escape(scenario.display_name),
            Text(scenario.status.upper(), style=STATUS_STYLE[scenario.status]),
            f"{scenario.passes}/{scenario.repeat}",
            Text(cell),
            f"{scenario.duration:.2f}s",
        )
    return table


def scores_cell(scenario: ScenarioView) -> str:
    """The scores column: the shown run's scores, or with several runs the aggregate.

    ``12/20 passed, tool_call_accuracy mean 0.62, forbid 20/20``: one run's value would say
    nothing about a repeated scenario, whose verdict is its pass rate.
    """
    runs = scenario.runs
    if len(runs) <= 1:
        run = scenario.shown
        return scores_line(run.scores, run.checks) if run is not None else ""
    items = [f"{scenario.passes}/{len(runs)} passed"]
    values: dict[str, list[float]] = {}
    checks: dict[str, list[bool]] = {}
    for run in runs:
        for score in run.scores:
            values.setdefault(score.name, []).append(score.value)
        for check in run.checks:
            checks.setdefault(check.name, []).append(check.passed)
    items += [f"{name} mean {sum(v) / len(v):.2f}" for name, v in values.items()]
    items += [f"{name} {sum(v)}/{len(v)}" for name, v in checks.items()]
    return ", ".join(items)


def _widest_item(cell: str) -> int:
    """The widest ``name value mark`` item of a scores cell, in terminal cells."""
    return max((cell_len(item) + 1 for item in cell.split(", ")), default=0)


def render_failure(console: Console, scenario: ScenarioView) -> None:
    """The section for one failed or errored scenario, pytest style."""
    style = STATUS_STYLE[scenario.status]
    console.rule(Text(f"{scenario.id}", style=style), characters="_")
    console.print(Text(failure_text(scenario)), highlight=False, soft_wrap=True)


def _render(
    out: Console,
    summary: SuiteView,
    scenarios: tuple[ScenarioView, ...],
    max_rows: int | None,
) -> None:
    if scenarios:
        out.print(summary_table(summary, scenarios, max_rows))
    failures = [s for s in scenarios if s.status in ("failed", "error")]
    if failures:
        out.rule(Text("FAILURES", style="bold red"), characters="=")
        for scenario in failures:
            render_failure(out, scenario)
    unseen = summary.omitted.get("failed", 0) + summary.omitted.get("error", 0)
    if unseen:
        out.print(
            Text(
                f"{unseen} more failed or errored not shown here (the counts below include "
                "them; the JSON and JUnit reports list every result)",
                style="bold red",
            ),
            soft_wrap=True,
        )
    notes = [s for s in scenarios if s.status in ("xfailed", "xpassed")]
    if notes:
        out.rule("short test summary info", characters="=")
        for scenario in notes:
            _line(out, f"{scenario.status.upper()} {scenario.id} - {scenario.xfail}", scenario)
    for scenario in failures:
        first = scenario.reasons[0] if scenario.reasons else ""
        _line(out, f"{scenario.status.upper()} {scenario.id} - {first}", scenario)
    for warning in summary.warnings:
        out.print(Text(f"warning: {warning}", style="yellow"), soft_wrap=True)
    _summary_line(out, summary)


def _summary_line(out: Console, summary: SuiteView) -> None:
    style = "green" if summary.ok and not summary.interrupted else "red"
    out.rule(Text(summary.summary, style=f"bold {style}"), characters="=")


def _line(out: Console, text: str, scenario: ScenarioView) -> None:
    out.print(Text(text, style=STATUS_STYLE[scenario.status]), highlight=False, soft_wrap=True)
