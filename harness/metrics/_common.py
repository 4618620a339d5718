"""Helpers shared by the metric modules: option checks, reason wording, issue building."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from harness.errors import MetricConfigError
from harness.expectation import Expectation
from harness.metrics.base import Issue
from harness.values import ABSENT, ArgDiff, describe_pattern
from tracing.records import ToolCall

REASON_CAP = 3
"""How many clauses a reason spells out before it says ``(+N more)``."""

_VALUE_PREVIEW = 60


def check_choice(metric: str, option: str, value: Any, choices: Sequence[Any]) -> Any:
    """Reject an option value outside ``choices``; the error names the valid ones."""
    if value in choices:
        return value
    valid = ", ".join(repr(choice) for choice in choices)
    raise MetricConfigError(f"{metric}: {option} must be one of {valid}; got {value!r}")


def check_flag(metric: str, option: str, value: Any) -> bool:
    """Reject a non-bool flag (``strict="no"`` would otherwise be truthy)."""
    if not isinstance(value, bool):
        raise MetricConfigError(f"{metric}: {option} must be true or false, got {value!r}")
    return value


def fmt(value: float) -> str:
    """Two-decimal rendering used in every reason."""
    return f"{value:.2f}"


def short(text: str, limit: int = _VALUE_PREVIEW) -> str:
    """Cut a long rendering so that one huge argument cannot swamp a reason."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def show_value(value: Any) -> str:
    """Render an actual argument value for a reason."""
    return "<absent>" if value is ABSENT else short(repr(value))


def show_pattern(pattern: Any) -> str:
    """Render an expected argument pattern for a reason."""
    return short(describe_pattern(pattern))


def capped(items: Sequence[str], cap: int = REASON_CAP, sep: str = ", ") -> str:
    """Join the first ``cap`` items and say how many were left out."""
    if len(items) <= cap:
        return sep.join(items)
    return f"{sep.join(items[:cap])} (+{len(items) - cap} more)"


def pointer_key(path: str) -> str:
    """Turn a JSON pointer (``/filter/status``) into the readable ``filter/status``."""
    tokens = path.lstrip("/").split("/") if path else [""]
    return "/".join(token.replace("~1", "/").replace("~0", "~") for token in tokens)


def diff_clause(tool: str, diff: ArgDiff) -> str:
    """One sentence per wrong argument, worded like seed 002's documented reason."""
    key = pointer_key(diff.path)
    if diff.code == "missing_arg" or diff.actual is ABSENT:
        return f"{tool} called without {key}, expected {show_pattern(diff.expected)}."
    if diff.code == "extra_arg" or diff.expected is ABSENT:
        return f"{tool} called with unexpected argument {key}={show_value(diff.actual)}."
    return (
        f"{tool} called with {key}={show_value(diff.actual)}, "
        f"expected {show_pattern(diff.expected)}."
    )


def describe_call(call: ToolCall | Expectation) -> str:
    """``name(key=value, ...)``, shortened for reasons."""
    return short(call.describe(), 80)


def describe_calls(calls: Sequence[ToolCall | Expectation], indices: Iterable[int]) -> str:
    """Describe the calls at ``indices``, capped."""
    return capped([describe_call(calls[index]) for index in indices])


def missing_issues(expected: Sequence[Expectation], indices: Iterable[int]) -> list[Issue]:
    """A ``missing_call`` issue for each unpaired expectation."""
    return [
        Issue("missing_call", f"expected {describe_call(expected[i])} was not matched", i, None)
        for i in indices
    ]


def unexpected_issues(actual: Sequence[ToolCall], indices: Iterable[int]) -> list[Issue]:
    """An ``unexpected_call`` issue for each unpaired actual call."""
    return [
        Issue("unexpected_call", f"unexpected call {describe_call(actual[j])}", None, j)
        for j in indices
    ]


def diff_issues(
    tool: str, diffs: Iterable[ArgDiff], expected_index: int, actual_index: int
) -> list[Issue]:
    """One issue per argument diff, carrying the diff's own code."""
    return [
        Issue(diff.code, diff_clause(tool, diff), expected_index, actual_index) for diff in diffs
    ]


def tool_error_issues(actual: Sequence[ToolCall], indices: Iterable[int]) -> list[Issue]:
    """Informational ``tool_error`` issues for paired calls whose execution failed."""
    issues: list[Issue] = []
    for j in indices:
        call = actual[j]
        if call.status == "error":
            detail = f": {short(call.error)}" if call.error else ""
            issues.append(Issue("tool_error", f"{call.name} raised{detail}", None, j))
    return issues


def closest_mismatch_issues(
    expected: Sequence[Expectation],
    actual: Sequence[ToolCall],
    unmatched_expected: Iterable[int],
    unmatched_actual: Sequence[int],
) -> list[Issue]:
    """Say why an unmatched expectation failed: diff it against its nearest same-name leftover.

    Only runs on failures, so the per-argument check's cost stays off the passing path.
    """
    issues: list[Issue] = []
    for i in unmatched_expected:
        expectation = expected[i]
        best: tuple[int, int] | None = None
        best_check = None
        for j in unmatched_actual:
            if actual[j].name != expectation.name:
                continue
            check = expectation.check(actual[j])
            if best is None or check.correct > best[0]:
                best, best_check = (check.correct, j), check
        if best is not None and best_check is not None:
            issues.extend(diff_issues(expectation.name, best_check.diffs, i, best[1]))
    return issues
