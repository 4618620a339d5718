"""Plain-text renderings of the view model, shared by the console and JUnit reports.

One rendering of the match table, of a failure and of a score line, not one per report. Every
input is a view (:mod:`harness.report.view`): already masked and scrubbed, so nothing here
redacts; what it does is shorten for width.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from rich.cells import cell_len

from harness.report.view import (
    ArgView,
    CallView,
    CheckView,
    ExpectationView,
    MatchRow,
    RunView,
    ScenarioView,
)
from harness.text import shorten

__all__ = [
    "call_text",
    "expectation_text",
    "failure_text",
    "match_table",
    "paused_line",
    "rate_line",
    "rule_flag",
    "scores_line",
    "warning_lines",
]

_CELL = 60
"""Widest a call is drawn in the table before it is shortened with an ellipsis."""
_ARG = 40
"""Widest one argument value is drawn inside a call."""


def _signature(name: str, args: Iterable[ArgView]) -> str:
    inner = ", ".join(
        f"{arg.key}={arg.value if arg.masked else shorten(arg.text, _ARG)}" for arg in args
    )
    return f"{name}({inner})"


def call_text(call: CallView) -> str:
    """``name(key='value', ...)``, secret arguments as the mask, long values shortened."""
    return _signature(call.name, call.args)


def expectation_text(expectation: ExpectationView) -> str:
    """``name(key=pattern, ...)``, secret arguments as the mask, long patterns shortened; led
    by its label (``find: ...``), then `` -> result`` and ``(optional)`` when given."""
    text = _signature(expectation.name, expectation.args)
    if expectation.label is not None:
        text = f"{expectation.label}: {text}"
    result = expectation.result
    if result is not None:
        text += f" -> {result.value if result.masked else shorten(result.text, _ARG)}"
    if expectation.optional:
        text += " (optional)"
    return text


_VERDICT_TEXT = {
    "ok": "ok",
    "wrong_args": "wrong args",
    "wrong_result": "wrong result",
    "invalid": "invalid args",
    "missing": "MISSING",
    "unexpected": "not expected",
}


def match_table(run: RunView) -> str:
    """The plain-text match table of one run (empty string when nothing was expected or done)."""
    rows = run.rows
    if not rows:
        return ""
    last = _last_table
    if last[0] is run:  # a JUnit testcase shows it twice (failure text, system-out)
        return last[1]
    table = _table(run, rows)
    _remember_table(run, table)
    return table


_last_table: tuple[RunView | None, str] = (None, "")
"""The last run whose table was drawn, and its table (views are immutable: it stays right)."""


def _remember_table(run: RunView, table: str) -> None:
    global _last_table
    _last_table = (run, table)


def _table(run: RunView, rows: Sequence[MatchRow]) -> str:
    # calls from several agents (a supervisor and its workers): say which agent made each one
    agents = run.several_agents
    cells = [
        (
            str(row.expected_index + 1) if row.expected_index is not None else "-",
            shorten(_expected_cell(run, row), _CELL),
            shorten(_actual_cell(run, row), _CELL),
            *((shorten(run.row_agent(row), _CELL),) if agents else ()),
            _VERDICT_TEXT[row.verdict],
        )
        for row in rows
    ]
    header = ("#", "expected", "actual", *(("agent",) if agents else ()), "verdict")
    # terminal cells, not characters: a CJK character or an emoji takes two (rich's measure)
    widths = [
        max(cell_len(header[c]), *(cell_len(cell[c]) for cell in cells)) for c in range(len(header))
    ]
    lines = [_line(header, widths), _line(tuple("-" * w for w in widths), widths)]
    indent = " " * (widths[0] + 2)
    for row, cell in zip(rows, cells, strict=True):
        lines.append(_line(cell, widths))
        lines.extend(f"{indent}  {note}" for note in _row_notes(run, row))
    return "\n".join(lines)


def _row_notes(run: RunView, row: MatchRow) -> list[str]:
    """Under a row: the expectation's own argument diffs, or an unexpected call's error, then
    the failed rules that name its call (``✗ rule:grounded ids``, ``⚠ rule:x (warn)``)."""
    notes = []
    # a full match's diffs are metrics' extras: not listed here
    if row.verdict in ("wrong_args", "wrong_result"):
        notes = [f"{diff.path}: {diff.reason}" for diff in row.diffs if not diff.source]
    if row.note:
        notes.append(row.note)
    notes.extend(rule_flag(run.checks[index]) for index in row.rules)
    return notes


def rate_line(scenario: ScenarioView) -> str:
    """A repeated scenario's ``3/5 (60%, 95% CI 23–88%), pass@1 0.60, pass@5 1.00, pass^5
    0.00`` (docs/metrics.md, "Comparing runs")."""
    from harness.compare.text import pass_k_line, rate_text

    rate = scenario.rate()
    return f"{rate_text(rate)}, {pass_k_line(rate)}"


def rule_flag(check: CheckView) -> str:
    """How a match row names a failed rule of its call: ``✗ rule:x``, ``⚠ rule:x (warn)``."""
    return f"{check.mark()} {check.name}" + (" (warn)" if check.warned else "")


def warning_lines(scenario: ScenarioView) -> list[str]:
    """``rule:budget: over budget: ...`` for each failed ``warn`` check (not failing the run)."""
    return [f"{check.name}: {check.reason}" for check in scenario.warnings]


def _expected_cell(run: RunView, row: MatchRow) -> str:
    if row.expected_index is None:
        return "(not expected)"
    return expectation_text(run.expected[row.expected_index])


def _actual_cell(run: RunView, row: MatchRow) -> str:
    if row.actual_index is None:
        return "missing"
    call = run.calls[row.actual_index]
    text = call_text(call)
    if call.status in ("error", "requested", "invalid"):
        return f"{text} [{call.status}]"
    return text


def _line(cells: Sequence[str], widths: Sequence[int]) -> str:
    padded = (
        cell + " " * (width - cell_len(cell)) for cell, width in zip(cells, widths, strict=True)
    )
    return "  ".join(padded).rstrip()


def failure_text(scenario: ScenarioView, *, traceback: bool = True, verbose: bool = False) -> str:
    """Everything a reader needs about a scenario that did not pass, as plain text.

    ``traceback``: show the error's traceback. An error whose message says it all (a provider
    failure, a cassette miss: ``ErrorView.brief``) is its one reason line; its traceback is
    shown only when ``verbose`` too (``harness run -v``); the JSON report always keeps it.
    """
    parts = [f"{scenario.id} ({scenario.location}): {scenario.status}"]
    if scenario.source:
        parts.append(f"trace {scenario.trace_id} from {scenario.source}")
    if scenario.trace_url:
        parts.append(f"trace: {scenario.trace_url}")
    if scenario.xfail:
        parts.append(f"xfail: {scenario.xfail}")
    parts.extend(f"  {reason}" for reason in scenario.reasons)
    parts.extend(f"  warning: {line}" for line in warning_lines(scenario))
    run = scenario.shown
    if run is not None:
        table = match_table(run)
        if table:
            label = f"run {run.index + 1} of {scenario.repeat}" if scenario.repeat > 1 else "calls"
            parts.append(f"{label}:")
            parts.append(_indent(table))
        if run.output is not None and run.error is None:
            parts.append(f"final answer: {shorten(repr(run.output), 300)}")
        paused = paused_line(run)
        if paused:
            parts.append(paused)
        error = run.error
        if traceback and error is not None and error.traceback and (verbose or not error.brief):
            parts.append(_indent(error.traceback.rstrip()))
    return "\n".join(parts)


def paused_line(run: RunView) -> str:
    """``paused: <payload>`` when the run ended paused on an interrupt, else ``""``."""
    if run.paused_text is None:
        return ""
    return f"paused: {shorten(run.paused_text, 300)}"


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line else line for line in text.splitlines())


class _Verdict(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def passed(self) -> bool: ...


class _Valued(_Verdict, Protocol):
    @property
    def value(self) -> float: ...


class _Check(_Verdict, Protocol):
    @property
    def severity(self) -> str: ...


def scores_line(scores: Iterable[_Valued], checks: Iterable[_Check]) -> str:
    """``metric 1.00 ✓, metric 0.50 ✗, check ✓, rule:x ⚠`` (⚠: a ``warn`` rule that failed;
    names and numbers only: nothing to mask)."""
    items = [f"{s.name} {s.value:.2f} {'✓' if s.passed else '✗'}" for s in scores]
    items.extend(
        f"{c.name} {'✓' if c.passed else '⚠' if c.severity == 'warn' else '✗'}" for c in checks
    )
    return ", ".join(items)
