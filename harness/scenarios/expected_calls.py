"""Expected calls as a scenario file writes them: labels, ``after``, ``optional``, ``result``.

The loader (:mod:`harness.scenarios.compile`) compiles each call's arguments; this module adds
what the label fields need, every problem located ``file:line: field: message``: a label that
is not one, a ``result`` pattern that does not compile, and, over one list, what
:func:`harness.labels.label_problems` finds (duplicates, unknown labels, cycles).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from harness.errors import MatcherError
from harness.expectation import Expectation
from harness.labels import label_problems
from harness.scenarios.file_model import ToolCallSpec
from harness.scenarios.issues import Collector, PathKey, describe_found
from harness.values import ABSENT, LABEL, compile_pattern, has_refs
from harness.values.refs import LABEL_RULE

MatcherIssue = Callable[[PathKey, MatcherError], None]
"""Records a MatcherError at a location (the loader's own, which places nested paths)."""


def expected_call(
    call: ToolCallSpec,
    args: Mapping[str, Any],
    agent: str | None,
    loc: PathKey,
    out: Collector,
    matcher_issue: MatcherIssue,
) -> Expectation:
    """The Expectation of one written call (``args`` compiled by the caller); a bad label or
    ``result`` is an issue, and the field is left out so the rest can still be checked."""
    label = call.id
    if label is not None and not LABEL.match(label):
        out.add((*loc, "id"), f"a label is {LABEL_RULE}; found {describe_found(label)}")
        label = None
    after = _after(call.after, (*loc, "after"), out)
    result: Any = ABSENT
    if "result" in call.model_fields_set:
        try:
            result = compile_pattern(call.result)
        except MatcherError as exc:
            matcher_issue((*loc, "result"), exc)
    return Expectation(
        call.name,
        args,
        agent=agent,
        node=call.node,
        label=label,
        after=after,
        optional=call.optional,
        result=result,
    )


def _after(raw: str | list[Any] | None, loc: PathKey, out: Collector) -> tuple[str, ...]:
    if raw is None:
        return ()
    labels = [raw] if isinstance(raw, str) else raw
    good = []
    for position, label in enumerate(labels):
        if isinstance(label, str) and LABEL.match(label):
            good.append(label)
            continue
        where = loc if isinstance(raw, str) else (*loc, position)
        out.add(where, f"after names labels ({LABEL_RULE}); found {describe_found(label)}")
    return tuple(good)


def check_labels(expected: Sequence[Expectation], where: PathKey, out: Collector) -> None:
    """The label problems of one list of expected calls, each at its field's line."""
    for problem in label_problems(expected, name=str(where[-1])):
        loc: PathKey = (*where, problem.index, problem.field, *_parts(problem.pointer))
        out.add(loc, problem.message)


def _parts(pointer: str) -> tuple[str | int, ...]:
    """A JSON pointer (``/order/0``) as location parts."""
    tokens = pointer.split("/")[1:] if pointer else []
    return tuple(
        int(token) if token.isdigit() else token.replace("~1", "/").replace("~0", "~")
        for token in tokens
    )


def refuse_refs(pattern: Any, loc: PathKey, out: Collector) -> bool:
    """An issue when a pattern outside an expected call holds a ``$ref``; True if it did."""
    if not has_refs(pattern):
        return False
    out.add(
        loc,
        "$ref only goes in an expected call's args or result (it names another expected "
        "call's value)",
    )
    return True
