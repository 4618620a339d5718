"""Value equivalence (DESIGN §3) and argument matchers: the one comparison used everywhere.

Two rules, applied by position:

* the **top level** of an argument (and every option, item or value handed to a matcher) compares
  numbers by value (``3 == 3.0 == Decimal("3.00")``, never bool, NaN matches nothing);
* **inside** a plain dict or list, values compare strictly: types must agree (nested ``3 != 3.0``,
  ``True != 1``), dict key order is irrelevant, list order matters.

A *pattern* is what an expectation holds for one argument: a plain literal (compared with
:func:`equivalent`, no allocation), or a :class:`Matcher`. Plain dicts/lists that contain a matcher
at any depth compile to :class:`DictPattern` / :class:`ListPattern`. Matchers behave the same at
every depth. Every matcher is a frozen, hashable dataclass.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any, ClassVar, Literal

from harness.errors import MatcherError

ArgCode = Literal["wrong_args", "missing_arg", "extra_arg"]


class _Absent:
    """Marks a key that is not present in the actual arguments."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<absent>"

    def __reduce__(self) -> str:
        # Keeps the sentinel a singleton across pickling (pytest-xdist ships results around).
        return "ABSENT"


ABSENT: Any = _Absent()

_NUMBER_TYPES = (int, float, Decimal, Fraction)
_SEQUENCE_TYPES = (list, tuple)


@dataclass(frozen=True, slots=True)
class ArgDiff:
    """One argument that differs: where (JSON pointer), what was expected, what was found, why."""

    path: str
    expected: Any
    actual: Any
    code: ArgCode
    message: str


@dataclass(frozen=True, slots=True)
class ArgCheck:
    """The outcome of checking actual arguments against a pattern, argument by argument.

    ``total`` counts the expected (top-level) arguments, ``correct`` those that matched; there is
    exactly one diff per wrong argument (``len(diffs) == total - correct``), pointing at the
    deepest mismatch found. ``extra_keys`` are actual keys the pattern does not mention.
    """

    correct: int
    total: int
    diffs: tuple[ArgDiff, ...]
    extra_keys: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """True when every expected argument matched (extra actual keys do not count)."""
        return not self.diffs


# ---------------------------------------------------------------------------------------------
# Equivalence
# ---------------------------------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, _NUMBER_TYPES) and not isinstance(value, bool)


def _is_nan(value: Any) -> bool:
    if isinstance(value, float):
        return value != value
    if isinstance(value, Decimal):
        return value.is_nan()
    return False


def _numbers_equal(expected: Any, actual: Any) -> bool:
    """Numeric value equality of two numbers (bool excluded by the caller); NaN never equal."""
    if _is_nan(expected) or _is_nan(actual):
        return False
    return bool(expected == actual)


_NONE_TYPE = type(None)
# Exact JSON scalar types: for these, "same type and ==" is the whole nested rule.
_EXACT_SCALARS = frozenset((str, int, float, bool, _NONE_TYPE))


def equivalent(expected: Any, actual: Any) -> bool:
    """Top-level equivalence: numbers by value (never bool), deep type-strict equality below."""
    # Fast paths on exact types (what parsed JSON holds), most frequent first; anything else,
    # subclasses included, takes the general route below.
    cls = expected.__class__
    if cls is str:
        return expected == actual and isinstance(actual, str)
    other = actual.__class__
    if cls is int or cls is float:
        if other is int or other is float:
            return bool(expected == actual)  # NaN compares unequal to everything
    elif cls is bool:
        return expected is actual
    elif cls is _NONE_TYPE:
        return actual is None
    elif cls is dict or cls is list:
        return strict_equal(expected, actual)
    return _equivalent_general(expected, actual)


def _equivalent_general(expected: Any, actual: Any) -> bool:
    if isinstance(expected, str):
        return isinstance(actual, str) and expected == actual
    if isinstance(expected, bool):
        return isinstance(actual, bool) and expected is actual
    if isinstance(expected, _NUMBER_TYPES):
        return (
            isinstance(actual, _NUMBER_TYPES)
            and not isinstance(actual, bool)
            and _numbers_equal(expected, actual)
        )
    return strict_equal(expected, actual)


def strict_equal(expected: Any, actual: Any) -> bool:
    """Nested equality: types must agree (3 != 3.0, True != 1), dict order ignored, NaN unequal."""
    cls = expected.__class__
    other = actual.__class__
    if cls is dict and other is dict:
        if len(expected) != len(actual):
            return False
        get = actual.get
        for key, value in expected.items():
            found = get(key, ABSENT)
            inner = value.__class__
            # Same exact scalar type on both sides: the recursive call would just compare them.
            if inner is found.__class__ and inner in _EXACT_SCALARS:
                if value != found:
                    return False
            elif found is ABSENT or not strict_equal(value, found):
                return False
        return True
    if cls is list and other is list:
        if len(expected) != len(actual):
            return False
        # A plain loop: all() over a generator costs more than the comparisons on short lists.
        for a, b in zip(expected, actual, strict=True):
            inner = a.__class__
            if inner is b.__class__ and inner in _EXACT_SCALARS:
                if a != b:
                    return False
            elif not strict_equal(a, b):
                return False
        return True
    if cls in _EXACT_SCALARS and other in _EXACT_SCALARS:
        return cls is other and bool(expected == actual)
    return _strict_equal_general(expected, actual)


def _strict_equal_general(expected: Any, actual: Any) -> bool:
    if expected is None:
        return actual is None
    if isinstance(expected, str):
        return isinstance(actual, str) and expected == actual
    if isinstance(expected, bool):
        return isinstance(actual, bool) and expected is actual
    if isinstance(expected, int):
        return isinstance(actual, int) and not isinstance(actual, bool) and expected == actual
    if isinstance(expected, float):
        return isinstance(actual, float) and expected == actual
    if isinstance(expected, Decimal):
        return isinstance(actual, Decimal) and _numbers_equal(expected, actual)
    if isinstance(expected, Fraction):
        return isinstance(actual, Fraction) and expected == actual
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping) or len(expected) != len(actual):
            return False
        for key, value in expected.items():
            found = actual.get(key, ABSENT)
            if found is ABSENT or not strict_equal(value, found):
                return False
        return True
    if isinstance(expected, _SEQUENCE_TYPES):
        if not isinstance(actual, _SEQUENCE_TYPES) or len(expected) != len(actual):
            return False
        return all(strict_equal(a, b) for a, b in zip(expected, actual, strict=True))
    if actual is ABSENT:
        return False
    try:
        return type(expected) is type(actual) and bool(expected == actual)
    except Exception:  # an exotic __eq__ must not crash a scoring run
        return False


# ---------------------------------------------------------------------------------------------
# Literal keys: equivalence as hashing, for literal-only patterns
# ---------------------------------------------------------------------------------------------


class _KeyTag:
    """A marker inside literal keys: compared by identity, it equals no value and no other tag."""

    __slots__ = ("label",)

    def __init__(self, label: str) -> None:
        self.label = label

    def __repr__(self) -> str:
        return f"<{self.label}>"


# bool and None get tags: True == 1 and hash(True) == hash(1), so raw bools would meet numbers.
_KEY_TRUE = _KeyTag("true")
_KEY_FALSE = _KeyTag("false")
_KEY_NULL = _KeyTag("null")
_KEY_LIST = _KeyTag("list")
_KEY_DICT = _KeyTag("dict")


def literal_key(value: Any, top: bool = True) -> Hashable | None:
    """A hashable key, equal for two literals exactly when §3 calls them equivalent; else None.

    ``top=True`` keys a top-level argument value (numbers by value: a number is its own key, and
    Python hashes equal int / float / Decimal / Fraction values alike); ``top=False`` keys a value
    nested in a dict or list (numbers tagged with their type, so nested ``3`` and ``3.0`` differ).
    None means "no exact key": NaN anywhere (containers compare items by identity first, so a
    shared NaN object would make two keys equal where §3 says unequal), a matcher, a subclass or
    any type outside str, int, float, bool, None, Decimal, Fraction, dict, list and tuple.
    """
    cls = value.__class__
    if cls is str:
        return str(value)  # a no-op for an exact str; keeps the return type honest
    if cls is int:
        return value if top else (int, value)
    if cls is float:
        if value != value:
            return None
        return value if top else (float, value)
    if cls is bool:
        return _KEY_TRUE if value else _KEY_FALSE
    if value is None:
        return _KEY_NULL
    if cls is dict:
        entries = []
        for key, item in value.items():
            # Raw dict keys: a frozenset looks them up with the same hash-then-== rule that
            # strict_equal's ``actual.get(key)`` uses, so the two agree on which keys match.
            item_key = literal_key(item, False)
            if item_key is None:
                return None
            entries.append((key, item_key))
        return (_KEY_DICT, frozenset(entries))
    if cls is list or cls is tuple:  # strict_equal treats list and tuple alike
        items = []
        for item in value:
            item_key = literal_key(item, False)
            if item_key is None:
                return None
            items.append(item_key)
        return (_KEY_LIST, tuple(items))
    if cls is Decimal:
        if value.is_nan():
            return None
        return value if top else (Decimal, value)
    if cls is Fraction:
        return value if top else (Fraction, value)
    return None


def args_key(args: Mapping[str, Any]) -> frozenset[tuple[str, Hashable]] | None:
    """A key equal for two literal argument mappings exactly when ``args_equal`` holds; else None.

    ``args_equal(p, a)`` asks for the same keys and equivalent values, which is what equality of
    these frozensets of (key, literal_key(value)) pairs says. None when ``args`` is not a plain
    dict or some value has no :func:`literal_key` (a matcher, NaN, an unknown type).
    """
    if args.__class__ is not dict:
        return None
    entries: list[tuple[str, Hashable]] = []
    for key, value in args.items():
        if value.__class__ is str:  # the common case, kept free of a function call
            entries.append((key, value))
            continue
        value_key = literal_key(value)
        if value_key is None:
            return None
        entries.append((key, value_key))
    return frozenset(entries)


# ---------------------------------------------------------------------------------------------
# Matchers
# ---------------------------------------------------------------------------------------------


class Matcher:
    """Base of every argument matcher: ``matches(actual)`` (actual may be ABSENT), ``describe``."""

    __slots__ = ()
    #: The ``$`` key that spells this matcher in YAML / JSON.
    key: ClassVar[str] = ""

    def matches(self, actual: Any) -> bool:
        """Does ``actual`` (a value, or ABSENT when the key is missing) satisfy this matcher?"""
        raise NotImplementedError

    def describe(self) -> str:
        """The matcher in its ``$`` form, for messages: ``$regex '^Ber'``."""
        raise NotImplementedError

    def to_json(self) -> Any:
        """The ``$`` mapping that compiles back to this matcher (for drafts and JSON reports)."""
        raise NotImplementedError


def _freeze(pattern: Any) -> Any:
    """Make a compiled pattern hashable: plain dicts/lists become Dict/ListPattern (same sense)."""
    if isinstance(pattern, Matcher):
        return pattern
    if isinstance(pattern, Mapping):
        return DictPattern(pattern)
    if isinstance(pattern, _SEQUENCE_TYPES):
        return ListPattern(pattern)
    return pattern


def _pattern_json(pattern: Any) -> Any:
    if isinstance(pattern, Matcher):
        return pattern.to_json()
    return pattern


def _nested_match(pattern: Any, actual: Any) -> bool:
    """Match a value sitting inside a plain dict/list pattern: matchers, else strict equality."""
    if isinstance(pattern, Matcher):
        return pattern.matches(actual)
    return strict_equal(pattern, actual)


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
class Contains(Matcher):
    """``$contains``: a substring of a string actual, or a member (by pattern) of a list actual."""

    item: Any
    key: ClassVar[str] = "$contains"

    def __post_init__(self) -> None:
        object.__setattr__(self, "item", _freeze(compile_pattern(self.item)))

    def matches(self, actual: Any) -> bool:
        """Substring test for strings, membership (top-level rules per item) for lists."""
        if isinstance(actual, str):
            return isinstance(self.item, str) and self.item in actual
        if isinstance(actual, _SEQUENCE_TYPES):
            return any(match_value(self.item, element) for element in actual)
        return False

    def describe(self) -> str:
        """``$contains 'Ber'``."""
        return f"$contains {describe_pattern(self.item)}"

    def to_json(self) -> Any:
        """``{"$contains": item}``."""
        return {"$contains": _pattern_json(self.item)}


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


@dataclass(frozen=True, slots=True)
class OneOf(Matcher):
    """``$one_of``: matches when any option (itself a pattern, top-level rules) matches."""

    options: tuple[Any, ...]
    key: ClassVar[str] = "$one_of"

    def __init__(self, options: Iterable[Any]) -> None:
        """Build from a non-empty list of patterns (literals, ``$`` mappings or matchers)."""
        if isinstance(options, (str, bytes, Mapping)) or not isinstance(options, Iterable):
            raise MatcherError(
                f"$one_of needs a list of options, got {type(options).__name__} {options!r}"
            )
        compiled = tuple(_freeze(compile_pattern(option)) for option in options)
        if not compiled:
            raise MatcherError("$one_of needs at least one option, got an empty list")
        object.__setattr__(self, "options", compiled)

    def matches(self, actual: Any) -> bool:
        """Any option matches."""
        return any(match_value(option, actual) for option in self.options)

    def describe(self) -> str:
        """``$one_of ['tomorrow', '+1']``."""
        return "$one_of [" + ", ".join(describe_pattern(o) for o in self.options) + "]"

    def to_json(self) -> Any:
        """``{"$one_of": [...]}``."""
        return {"$one_of": [_pattern_json(o) for o in self.options]}


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


def _pattern_items(mapping: Mapping[Any, Any], *, subset: bool) -> tuple[tuple[Any, Any], ...]:
    """Compile a mapping's values into a hashable, order-independent tuple of pairs."""
    items = []
    for key, value in mapping.items():
        if subset and _is_plain_mapping(value):
            pattern: Any = Subset(value)
        else:
            pattern = _freeze(compile_pattern(value))
        items.append((key, pattern))
    # Sorted so that key order never changes equality or the hash.
    items.sort(key=lambda kv: repr(kv[0]))
    return tuple(items)


def _is_plain_mapping(value: Any) -> bool:
    return isinstance(value, Mapping) and not _dollar_keys(value)


@dataclass(frozen=True, slots=True)
class Subset(Matcher):
    """``$subset``: a dict holding at least these keys, each matching (nested dicts recursively).

    Each value is a pattern with top-level rules, exactly like the arguments of a call; a nested
    plain dict is itself a subset. Lists inside compare as plain list patterns (order matters).
    """

    items: tuple[tuple[Any, Any], ...]
    key: ClassVar[str] = "$subset"

    def __init__(self, items: Mapping[Any, Any] | Iterable[tuple[Any, Any]]) -> None:
        """Build from a mapping (or pairs) of key -> pattern."""
        if isinstance(items, Mapping):
            mapping: Mapping[Any, Any] = items
        elif isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
            raise MatcherError(f"$subset needs a mapping, got {type(items).__name__} {items!r}")
        else:
            try:
                mapping = dict(items)
            except (TypeError, ValueError):
                raise MatcherError(
                    f"$subset needs a mapping, got {type(items).__name__} {items!r}"
                ) from None
        if _dollar_keys(mapping):
            raise MatcherError(
                f"$subset needs a plain mapping of key -> pattern, got matcher keys "
                f"{_dollar_keys(mapping)}; write {{$subset: {{key: {{$regex: ...}}}}}}"
            )
        object.__setattr__(self, "items", _pattern_items(mapping, subset=True))

    def matches(self, actual: Any) -> bool:
        """Every listed key present (unless its pattern allows absence) and matching."""
        if not isinstance(actual, Mapping):
            return False
        return all(match_value(pattern, actual.get(key, ABSENT)) for key, pattern in self.items)

    def describe(self) -> str:
        """``$subset {'a': 1}``."""
        return f"$subset {_describe_items(self.items)}"

    def to_json(self) -> Any:
        """``{"$subset": {...}}``."""
        return {"$subset": {k: _subset_json(v) for k, v in self.items}}


def _subset_json(pattern: Any) -> Any:
    if isinstance(pattern, Subset):
        return {k: _subset_json(v) for k, v in pattern.items}
    return _pattern_json(pattern)


def _bipartite_perfect(patterns: tuple[Any, ...], actual: list[Any] | tuple[Any, ...]) -> bool:
    """Can every pattern take its own actual item (a perfect matching)? Kuhn's augmenting paths.

    A greedy scan is wrong as soon as one pattern accepts several items (``$any`` would steal the
    item a specific pattern needs), so this searches for augmenting paths; lists are small.
    """
    size = len(patterns)
    if size != len(actual):
        return False
    edges = [[j for j, item in enumerate(actual) if match_value(p, item)] for p in patterns]
    owner = [-1] * size

    def augment(i: int, seen: list[bool]) -> bool:
        for j in edges[i]:
            if seen[j]:
                continue
            seen[j] = True
            if owner[j] == -1 or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    return all(edges[i] and augment(i, [False] * size) for i in range(size))


@dataclass(frozen=True, slots=True)
class Unordered(Matcher):
    """``$unordered``: a list equal to the operand as a multiset (items are patterns)."""

    items: tuple[Any, ...]
    key: ClassVar[str] = "$unordered"

    def __init__(self, items: list[Any] | tuple[Any, ...]) -> None:
        """Build from a list of patterns (literals, ``$`` mappings or matchers)."""
        if not isinstance(items, _SEQUENCE_TYPES):
            raise MatcherError(f"$unordered needs a list, got {type(items).__name__} {items!r}")
        object.__setattr__(self, "items", tuple(_freeze(compile_pattern(item)) for item in items))

    def matches(self, actual: Any) -> bool:
        """Same length and a one-to-one pairing of pattern items to actual items."""
        return isinstance(actual, _SEQUENCE_TYPES) and _bipartite_perfect(self.items, actual)

    def describe(self) -> str:
        """``$unordered [1, 2]``."""
        return "$unordered [" + ", ".join(describe_pattern(i) for i in self.items) + "]"

    def to_json(self) -> Any:
        """``{"$unordered": [...]}``."""
        return {"$unordered": [_pattern_json(i) for i in self.items]}


@dataclass(frozen=True, slots=True)
class OptionalArg(Matcher):
    """``$optional``: the key may be absent; when present its value must match ``inner``."""

    inner: Any
    key: ClassVar[str] = "$optional"

    def __post_init__(self) -> None:
        object.__setattr__(self, "inner", _freeze(compile_pattern(self.inner)))

    def matches(self, actual: Any) -> bool:
        """ABSENT, or a value matching the inner pattern."""
        return actual is ABSENT or match_value(self.inner, actual)

    def describe(self) -> str:
        """``$optional 'x'``."""
        return f"$optional {describe_pattern(self.inner)}"

    def to_json(self) -> Any:
        """``{"$optional": inner}``."""
        return {"$optional": _pattern_json(self.inner)}


@dataclass(frozen=True, slots=True)
class DictPattern(Matcher):
    """A literal dict holding matchers: the same key set, each value by its pattern.

    Plain values inside compare strictly (nested rules); an ``$absent`` / ``$optional`` value
    lets its key be missing.
    """

    items: tuple[tuple[Any, Any], ...]
    key: ClassVar[str] = ""

    def __init__(self, items: Mapping[Any, Any] | Iterable[tuple[Any, Any]]) -> None:
        """Build from a mapping (or pairs) of key -> pattern; values are frozen, not compiled."""
        pairs = items.items() if isinstance(items, Mapping) else items
        frozen = [(k, _freeze(v)) for k, v in pairs]
        frozen.sort(key=lambda kv: repr(kv[0]))
        object.__setattr__(self, "items", tuple(frozen))

    def matches(self, actual: Any) -> bool:
        """A mapping with no keys beyond the pattern's, each value matching (strictly)."""
        if not isinstance(actual, Mapping):
            return False
        seen = 0
        for key, pattern in self.items:
            value = actual.get(key, ABSENT)
            if value is not ABSENT:
                seen += 1
            if not _nested_match(pattern, value):
                return False
        return seen == len(actual)

    def describe(self) -> str:
        """``{'city': $regex '^B', 'n': 3}``."""
        return _describe_items(self.items)

    def to_json(self) -> Any:
        """A plain dict whose values are in ``$`` form."""
        return {k: _pattern_json(v) for k, v in self.items}


@dataclass(frozen=True, slots=True)
class ListPattern(Matcher):
    """A literal list holding matchers: same length, item by item in order (strict for plain)."""

    items: tuple[Any, ...]
    key: ClassVar[str] = ""

    def __init__(self, items: Iterable[Any]) -> None:
        """Build from a sequence of patterns (frozen, not compiled)."""
        object.__setattr__(self, "items", tuple(_freeze(i) for i in items))

    def matches(self, actual: Any) -> bool:
        """A list of the same length whose items match in order."""
        if not isinstance(actual, _SEQUENCE_TYPES) or len(actual) != len(self.items):
            return False
        return all(_nested_match(p, a) for p, a in zip(self.items, actual, strict=True))

    def describe(self) -> str:
        """``[$any, 2]``."""
        return "[" + ", ".join(describe_pattern(i) for i in self.items) + "]"

    def to_json(self) -> Any:
        """A plain list whose items are in ``$`` form."""
        return [_pattern_json(i) for i in self.items]


def _describe_items(items: Iterable[tuple[Any, Any]]) -> str:
    return "{" + ", ".join(f"{k!r}: {describe_pattern(v)}" for k, v in items) + "}"


# ---------------------------------------------------------------------------------------------
# Compilation of ``$`` mappings
# ---------------------------------------------------------------------------------------------

_FLAG_MATCHERS: dict[str, Callable[[], Matcher]] = {"$any": AnyValue, "$absent": Absent}
_OPERAND_MATCHERS: dict[str, Callable[[Any], Matcher]] = {
    "$regex": Regex,
    "$contains": Contains,
    "$icase": ICase,
    "$one_of": OneOf,
    "$type": Type,
    "$subset": Subset,
    "$unordered": Unordered,
    "$optional": OptionalArg,
}
_APPROX_OPTIONS = ("$tol", "$rel")
MATCHER_KEYS: tuple[str, ...] = (
    "$any",
    "$absent",
    "$regex",
    "$contains",
    "$icase",
    "$approx",
    "$one_of",
    "$type",
    "$subset",
    "$unordered",
    "$optional",
    "$literal",
)
"""Every ``$`` key a pattern mapping may use (``$tol`` / ``$rel`` only beside ``$approx``)."""
_ALL_KEYS = (*MATCHER_KEYS, *_APPROX_OPTIONS)


def pointer_token(key: Any) -> str:
    """Escape one JSON-pointer reference token (RFC 6901: ``~`` -> ``~0``, ``/`` -> ``~1``)."""
    return str(key).replace("~", "~0").replace("/", "~1")


def _dollar_keys(mapping: Mapping[Any, Any]) -> list[str]:
    return [k for k in mapping if isinstance(k, str) and k.startswith("$")]


_SCALARS = (str, int, float, bool, type(None))
_PASS_THROUGH = (*_SCALARS, Matcher)


def compile_pattern(value: Any, path: str = "") -> Any:
    """Turn ``$``-key mappings into matcher objects; raise MatcherError naming the path.

    Plain literals come back as plain values (compared with :func:`equivalent`, no allocation);
    dicts/lists that contain a matcher somewhere become :class:`DictPattern` / :class:`ListPattern`.
    Compiling a compiled pattern returns an equal pattern.
    """
    if isinstance(value, _PASS_THROUGH):
        return value
    if isinstance(value, Mapping):
        dollars = _dollar_keys(value)
        if dollars:
            return _compile_matcher(value, dollars, path)
        compiled = {k: compile_pattern(v, f"{path}/{pointer_token(k)}") for k, v in value.items()}
        if any(isinstance(v, Matcher) for v in compiled.values()):
            return DictPattern(compiled)
        return compiled
    if isinstance(value, _SEQUENCE_TYPES):
        items = [compile_pattern(v, f"{path}/{i}") for i, v in enumerate(value)]
        if any(isinstance(v, Matcher) for v in items):
            return ListPattern(items)
        return items
    return value


def _compile_matcher(value: Mapping[Any, Any], dollars: list[str], path: str) -> Any:
    """Compile a mapping with ``$`` keys into one matcher, or explain what is wrong with it."""
    if len(dollars) != len(value):
        plain = [k for k in value if k not in dollars]
        raise MatcherError(
            f"mapping mixes matcher keys {dollars} with plain keys {plain}; a matcher mapping "
            "holds only '$' keys (wrap literal '$' keys in {'$literal': ...})",
            path,
        )
    for key in dollars:
        if key not in _ALL_KEYS:
            hint = _suggest(key, _ALL_KEYS) or f" (valid: {', '.join(MATCHER_KEYS)})"
            raise MatcherError(f"unknown matcher {key!r}{hint}", path)
    if "$approx" in value:
        return _compile_approx(value, path)
    stray = [k for k in dollars if k in _APPROX_OPTIONS]
    if stray:
        raise MatcherError(f"{stray[0]!r} only goes beside '$approx'", path)
    if len(dollars) > 1:
        raise MatcherError(
            f"one matcher per mapping, got {', '.join(repr(k) for k in dollars)}", path
        )
    key = dollars[0]
    operand = value[key]
    where = f"{path}/{pointer_token(key)}"
    if key in _FLAG_MATCHERS:
        if operand is not True:
            raise MatcherError(f"{key} takes true, as in {{{key}: true}}; got {operand!r}", where)
        return _FLAG_MATCHERS[key]()
    if key == "$literal":
        return _freeze(operand) if isinstance(operand, (Mapping, *_SEQUENCE_TYPES)) else operand
    return _build(key, _compile_operand(key, operand, where), where)


def _compile_operand(key: str, operand: Any, where: str) -> Any:
    """Compile the pattern parts of an operand first, so nested errors carry their own path."""
    if key in ("$one_of", "$unordered") and isinstance(operand, _SEQUENCE_TYPES):
        return [compile_pattern(item, f"{where}/{i}") for i, item in enumerate(operand)]
    if key == "$subset" and isinstance(operand, Mapping):
        return _compile_subset(operand, where)
    if key in ("$contains", "$optional"):
        return compile_pattern(operand, where)
    return operand


def _compile_subset(operand: Mapping[Any, Any], where: str) -> dict[Any, Any]:
    """Compile a ``$subset`` operand; nested plain mappings become subsets themselves."""
    if _dollar_keys(operand):
        # `$subset: {$regex: ...}` is a mistake, not a subset of a dict with a '$regex' key.
        raise MatcherError(
            f"$subset needs a plain mapping of key -> pattern, got matcher keys "
            f"{_dollar_keys(operand)}",
            where,
        )
    out: dict[Any, Any] = {}
    for key, value in operand.items():
        sub = f"{where}/{pointer_token(key)}"
        if _is_plain_mapping(value):
            out[key] = Subset(_compile_subset(value, sub))
        else:
            out[key] = compile_pattern(value, sub)
    return out


def _build(key: str, operand: Any, where: str) -> Matcher:
    try:
        return _OPERAND_MATCHERS[key](operand)
    except MatcherError as exc:
        raise MatcherError(str(exc), where) from None


def _compile_approx(value: Mapping[Any, Any], path: str) -> Matcher:
    others = [k for k in value if k not in ("$approx", *_APPROX_OPTIONS)]
    if others:
        raise MatcherError(
            f"'$approx' only takes '$tol' / '$rel' beside it, got {', '.join(map(repr, others))}",
            path,
        )
    for key in ("$approx", *_APPROX_OPTIONS):
        if key not in value:
            continue
        operand = value[key]
        where = f"{path}/{pointer_token(key)}"
        try:
            if key == "$approx":
                Approx(operand)
            else:
                _check_tolerance(key, operand)
        except MatcherError as exc:
            raise MatcherError(str(exc), where) from None
    return Approx(value["$approx"], tol=value.get("$tol"), rel=value.get("$rel"))


def compile_args(args: Mapping[str, Any], path: str = "") -> dict[str, Any]:
    """Compile every value of an argument mapping into a pattern."""
    if not isinstance(args, Mapping):
        raise MatcherError(
            f"arguments must be a mapping of name -> pattern, got {type(args).__name__} {args!r}",
            path,
        )
    return {
        key: compile_pattern(value, f"{path}/{pointer_token(key)}") for key, value in args.items()
    }


# ---------------------------------------------------------------------------------------------
# Matching
# ---------------------------------------------------------------------------------------------


def match_value(pattern: Any, actual: Any) -> bool:
    """Does a top-level actual value (or ABSENT) satisfy a compiled pattern?"""
    if isinstance(pattern, Matcher):
        return pattern.matches(actual)
    if actual is ABSENT:
        return False
    return equivalent(pattern, actual)


def args_match(pattern: Mapping[str, Any], actual: Mapping[str, Any]) -> bool:
    """Fast yes/no: every expected key satisfied (extra actual keys ignored)."""
    get = actual.get
    for key, expected in pattern.items():
        value = get(key, ABSENT)
        if expected.__class__ is str:  # the common case, kept free of any function call
            if expected != value or not isinstance(value, str):
                return False
            continue
        if isinstance(expected, Matcher):
            if not expected.matches(value):
                return False
        elif value is ABSENT or not equivalent(expected, value):
            return False
    return True


def args_equal(pattern: Mapping[str, Any], actual: Mapping[str, Any]) -> bool:
    """Both ways: ``args_match`` and no actual key the pattern does not mention."""
    if pattern.__class__ is not dict or actual.__class__ is not dict:
        return args_match(pattern, actual) and all(key in pattern for key in actual)
    # Plain dicts (the hot path): one pass. An actual key outside the pattern exists exactly when
    # fewer pattern keys were found in ``actual`` than it holds, so no second scan is needed.
    if len(actual) > len(pattern):
        return False
    get = actual.get
    found = 0
    for key, expected in pattern.items():
        value = get(key, ABSENT)
        cls = expected.__class__
        if cls is str:
            if expected != value or not isinstance(value, str):
                return False
        elif cls is bool:
            if value is not expected:  # equivalent(): a bool matches only the same bool
                return False
        elif (cls is int or cls is float) and (value.__class__ is int or value.__class__ is float):
            if expected != value:  # by value; NaN is unequal to everything
                return False
        elif cls is dict or cls is list:
            if not strict_equal(expected, value):  # what equivalent() does; ABSENT fails it
                return False
        elif isinstance(expected, Matcher):
            if not expected.matches(value):
                return False
            if value is ABSENT:
                continue
        elif value is ABSENT or not equivalent(expected, value):
            return False
        found += 1
    return found == len(actual)


def check_args(pattern: Mapping[str, Any], actual: Mapping[str, Any]) -> ArgCheck:
    """Argument-by-argument comparison with JSON-pointer diffs and the extra actual keys."""
    diffs: list[ArgDiff] = []
    for key, expected in pattern.items():
        value = actual.get(key, ABSENT)
        if match_value(expected, value):
            continue
        path = f"/{pointer_token(key)}"
        if value is ABSENT:
            diffs.append(
                ArgDiff(path, expected, ABSENT, "missing_arg", f"missing argument {key!r}")
            )
            continue
        diffs.append(_explain(expected, value, path, str(key), top=True))
    extra = tuple(str(key) for key in actual if key not in pattern)
    total = len(pattern)
    return ArgCheck(total - len(diffs), total, tuple(diffs), extra)


def _type_note(expected: Any, actual: Any) -> str:
    """Say why two values that look alike differ: their types (nested 3 vs 3.0, True vs 1)."""
    try:
        alike = bool(expected == actual)
    except Exception:
        alike = False
    if alike and type(expected) is not type(actual):
        return f" ({type(actual).__name__}, expected {type(expected).__name__})"
    return ""


def _explain(pattern: Any, actual: Any, path: str, label: str, *, top: bool) -> ArgDiff:
    """The deepest useful mismatch between a pattern and a value known not to match it."""
    if isinstance(pattern, Subset) and isinstance(actual, Mapping):
        for key, sub in pattern.items:
            value = actual.get(key, ABSENT)
            if not match_value(sub, value):
                return _explain(
                    sub, value, f"{path}/{pointer_token(key)}", f"{label}.{key}", top=True
                )
    if isinstance(pattern, OptionalArg) and actual is not ABSENT:
        return _explain(pattern.inner, actual, path, label, top=True)
    items = _dict_items(pattern)
    if items is not None and isinstance(actual, Mapping):
        for key, sub in items:
            value = actual.get(key, ABSENT)
            if not _nested_match(sub, value):
                sub_path = f"{path}/{pointer_token(key)}"
                return _explain(sub, value, sub_path, f"{label}.{key}", top=False)
        known = {key for key, _ in items}
        for key, value in actual.items():
            if key not in known:
                return ArgDiff(
                    f"{path}/{pointer_token(key)}",
                    ABSENT,
                    value,
                    "wrong_args",
                    f"{label}.{key}={value!r} is not expected",
                )
    seq = _list_items(pattern)
    if seq is not None and isinstance(actual, _SEQUENCE_TYPES):
        for index, (sub, value) in enumerate(zip(seq, actual, strict=False)):
            if not _nested_match(sub, value):
                return _explain(sub, value, f"{path}/{index}", f"{label}[{index}]", top=False)
        if len(seq) != len(actual):
            return ArgDiff(
                path,
                pattern,
                actual,
                "wrong_args",
                f"{label} has {len(actual)} item(s), expected {len(seq)}",
            )
    return ArgDiff(path, pattern, actual, "wrong_args", _leaf_message(pattern, actual, label))


def _dict_items(pattern: Any) -> Iterable[tuple[Any, Any]] | None:
    if isinstance(pattern, DictPattern):
        return pattern.items
    if isinstance(pattern, Mapping):
        return list(pattern.items())
    return None


def _list_items(pattern: Any) -> tuple[Any, ...] | list[Any] | None:
    if isinstance(pattern, ListPattern):
        return pattern.items
    if isinstance(pattern, _SEQUENCE_TYPES):
        return pattern
    return None


def _leaf_message(pattern: Any, actual: Any, label: str) -> str:
    if actual is ABSENT:
        return f"{label} is missing, expected {describe_pattern(pattern)}"
    if isinstance(pattern, Absent):
        return f"{label}={actual!r} is present, expected absent"
    if isinstance(pattern, (DictPattern, ListPattern)) or not isinstance(pattern, Matcher):
        return f"{label}={actual!r}, expected {describe_pattern(pattern)}" + _type_note(
            pattern, actual
        )
    return f"{label}={actual!r} does not match {pattern.describe()}"


def describe_pattern(pattern: Any) -> str:
    """Render a pattern for reasons and tables: literals as repr, matchers as their ``$`` form."""
    if isinstance(pattern, Matcher):
        return pattern.describe()
    return repr(pattern)


def pattern_to_json(pattern: Any) -> Any:
    """The JSON/YAML form of a compiled pattern (matchers back as ``$`` mappings)."""
    return _pattern_json(pattern)
