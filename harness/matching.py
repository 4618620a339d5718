"""Pairing engine: maximum matching, maximum-weight assignment, ordered alignment (DESIGN §4).

INTERFACE STUB — to be implemented.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

E = TypeVar("E")
A = TypeVar("A")


@dataclass(frozen=True, slots=True)
class Matching:
    """A one-to-one pairing of expected to actual items by index, and what was left on each side."""

    pairs: tuple[tuple[int, int], ...]
    unmatched_expected: tuple[int, ...]
    unmatched_actual: tuple[int, ...]

    @property
    def size(self) -> int:
        """Number of pairs."""
        return len(self.pairs)


def max_matching(
    expected: Sequence[E],
    actual: Sequence[A],
    compatible: Callable[[E, A], bool],
    key: Callable[[Any], Hashable] | None = None,
) -> Matching:
    """Maximum-cardinality one-to-one pairing; ``key`` restricts edges to equal keys."""
    raise NotImplementedError


def best_assignment(
    expected: Sequence[E],
    actual: Sequence[A],
    weight: Callable[[E, A], float | None],
    key: Callable[[Any], Hashable] | None = None,
) -> Matching:
    """Maximum-cardinality pairing over edges with a weight (None = no edge), then maximum weight."""
    raise NotImplementedError


def ordered_alignment(
    expected: Sequence[E],
    actual: Sequence[A],
    compatible: Callable[[E, A], bool],
) -> Matching:
    """Longest pairing that keeps the order of both lists (LCS); pairs ascend on both sides."""
    raise NotImplementedError
