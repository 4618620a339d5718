"""The matchers that test a value directly: ``$any``, ``$absent``, ``$regex``, ``$icase``,
``$approx``, ``$type`` (docs/metrics.md, Matchers).

The matchers whose operand is itself a pattern (``$contains``, ``$one_of``, ``$subset``,
``$unordered``, ``$optional``) compile that operand, so they live beside the compiler in
:mod:`harness.values.compile`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any, ClassVar

from harness.errors import MatcherError
from harness.values.equivalence import _SEQUENCE_TYPES, ABSENT, _is_nan, _is_number
from harness.values.pattern import Matcher


@dataclass(frozen=True, slots=True)
class AnyValue(Matcher):
    """``$any``: the key must be present; any value (None included) is accepted."""

    key: ClassVar[str] = "$any"

    def matches(self, actual: Any) -> bool:
        """Present, whatever the value."""
        return actual is not ABSENT

    def describe(self) -> str:
        """``$any``."""
        return "$any"

    def to_json(self) -> Any:
        """``{"$any": true}``."""
        return {"$any": True}


@dataclass(frozen=True, slots=True)
class Absent(Matcher):
    """``$absent``: the key must not be present (a key present with None is not absent)."""

    key: ClassVar[str] = "$absent"

    def matches(self, actual: Any) -> bool:
        """Only ABSENT passes."""
        return actual is ABSENT

    def describe(self) -> str:
        """``$absent``."""
        return "$absent"

    def to_json(self) -> Any:
        """``{"$absent": true}``."""
        return {"$absent": True}


@dataclass(frozen=True, slots=True)
class Regex(Matcher):
    """``$regex``: a string in which the regular expression is found (``re.search``)."""

    pattern: str
    _compiled: re.Pattern[str] = field(init=False, repr=False, compare=False, hash=False)
    key: ClassVar[str] = "$regex"

    def __post_init__(self) -> None:
        if not isinstance(self.pattern, str):
            raise MatcherError(
                f"$regex needs a string pattern, got {type(self.pattern).__name__} "
                f"{self.pattern!r}; quote it in YAML"
            )
        try:
            compiled = re.compile(self.pattern)
        except re.error as exc:
            raise MatcherError(
                f"$regex {self.pattern!r} is not a valid regular expression: {exc}"
            ) from None
        object.__setattr__(self, "_compiled", compiled)

    def matches(self, actual: Any) -> bool:
        """A string containing a match."""
        return isinstance(actual, str) and self._compiled.search(actual) is not None

    def describe(self) -> str:
        """``$regex '^Ber'``."""
        return f"$regex {self.pattern!r}"

    def to_json(self) -> Any:
        """``{"$regex": pattern}``."""
        return {"$regex": self.pattern}


@dataclass(frozen=True, slots=True)
class ICase(Matcher):
    """``$icase``: a string equal to the operand ignoring case (Unicode casefold)."""

    text: str
    _folded: str = field(init=False, repr=False, compare=False, hash=False)
    key: ClassVar[str] = "$icase"

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise MatcherError(
                f"$icase needs a string, got {type(self.text).__name__} {self.text!r}"
            )
        object.__setattr__(self, "_folded", self.text.casefold())

    def matches(self, actual: Any) -> bool:
        """Case-insensitive string equality."""
        return isinstance(actual, str) and actual.casefold() == self._folded

    def describe(self) -> str:
        """``$icase 'berlin'``."""
        return f"$icase {self.text!r}"

    def to_json(self) -> Any:
        """``{"$icase": text}``."""
        return {"$icase": self.text}


_ZERO = Decimal(0)
_DEFAULT_REL = Decimal("1e-6")


def _to_decimal(number: Any) -> Decimal:
    """A number as the decimal its author wrote: floats via repr, so 3.09 is 3.09, not 3.0899…"""
    if isinstance(number, Decimal):
        return number
    if isinstance(number, float):
        return Decimal(repr(number))
    if isinstance(number, Fraction):
        return Decimal(number.numerator) / Decimal(number.denominator)
    return Decimal(number)


def _check_tolerance(name: str, value: Any) -> None:
    if value is None:
        return
    if not _is_number(value) or _is_nan(value):
        raise MatcherError(f"{name} needs a number, got {type(value).__name__} {value!r}")
    if value < 0:
        raise MatcherError(f"{name} must be >= 0, got {value!r}")


@dataclass(frozen=True, slots=True)
class Approx(Matcher):
    """``$approx``: a number within ``tol`` (absolute) or ``rel`` (relative) of the operand.

    With both, the larger allowance wins; with neither, ``rel=1e-6`` (like ``pytest.approx``).
    """

    value: int | float | Decimal | Fraction
    tol: int | float | Decimal | Fraction | None = None
    rel: int | float | Decimal | Fraction | None = None
    key: ClassVar[str] = "$approx"

    def __post_init__(self) -> None:
        if not _is_number(self.value) or _is_nan(self.value):
            raise MatcherError(
                f"$approx needs a number, got {type(self.value).__name__} {self.value!r}"
            )
        _check_tolerance("$tol", self.tol)
        _check_tolerance("$rel", self.rel)

    def allowance(self) -> Decimal:
        """The absolute distance accepted around the expected value."""
        value = abs(_to_decimal(self.value))
        if self.tol is None and self.rel is None:
            return value * _DEFAULT_REL
        absolute = _to_decimal(self.tol) if self.tol is not None else _ZERO
        relative = _to_decimal(self.rel) * value if self.rel is not None else _ZERO
        return max(absolute, relative)

    def matches(self, actual: Any) -> bool:
        """A number (not bool, not NaN) within the allowance, boundary included."""
        if not _is_number(actual) or _is_nan(actual):
            return False
        if actual == self.value:  # also covers equal infinities, whose difference is NaN
            return True
        with localcontext() as context:
            context.prec = 50
            distance = abs(_to_decimal(actual) - _to_decimal(self.value))
            return bool(distance <= self.allowance())

    def describe(self) -> str:
        """``$approx 3.1 ±0.01`` / ``$approx 3.1 ±5%``."""
        parts = [f"$approx {self.value!r}"]
        if self.tol is not None:
            parts.append(f"±{self.tol!r}")
        if self.rel is not None:
            parts.append(f"±{float(self.rel) * 100:g}%")
        return " ".join(parts)

    def to_json(self) -> Any:
        """``{"$approx": value, "$tol": tol, "$rel": rel}`` (tolerances only when set)."""
        out: dict[str, Any] = {"$approx": self.value}
        if self.tol is not None:
            out["$tol"] = self.tol
        if self.rel is not None:
            out["$rel"] = self.rel
        return out


_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: _is_number(v),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, Mapping),
    "array": lambda v: isinstance(v, _SEQUENCE_TYPES),
    "null": lambda v: v is None,
}
TYPE_NAMES: tuple[str, ...] = tuple(_TYPE_CHECKS)
"""The type names ``$type`` accepts (JSON Schema's)."""


def _suggest(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.5)
    return f" — did you mean {close[0]!r}?" if close else ""


@dataclass(frozen=True, slots=True)
class Type(Matcher):
    """``$type``: a JSON type name; ``integer`` excludes bool, ``number`` is any non-bool number."""

    name: str
    key: ClassVar[str] = "$type"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or self.name not in _TYPE_CHECKS:
            hint = _suggest(self.name, TYPE_NAMES) if isinstance(self.name, str) else ""
            raise MatcherError(
                f"$type must be one of {', '.join(TYPE_NAMES)}; got {self.name!r}{hint}"
            )

    def matches(self, actual: Any) -> bool:
        """The actual value has that JSON type."""
        return actual is not ABSENT and _TYPE_CHECKS[self.name](actual)

    def describe(self) -> str:
        """``$type string``."""
        return f"$type {self.name}"

    def to_json(self) -> Any:
        """``{"$type": name}``."""
        return {"$type": self.name}
