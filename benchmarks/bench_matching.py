"""Pure-Python pairing engine vs scipy's C solvers (the baseline the engine replaced).

Run: ``python benchmarks/bench_matching.py``. Prints, measured in one run:

(a) max matching over many tiny components, as in real samples (1–12 calls, 1–4 tool names);
(b) max matching of one 2,000 × 2,000 same-name component (a greedy trap, and a dense graph);
(c) best assignment on square and small rectangular weight grids: the engine's solver for that
    size (enumeration or the pure-Python Hungarian) vs scipy's ``linear_sum_assignment``.

scipy is not a dependency of the harness: the comparisons, with their ratios, run only where it
is importable (``pip install scipy``, or the ``bench`` dependency group); without it the engine's
own timings are printed. Both contenders pay for evaluating ``compatible`` / ``weight``, and
scipy for building its matrix: that is part of the real cost.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Hashable, Sequence
from functools import partial
from typing import Any

from harness.matching import _assign_component, _components, max_matching

try:  # the baseline, when installed (see the module docstring)
    import numpy as np
    from scipy.optimize import linear_sum_assignment
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching

    HAVE_SCIPY = True
except ImportError:
    HAVE_SCIPY = False

Call = tuple[str, int | None]  # (tool name, argument value; None on the expected side = any)
NAMES = ("search", "lookup", "book", "cancel")


def accepts(e: Call, a: Call) -> bool:
    """Same name and the expected argument (if any) equal."""
    return e[0] == a[0] and (e[1] is None or e[1] == a[1])


def name_of(c: Call) -> str:
    """Tool name, the component key."""
    return c[0]


def scipy_max_matching(
    expected: Sequence[Any],
    actual: Sequence[Any],
    compatible: Callable[[Any, Any], bool],
    key: Callable[[Any], Hashable] | None = None,
) -> int:
    """Same job through scipy.sparse.csgraph.maximum_bipartite_matching; returns the size."""
    size = 0
    for exp_idx, act_idx in _components(expected, actual, key):
        rows: list[int] = []
        cols: list[int] = []
        for r, i in enumerate(exp_idx):
            e = expected[i]
            for c, j in enumerate(act_idx):
                if compatible(e, actual[j]):
                    rows.append(r)
                    cols.append(c)
        if not rows:
            continue
        graph = csr_matrix(
            (np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(len(exp_idx), len(act_idx))
        )
        size += int((maximum_bipartite_matching(graph, perm_type="column") >= 0).sum())
    return size


def real_samples(count: int, seed: int = 1) -> list[tuple[list[Call], list[Call]]]:
    """Random samples shaped like agent runs: a few calls, a few names, some args wildcarded."""
    rng = random.Random(seed)
    samples = []
    for _ in range(count):
        names = NAMES[: rng.randint(1, 4)]
        made = [(rng.choice(names), rng.randint(0, 3)) for _ in range(rng.randint(1, 12))]
        expected: list[Call] = [
            (name, None if rng.random() < 0.3 else (arg if rng.random() < 0.8 else arg + 1))
            for name, arg in made
            if rng.random() < 0.9
        ]
        actual: list[Call] = list(made)
        samples.append((expected, actual))
    return samples


def timed(fn: Callable[[], object], repeat: int = 3) -> tuple[float, object]:
    """Best wall time of ``repeat`` runs, and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def report(label: str, ours: float, theirs: float | None) -> None:
    """One comparison line (the engine alone when scipy is not installed)."""
    line = f"{label:<52} python {ours * 1e3:9.1f} ms"
    if theirs is not None:
        line += f"   scipy {theirs * 1e3:9.1f} ms   scipy/python = {theirs / ours:5.2f}x"
    print(line)


def scipy_assignment(grid: list[list[float | None]]) -> list[tuple[int, int]]:
    """The baseline: the same cardinality bonus, solved by ``linear_sum_assignment``."""
    n, m = len(grid), len(grid[0])
    largest = max((abs(w) for row in grid for w in row if w is not None), default=0.0)
    bonus = 2.0 * min(n, m) * largest + 1.0
    cost = np.zeros((n, m))
    for i, row in enumerate(grid):
        for j, w in enumerate(row):
            if w is not None:
                cost[i, j] = -(bonus + w)
    rows, cols = linear_sum_assignment(cost)
    return [
        (int(i), int(j))
        for i, j in zip(rows.tolist(), cols.tolist(), strict=True)
        if grid[i][j] is not None
    ]


def bench_tiny_components() -> None:
    """(a) Many tiny per-name components."""
    samples = real_samples(10_000)
    ours, our_sizes = timed(
        lambda: [max_matching(e, a, accepts, key=name_of).size for e, a in samples]
    )
    theirs = None
    if HAVE_SCIPY:
        theirs, their_sizes = timed(
            lambda: [scipy_max_matching(e, a, accepts, key=name_of) for e, a in samples]
        )
        assert our_sizes == their_sizes, "the two solvers disagree on a matching size"
    report("(a) 10,000 samples of 1-12 calls, keyed by name", ours, theirs)


def bench_large_component() -> None:
    """(b) One 2,000 x 2,000 component: greedy trap, and dense random graph."""
    n = 2000
    trap_expected: list[Call] = [("f", None)] * (n // 2) + [("f", i) for i in range(n // 2)]
    actual: list[Call] = [("f", i) for i in range(n)]
    ours, size = timed(lambda: max_matching(trap_expected, actual, accepts, key=name_of).size, 1)
    assert size == n, size
    theirs = None
    if HAVE_SCIPY:
        theirs, their_size = timed(
            lambda: scipy_max_matching(trap_expected, actual, accepts, name_of), 1
        )
        assert their_size == n, their_size
    report("(b) 2,000 x 2,000 greedy trap (any-args first)", ours, theirs)

    rng = random.Random(3)
    dense_expected: list[Call] = [("f", None if rng.random() < 0.9 else i) for i in range(n)]
    ours, size = timed(lambda: max_matching(dense_expected, actual, accepts, key=name_of).size, 1)
    theirs = None
    if HAVE_SCIPY:
        theirs, their_size = timed(
            lambda: scipy_max_matching(dense_expected, actual, accepts, name_of), 1
        )
        assert size == their_size, (size, their_size)
    report("(b) 2,000 x 2,000 dense (90% any-args)", ours, theirs)


Grid = list[list[float | None]]


def solve_all(solver: Callable[[Grid], list[tuple[int, int]]], grids: list[Grid]) -> int:
    """Run one assignment solver over every grid; returns the total number of pairs."""
    return sum(len(solver(g)) for g in grids)


def bench_small_assignments() -> None:
    """(c) Best assignment per component size: the engine's solver vs linear_sum_assignment."""
    if HAVE_SCIPY:
        scipy_assignment([[1.0, 0.0], [0.0, 1.0]])  # pay scipy's first-use cost outside timing
    rng = random.Random(5)
    for rows, cols in ((2, 2), (2, 3), (3, 3), (3, 6), (5, 5), (10, 10), (20, 20)):
        count = 2000 if rows * cols <= 100 else 500
        grids = [
            [
                [None if rng.random() < 0.3 else rng.random() for _ in range(cols)]
                for _ in range(rows)
            ]
            for _ in range(count)
        ]
        ours, _ = timed(partial(solve_all, _assign_component, grids))
        theirs = None
        if HAVE_SCIPY:
            theirs, _ = timed(partial(solve_all, scipy_assignment, grids))
        report(f"(c) {count:,} best assignments of {rows} x {cols}", ours, theirs)


def main() -> None:
    """Run all comparisons."""
    if not HAVE_SCIPY:
        print("scipy is not installed: the engine's timings only, no baseline ratio")
    bench_tiny_components()
    bench_large_component()
    bench_small_assignments()


if __name__ == "__main__":
    main()
