"""A sample as it is scored: its ``$ref`` s resolved and its absent optional calls dropped.

Done once per sample, before any metric runs (``harness.scoring.judge`` calls it; so can a
pytest assertion or a user scoring by hand): metrics are pure functions of a resolved sample
and never see a ``$ref`` nor an ``optional`` flag that is not settled (docs/metrics.md, "Data
flow" and "Optional expectations").

``$ref`` s are resolved in layers (:func:`harness.labels.ref_layers`): the expectations without
one are paired first, by the accuracy metric's optimal matching over all calls; then each
layer's ``$ref`` s take their values from the calls paired so far, and the layer is paired
over the calls still free. A sample with neither ``$ref`` nor optional expectations comes back
as it is, at the cost of one look at each expectation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import Any

from harness.errors import RefError
from harness.expectation import Expectation
from harness.labels import ref_layers, without
from harness.matching import best_assignment, max_matching
from harness.sample import Sample
from harness.text import shorten
from harness.values import (
    ABSENT,
    Matcher,
    Ref,
    Resolved,
    Unresolved,
    read_result,
    result_forms,
    substitute,
)
from tracing.records import ToolCall

__all__ = ["resolve_expectations", "resolve_sample"]

_by_name = attrgetter("name")
_accepts = Expectation.accepts


def resolve_sample(sample: Sample) -> Sample:
    """The sample with its expectations resolved (:func:`resolve_expectations`); the same
    object when there is nothing to resolve, or when nothing was recorded (``tool_calls`` None:
    the metrics say so)."""
    calls = sample.tool_calls
    if calls is None:
        return sample
    expected = resolve_expectations(sample.expected_tool_calls, calls)
    if expected is sample.expected_tool_calls:
        return sample
    return Sample(
        input=sample.input,
        tool_calls=calls,
        expected_tool_calls=expected,
        output=sample.output,
        metadata=sample.metadata,
        trace_id=sample.trace_id,
    )


def resolve_expectations(
    expected: list[Expectation], calls: Sequence[ToolCall]
) -> list[Expectation]:
    """The expectations a sample is scored with: each ``$ref`` replaced by the value of the
    call its label was paired with (or by a matcher that fails with ``unresolved_ref``), then
    the optional expectations no call stands for dropped, the ``after`` order kept through them.

    ``expected`` itself when it holds neither a ``$ref`` nor an optional expectation.
    Raises :class:`~harness.errors.RefError` for a ``$ref`` path into a result that is not a
    JSON object or array.
    """
    for exp in expected:  # a plain loop: this runs for every sample scored
        extra = exp.extra
        if extra is not None and extra.dynamic:
            break
    else:
        return expected
    resolved = _with_refs_resolved(expected, calls)
    if any(exp.optional for exp in resolved):
        resolved = _without_absent(resolved, calls)
    return resolved


def _with_refs_resolved(
    expected: Sequence[Expectation], calls: Sequence[ToolCall]
) -> list[Expectation]:
    out = list(expected)
    if not any(exp.refs for exp in expected):
        return out
    labels = {exp.label: index for index, exp in enumerate(expected) if exp.label is not None}
    partner: dict[int, int] = {}  # expectation index -> the call it was paired with
    taken: set[int] = set()
    layers = ref_layers(expected)
    for depth, layer in enumerate(layers):
        if depth:
            for index in layer:
                out[index] = _resolved(out[index], labels, partner, calls)
        if depth == len(layers) - 1:
            break  # no later layer takes a value from this one
        free = [j for j in range(len(calls)) if j not in taken]
        for i, j in _pairs([out[index] for index in layer], [calls[j] for j in free]):
            partner[layer[i]] = free[j]
            taken.add(free[j])
    return out


def _pairs(expected: Sequence[Expectation], calls: Sequence[ToolCall]) -> tuple[Any, ...]:
    """The accuracy metric's optimal matching; with optional expectations, one that pairs as
    many required ones as can be (a maximum matching still: docs/metrics.md)."""
    if not any(exp.optional for exp in expected):
        return max_matching(expected, calls, _accepts, key=_by_name).pairs
    return best_assignment(expected, calls, _required_weight, key=_by_name).pairs


def _required_weight(exp: Expectation, call: ToolCall) -> float | None:
    if not exp.accepts(call):
        return None
    return 0.0 if exp.optional else 1.0


def _without_absent(expected: list[Expectation], calls: Sequence[ToolCall]) -> list[Expectation]:
    """Drop the optional expectations left unpaired by a maximum matching that pairs as many
    required expectations as any matching can."""
    paired = {i for i, _ in _pairs(expected, calls)}
    absent = [i for i, exp in enumerate(expected) if exp.optional and i not in paired]
    return without(expected, absent) if absent else expected


def _resolved(
    exp: Expectation,
    labels: Mapping[str, int],
    partner: Mapping[int, int],
    calls: Sequence[ToolCall],
) -> Expectation:
    def value_of(ref: Ref) -> Matcher:
        index = labels.get(ref.label)
        j = partner.get(index) if index is not None else None
        if j is None:
            return Unresolved(ref, f"no call was paired with '{ref.label}'")
        return _value(ref, j, calls[j])

    args = {key: substitute(value, value_of) for key, value in exp.args.items()}
    result = exp.result if exp.result is ABSENT else substitute(exp.result, value_of)
    return exp.evolve(args=args, result=result)


_NO_RESULT = {
    "requested": "was requested but never executed",
    "interrupted": "was interrupted before it returned",
    "invalid": "had arguments that were not JSON and never ran",
}


def _value(ref: Ref, j: int, call: ToolCall) -> Matcher:
    """The value a ``$ref`` names in call ``j`` (paired with its label), as a matcher."""
    where = f"call #{j + 1} {call.name}"
    if ref.source == "args":
        found, missing = _walk(call.args, ref.path)
        if missing:
            return Unresolved(ref, f"{where} has no argument {missing}")
        return Resolved(ref, found, j)
    if call.status != "ok":
        if call.status == "error":
            return Unresolved(ref, f"{where} failed: {shorten(call.error or '', 120)}")
        return Unresolved(ref, f"{where} {_NO_RESULT[call.status]}")
    if not ref.path:
        forms = result_forms(call.result)  # a text spelling a number stands for both
        return Resolved(ref, forms[0], j, forms[1] if len(forms) > 1 else ABSENT)
    value = read_result(call.result)
    if not isinstance(value, (Mapping, list, tuple)):
        raise RefError(
            f"$ref {ref.target}: the result of {where} (paired with '{ref.label}') is not a "
            f"JSON object or array, so it has no {'.'.join(ref.path)}: "
            f"{shorten(repr(call.result), 200)}",
            label=ref.label,
            path=ref.target,
            result=call.result,
        )
    found, missing = _walk(value, ref.path)
    if missing:
        return Unresolved(ref, f"the result of {where} has no {missing}")
    return Resolved(ref, found, j)


def _walk(value: Any, path: Sequence[str]) -> tuple[Any, str]:
    """The value at ``path`` (mapping keys; digits index lists) and ``""``, or None and what
    is missing (``'order_id'``, ``items.3``)."""
    for depth, part in enumerate(path):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, (list, tuple)) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None, repr(".".join(path[: depth + 1]))
    return value, ""
