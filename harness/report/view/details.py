"""A score's details rendered for a view straight from their known shape.

``scrubber.value(details.to_dict())`` walks about ninety small pieces per failing score through
the generic renderer (a type dispatch and a budget check each). The metrics build details of a
fixed shape (docs/metrics.md, "Scores"): pairs of indices, ``ArgDiff``\\ s, lists of ints,
issue records. This renders that shape directly, with the very same budget, key masking and
string scrubbing as the generic walk (docs/architecture.md, "Redaction"), and hands anything
else (a diff's container value, an ``extra`` entry) to the generic walk at the same depth. When
the shape or the budget could make the two differ (a fixed key that is secret or scrubbed, a
list past the item limit, a spent character budget) it renders the generic way instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from harness.metrics.base import Details
from harness.redaction import VIEW_LIMITS, Scrubber
from harness.redaction.values import _INT_BITS_SAFE, _Render

__all__ = ["details_data"]

_FIXED_KEYS = (
    *("pairs", "unmatched_expected", "unmatched_actual", "issues"),
    *("expected", "actual", "score", "diffs", "path", "code", "message"),
)
"""Every key :meth:`Details.to_dict` writes itself."""
_TOP = frozenset(_FIXED_KEYS[:4])


class _Fallback(Exception):
    """The shape or the budget is one the generic walk would render differently."""


def details_data(details: Details, scrubber: Scrubber) -> Any:
    """What ``scrubber.value(details.to_dict())`` gives, without building the dict first."""
    size = _size(details)
    if size is None or _TOP.intersection(details.extra) or not _plain_keys(scrubber):
        return scrubber.value(details.to_dict())
    render = _Render(VIEW_LIMITS, scrubber)
    # Every fixed key's length comes off the budget up front, not key by key as the walk
    # does: the budget left here is never more than the walk's at the same point, so a string
    # that fits here fits there too, and anything cut here leaves the budget spent (<= 0).
    # A budget left over therefore means the walk cut nothing either: the output is the same.
    if render.chars_left is not None:
        render.chars_left -= size
    try:
        out = _details(render, details)
    except Exception:  # _Fallback, or a value the generic walk turns into a placeholder
        return scrubber.value(details.to_dict())
    if render.chars_left is not None and render.chars_left <= 0:
        return scrubber.value(details.to_dict())  # the walk may have cut or stopped somewhere
    return out


_plain: tuple[Scrubber | None, bool] = (None, False)
"""The last scrubber asked about and its answer (a stream keeps one for many results)."""


def _plain_keys(scrubber: Scrubber) -> bool:
    """Are the fixed keys shown as they are (not secret, not scrubbed), under this scrubber?"""
    global _plain
    last, answer = _plain
    if last is not scrubber:
        answer = all(scrubber.key(name) == (False, name) for name in _FIXED_KEYS)
        _plain = (scrubber, answer)
    return answer


_TOP_CHARS = sum(len(key) for key in _FIXED_KEYS[:4])
_PAIR_CHARS = len("expected") + len("actual") + len("score") + len("diffs")
_DIFF_CHARS = len("path") + len("code") + len("expected") + len("actual") + len("message")
_ISSUE_CHARS = len("code") + len("message") + len("expected") + len("actual")


def _size(details: Details) -> int | None:
    """The characters the fixed keys take off the budget (the walk counts keys too); None
    when a container has more entries than a view keeps (the walk would cut it)."""
    limit = VIEW_LIMITS.items
    pairs, issues = details.pairs, details.issues
    diffs = 0
    for pair in pairs:
        count = len(pair.diffs)
        if limit is not None and count > limit:
            return None
        diffs += count
    if limit is not None and (
        len(pairs) > limit
        or len(issues) > limit
        or len(details.unmatched_expected) > limit
        or len(details.unmatched_actual) > limit
        or 4 + len(details.extra) > limit
    ):
        return None
    return _TOP_CHARS + len(pairs) * _PAIR_CHARS + diffs * _DIFF_CHARS + len(issues) * _ISSUE_CHARS


def _details(render: _Render, details: Details) -> dict[str, Any]:
    string = render.string
    pairs = []
    for pair in details.pairs:
        score = pair.score
        if score is not None and not (type(score) is float and math.isfinite(score)):
            score = render._walk(score, 3)  # the walk, at the pair score's depth
        diffs = [
            {
                "path": _text(string, diff.path),
                "code": _text(string, diff.code),
                "expected": _leaf(render, diff.expected),
                "actual": _leaf(render, diff.actual),
                "message": _text(string, diff.message),
            }
            for diff in pair.diffs
        ]
        pairs.append(
            {
                "expected": _index(pair.expected_index),
                "actual": _index(pair.actual_index),
                "score": score,
                "diffs": diffs,
            }
        )
    out: dict[str, Any] = {
        "pairs": pairs,
        "unmatched_expected": [_index(i) for i in details.unmatched_expected],
        "unmatched_actual": [_index(i) for i in details.unmatched_actual],
        "issues": [
            {
                "code": _text(string, issue.code),
                "message": _text(string, issue.message),
                "expected": None if issue.expected_index is None else _index(issue.expected_index),
                "actual": None if issue.actual_index is None else _index(issue.actual_index),
            }
            for issue in details.issues
        ],
    }
    if details.extra:
        _extra(render, details.extra, out)
    return out


def _extra(render: _Render, extra: dict[str, Any], out: dict[str, Any]) -> None:
    """The metric's own entries, as the walk's mapping loop renders them (at depth 0)."""
    scrubber = render.scrubber
    assert scrubber is not None
    for key, item in extra.items():
        left = render.chars_left
        if type(key) is not str or (left is not None and len(key) > left):
            raise _Fallback  # a key the walk turns into text, or cuts
        secret, shown = scrubber.key(key)
        if left is not None:
            render.chars_left = left - len(shown)
        out[shown] = scrubber.redactor.mask if secret else _leaf(render, item, 1)


def _index(value: Any) -> Any:
    if type(value) is not int or value.bit_length() >= _INT_BITS_SAFE:
        raise _Fallback
    return value


def _text(string: Callable[[str], str], value: Any) -> str:
    if type(value) is not str:
        raise _Fallback
    return string(value)


def _leaf(render: _Render, value: Any, depth: int = 5) -> Any:
    """A value at the walk's ``depth`` (a diff's: 5): plain scalars as they are, the rest
    walked."""
    kind = type(value)
    if kind is str:
        return render.string(value)
    if kind is int:
        if value.bit_length() >= _INT_BITS_SAFE:
            raise _Fallback
        return value
    if value is None or kind is bool or (kind is float and math.isfinite(value)):
        return value
    return render._walk(value, depth)
