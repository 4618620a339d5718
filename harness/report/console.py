"""The console report: a summary table, then each failure's reasons and match table (rich).

Every text from a result goes through :func:`~harness.report.view.printable`: a control
character or a bidi override in a name or a value shows as its escape, so it can neither drive
the terminal nor reverse the next scenario's name on screen.

A large run is summarised, not listed: past ``max_rows`` results the table has no passing row,
and only the first :data:`DETAILED` results that did not pass get a row, a failure section and a
summary line; one line says how many more failed or errored (the JSON, JUnit and HTML reports
list every one; ``harness run -v`` lifts the limit). A small run prints as it always did.
"""

from __future__ import annotations

from dataclasses import replace

from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from harness.redaction import Redactor
from harness.report.base import ReportFeed
from harness.report.text import (
    failure_text,
    paused_line,
    rate_line,
    scores_line,
    warning_lines,
)
from harness.report.view import ScenarioView, SuiteView, printable
from harness.run.results import ResultSample, Status, SuiteResult

__all__ = [
    "DETAILED",
    "STATUS_STYLE",
    "ConsoleReporter",
    "narrow_items",
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


DETAILED = 20
"""Results that did not pass shown in detail (table row, failure section, summary line) once a
run has more than ``max_rows`` results: rendering 500 failures costs the console a second."""


class ConsoleReporter:
    """Prints the report when closed, from the views it kept (a :class:`ResultSample`).

    ``keep``: at most this many results are kept, those that did not pass first (``harness
    eval-traces``: the summary counts the rest); None keeps all. ``max_rows``: with more
    results than that, the table lists only those that did not pass, and only the first
    :data:`DETAILED` of them are shown (row, failure section, summary line; one line counts
    the failed and errored left out); None shows every result. ``quiet`` (``-q``): only the
    summary line. ``verbose`` (``-v``): a provider failure's or a cassette miss's traceback
    too, not only its line.
    """

    def __init__(
        self,
        console: Console,
        *,
        max_rows: int | None = None,
        keep: int | None = None,
        quiet: bool = False,
        verbose: bool = False,
    ) -> None:
        """Print to ``console``."""
        self.console = console
        self.max_rows = max_rows
        self.quiet = quiet
        self.verbose = verbose
        self._kept: ResultSample[ScenarioView] = ResultSample(0 if quiet else keep)

    def add(self, result: ScenarioView) -> None:
        """Keep ``result`` if the sample has room for it."""
        self._kept.add(_printable_names(result))

    def close(self, summary: SuiteView) -> None:
        """Print the whole report (``quiet``: its last line), then the comparison with the
        baseline when there is one (``quiet``: its headline)."""
        if self.quiet:
            _summary_line(self.console, summary)
        else:
            _render(self.console, summary, self._kept.scenarios, self.max_rows, self.verbose)
        if summary.comparison is not None:
            from harness.compare import console_block, summary_rule

            comparison = summary.comparison
            block = summary_rule(comparison) if self.quiet else console_block(comparison)
            self.console.print(block)
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


WIDE = 100
"""Terminal columns from which the table has a suite column of its own."""


def summary_table(
    summary: SuiteView,
    scenarios: tuple[ScenarioView, ...],
    max_rows: int | None = None,
    *,
    width: int | None = None,
) -> Table:
    """One row per scenario: suite, scenario, status, runs passed, scores, time.

    With more than ``max_rows`` scenarios only those that did not pass get a row (a trace file
    of 100,000 traces should not print 100,000 lines); the caption says how many were left out,
    counting those a sampled result did not keep (``summary.omitted``).

    ``width``: the terminal's. Below :data:`WIDE` columns the suite goes into the scenario
    column (a line above the name) to leave the scores room; a metric name is never cut: it wraps at
    a space, or at ``_`` / ``.`` when it is wider than its column (``narrow_items``).
    """
    shown = scenarios
    if max_rows is not None and summary.total > max_rows:
        shown = _detailed(scenarios)
    narrow = width is not None and width < WIDE
    cells = [scores_cell(scenario) for scenario in shown]
    names = [name for cell in cells for name in _names(cell)]
    widest = max((cell_len(name) + 1 for name in names), default=6)
    if narrow and width is not None:
        # status, runs, time, borders and padding take about 32 columns; the scenario 16
        widest = max(12, min(widest, width - 48))
    table = Table(title=None, show_lines=False, expand=False)
    if not narrow:
        table.add_column("suite", style="cyan", no_wrap=True)
    table.add_column("scenario")
    table.add_column("status", no_wrap=True)
    table.add_column("runs", justify="right", no_wrap=True)
    # narrow: a fixed width, so rich shrinks only the scenario column to fit (its collapse
    # stops when two wrappable columns are equally wide, then crops every column evenly)
    table.add_column("scores", width=widest if narrow else None, min_width=widest)
    table.add_column("time", justify="right", no_wrap=True)
    if len(shown) < summary.total:
        table.caption = f"{summary.total - len(shown)} more not shown (passed or over the limit)"
    for scenario, cell in zip(shown, cells, strict=True):
        name = (
            Text.assemble((scenario.suite, "cyan"), "\n", scenario.display_name)
            if narrow
            else escape(scenario.display_name)
        )
        row = [
            name,
            Text(scenario.status.upper(), style=STATUS_STYLE[scenario.status]),
            f"{scenario.passes}/{scenario.repeat}",
            Text(narrow_items(cell, widest) if narrow else cell),
            f"{scenario.duration:.2f}s",
        ]
        table.add_row(*([] if narrow else [escape(scenario.suite)]), *row)
    return table


def _names(cell: str) -> list[str]:
    """The metric and check names of a scores cell (the first word of each item)."""
    return [item.split(" ", 1)[0] for item in cell.split(", ") if item]


def narrow_items(cell: str, width: int) -> str:
    """The cell with every word wider than ``width`` broken after a ``_`` or ``.``.

    The same rule for every name, so ``tool_call_sequence_`` / ``accuracy`` reads the same in
    every row, and nothing is cut off or folded mid-word by the table.
    """
    words = []
    for word in cell.split(" "):
        while cell_len(word) > width:
            cut = max(word.rfind("_", 0, width), word.rfind(".", 0, width))
            if cut <= 0:
                break
            words.append(word[: cut + 1] + "\n")
            word = word[cut + 1 :]
        words.append(word)
    return " ".join(words).replace("\n ", "\n")


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


def render_failure(console: Console, scenario: ScenarioView, *, verbose: bool = False) -> None:
    """The section for one failed or errored scenario, pytest style (``verbose``: every
    traceback, a provider failure's too)."""
    style = STATUS_STYLE[scenario.status]
    console.rule(Text(f"{scenario.id}", style=style), characters="_")
    text = failure_text(scenario, verbose=verbose)
    console.print(Text(printable(text)), highlight=False, soft_wrap=True)


def _render(
    out: Console,
    summary: SuiteView,
    scenarios: tuple[ScenarioView, ...],
    max_rows: int | None,
    verbose: bool = False,
) -> None:
    if scenarios:
        out.print(summary_table(summary, scenarios, max_rows, width=out.width))
    failing = [s for s in scenarios if s.status in ("failed", "error")]
    if max_rows is not None and summary.total > max_rows:
        scenarios = _detailed(scenarios)  # past the limit: the rest is counted, not rendered
    for scenario in scenarios:
        if scenario.repeated:  # a repeated scenario's verdict is its rate: say how sure it is
            _line(out, f"RATE {scenario.id} - {rate_line(scenario)}", scenario)
    failures = [s for s in scenarios if s.status in ("failed", "error")]
    if failures:
        out.rule(Text("FAILURES", style="bold red"), characters="=")
        for scenario in failures:
            render_failure(out, scenario, verbose=verbose)
    unseen = summary.omitted.get("failed", 0) + summary.omitted.get("error", 0)
    unseen += len(failing) - len(failures)
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
    # runs left paused on an interrupt (a pending approval) that the failures do not show
    paused = [
        (s, paused_line(s.shown))
        for s in scenarios
        if s.shown is not None and s.status not in ("failed", "error")
    ]
    paused = [(scenario, line) for scenario, line in paused if line]
    # failed `warn` rules: reported, in yellow, and never failing the run
    warned = [(s, line) for s in scenarios for line in warning_lines(s)]
    if notes or paused or warned:
        out.rule("short test summary info", characters="=")
        for scenario in notes:
            _line(out, f"{scenario.status.upper()} {scenario.id} - {scenario.xfail}", scenario)
        for scenario, line in paused:
            _line(out, f"PAUSED {scenario.id} - {line}", scenario)
        for scenario, line in warned:
            text = printable(f"WARN {scenario.id} - {line}")
            out.print(Text(text, style="yellow"), highlight=False, soft_wrap=True)
    for scenario in failures:
        first = scenario.reasons[0] if scenario.reasons else ""
        _line(out, f"{scenario.status.upper()} {scenario.id} - {first}", scenario)
    for warning in summary.warnings:
        out.print(Text(printable(f"warning: {warning}"), style="yellow"), soft_wrap=True)
    _summary_line(out, summary)


def _detailed(scenarios: tuple[ScenarioView, ...]) -> tuple[ScenarioView, ...]:
    """The results a large run shows: the first :data:`DETAILED` that did not pass."""
    return tuple(s for s in scenarios if s.status != "passed")[:DETAILED]


def _summary_line(out: Console, summary: SuiteView) -> None:
    style = "green" if summary.ok and not summary.interrupted else "red"
    out.rule(Text(summary.summary, style=f"bold {style}"), characters="=")


_PRINTABLE: set[tuple[str, str, str | None]] = set()
"""Names found safe for a terminal as they are (``printable`` gave each back unchanged)."""
_PRINTABLE_LIMIT = 4096


def _printable_names(view: ScenarioView) -> ScenarioView:
    """The view with its suite, name and xfail reason safe for a terminal."""
    names = (view.suite, view.name, view.xfail)
    if names in _PRINTABLE:  # a stream repeats a few scenarios' names (a bounded cache)
        return view
    if all(printable(text) is text for text in (view.suite, view.name, view.xfail or "")):
        if len(_PRINTABLE) < _PRINTABLE_LIMIT:
            _PRINTABLE.add(names)
        return view
    xfail = printable(view.xfail) if view.xfail is not None else None
    return replace(view, suite=printable(view.suite), name=printable(view.name), xfail=xfail)


def _line(out: Console, text: str, scenario: ScenarioView) -> None:
    style = STATUS_STYLE[scenario.status]
    out.print(Text(printable(text), style=style), highlight=False, soft_wrap=True)
