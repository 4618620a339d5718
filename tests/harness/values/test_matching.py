"""Tests for the pairing engine (harness/matching.py): exactness against brute force."""

from __future__ import annotations

import itertools
import math
import random
import re
import subprocess
import sys
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.matching import (
    Matching,
    _hungarian,
    best_assignment,
    max_matching,
    ordered_alignment,
)
from tests.support.paths import ROOT

# A small bipartite graph: (n_expected, n_actual, set of compatible (i, j) cells).
Graph = tuple[int, int, frozenset[tuple[int, int]]]


@st.composite
def graphs(draw: st.DrawFn, max_side: int = 6) -> Graph:
    """Random bipartite graph with up to max_side vertices per side."""
    n = draw(st.integers(0, max_side))
    m = draw(st.integers(0, max_side))
    cells = [(i, j) for i in range(n) for j in range(m)]
    edges = draw(st.sets(st.sampled_from(cells))) if cells else set()
    return n, m, frozenset(edges)


def _edge_predicate(edges: frozenset[tuple[int, int]]) -> Callable[[int, int], bool]:
    return lambda i, j: (i, j) in edges


def _injective_pairings(
    n: int, m: int, edges: frozenset[tuple[int, int]]
) -> list[list[tuple[int, int]]]:
    """Every one-to-one pairing using only edges (brute force, small graphs only)."""
    out: list[list[tuple[int, int]]] = []

    def walk(i: int, used: frozenset[int], acc: list[tuple[int, int]]) -> None:
        if i == n:
            out.append(list(acc))
            return
        walk(i + 1, used, acc)
        for j in range(m):
            if j not in used and (i, j) in edges:
                walk(i + 1, used | {j}, [*acc, (i, j)])

    walk(0, frozenset(), [])
    return out


def _greedy_size(n: int, m: int, edges: frozenset[tuple[int, int]]) -> int:
    used: set[int] = set()
    for i in range(n):
        for j in range(m):
            if j not in used and (i, j) in edges:
                used.add(j)
                break
    return len(used)


def _assert_well_formed(result: Matching, n: int, m: int, ok: Callable[[int, int], bool]) -> None:
    pairs = result.pairs
    assert list(pairs) == sorted(pairs)
    assert all(ok(i, j) for i, j in pairs)
    assert len({i for i, _ in pairs}) == len(pairs)
    assert len({j for _, j in pairs}) == len(pairs)
    assert result.unmatched_expected == tuple(sorted(set(range(n)) - {i for i, _ in pairs}))
    assert result.unmatched_actual == tuple(sorted(set(range(m)) - {j for _, j in pairs}))


# ------------------------------------------------------------------------------ max_matching


@settings(max_examples=200, deadline=None)
@given(graphs())
def test_max_matching_is_maximum_and_well_formed(graph: Graph) -> None:
    n, m, edges = graph
    ok = _edge_predicate(edges)
    result = max_matching(range(n), range(m), ok)
    _assert_well_formed(result, n, m, ok)
    best = max(len(p) for p in _injective_pairings(n, m, edges))
    assert result.size == best
    assert result.size >= _greedy_size(n, m, edges)


@settings(max_examples=100, deadline=None)
@given(graphs(), st.lists(st.integers(0, 2), min_size=12, max_size=12))
def test_max_matching_respects_key(graph: Graph, labels: list[int]) -> None:
    n, m, edges = graph
    exp_keys, act_keys = labels[:6], labels[6:]
    # Items are (side, index, key); the key restricts edges to equal keys.
    expected = [("e", i, exp_keys[i]) for i in range(n)]
    actual = [("a", j, act_keys[j]) for j in range(m)]
    result = max_matching(
        expected, actual, lambda e, a: (e[1], a[1]) in edges, key=lambda item: item[2]
    )
    keyed = frozenset((i, j) for i, j in edges if exp_keys[i] == act_keys[j])
    _assert_well_formed(result, n, m, _edge_predicate(keyed))
    assert result.size == max(len(p) for p in _injective_pairings(n, m, keyed))


def test_max_matching_never_calls_compatible_across_keys() -> None:
    seen: list[tuple[str, str]] = []

    def compatible(e: str, a: str) -> bool:
        seen.append((e, a))
        return True

    result = max_matching(["f1", "g1", "f2"], ["g9", "f9", "h9"], compatible, key=lambda s: s[0])
    assert result.pairs == ((0, 1), (1, 0))
    assert result.unmatched_expected == (2,)
    assert result.unmatched_actual == (2,)
    assert all(e[0] == a[0] for e, a in seen)


def test_greedy_trap_is_solved() -> None:
    # "f with any args" listed first would take the only call "f(x=1)" can use.
    expected = [("f", None), ("f", 1)]
    actual = [("f", 1), ("f", 2)]

    def accepts(e: tuple[str, int | None], a: tuple[str, int]) -> bool:
        return e[0] == a[0] and (e[1] is None or e[1] == a[1])

    result = max_matching(expected, actual, accepts, key=lambda c: c[0])
    assert result.pairs == ((0, 1), (1, 0))
    assert result.unmatched_expected == () and result.unmatched_actual == ()


def test_ties_prefer_first_call_for_first_expectation() -> None:
    result = max_matching(["f", "f", "f"], ["f", "f", "f", "f"], lambda e, a: e == a)
    assert result.pairs == ((0, 0), (1, 1), (2, 2))
    assert result.unmatched_actual == (3,)


def test_max_matching_is_deterministic() -> None:
    rng = random.Random(7)
    edges = frozenset((i, j) for i in range(30) for j in range(30) if rng.random() < 0.15)
    ok = _edge_predicate(edges)
    first = max_matching(range(30), range(30), ok)
    assert all(max_matching(range(30), range(30), ok) == first for _ in range(3))


def test_empty_sides() -> None:
    assert max_matching([], [1, 2], lambda e, a: True) == Matching((), (), (0, 1))
    assert max_matching([1], [], lambda e, a: True) == Matching((), (0,), ())


def test_unhashable_key_error_names_the_item() -> None:
    with pytest.raises(TypeError, match=r"expected\[0\]"):
        max_matching([[1]], [[1]], lambda e, a: True, key=lambda item: item)


def test_large_trap_component_is_maximum() -> None:
    # 2,000 x 2,000, same key: 1,000 any-args expectations first, then 1,000 that each need one
    # specific call among the first 1,000 — greedy alone pairs only 1,000 + 0.
    n = 2000
    expected: list[int | None] = [None] * (n // 2) + list(range(n // 2))
    actual = list(range(n))
    result = max_matching(expected, actual, lambda e, a: e is None or e == a, key=lambda _: "f")
    assert result.size == n
    assert all(expected[i] is None or expected[i] == j for i, j in result.pairs)


# ---------------------------------------------------------------------------- best_assignment

weights_st = st.one_of(st.none(), st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0, -1.0]))


@st.composite
def weight_grids(draw: st.DrawFn, max_side: int = 5) -> list[list[float | None]]:
    n = draw(st.integers(0, max_side))
    m = draw(st.integers(0, max_side))
    return [[draw(weights_st) for _ in range(m)] for _ in range(n)]


def _grid_shape(grid: list[list[float | None]]) -> tuple[int, int]:
    return len(grid), (len(grid[0]) if grid else 0)


@settings(max_examples=200, deadline=None)
@given(weight_grids())
def test_best_assignment_matches_brute_force(grid: list[list[float | None]]) -> None:
    n, m = _grid_shape(grid)
    edges = frozenset((i, j) for i in range(n) for j in range(m) if grid[i][j] is not None)
    result = best_assignment(range(n), range(m), lambda i, j: grid[i][j])
    _assert_well_formed(result, n, m, _edge_predicate(edges))
    candidates = _injective_pairings(n, m, edges)
    best_size = max(len(p) for p in candidates)
    best_weight = max(
        sum(grid[i][j] or 0.0 for i, j in p) for p in candidates if len(p) == best_size
    )
    assert result.size == best_size
    assert math.isclose(sum(grid[i][j] or 0.0 for i, j in result.pairs), best_weight, abs_tol=1e-9)


@pytest.mark.parametrize("side", [4, 7])
def test_best_assignment_large_components_use_exact_solver(side: int) -> None:
    # Sizes that go past the pure-Python enumeration: cardinality still beats weight.
    rng = random.Random(side)
    grid: list[list[float | None]] = [
        [None if rng.random() < 0.4 else rng.choice([0.0, 0.5, 1.0]) for _ in range(side)]
        for _ in range(side)
    ]
    # One heavy edge that would cost a pair if weight were maximised first.
    grid[0] = [5.0] + [None] * (side - 1)
    grid[1] = [1.0] + [None] * (side - 1)
    edges = frozenset((i, j) for i in range(side) for j in range(side) if grid[i][j] is not None)
    result = best_assignment(range(side), range(side), lambda i, j: grid[i][j])
    best_size = max(len(p) for p in _injective_pairings(side, side, edges))
    assert result.size == best_size
    best_weight = max(
        sum(grid[i][j] or 0.0 for i, j in p)
        for p in _injective_pairings(side, side, edges)
        if len(p) == best_size
    )
    assert math.isclose(sum(grid[i][j] or 0.0 for i, j in result.pairs), best_weight)


def test_best_assignment_cardinality_before_weight() -> None:
    # e0 prefers a0 strongly, but only by taking a1 can e1 be paired too.
    grid: list[list[float | None]] = [[10.0, 0.0], [1.0, None]]
    result = best_assignment([0, 1], [0, 1], lambda i, j: grid[i][j])
    assert result.pairs == ((0, 1), (1, 0))


def test_best_assignment_repeated_calls_pair_by_content() -> None:
    # docs/metrics.md, "Matching": ref [f(x=1), f(x=3)], pred [f(x=3), f(x=4)]: pair x=3 with x=3.
    ref, pred = [1, 3], [3, 4]
    result = best_assignment(ref, pred, lambda e, a: 1.0 if e == a else 0.0, key=lambda _: "f")
    assert result.pairs == ((0, 1), (1, 0))


def test_best_assignment_rejects_non_finite_weight() -> None:
    with pytest.raises(ValueError, match=r"expected\[0\], actual\[1\]"):
        best_assignment([0], [0, 1], lambda e, a: math.nan if a == 1 else 0.0)
    with pytest.raises(TypeError, match="returned 'high'"):
        best_assignment([0], [0], lambda e, a: "high")  # type: ignore[arg-type,return-value]


# --------------------------------------------------------- the Hungarian solver (no scipy)

small_costs_st = st.sampled_from([-3.0, -1.0, 0.0, 0.0, 1.0, 2.5])  # repeats: many ties


@st.composite
def cost_matrices(draw: st.DrawFn, max_side: int = 6) -> list[list[float]]:
    """A rows <= columns cost matrix of small values, so equal-cost answers are common."""
    n = draw(st.integers(1, max_side))
    m = draw(st.integers(n, max_side))
    return [[draw(small_costs_st) for _ in range(m)] for _ in range(n)]


@settings(max_examples=300, deadline=None)
@given(cost_matrices())
def test_hungarian_equals_brute_force(cost: list[list[float]]) -> None:
    n, m = len(cost), len(cost[0])
    columns = _hungarian(cost)
    assert len(columns) == n and len(set(columns)) == n and all(0 <= j < m for j in columns)
    brute = min(
        sum(cost[i][j] for i, j in enumerate(choice))
        for choice in itertools.permutations(range(m), n)
    )
    assert math.isclose(sum(cost[i][j] for i, j in enumerate(columns)), brute, abs_tol=1e-9)


def test_hungarian_constant_matrix_is_the_identity() -> None:
    # The tie rule at its plainest: first expectation with first call, and so on.
    assert _hungarian([[0.0] * 5 for _ in range(3)]) == [0, 1, 2]
    assert best_assignment(range(4), range(4), lambda i, j: 1.0).pairs == tuple(
        (i, i) for i in range(4)
    )


# Components past the enumeration where several best assignments exist, each with the one that
# scipy's linear_sum_assignment chose when the engine used it (not the lexicographically first
# optimum: these are the cases where the two differ). The Hungarian solver must keep them, so
# reports of tied pairings do not change.
SCIPY_TIE_CASES: list[tuple[list[list[float | None]], list[tuple[int, int]]]] = [
    (
        [[0.0, 1.0, 0.0, None], [None, 1.0, 1.0, None], [0.0, None, 1.0, 0.0]],
        [(0, 1), (1, 2), (2, 0)],
    ),
    (
        [
            [1.0, None, 1.0, 1.0],
            [None, 0.0, 1.0, None],
            [0.0, None, None, 1.0],
            [None, 0.0, 1.0, 1.0],
        ],
        [(0, 0), (1, 2), (2, 3), (3, 1)],
    ),
    ([[None, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, None, 1.0]], [(0, 2), (1, 1), (2, 0)]),
    (
        [
            [0.0, 0.0, 1.0, None, 1.0],
            [1.0, None, None, None, 0.0],
            [0.0, None, None, 1.0, None],
            [1.0, None, 1.0, 0.0, None],
            [1.0, 0.0, None, 1.0, 1.0],
        ],
        [(0, 4), (1, 0), (2, 3), (3, 2), (4, 1)],
    ),
    (
        [
            [None, 0.0, None, 0.0, 1.0],
            [None, 0.0, None, None, 1.0],
            [1.0, None, None, 1.0, 1.0],
            [0.0, None, 1.0, None, 0.0],
        ],
        [(0, 4), (1, 1), (2, 0), (3, 2)],
    ),
    (
        [[0.0, 0.0, None], [None, 0.0, 1.0], [1.0, 1.0, 0.0], [None, 0.0, 0.0], [0.0, 0.0, 1.0]],
        [(1, 1), (2, 0), (4, 2)],
    ),
    (
        [[0.0, None, 1.0, 0.0, None], [None, None, 0.0, None, 1.0], [0.0, None, 1.0, 0.0, 0.0]],
        [(0, 2), (1, 4), (2, 0)],
    ),
    (
        [
            [1.0, None, 1.0, 1.0],
            [0.0, 0.0, None, 0.0],
            [1.0, 0.0, 1.0, 0.0],
            [1.0, 1.0, None, 1.0],
            [None, None, None, None],
        ],
        [(0, 0), (1, 3), (2, 2), (3, 1)],
    ),
]


@pytest.mark.parametrize(("grid", "chosen"), SCIPY_TIE_CASES)
def test_ties_fall_as_they_did_with_scipy(
    grid: list[list[float | None]], chosen: list[tuple[int, int]]
) -> None:
    n, m = _grid_shape(grid)
    assert list(best_assignment(range(n), range(m), lambda i, j: grid[i][j]).pairs) == chosen


def _scipy_bonus_assignment(grid: list[list[float | None]]) -> list[tuple[int, int]]:
    """How best_assignment solved a component with scipy before (same cardinality bonus)."""
    np = pytest.importorskip("numpy")
    optimize = pytest.importorskip("scipy.optimize")
    n, m = _grid_shape(grid)
    largest = max((abs(w) for row in grid for w in row if w is not None), default=0.0)
    bonus = 2.0 * min(n, m) * largest + 1.0
    cost = np.zeros((n, m))
    for i, row in enumerate(grid):
        for j, w in enumerate(row):
            if w is not None:
                cost[i, j] = -(bonus + w)
    rows, cols = optimize.linear_sum_assignment(cost)
    return [(int(i), int(j)) for i, j in zip(rows, cols, strict=True) if grid[i][j] is not None]


@settings(max_examples=300, deadline=None)
@given(weight_grids(max_side=8))
def test_best_assignment_equals_scipy_where_installed(grid: list[list[float | None]]) -> None:
    # scipy is no dependency: this runs only where it happens to be installed (e.g. .venv-bench).
    n, m = _grid_shape(grid)
    if n < 3 or m < 3:
        return  # smaller components never went to scipy
    result = best_assignment(range(n), range(m), lambda i, j: grid[i][j])
    assert list(result.pairs) == _scipy_bonus_assignment(grid)


@settings(max_examples=300, deadline=None)
@given(cost_matrices(max_side=8))
def test_hungarian_equals_linear_sum_assignment_where_installed(cost: list[list[float]]) -> None:
    np = pytest.importorskip("numpy")
    optimize = pytest.importorskip("scipy.optimize")
    _, cols = optimize.linear_sum_assignment(np.array(cost))
    assert _hungarian(cost) == [int(j) for j in cols]


def test_the_package_needs_neither_scipy_nor_numpy() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"].values()
    declared = [*project["dependencies"], *(r for extra in extras for r in extra)]
    assert not [r for r in declared if re.match(r"(scipy|numpy)\b", r, re.I)], declared
    code = (
        "import sys, harness.matching, harness.metrics\n"
        "from harness.matching import best_assignment\n"
        "best_assignment(range(4), range(4), lambda i, j: float(i == j))\n"
        "print(sorted(m for m in ('scipy', 'numpy') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -------------------------------------------------------------------------- ordered_alignment


def _lcs_length(xs: list[int], ys: list[int]) -> int:
    table = [[0] * (len(ys) + 1) for _ in range(len(xs) + 1)]
    for i, x in enumerate(xs):
        for j, y in enumerate(ys):
            table[i + 1][j + 1] = (
                table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
            )
    return table[-1][-1]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=9), st.lists(st.integers(0, 3), max_size=9))
def test_ordered_alignment_is_an_lcs(xs: list[int], ys: list[int]) -> None:
    result = ordered_alignment(xs, ys, lambda e, a: e == a)
    _assert_well_formed(result, len(xs), len(ys), lambda i, j: xs[i] == ys[j])
    assert result.size == _lcs_length(xs, ys)
    for (i1, j1), (i2, j2) in itertools.pairwise(result.pairs):
        assert i1 < i2 and j1 < j2


@settings(max_examples=100, deadline=None)
@given(graphs(max_side=5))
def test_ordered_alignment_is_lexicographically_first_optimum(graph: Graph) -> None:
    n, m, edges = graph
    ok = _edge_predicate(edges)
    result = ordered_alignment(range(n), range(m), ok)
    ordered = [
        p
        for p in _injective_pairings(n, m, edges)
        if all(j1 < j2 for (_, j1), (_, j2) in itertools.pairwise(p))
    ]
    longest = max(len(p) for p in ordered)
    assert list(result.pairs) == min(p for p in ordered if len(p) == longest)


def test_ordered_alignment_skips_interleaved_calls() -> None:
    result = ordered_alignment(["a", "b", "c"], ["a", "x", "c", "b", "c"], lambda e, a: e == a)
    assert result.pairs == ((0, 0), (1, 3), (2, 4))
    assert result.unmatched_actual == (1, 2)
