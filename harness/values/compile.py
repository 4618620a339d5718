"""Pattern compilation: ``$``-key mappings from YAML / JSON / Python into matchers.

Errors name the JSON pointer of the offending pattern and suggest the closest ``$`` key
(docs/metrics.md, Matchers). The matchers whose operand is itself a pattern (``$contains``,
``$one_of``, ``$subset``, ``$unordered``, ``$optional``) live here too: their constructors compile
that operand (so ``OneOf(["a", {"$regex": "b"}])`` works from Python), and the compiler builds
them, so the two recurse into each other and share a module instead of an import cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from harness.errors import MatcherError
from harness.values.equivalence import _SEQUENCE_TYPES, ABSENT
from harness.values.matchers import (
    Absent,
    AnyValue,
    Approx,
    ICase,
    Regex,
    Type,
    _check_tolerance,
    _suggest,
)
from harness.values.pattern import (
    DictPattern,
    ListPattern,
    Matcher,
    _describe_items,
    _dollar_keys,
    _freeze,
    _pattern_json,
    describe_pattern,
    match_value,
    pointer_token,
)
from harness.values.refs import Ref

# ---------------------------------------------------------------------------------------------
# Matchers whose operand is a pattern
# ---------------------------------------------------------------------------------------------


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
    "$ref": Ref,
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
    "$ref",
)
"""Every ``$`` key a pattern mapping may use (``$tol`` / ``$rel`` only beside ``$approx``)."""
_ALL_KEYS = (*MATCHER_KEYS, *_APPROX_OPTIONS)


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
