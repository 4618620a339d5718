"""Helpers shared by the metric modules: option checks, comparators, reason wording, issues.

Every metric module has the same layout (docs/architecture.md, "Metric"): its class(es), then
module-level ``_explain_*`` functions that build a score's reason and details, then that
module's own small helpers. Anything two metric modules need lives here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from operator import attrgetter
from typing import Any

from rapidfuzz.distance import Levenshtein

from harness.errors import MetricConfigError
from harness.expectation import Expectation
from harness.matching import call_bytes, max_matching
from harness.metrics.base import Details, Issue, Score, make_score
from harness.text import shorten
from harness.values import (
    ABSENT,
    ArgDiff,
    args_key,
    describe_pattern,
    pointer_token,
)
from tracing.records import ToolCall

BOTH_EMPTY_REASON = "no tool calls expected and none were made"
"""The reason every metric gives when both call lists are empty and it scores 1.0."""

REASON_CAP = 3
"""How many clauses a reason spells out before it says ``(+N more)``."""

_VALUE_PREVIEW = 60

_CALL_PREVIEW = 80

COMPATS = (None, "ragas")
"""Values of the ``compat`` option; ``"ragas"`` builds the class in ``harness.metrics.ragas``."""

ORDERS = ("strict", "flexible")
"""Values of ToolCallSequenceAccuracy's ``order`` option."""

by_name = attrgetter("name")
"""Key of a call or an expectation for the matching engines: its tool name."""


def check_choice(metric: str, option: str, value: Any, choices: Sequence[Any]) -> Any:
    """Reject an option value outside ``choices``; the error names the valid ones."""
    if value in choices:
        return value
    valid = ", ".join(repr(choice) for choice in choices)
    raise MetricConfigError(
        f"{metric}: {option} must be one of {valid}; got {value!r}",
        metric=metric,
        option=option,
        value=value,
    )


def check_flag(metric: str, option: str, value: Any) -> bool:
    """Reject a non-bool flag (``strict="no"`` would otherwise be truthy)."""
    if not isinstance(value, bool):
        raise MetricConfigError(
            f"{metric}: {option} must be true or false, got {value!r}",
            metric=metric,
            option=option,
            value=value,
        )
    return value


# ---------------------------------------------------------------------------------------------
# Argument comparators (ToolCallSequenceAccuracy and its Ragas twin)

Comparator = Callable[[Any, Any], float]
"""``comparator(expected_value, actual_value) -> float in [0, 1]``."""

COMPARATORS = ("exact", "string", "similarity")
"""The comparator names the ``comparator`` option accepts besides a callable."""


def string_equal(expected: Any, actual: Any) -> float:
    """1.0 when ``str()`` of both values agree (Ragas's ExactMatch), else 0.0."""
    return 1.0 if str(expected) == str(actual) else 0.0


def similarity(expected: Any, actual: Any) -> float:
    """Normalised Levenshtein similarity of the two values' ``str()``."""
    # Ragas's NonLLMStringSimilarity computes 1 - normalized_distance; kept literally so compat
    # numbers agree to the last bit.
    return 1.0 - Levenshtein.normalized_distance(str(expected), str(actual))


_NAMED: dict[str, Comparator] = {"string": string_equal, "similarity": similarity}


def resolve_comparator(
    metric: str, comparator: str | Comparator, exact: Comparator | None
) -> Comparator | None:
    """The function a ``comparator`` option names; ``exact`` is what "exact" means to ``metric``.

    A callable is wrapped so that a result outside [0, 1] is an error, not silently summed.
    """
    if callable(comparator):
        return _checked(metric, comparator)
    if comparator not in COMPARATORS:
        raise MetricConfigError(
            f"{metric}: comparator must be one of 'exact', 'string', 'similarity' "
            f"or a callable (expected, actual) -> float in [0, 1]; got {comparator!r}",
            metric=metric,
            option="comparator",
            value=comparator,
        )
    return exact if comparator == "exact" else _NAMED[comparator]


def _checked(metric: str, comparator: Comparator) -> Comparator:
    """Wrap a user callable so a value outside [0, 1] is reported, not silently summed."""
    label = getattr(comparator, "__name__", repr(comparator))

    def call(expected: Any, actual: Any) -> float:
        result = comparator(expected, actual)
        if isinstance(result, bool) or not isinstance(result, (int, float)):
            raise MetricConfigError(
                f"{metric}: comparator {label} must return a number in [0, 1], "
                f"got {result!r} for expected {expected!r} vs actual {actual!r}",
                metric=metric,
                option="comparator",
                value=result,
            )
        value = float(result)
        if not 0.0 <= value <= 1.0:  # also rejects NaN
            raise MetricConfigError(
                f"{metric}: comparator {label} returned {value!r} for expected {expected!r} vs "
                f"actual {actual!r}; it must return a number in [0, 1]",
                metric=metric,
                option="comparator",
                value=result,
            )
        return value

    return call


# ---------------------------------------------------------------------------------------------
# Reason wording


def fmt(value: float) -> str:
    """Two-decimal rendering used in every reason."""
    return f"{value:.2f}"


def prf(precision: float, recall: float, f1: float) -> dict[str, Any]:
    """The precision / recall / F1 figures an F1 metric puts in its details."""
    return {"precision": precision, "recall": recall, "f1": f1}


# Values are cut so that one huge argument cannot swamp a reason.
def show_value(value: Any) -> str:
    """Render an actual argument value for a reason."""
    return "<absent>" if value is ABSENT else shorten(repr(value), _VALUE_PREVIEW)


def show_pattern(pattern: Any) -> str:
    """Render an expected argument pattern for a reason."""
    return shorten(describe_pattern(pattern), _VALUE_PREVIEW)


def capped(items: Sequence[str], cap: int = REASON_CAP, sep: str = ", ") -> str:
    """Join the first ``cap`` items and say how many were left out."""
    if len(items) <= cap:
        return sep.join(items)
    return f"{sep.join(items[:cap])} (+{len(items) - cap} more)"


def arg_pointer(key: str) -> str:
    """The JSON pointer (``/key``) of a top-level argument, as ArgDiff paths spell it."""
    return "/" + pointer_token(key)


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
    if diff.code == "unresolved_ref":  # the message says which label has no value, and why
        return f"{tool}: {diff.message}."
    if diff.code == "wrong_result":  # path result, or result/<key> inside it
        where = key.replace("/", ".")
        return (
            f"{tool} returned {where}={show_value(diff.actual)}, "
            f"expected {show_pattern(diff.expected)}."
        )
    return (
        f"{tool} called with {key}={show_value(diff.actual)}, "
        f"expected {show_pattern(diff.expected)}."
    )


def describe_call(call: ToolCall | Expectation) -> str:
    """``name(key=value, ...)``, shortened for reasons."""
    return shorten(call.describe(), _CALL_PREVIEW)


def describe_calls(calls: Sequence[ToolCall | Expectation], indices: Iterable[int]) -> str:
    """Describe the calls at ``indices``, capped."""
    return capped([describe_call(calls[index]) for index in indices])


def same_name(exp: Expectation, call: ToolCall) -> bool:
    """May these two pair at all? The names agree (arguments are judged elsewhere), and the
    call is in the expectation's agent/node and not ``invalid`` (Expectation.pairs_with)."""
    return exp.pairs_with(call)


def empty_sides_score(
    metric: str,
    threshold: float,
    expected: Sequence[Expectation],
    actual: Sequence[ToolCall],
    list_made: Callable[[Sequence[ToolCall]], str] | None = None,
) -> Score:
    """The empty-list rules (docs/metrics.md); call it when either list is empty.

    Both empty → 1.0; calls made but none expected → 0.0, ``list_made`` naming them in the
    reason when given; calls expected but none made → 0.0.
    """
    if not expected and not actual:
        return make_score(metric, 1.0, threshold, BOTH_EMPTY_REASON)
    if not expected:
        extras = tuple(range(len(actual)))
        details = Details((), (), extras, tuple(unexpected_issues(actual, extras)))
        reason = f"no tool calls expected but {len(actual)} made"
        if list_made is not None:
            reason += f": {list_made(actual)}"
        return make_score(metric, 0.0, threshold, reason, details)
    missing = tuple(range(len(expected)))
    details = Details((), missing, (), tuple(missing_issues(expected, missing)))
    reason = f"expected {len(expected)} tool call(s) but none were made"
    return make_score(metric, 0.0, threshold, reason, details)


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
            detail = f": {shorten(call.error, _VALUE_PREVIEW)}" if call.error else ""
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
            # an invalid call has no arguments to diff: with_invalid_causes names it instead
            if actual[j].name != expectation.name or actual[j].status == "invalid":
                continue
            check = expectation.check(actual[j])
            if best is None or check.correct > best[0]:
                best, best_check = (check.correct, j), check
        if best is not None and best_check is not None:
            issues.extend(diff_issues(expectation.name, best_check.diffs, i, best[1]))
    return issues


def invalid_clause(call: ToolCall) -> str:
    """Why an ``invalid`` call pairs with nothing, in one line: ``get_weather: the model's
    arguments were not valid JSON: '{"city": '``."""
    raw = call.raw_arguments
    if raw is None:
        return f"{call.name}: the model's arguments were not valid JSON"
    what = "not valid JSON"
    try:
        json.loads(raw)
    except ValueError:
        pass
    else:
        what = "not a JSON object"  # JSON, but a list or a string: arguments are an object
    return f"{call.name}: the model's arguments were {what}: {show_value(raw)}"


def with_invalid_causes(
    expected: Sequence[Expectation], actual: Sequence[ToolCall], reason: str, details: Details
) -> tuple[str, Details]:
    """Name the ``invalid`` calls behind what a metric could not pair, as the likely cause.

    An invalid call (its arguments were not JSON) pairs with no expectation (docs/metrics.md,
    "Call statuses"), so the expectation it was meant for reads as missing. Each invalid call
    that would stand for an unpaired expectation (or one paired with an invalid call) were its
    arguments readable gets an ``invalid_args`` issue, and the reason a ``likely cause`` clause.
    Explanations call it, so a passing sample never pays for it.
    """
    invalid = {j: call for j, call in enumerate(actual) if call.status == "invalid"}
    if not invalid:
        return reason, details
    troubled = [expected[i] for i in details.unmatched_expected]
    troubled += [expected[p.expected_index] for p in details.pairs if p.actual_index in invalid]
    causes = [j for j, call in invalid.items() if _stands_for_any(troubled, call)]
    if not causes:
        return reason, details
    issues = [Issue("invalid_args", invalid_clause(actual[j]), None, j) for j in causes]
    clause = capped([issue.message for issue in issues])
    if reason.endswith("."):  # a reason made of sentences (tool_argument_correctness)
        reason = f"{reason} Likely cause: {clause}."
    else:
        reason = f"{reason}; likely cause: {clause}"
    return reason, replace(details, issues=details.issues + tuple(issues))


def _stands_for_any(expectations: Sequence[Expectation], call: ToolCall) -> bool:
    """Would ``call`` pair with one of ``expectations`` were its arguments readable (same
    name, and the agent and node a scoped expectation names)?"""
    readable = None
    for exp in expectations:
        if exp.name != call.name:
            continue
        if not exp.scoped:
            return True
        if readable is None:
            readable = replace(call, status="requested")
        if exp.pairs_with(readable):
            return True
    return False


# ---------------------------------------------------------------------------------------------
# Counting a maximum matching without building it

_GREEDY_LIMIT = 4096
"""Above this many (expected × actual) cells, counting goes straight to the exact engine."""

_CHECK_BUDGET = 1024
"""Most edge tests spent proving a greedy matching maximum before the exact engine takes over."""

ArgsRelation = Callable[[Mapping[str, Any], Mapping[str, Any]], bool]
"""``relation(expected pattern, actual args)``: may this expectation pair with that call?"""


def match_count(
    expected: Sequence[Expectation],
    actual: Sequence[ToolCall],
    relation: ArgsRelation,
    *,
    keyed: bool = False,
) -> int:
    """Size of a maximum matching where an edge needs equal names and ``relation`` on the args.

    Equal to ``max_matching(expected, actual, ..., key=name).size``, for metrics whose value
    needs only that number (the pairing itself is built when someone reads the details).
    ``relation`` must hold for identical arguments (``args_match`` and ``args_equal`` do);
    ``keyed=True`` declares it to be ``args_equal``, so literal keys may settle it.

    Identical calls pair first, without comparing values one by one: a literal expectation's
    bytes (``Expectation.exact``) equal to a call's prove the edge, position by position until
    the first pair that differs (a run that went to plan is counted there and nothing else is
    built), then anywhere. A greedy pass with ``relation`` pairs each leftover expectation with
    the first free call it accepts. That is maximum unless an augmenting path exists; the check
    in :func:`_count_rest` rules one out in all but rare cases, and those go to an exact method.
    """
    count = 0
    for exp, call in zip(expected, actual, strict=False):  # the shorter list bounds k
        exact = exp.exact  # None for a scoped expectation: pairs_with judges those
        # an invalid call pairs with nothing (Expectation.pairs_with)
        if exact is None or exp.name != call.name or call.status == "invalid":
            return _count_rest(expected, actual, relation, keyed, count, None)
        key = call_bytes(call.args)
        if key is None:
            return _count_rest(expected, actual, relation, keyed, count, _NO_BYTES)
        if key != exact:
            return _count_rest(expected, actual, relation, keyed, count, key)
        count += 1
    return count  # nothing can pair more than min(n, m)


_NO_BYTES = b""
"""In :func:`_count_rest`'s key list, a free call whose arguments have no bytes: no
``Expectation.exact`` is empty, so it equals none; a taken call's entry is None instead."""


def _count_rest(
    expected: Sequence[Expectation],
    actual: Sequence[ToolCall],
    relation: ArgsRelation,
    keyed: bool,
    start: int,
    start_key: bytes | None,
) -> int:
    """:func:`match_count` once the first ``start`` pairs are identical in place.

    ``start_key``: the bytes of ``actual[start]`` when they were already computed.
    """
    n, m = len(expected), len(actual)
    k = n if n < m else m
    # keys[r] stands for actual[start + r]: its bytes while free, None once taken. Only a count
    # is kept while pairing identical calls; the lists the proof below needs are built after.
    if start_key is None:
        keys = _call_keys(actual, start)
    else:
        keys = _call_keys(actual, start + 1)
        keys.insert(0, start_key)
    count = start
    unplaced: list[int] = []
    size = len(keys)
    after = 0  # just after the last identical call taken: where a shifted run goes on
    for i in range(start, n):
        # An identical call anywhere; which one does not matter to the proof below, which only
        # needs the calls taken so far to come first in ``order``.
        exp = expected[i]
        exact = exp.exact
        if exact is not None:
            if after < size and keys[after] == exact:
                r = after
            elif exact in keys:
                r = keys.index(exact)
            else:
                unplaced.append(i)
                continue
            call = actual[start + r]
            if call.name != exp.name or call.status == "invalid":
                # same bytes, other tool (or an invalid call): look further
                r = _identical(exp, actual, keys, start)
            if r >= 0:
                keys[r] = None
                after = r + 1
                count += 1
                if count == k:
                    return k
                continue
        unplaced.append(i)
    if n * m > _GREEDY_LIMIT:
        # Huge samples: the engine's lazy Hopcroft–Karp runs its own greedy pass; a second one
        # here, plus the check below, would only add to its cost.
        return _exact_count(expected, actual, relation, keyed)
    order = list(range(start))  # calls in the order they were taken
    free: list[int] = []
    for r, key in enumerate(keys, start):
        if key is None:
            order.append(r)
        else:
            free.append(r)
    left: list[tuple[int, int]] = []  # an unpaired expectation, and len(order) at its turn
    for i in unplaced:
        exp = expected[i]
        name, pattern = exp.name, exp.args
        for pos, j in enumerate(free):
            call = actual[j]
            if call.name == name and exp.pairs_with(call) and relation(pattern, call.args):
                del free[pos]
                order.append(j)
                break
        else:
            left.append((i, len(order)))
            continue
        count += 1
        if count == k:
            return k
    # The check costs up to (unpaired × paired) edge tests: worth it on everyday samples, not on
    # huge ones where the exact engine's own search is cheaper than the full check.
    if len(left) * len(order) <= _CHECK_BUDGET and _no_augmenting_path(
        expected, actual, relation, left, order, free
    ):
        return count
    return _exact_count(expected, actual, relation, keyed)


def _identical(
    exp: Expectation, actual: Sequence[ToolCall], keys: list[bytes | None], offset: int
) -> int:
    """The first ``r`` whose free call ``actual[offset + r]`` has the expectation's bytes and
    name (and is not ``invalid``), or -1."""
    exact, name = exp.exact, exp.name
    for r in range(len(keys)):
        if keys[r] == exact:
            call = actual[offset + r]
            if call.name == name and call.status != "invalid":
                return r
    return -1


def _call_keys(actual: Sequence[ToolCall], start: int) -> list[bytes | None]:
    """The bytes of the arguments of the calls from ``start`` on (:func:`call_bytes`),
    :data:`_NO_BYTES` for those that have none."""
    return [call_bytes(actual[j].args) or _NO_BYTES for j in range(start, len(actual))]


def _exact_count(
    expected: Sequence[Expectation], actual: Sequence[ToolCall], relation: ArgsRelation, keyed: bool
) -> int:
    """Maximum matching size by literal keys when they apply, else by the matching engine."""
    if keyed and not _scoped(expected, actual):
        count = _keyed_count(expected, actual)
        if count is not None:
            return count
    return max_matching(expected, actual, partial(_related, relation), key=by_name).size


def _no_augmenting_path(
    expected: Sequence[Expectation],
    actual: Sequence[ToolCall],
    relation: ArgsRelation,
    left: list[tuple[int, int]],
    order: list[int],
    free: list[int],
) -> bool:
    """True when no unpaired expectation has an edge, or no free call has one, along a path.

    An augmenting path runs from an unpaired expectation with some edge to a free call with some
    edge, all of one tool name (every edge joins equal names). Each unpaired expectation was
    refused by every call still free at its turn, so only calls taken before then can give it
    an edge; each free call was free at every such turn, so it was refused by every unpaired
    expectation and only paired ones can give it an edge.
    """
    free_names = {actual[j].name for j in free}
    starts = [(i, before) for i, before in left if expected[i].name in free_names]
    for i, before in starts:
        exp = expected[i]
        name = exp.name
        for j in order[:before]:
            call = actual[j]
            # Names first, inline: most candidates differ there and need no further call.
            if call.name == name and _related(relation, exp, call):
                break
        else:
            continue
        break
    else:
        return True
    start_names = {expected[i].name for i, _ in starts}
    # Every expectation is paired or left at this point (the caller stops once k are paired).
    unpaired = {i for i, _ in left}
    paired = [i for i in range(len(expected)) if i not in unpaired]
    for j in free:
        call = actual[j]
        name = call.name
        if name not in start_names:
            continue
        for i in paired:
            exp = expected[i]
            if exp.name == name and _related(relation, exp, call):
                return False
    return True


def _scoped(expected: Sequence[Expectation], actual: Sequence[ToolCall]) -> bool:
    """Does pairing here need more than names: a scoped expectation or an ``invalid`` call?"""
    return any(exp.scoped for exp in expected) or any(c.status == "invalid" for c in actual)


def _related(relation: ArgsRelation, exp: Expectation, call: ToolCall) -> bool:
    """Same name (and scope, see Expectation.pairs_with) and ``relation`` on the arguments."""
    return exp.pairs_with(call) and relation(exp.args, call.args)


def _keyed_count(expected: Sequence[Expectation], actual: Sequence[ToolCall]) -> int | None:
    """Σ over key classes of min(#expected, #actual), or None when some call has no literal key.

    Exact for ``args_equal``: with literal keys, two calls have equal names and arguments equal
    both ways exactly when their (name, args_key) keys are equal, so the graph is one complete
    bipartite block per key and a maximum matching pairs min(#expected, #actual) in each.
    """
    counts: dict[Hashable, int] = {}
    for exp in expected:
        args = args_key(exp.args)
        if args is None:
            return None
        key = (exp.name, args)
        counts[key] = counts.get(key, 0) + 1
    keys = []
    for call in actual:
        args = args_key(call.args)
        if args is None:
            return None
        keys.append((call.name, args))
    matched = 0
    for key in keys:
        remaining = counts.get(key)
        if remaining:
            counts[key] = remaining - 1
            matched += 1
    return matched
