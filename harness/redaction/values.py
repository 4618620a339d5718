"""Values made safe to write: one bounded walk into JSON-ready data, and short safe text.

:func:`jsonable` and :meth:`~harness.redaction.Scrubber.value` turn anything (cycles,
10,000-deep nesting, objects whose ``repr`` raises, ints past Python's 4,300-digit string
limit, numpy arrays) into JSON-ready data with placeholders (``<cycle>``, ``<too deep>``,
``<unrepresentable: ...>``), and :func:`safe_repr` into text (lone surrogates stay: each writer
escapes or replaces them, :func:`clean_text`); the views also cap the size (:data:`VIEW_LIMITS`)
so a 10 MB result costs a report milliseconds, not minutes. See docs/architecture.md,
"Redaction".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # the scrubber walks with this module's renderer: no import back at run time
    from harness.redaction.scrubber import Scrubber

__all__ = [
    "CYCLE",
    "DATA_LIMITS",
    "TOO_DEEP",
    "VIEW_LIMITS",
    "Limits",
    "clean_text",
    "jsonable",
    "safe_repr",
]

CYCLE: Final = "<cycle>"
"""What a container shows where it contains itself (further up the same value)."""
TOO_DEEP: Final = "<too deep>"
"""What a container nested past the depth limit shows."""
_INT_DIGITS_LIMIT = 4300
"""Python refuses to turn longer ints into text (``sys.get_int_max_str_digits``)."""
_INT_BITS_SAFE = 14_000
"""Ints shorter than this many bits have fewer than 4,300 digits: no need to try."""


@dataclass(frozen=True, slots=True)
class Limits:
    """How much of a value is rendered: nesting depth, entries per container, total characters."""

    depth: int
    items: int | None = None
    """Entries kept per list or mapping (None: all)."""
    chars: int | None = None
    """Characters kept over all the value's strings (None: all); past it strings are cut."""


DATA_LIMITS: Final = Limits(depth=200)
""":func:`jsonable`: complete data, only deep nesting cut (JSON writers recurse)."""
VIEW_LIMITS: Final = Limits(depth=32, items=1000, chars=100_000)
"""The report views (:meth:`Scrubber.value`): what a reader can take in, and what keeps a 10 MB
string or a million-element list to milliseconds in every report (docs/architecture.md,
"Redaction")."""

_MIN_ROOM = 200
"""A string is never cut shorter than this, even once the value's budget is spent."""
_SCRUB_PAD = 4096
"""Characters past a cut that are still scrubbed before cutting: a secret or token that
straddles the cut is masked whole, never shown in part."""


def clean_text(text: str) -> str:
    """``text`` with lone surrogates escaped (``\udc80`` as the six characters ``\\udc80``).

    A lone surrogate cannot be encoded as UTF-8: written raw it breaks a JSON file, the
    console and the trace file. Every other character is kept.
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _int_text(value: int) -> str | None:
    """None when ``value`` can be written as digits, else its placeholder."""
    if value.bit_length() < _INT_BITS_SAFE:
        return None
    digits = int(value.bit_length() * math.log10(2)) + 1
    if digits <= _INT_DIGITS_LIMIT:
        try:
            int.__repr__(value)
            return None
        except ValueError:
            pass
    return f"<unrepresentable: int with about {digits:,} digits>"


def _int_or_text(value: int) -> int | str:
    shown = _int_text(value)
    return value if shown is None else shown


def _unrepresentable(value: Any, exc: BaseException) -> str:
    kind = type(value).__name__
    return f"<unrepresentable: {kind} ({type(exc).__name__}: {_exc_text(exc)})>"


def _exc_text(exc: BaseException) -> str:
    try:
        return clean_text(str(exc))[:200]
    except Exception:
        return "?"


def _describe(value: Any) -> str:
    """A non-JSON object as text: a matcher's ``$`` form, else its ``repr``; never raises."""
    try:
        # a matcher (harness.values.Matcher) is known by its two methods, as the walk knows it
        # by ``to_json``: this bottom layer imports nothing of harness
        describe = getattr(value, "describe", None)
        is_matcher = callable(getattr(value, "to_json", None)) and not isinstance(value, type)
        if callable(describe) and is_matcher:
            return str(describe())
        return repr(value)
    except Exception as exc:  # a repr that raises, or an odd object: say so, do not fail
        return _unrepresentable(value, exc)


def _cut(text: str, room: int) -> str:
    if len(text) <= room:
        return text
    return f"{text[:room]}… <{len(text) - room:,} more characters>"


class _Render:
    """One bounded walk of a value into JSON-ready data, cycles and depth cut, never raising.

    With a scrubber it also masks secret keys and scrubs every string on the way: one walk per
    value for the views (key masking, conversion and text scrubbing used to be three).
    """

    __slots__ = ("_path", "chars_left", "limits", "scrubber")

    def __init__(self, limits: Limits, scrubber: Scrubber | None = None) -> None:
        self.limits = limits
        self.scrubber = scrubber
        self.chars_left = limits.chars
        self._path: set[int] = set()

    def walk(self, value: Any, depth: int = 0) -> Any:
        try:
            return self._walk(value, depth)
        except Exception as exc:  # RecursionError included: a hostile value is its own problem
            return self.string(_unrepresentable(value, exc))

    def _walk(self, value: Any, depth: int) -> Any:
        kind = type(value)  # exact types first: a million-number list takes no ABC checks
        if kind is str:
            return self.string(value)
        if kind is int:
            return value if value.bit_length() < _INT_BITS_SAFE else _int_or_text(value)
        if value is None or kind is bool or (kind is float and math.isfinite(value)):
            return value
        if isinstance(value, bool):
            return value
        if isinstance(value, int):
            shown = _int_text(value)
            return int(value) if shown is None else shown
        if isinstance(value, float):
            return float(value) if math.isfinite(value) else repr(float(value))
        if isinstance(value, str):
            return self.string(value)
        if kind is dict or kind is list or isinstance(value, (Mapping, list, tuple)):
            if depth >= self.limits.depth:
                return TOO_DEEP
            marker = id(value)
            if marker in self._path:
                return CYCLE
            self._path.add(marker)
            try:
                if kind is dict or isinstance(value, Mapping):
                    return self._mapping(value, depth)
                return self._sequence(value, depth)
            finally:
                self._path.discard(marker)
        to_json = getattr(value, "to_json", None)  # matchers: back to their `$` mapping
        if callable(to_json):
            return self._walk(to_json(), depth)
        tolist = getattr(value, "tolist", None)  # numpy arrays and scalars, array.array
        if callable(tolist) and not isinstance(value, type):
            try:
                plain = tolist()
            except Exception:
                plain = value
            if plain is not value:
                return self._walk(plain, depth)
        return self.string(_describe(value))

    def _mapping(self, mapping: Mapping[Any, Any], depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        scrubber = self.scrubber
        limit = self.limits.items
        walk = self._walk  # the views' hot loop: no attribute lookups
        for count, (key, item) in enumerate(mapping.items()):
            if limit is not None and (count >= limit or self._spent()):
                out["…"] = f"<{len(mapping) - count:,} more entries>"
                break
            name = key if isinstance(key, str) else _key_text(key)
            if scrubber is None:
                out[self.string(name)] = walk(item, depth + 1)
                continue
            secret, shown = scrubber.key(name)
            left = self.chars_left
            if left is None:
                pass
            elif len(name) <= left:  # what string() does with a key that fits, remembered
                self.chars_left = left - len(shown)
            else:
                shown = self.string(name)
            out[shown] = scrubber.redactor.mask if secret else walk(item, depth + 1)
        return out

    def _sequence(self, items: list[Any] | tuple[Any, ...], depth: int) -> list[Any]:
        limit = self.limits.items
        walk = self._walk
        if limit is None:
            return [walk(item, depth + 1) for item in items]
        out: list[Any] = []
        for count, item in enumerate(items):
            if count >= limit or self._spent():
                out.append(f"<{len(items) - count:,} more items>")
                break
            out.append(walk(item, depth + 1))
        return out

    def _spent(self) -> bool:
        return self.chars_left is not None and self.chars_left <= 0

    def string(self, text: str) -> str:
        """A string as the value shows it: scrubbed, then cut to what the budget has left."""
        left = self.chars_left
        scrubber = self.scrubber
        if left is not None and len(text) <= left:  # the usual case: it fits whole
            if scrubber is not None:
                text = scrubber.redacted_text(text)
            self.chars_left = left - len(text)
            return text
        room = None if left is None else max(left, _MIN_ROOM)
        if room is not None and len(text) > room:
            more = len(text) - room
            head = text[: room + _SCRUB_PAD]
            if scrubber is not None:
                head = scrubber.redacted_text(head)
            text = f"{head[:room]}… <{more:,} more characters>"
        elif scrubber is not None:
            text = scrubber.redacted_text(text)
        if self.chars_left is not None:
            self.chars_left -= len(text)
        return text


def _key_text(key: Any) -> str:
    try:
        return str(key)
    except Exception as exc:
        return _unrepresentable(key, exc)


def jsonable(value: Any) -> Any:
    """A JSON-ready copy of anything, never raising: matchers become their ``$`` mapping, other
    objects their text; cycles, nesting past :data:`DATA_LIMITS`, unwritable ints and failing
    ``repr`` become placeholders."""
    return _Render(DATA_LIMITS).walk(value)


_REPR_LIMIT = 10_000


def safe_repr(value: Any, limit: int = _REPR_LIMIT) -> str:
    """``repr(value)`` that never raises and stays short: literals as ``repr``, containers as
    the ``repr`` of their JSON-ready form (:data:`VIEW_LIMITS`), matchers as their ``$`` form,
    cut to ``limit`` characters."""
    try:
        if isinstance(value, str):
            return _cut(repr(value[: limit + 1]), limit)
        if isinstance(value, int) and not isinstance(value, bool):
            shown = _int_text(value)
            return shown if shown is not None else _cut(repr(int(value)), limit)
        if isinstance(value, (float, bool)) or value is None:
            return repr(value)
        if isinstance(value, (Mapping, list, tuple)):
            return _cut(repr(_Render(VIEW_LIMITS).walk(value)), limit)
        return _cut(_describe(value), limit)
    except Exception as exc:
        return _unrepresentable(value, exc)
