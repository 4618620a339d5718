"""Walking a compiled pattern for its ``$ref`` s: where they sit, and the pattern with them
replaced (what :mod:`harness.resolve` does once per sample).

Only matchers can hold a ``$ref`` (a plain dict or list holding one compiles to a
:class:`~harness.values.DictPattern` / :class:`~harness.values.ListPattern`), so a plain
literal is never walked into, and a pattern without a ``$ref`` comes back as the same object.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from harness.values.compile import Contains, OneOf, OptionalArg, Subset, Unordered
from harness.values.pattern import DictPattern, ListPattern, Matcher, pointer_token
from harness.values.refs import Ref


def refs_in(pattern: Any, path: str = "") -> Iterator[tuple[str, Ref]]:
    """Every :class:`Ref` in a compiled pattern, with its JSON pointer, in document order."""
    if not isinstance(pattern, Matcher):
        return
    if isinstance(pattern, Ref):
        yield path, pattern
    elif isinstance(pattern, (DictPattern, Subset)):
        for key, inner in pattern.items:
            yield from refs_in(inner, _under(path, pattern, key))
    elif isinstance(pattern, (ListPattern, Unordered)):
        for index, inner in enumerate(pattern.items):
            yield from refs_in(inner, _under(path, pattern, index))
    elif isinstance(pattern, OneOf):
        for index, inner in enumerate(pattern.options):
            yield from refs_in(inner, f"{path}/$one_of/{index}")
    elif isinstance(pattern, Contains):
        yield from refs_in(pattern.item, f"{path}/$contains")
    elif isinstance(pattern, OptionalArg):
        yield from refs_in(pattern.inner, f"{path}/$optional")


def _under(path: str, pattern: Matcher, key: Any) -> str:
    """The pointer of an item of a dict/list pattern, or of a ``$subset`` / ``$unordered``."""
    token = pointer_token(key)
    if isinstance(pattern, (Subset, Unordered)):
        return f"{path}/{pattern.key}/{token}"
    return f"{path}/{token}"


def has_refs(pattern: Any) -> bool:
    """Does a compiled pattern hold a :class:`Ref` anywhere?"""
    return next(refs_in(pattern), None) is not None


def substitute(pattern: Any, replace: Callable[[Ref], Matcher]) -> Any:
    """The pattern with each :class:`Ref` replaced by ``replace(ref)`` (rebuilt only where one
    sits; the rest is shared)."""
    if not isinstance(pattern, Matcher) or not has_refs(pattern):
        return pattern
    if isinstance(pattern, Ref):
        return replace(pattern)
    if isinstance(pattern, DictPattern):
        return DictPattern([(k, substitute(v, replace)) for k, v in pattern.items])
    if isinstance(pattern, Subset):
        return Subset([(k, substitute(v, replace)) for k, v in pattern.items])
    if isinstance(pattern, ListPattern):
        return ListPattern([substitute(item, replace) for item in pattern.items])
    if isinstance(pattern, Unordered):
        return Unordered([substitute(item, replace) for item in pattern.items])
    if isinstance(pattern, OneOf):
        return OneOf([substitute(option, replace) for option in pattern.options])
    if isinstance(pattern, Contains):
        return Contains(substitute(pattern.item, replace))
    if isinstance(pattern, OptionalArg):
        return OptionalArg(substitute(pattern.inner, replace))
    return pattern
