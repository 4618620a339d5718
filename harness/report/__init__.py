"""Reports rendered from the result model, and the match table they all share.

Every report masks secrets at render time through one :class:`~harness.result.Scrubber` (the
``Redactor`` key list, plus the values found under those keys wherever they appear in text);
each rendering function takes ``redactor`` (default: the default key list) or a ready
``scrubber``.

:func:`match_rows` pairs a run's expected calls with what the agent did (the metric's own
pairing where one was recorded, near misses of the same name shown with their argument diffs);
:func:`render_match_table` turns the rows into the plain-text table the console and JUnit
reports both print — one rendering, not one per report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from harness.expectation import Expectation
from harness.matching import best_assignment, max_matching
from harness.redaction import Redactor
from harness.result import RunResult, ScenarioResult, Scrubber
from tracing.records import ToolCall

RowVerdict = Literal["ok", "wrong_args", "missing", "unexpected"]

_CELL = 60
"""Widest a call is drawn in the table before it is shortened with an ellipsis."""


@dataclass(frozen=True, slots=True)
class MatchRow:
    """One line of the match table: an expected call and its partner, or an unexpected call."""

    verdict: RowVerdict
    expected: str | None
    actual: str | None
    diffs: tuple[str, ...] = ()
    call_status: str | None = None
    expected_index: int | None = None
    actual_index: int | None = None


def _scrubber(
    runs: Sequence[RunResult], redactor: Redactor | None, scrubber: Scrubber | None
) -> Scrubber:
    return scrubber if scrubber is not None else Scrubber.for_runs(redactor, runs)


def describe_call(
    call: ToolCall, *, redactor: Redactor | None = None, scrubber: Scrubber | None = None
) -> str:
    """``name(key='value', ...)`` with secret-named arguments masked."""
    scrub = scrubber if scrubber is not None else Scrubber(redactor)
    mask = scrub.redactor.mask
    inner = ", ".join(
        f"{key}={mask if scrub.redactor.matches(str(key)) else _short(repr(value))}"
        for key, value in scrub.redactor.redact(dict(call.args)).items()
    )
    return scrub.text(f"{call.name}({inner})")


def describe_expectation(
    expectation: Expectation,
    *,
    redactor: Redactor | None = None,
    scrubber: Scrubber | None = None,
) -> str:
    """``name(key=pattern, ...)`` with secret-named arguments masked."""
    from harness.values import describe_pattern

    scrub = scrubber if scrubber is not None else Scrubber(redactor)
    mask = scrub.redactor.mask
    inner = ", ".join(
        f"{key}={mask if scrub.redactor.matches(str(key)) else _short(describe_pattern(value))}"
        for key, value in expectation.args.items()
    )
    return scrub.text(f"{expectation.name}({inner})")


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _stored_pairs(run: RunResult) -> list[tuple[int, int]] | None:
    """The full-match pairing tool_call_accuracy recorded, when it scored this run."""
    for score in run.scores:
        if score.name == "tool_call_accuracy":
            return [(pair.expected_index, pair.actual_index) for pair in score.details.pairs]
    return None


def match_rows(
    run: RunResult, *, redactor: Redactor | None = None, scrubber: Scrubber | None = None
) -> list[MatchRow]:
    """The rows of a run's match table: every expected call, then every other call made."""
    scrub = _scrubber((run,), redactor, scrubber)
    sample = run.sample
    if sample is None:
        return []
    expected = sample.expected_tool_calls
    calls = sample.tool_calls or []
    pairs = _stored_pairs(run)
    if pairs is None:
        pairs = list(
            max_matching(
                expected, calls, lambda e, a: e.accepts(a), key=lambda item: item.name
            ).pairs
        )
    paired_e = {e for e, _ in pairs}
    paired_a = {a for _, a in pairs}
    rest_e = [i for i in range(len(expected)) if i not in paired_e]
    rest_a = [j for j in range(len(calls)) if j not in paired_a]
    near = best_assignment(
        [expected[i] for i in rest_e],
        [calls[j] for j in rest_a],
        lambda e, a: float(e.check(a).correct) if e.name == a.name else None,
        key=lambda item: item.name,
    )
    near_pairs = {rest_e[e]: rest_a[a] for e, a in near.pairs}
    full = dict(pairs)
    rows: list[MatchRow] = []
    for index, expectation in enumerate(expected):
        shown = describe_expectation(expectation, scrubber=scrub)
        if index in full:
            call = calls[full[index]]
            rows.append(
                MatchRow(
                    "ok",
                    shown,
                    describe_call(call, scrubber=scrub),
                    (),
                    call.status,
                    index,
                    full[index],
                )
            )
        elif index in near_pairs:
            call = calls[near_pairs[index]]
            diffs = tuple(_diff_text(diff, scrub) for diff in expectation.check(call).diffs)
            rows.append(
                MatchRow(
                    "wrong_args",
                    shown,
                    describe_call(call, scrubber=scrub),
                    diffs,
                    call.status,
                    index,
                    near_pairs[index],
                )
            )
        else:
            rows.append(MatchRow("missing", shown, None, (), None, index, None))
    used = set(full.values()) | set(near_pairs.values())
    for index, call in enumerate(calls):
        if index not in used:
            note = (
                (scrub.text(f"error: {call.error}"),)
                if call.status == "error" and call.error
                else ()
            )
            rows.append(
                MatchRow(
                    "unexpected",
                    None,
                    describe_call(call, scrubber=scrub),
                    note,
                    call.status,
                    None,
                    index,
                )
            )
    return rows


def _diff_text(diff: Any, scrub: Scrubber) -> str:
    keys = [part for part in str(diff.path).split("/") if part]
    if any(scrub.redactor.matches(key) for key in keys):
        return f"{diff.path}: {diff.code} (value masked)"
    return scrub.text(f"{diff.path}: {diff.message}")


_VERDICT_TEXT = {
    "ok": "ok",
    "wrong_args": "wrong args",
    "missing": "MISSING",
    "unexpected": "not expected",
}


def render_match_table(
    run: RunResult, *, redactor: Redactor | None = None, scrubber: Scrubber | None = None
) -> str:
    """The plain-text match table of one run (empty string when nothing was expected or done)."""
    rows = match_rows(run, scrubber=_scrubber((run,), redactor, scrubber))
    if not rows:
        return ""
    cells = [
        (
            str(row.expected_index + 1) if row.expected_index is not None else "-",
            _fit(row.expected or "(not expected)"),
            _fit(_actual_cell(row)),
            _VERDICT_TEXT[row.verdict],
        )
        for row in rows
    ]
    header = ("#", "expected", "actual", "verdict")
    widths = [max(len(header[c]), *(len(cell[c]) for cell in cells)) for c in range(4)]
    lines = [_line(header, widths), _line(tuple("-" * w for w in widths), widths)]
    for row, cell in zip(rows, cells, strict=True):
        lines.append(_line(cell, widths))
        indent = " " * (widths[0] + 2)
        lines.extend(f"{indent}  {diff}" for diff in row.diffs)
    return "\n".join(lines)


def _actual_cell(row: MatchRow) -> str:
    if row.actual is None:
        return "missing"
    if row.call_status in ("error", "requested"):
        return f"{row.actual} [{row.call_status}]"
    return row.actual


def _fit(text: str) -> str:
    return text if len(text) <= _CELL else text[: _CELL - 1] + "…"


def _line(cells: Sequence[str], widths: Sequence[int]) -> str:
    return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)).rstrip()


def failure_text(
    result: ScenarioResult,
    *,
    traceback: bool = True,
    redactor: Redactor | None = None,
    scrubber: Scrubber | None = None,
) -> str:
    """Everything a reader needs about a scenario that did not pass, as plain text."""
    scrub = _scrubber(result.runs, redactor, scrubber)
    parts = [f"{result.id} ({result.location}): {result.status}"]
    if result.source:
        parts.append(f"trace {result.trace_id} from {result.source}")
    if result.xfail:
        parts.append(f"xfail: {result.xfail}")
    parts.extend(f"  {scrub.text(reason)}" for reason in result.reasons)
    run = result.first_failing_run()
    if run is not None:
        table = render_match_table(run, scrubber=scrub)
        if table:
            label = f"run {run.index + 1} of {result.repeat}" if result.repeat > 1 else "calls"
            parts.append(f"{label}:")
            parts.append(_indent(table))
        if run.output is not None and run.error is None:
            shown = scrub.value(run.output)
            parts.append(f"final answer: {_short(repr(shown), 300)}")
        if traceback and run.error is not None and run.error.traceback:
            parts.append(_indent(scrub.text(run.error.traceback.rstrip())))
    return "\n".join(parts)


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line else line for line in text.splitlines())


def scores_text(result: ScenarioResult) -> str:  # names and numbers only: nothing to mask
    """``metric 1.00 ✓, metric 0.50 ✗`` for the run a report shows (checks included)."""
    run = result.first_failing_run()
    if run is None:
        return ""
    items = [f"{s.name} {s.value:.2f} {'✓' if s.passed else '✗'}" for s in run.scores]
    items.extend(f"{c.name} {'✓' if c.passed else '✗'}" for c in run.checks)
    return ", ".join(items)


__all__ = [
    "MatchRow",
    "describe_call",
    "describe_expectation",
    "failure_text",
    "match_rows",
    "render_match_table",
    "scores_text",
]
