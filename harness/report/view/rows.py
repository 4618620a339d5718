"""The match rows of a run view: pairing expected calls with recorded ones, and their diffs.

How the pairs are chosen is in :mod:`harness.report.view` (docs/metrics.md, "Matching").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from harness.expectation import Expectation
from harness.matching import best_assignment, max_matching
from harness.metrics._common import invalid_clause
from harness.metrics.base import Details, Score
from harness.redaction import Redactor, Scrubber
from harness.report.view.forms import TEXT_LIMIT, _text_form
from harness.report.view.model import DiffView, MatchRow, RowVerdict, _pointer
from harness.run.results import CheckResult, RunResult
from harness.values import ArgCheck, ArgDiff
from tracing.records import ToolCall


def _rows(
    run: RunResult, expected: Sequence[Expectation], calls: Sequence[ToolCall], scrubber: Scrubber
) -> tuple[MatchRow, ...]:
    """Every expected call with its partner (or none), then every call nobody claimed."""
    # A score named `<scope>.<metric>` (a turn's, an agent's: harness.scoring.scoped_score)
    # indexes its own slice of the run: its pairs are not this table's.
    scores = [score for score in run.scores if "." not in score.name]
    pairs = _Pairs(scores, expected, calls)
    full = pairs.full()
    near = pairs.near(full)
    metric_diffs = _metric_diffs(scores)
    tags = _flagged_calls(run.checks)
    rules = _rule_flags(run.checks)
    rows: list[MatchRow] = []
    for index in range(len(expected)):
        partner = full.get(index, near.get(index))
        if partner is None:
            rows.append(MatchRow("missing", index, None))
            continue
        if calls[partner].status == "invalid":
            # its stand-in: the arguments were never JSON, so there is nothing to diff; the row
            # says why instead (the cause the metrics' reasons name)
            why = scrubber.text(invalid_clause(calls[partner]), TEXT_LIMIT)
            flags = tags.get(partner, ()), rules.get(partner, ())
            rows.append(MatchRow("invalid", index, partner, (), why, *flags))
            continue
        own = () if index in full else pairs.check(index, partner).diffs
        diffs = _row_diffs(own, metric_diffs.get((index, partner), ()), scrubber)
        verdict: RowVerdict = _verdict(own)
        flags = tags.get(partner, ()), rules.get(partner, ())
        rows.append(MatchRow(verdict, index, partner, diffs, None, *flags))
    used = set(full.values()) | set(near.values())
    for index, call in enumerate(calls):
        if index in used:
            continue
        note = None
        if call.status == "error" and call.error:
            note = scrubber.text(f"error: {call.error}", TEXT_LIMIT)
        elif call.status == "invalid":
            note = scrubber.text(invalid_clause(call), TEXT_LIMIT)
        flags = tags.get(index, ()), rules.get(index, ())
        rows.append(MatchRow("unexpected", None, index, (), note, *flags))
    return tuple(rows)


def _verdict(diffs: Sequence[ArgDiff]) -> RowVerdict:
    """``ok`` without diffs; ``wrong_result`` when only the result differs; else ``wrong_args``."""
    if not diffs:
        return "ok"
    if all(diff.code == "wrong_result" for diff in diffs):
        return "wrong_result"
    return "wrong_args"


class _Pairs:
    """The pairings of one run: those its metrics recorded, computed ones only as a fallback."""

    __slots__ = ("_accepts", "_checks", "calls", "expected", "recorded")

    def __init__(
        self, scores: Sequence[Score], expected: Sequence[Expectation], calls: Sequence[ToolCall]
    ) -> None:
        self.expected = expected
        self.calls = calls
        self._accepts: dict[tuple[int, int], bool] = {}
        self._checks: dict[tuple[int, int], ArgCheck] = {}
        # Pairings over the whole run, in score order; a pairing that names an index outside
        # the run (a metric scored another sample) is not this run's.
        self.recorded: list[tuple[tuple[int, int], ...]] = []
        if expected and calls:
            for score in scores:
                pairing = _pairing(score.details, len(expected), len(calls))
                if pairing is not None:
                    self.recorded.append(pairing)

    def accepts(self, i: int, j: int) -> bool:
        """Does expectation ``i`` accept call ``j`` (remembered)?"""
        key = (i, j)
        found = self._accepts.get(key)
        if found is None:
            found = self._accepts[key] = self.expected[i].accepts(self.calls[j])
        return found

    def check(self, i: int, j: int) -> ArgCheck:
        """The argument check of expectation ``i`` against call ``j`` (remembered)."""
        key = (i, j)
        found = self._checks.get(key)
        if found is None:
            found = self._checks[key] = self.expected[i].check(self.calls[j])
        return found

    def full(self) -> dict[int, int]:
        """Expected index -> call index of the full matches."""
        complete = [p for p in self.recorded if all(self.accepts(i, j) for i, j in p)]
        if not complete:
            if not self.expected or not self.calls:
                return {}
            matching = max_matching(
                self.expected, self.calls, lambda e, a: e.accepts(a), key=lambda x: x.name
            )
            return dict(matching.pairs)
        best = max(complete, key=len)  # the first of the largest, in score order
        taken: dict[int, int] = {}
        _take(taken, best, self.accepts)
        for pairing in self.recorded:
            if pairing is not best:  # taken already: it would add nothing
                _take(taken, pairing, self.accepts)
        return taken

    def near(self, full: Mapping[int, int]) -> dict[int, int]:
        """Expected index -> call index of the same-name near misses among what is left."""
        taken: dict[int, int] = {}
        used = set(full.values())

        def free(i: int, j: int) -> bool:
            return i not in full and j not in used and self._same_name(i, j)

        candidates = [pair for pairing in self.recorded for pair in pairing if free(*pair)]
        if len(candidates) > 1:
            candidates.sort(key=lambda pair: -self.check(*pair).correct)  # stable: score order
        _take(taken, candidates, lambda i, j: j not in used)
        rest_e = [i for i in range(len(self.expected)) if i not in full and i not in taken]
        if not rest_e:
            return taken  # every expectation has its partner: nothing left to assign
        busy = used | set(taken.values())
        rest_a = [j for j in range(len(self.calls)) if j not in busy]
        names = {self.expected[i].name for i in rest_e}
        if not any(self.calls[j].name in names for j in rest_a):
            return taken
        assignment = best_assignment(
            [self.expected[i] for i in rest_e],
            [self.calls[j] for j in rest_a],
            lambda e, a: float(e.check(a).correct) if e.name == a.name else None,
            key=lambda item: item.name,
        )
        taken.update({rest_e[e]: rest_a[a] for e, a in assignment.pairs})
        return taken

    def _same_name(self, i: int, j: int) -> bool:
        return self.expected[i].name == self.calls[j].name


def _pairing(details: Details, expected: int, actual: int) -> tuple[tuple[int, int], ...] | None:
    """The details' pairs when they pair over the whole run (every index accounted for)."""
    pairs = tuple((pair.expected_index, pair.actual_index) for pair in details.pairs)
    if not pairs and not details.unmatched_expected and not details.unmatched_actual:
        return None  # recorded nothing (a metric that pairs nothing, or a lean trace's score)
    if len(pairs) + len(details.unmatched_expected) != expected:
        return None
    if len(pairs) + len(details.unmatched_actual) != actual:
        return None
    if any(not (0 <= i < expected and 0 <= j < actual) for i, j in pairs):
        return None
    return pairs


def _take(
    taken: dict[int, int], pairs: Iterable[tuple[int, int]], ok: Callable[[int, int], bool]
) -> None:
    """Add each pair whose two sides are still free and that ``ok`` accepts."""
    used = set(taken.values())
    for i, j in pairs:
        if i in taken or j in used or not ok(i, j):
            continue
        taken[i] = j
        used.add(j)


def _metric_diffs(scores: Iterable[Score]) -> dict[tuple[int, int], list[tuple[str, ArgDiff]]]:
    """Argument diffs that failing metrics recorded per (expected, actual) pair."""
    out: dict[tuple[int, int], list[tuple[str, ArgDiff]]] = {}
    for score in scores:
        if score.passed:
            continue
        for pair in score.details.pairs:
            for diff in pair.diffs:
                out.setdefault((pair.expected_index, pair.actual_index), []).append(
                    (score.name, diff)
                )
    return out


def _row_diffs(
    own: Sequence[ArgDiff], recorded: Sequence[tuple[str, ArgDiff]], scrubber: Scrubber
) -> tuple[DiffView, ...]:
    """The expectation's own diffs, then the metrics' extras: one per (path, code)."""
    if not own and not recorded:
        return ()
    seen: set[tuple[str, str]] = set()
    out: list[DiffView] = []
    for source, diff in (*(("", d) for d in own), *recorded):
        if (diff.path, diff.code) in seen:
            continue
        seen.add((diff.path, diff.code))
        out.append(_diff_view(diff, source, scrubber))
    return tuple(out)


def _diff_view(diff: ArgDiff, source: str, scrubber: Scrubber) -> DiffView:
    """One diff, masked: a secret on its path hides both values and the message."""
    redactor = scrubber.redactor
    if any(redactor.matches(part) for part in _pointer(diff.path) if part):
        mask = redactor.mask
        return DiffView(
            diff.path, diff.code, mask, mask, f"{diff.code} (value masked)", True, source
        )
    expected = _redacted(redactor, diff.expected)
    actual = _redacted(redactor, diff.actual)
    # a value that held a secret key: the message may quote it, so only the code is shown
    changed = expected is not diff.expected or actual is not diff.actual
    reason = f"{diff.code} (value masked)" if changed else scrubber.text(diff.message, TEXT_LIMIT)
    return DiffView(
        diff.path,
        diff.code,
        _text_form(expected, scrubber.value(expected), scrubber),
        _text_form(actual, scrubber.value(actual), scrubber),
        reason,
        changed,
        source,
    )


_PLAIN = frozenset({int, float, bool, type(None)})
"""Values with no keys inside: nothing to mask by key (the walk would hand them back)."""


def _redacted(redactor: Redactor, value: Any) -> Any:
    return value if type(value) in _PLAIN else redactor.redact(value)


_CHECK_TAG = {"unexpected_call": "forbidden", "tool_error": "tool error", "wrong_output": ""}


def _flagged_calls(checks: Iterable[CheckResult]) -> dict[int, tuple[str, ...]]:
    """Call index -> tags of the failing checks that name it (``forbidden``, ``tool error``)."""
    out: dict[int, list[str]] = {}
    for check in checks:
        if check.passed or check.kind == "rule":  # rules: MatchRow.rules (_rule_flags)
            continue
        tag = _CHECK_TAG.get(check.code or "", check.name)
        if not tag:
            continue
        for index in check.calls:
            out.setdefault(index, []).append(tag)
    return {index: tuple(tags) for index, tags in out.items()}


def _rule_flags(checks: Sequence[CheckResult]) -> dict[int, tuple[int, ...]]:
    """Call index -> indices (into the run's checks) of the failed rules that name the call."""
    out: dict[int, list[int]] = {}
    for position, check in enumerate(checks):
        if check.passed or check.kind != "rule":
            continue
        for index in check.calls:
            out.setdefault(index, []).append(position)
    return {index: tuple(found) for index, found in out.items()}
