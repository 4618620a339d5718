"""The first call that differs between two runs, and which of its arguments differ.

Calls are equal when the tool, the turn and the arguments are: the arguments by the one
equivalence every metric uses (:func:`harness.values.args_equal`; docs/metrics.md, "Values"),
and where they differ the diff is :func:`harness.values.check_args` 's, base's arguments
standing for the expectation — so ``/filter/status`` points at the deepest difference, as in a
failure's match table.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.compare.comparison import ArgChange, CallChange
from harness.compare.report import Call
from harness.values import ABSENT, args_equal, check_args, pointer_token

__all__ = ["arg_changes", "first_difference", "same_call"]


def same_call(base: Call, head: Call) -> bool:
    """Same tool, same turn, equivalent arguments (not captured on both sides: by name)."""
    if base.name != head.name or base.turn != head.turn or base.captured != head.captured:
        return False
    return args_equal(dict(base.args), dict(head.args))


def first_difference(base: Sequence[Call], head: Sequence[Call]) -> CallChange | None:
    """The first position where the calls differ (one side running out counts); None: same."""
    for index in range(max(len(base), len(head))):
        old = base[index] if index < len(base) else None
        new = head[index] if index < len(head) else None
        if old is not None and new is not None and same_call(old, new):
            continue
        args = arg_changes(old, new) if old is not None and new is not None else ()
        return CallChange(index, old, new, args)
    return None


def arg_changes(base: Call, head: Call) -> tuple[ArgChange, ...]:
    """Each argument that differs between two calls of one tool, at its deepest difference;
    empty for calls of different tools (their arguments do not correspond)."""
    if base.name != head.name or not (base.captured and head.captured):
        return ()
    check = check_args(dict(base.args), dict(head.args))
    changes = [ArgChange(diff.path, diff.expected, diff.actual) for diff in check.diffs]
    changes += [
        ArgChange(f"/{pointer_token(key)}", ABSENT, head.args[key]) for key in check.extra_keys
    ]
    return tuple(changes)
