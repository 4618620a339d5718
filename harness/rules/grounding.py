"""The ``grounded`` occurrence test: was a value seen in the user's input or an earlier result?

The definition is docs/metrics.md, "Rules" (``grounded``). The sources are read once per
trajectory into a :class:`GroundingIndex` (built on first use, kept on the trajectory, reading
results only as far as the calls checked so far need them): each ``ok`` result parsed once,
its strings and numbers keyed by the first source holding them, and every text in source
order. A string equal to a structure's string, or a number equal to a structure's number, is a
dictionary hit; any other string is looked for in the earlier texts (``str.find`` and a look at
the two characters around each occurrence), and numbers written in text are read from the
texts once, the first time a number is not found in a structure (and from later texts as more
results are read).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any

from harness.rules.trajectory import Trajectory
from harness.values.results import json_structure

USER = -1
"""The source index of the user's messages: before every call."""

_NEVER = 1 << 62
_NUMBERS = (int, float, Decimal, Fraction)

NUMBER = re.compile(
    r"(?<![\w.,-])-?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?(?![\w-]|[.,][0-9])"
)
"""A number written in text: an optional ``-``, digits (or ``1,050`` thousands groups), an
optional decimal part; not part of a word, and not inside a longer number (``1.2.3``)."""


def is_word_char(char: str) -> bool:
    """Does ``char`` continue a word (a letter, a digit, ``_`` or ``-``)?"""
    return char.isalnum() or char == "_" or char == "-"


class GroundingIndex:
    """A trajectory's sources, read once: structure values by first source, texts in order."""

    __slots__ = (
        "calls",
        "gaps",
        "numbered",
        "numbers",
        "read",
        "strings",
        "text_numbers",
        "texts",
        "uncaptured",
        "user_known",
    )

    def __init__(self, trajectory: Trajectory) -> None:
        """Read the user's messages (source -1); the ``ok`` calls' results (their index) are
        read as far as a question needs them: a value of call 3 needs calls 0 to 2 only."""
        self.strings: dict[str, int] = {}
        self.numbers: dict[Any, int] = {}
        self.texts: list[tuple[int, str]] = []
        self.text_numbers: dict[Any, int] = {}
        self.numbered = 0
        """How many of ``texts`` ``text_numbers`` has read."""
        self.user_known = trajectory.user_inputs is not None
        # the first call recorded without content: an unseen value after it may be its result's
        self.uncaptured = min(trajectory.not_captured, default=_NEVER)
        for text in trajectory.user_inputs or ():
            self.texts.append((USER, text))
        if trajectory.earlier_results is not None:  # an earlier request's results: before all
            self.texts.extend((USER, text) for text in trajectory.earlier_results())
        self.calls = trajectory.calls
        self.gaps = trajectory.not_captured
        self.read = 0
        """How many calls' results are read (in order: each source keeps its first index)."""

    def seen(self, value: Any, before: int) -> bool:
        """Was ``value`` (a str or a number) seen in a source with index < ``before``?"""
        if self.read < before:
            self._read_to(before)
        if isinstance(value, str):
            if value == "":
                return True
            return self.strings.get(value, _NEVER) < before or self._scan(value, before)
        if isinstance(value, _NUMBERS):
            if value != value:  # NaN: equal to nothing
                return False
            if self.numbers.get(value, _NEVER) < before:
                return True
            return self._numbers_in_texts().get(value, _NEVER) < before
        return self.seen(str(value), before)  # not a JSON value: checked as its text

    def _read_to(self, before: int) -> None:
        calls, gaps = self.calls, self.gaps
        end = min(before, len(calls))
        for position in range(self.read, end):
            call = calls[position]
            if call.status == "ok" and position not in gaps:
                self._result(position, call.result)
        self.read = max(self.read, end)

    def complete_before(self, before: int) -> bool:
        """Were all sources before ``before`` captured (so an unseen value is really unseen)?"""
        return self.user_known and self.uncaptured >= before

    def _scan(self, value: str, before: int) -> bool:
        width = len(value)
        for source, text in self.texts:
            if source >= before:
                return False
            at = text.find(value)
            while at >= 0:
                end = at + width
                if (at == 0 or not is_word_char(text[at - 1])) and (
                    end == len(text) or not is_word_char(text[end])
                ):
                    return True
                at = text.find(value, at + 1)
        return False

    def _numbers_in_texts(self) -> dict[Any, int]:
        found = self.text_numbers
        texts = self.texts
        for source, text in texts[self.numbered :]:  # the texts read since the last call
            for match in NUMBER.finditer(text):
                number = number_value(match.group())
                if number is not None:
                    found.setdefault(number, source)
        self.numbered = len(texts)
        return found

    def _result(self, source: int, result: Any) -> None:
        if isinstance(result, str):
            parsed = json_structure(result)
            if parsed is None:
                self.texts.append((source, result))
                return
            result = parsed
        strings, numbers, texts = self.strings, self.numbers, self.texts
        stack = [result]
        opened: set[int] = set()  # containers walked: a result built in Python may hold itself
        while stack:
            item = stack.pop()
            cls = item.__class__
            if cls is str:
                strings.setdefault(item, source)
                texts.append((source, item))
            elif cls is dict or cls is list:
                if id(item) in opened:
                    continue
                opened.add(id(item))
                stack.extend(item)  # a dict's keys are texts too
                if cls is dict:
                    stack.extend(item.values())
            elif cls is int or cls is float:
                if item == item:  # not NaN
                    numbers.setdefault(item, source)
            elif cls is bool or item is None:
                continue
            else:
                self._other(source, item, stack, opened)

    def _other(self, source: int, item: Any, stack: list[Any], opened: set[int]) -> None:
        """A value outside JSON's exact types: subclasses by their base, others as text."""
        if isinstance(item, str):
            stack.append(str.__str__(item))  # an exact str, whatever the subclass's __str__
        elif isinstance(item, (Mapping, list, tuple)):
            if id(item) not in opened:
                opened.add(id(item))
                stack.extend(item)
                if isinstance(item, Mapping):
                    stack.extend(item.values())
        elif isinstance(item, bool):
            return
        elif isinstance(item, _NUMBERS):
            if item == item:
                self.numbers.setdefault(item, source)
        else:
            self.texts.append((source, str(item)))


def number_value(token: str) -> int | float | None:
    """The value of a number as :data:`NUMBER` finds it (None past ``int``'s digit limit)."""
    digits = token.replace(",", "")
    try:
        return float(digits) if "." in digits else int(digits)
    except ValueError:
        return None


def index_of(trajectory: Trajectory) -> GroundingIndex:
    """The trajectory's grounding index, built on the first call and kept on it."""
    index = trajectory._grounding
    if index is None:
        index = GroundingIndex(trajectory)
        object.__setattr__(trajectory, "_grounding", index)
    return index  # type: ignore[no-any-return]


def leaves(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """The values a ``grounded`` argument checks, with their dot paths: a list's items and a
    mapping's values, at any depth, down to strings and numbers (booleans and null skipped:
    there is nothing to invent)."""
    cls = value.__class__
    if cls is str or cls is int or cls is float:  # most arguments: one leaf, itself
        yield path, value
        return
    stack = [(path, value)]
    opened: set[int] = set()  # arguments built in Python may hold themselves
    while stack:
        where, item = stack.pop()
        if isinstance(item, (Mapping, list, tuple)):
            if id(item) in opened:
                continue
            opened.add(id(item))
        if isinstance(item, Mapping):
            stack.extend((f"{where}.{key}", inner) for key, inner in reversed(list(item.items())))
        elif isinstance(item, (list, tuple)):
            stack.extend((f"{where}.{i}", inner) for i, inner in reversed(list(enumerate(item))))
        elif isinstance(item, bool) or item is None:
            continue
        else:
            yield where, item
