"""ToolCallPartialOrder: were the ``after:`` constraints between expected calls kept?

value = kept edges / edges of the DAG the expectations' ``after`` labels draw, under a maximum
matching that keeps as many edges as any maximum matching can (docs/metrics.md,
"tool_call_partial_order"). Which maximum matching that is takes a search: the expectations on
an edge are assigned in topological order, each trying the calls it accepts, pruned by the
edges already lost and by whether a maximum matching can still be completed. The search is
exact within :data:`SEARCH_BUDGET` steps, which no sample of a real run comes near; past it the
best pairing found is used and the details say ``exhaustive: false``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.expectation import Expectation
from harness.labels import Edge, order_edges, topological_order
from harness.matching import max_matching
from harness.metrics._common import capped, missing_issues, with_invalid_causes
from harness.metrics.base import Details, Issue, Pair, Score, check_threshold, make_score
from harness.sample import Sample
from tracing.records import ToolCall

SEARCH_BUDGET = 20_000
"""Most search steps (one call tried for one expectation) spent on one sample."""


class ToolCallPartialOrder:
    """Fraction of ``after`` edges a → b whose calls ran in that order (docs/metrics.md)."""

    __slots__ = ("threshold",)
    name = "tool_call_partial_order"

    def __init__(self, threshold: float = 1.0) -> None:
        self.threshold = check_threshold(self.name, threshold)

    def evaluate(self, sample: Sample) -> Score:
        """Score one sample; a sample with no edge scores 1.0, an empty run 0.0."""
        expected = sample.expected_tool_calls
        actual = sample.require_recorded()
        edges = order_edges(expected)
        if not expected:
            reason = "no expected calls, so no order to keep"
            return make_score(self.name, 1.0, self.threshold, reason, Details())
        if not actual:
            missing = tuple(range(len(expected)))
            issues = tuple(missing_issues(expected, missing))
            details = Details((), missing, (), issues, {"edges": len(edges), "kept": 0})
            reason = f"no tool calls were made: 0/{len(edges)} order constraints kept"
            return make_score(self.name, 0.0, self.threshold, reason, details)
        found = order_matching(expected, actual, edges)
        return _score(self, expected, actual, edges, found)


@dataclass(frozen=True, slots=True)
class OrderMatching:
    """A maximum matching that keeps the most edges, and whether the search proved it."""

    pairs: tuple[tuple[int, int], ...]
    kept: tuple[Edge, ...]
    exhaustive: bool


def order_matching(
    expected: Sequence[Expectation],
    actual: Sequence[ToolCall],
    edges: Sequence[Edge],
    budget: int = SEARCH_BUDGET,
) -> OrderMatching:
    """Among the maximum matchings under *accepts*, one keeping the most edges (a's call at a
    lower index than b's); ties go to the first found, calls tried lowest index first."""
    candidates = _candidates(expected, actual)
    full = max_matching(range(len(expected)), range(len(actual)), _accepted(candidates))
    if not edges:
        return OrderMatching(full.pairs, (), True)
    return _Search(expected, actual, edges, candidates, full.size, budget).run()


def _candidates(expected: Sequence[Expectation], actual: Sequence[ToolCall]) -> list[list[int]]:
    """Per expectation, the calls it accepts, ascending."""
    by_name: dict[str, list[int]] = {}
    for j, call in enumerate(actual):
        by_name.setdefault(call.name, []).append(j)
    return [[j for j in by_name.get(exp.name, ()) if exp.accepts(actual[j])] for exp in expected]


def _accepted(candidates: list[list[int]]) -> _Accepts:
    return _Accepts([set(row) for row in candidates])


@dataclass(frozen=True, slots=True)
class _Accepts:
    """``(i, j)`` -> does expectation i accept call j (from the candidate lists)."""

    rows: list[set[int]]

    def __call__(self, i: int, j: int) -> bool:
        return j in self.rows[i]


class _Search:
    """Branch and bound over the expectations on an edge, in topological order."""

    def __init__(
        self,
        expected: Sequence[Expectation],
        actual: Sequence[ToolCall],
        edges: Sequence[Edge],
        candidates: list[list[int]],
        size: int,
        budget: int,
    ) -> None:
        self.candidates = candidates
        self.accepts = _accepted(candidates)
        self.size = size
        self.budget = budget
        self.edges = edges
        ends = {v for edge in edges for v in edge}
        self.order = topological_order(ends, edges)
        self.others = [i for i in range(len(expected)) if i not in ends]
        self.into: dict[int, list[int]] = {v: [] for v in ends}
        self.out_of: dict[int, list[int]] = {v: [] for v in ends}
        for a, b in edges:
            self.into[b].append(a)
            self.out_of[a].append(b)
        self.calls = len(actual)
        self.assigned: dict[int, int] = {}  # expectation -> call, -1 for unmatched
        self.used: set[int] = set()
        self.best: dict[int, int] | None = None
        self.best_lost = len(edges) + 1
        self.steps = 0
        self.cut = False

    def run(self) -> OrderMatching:
        self._descend(0, 0, 0)
        best = self.best
        assert best is not None  # the first descent always completes (see _feasible)
        pairs = [(i, j) for i, j in best.items() if j >= 0]
        used = {j for _, j in pairs}
        free = [j for j in range(self.calls) if j not in used]
        rest = max_matching(self.others, free, self.accepts)
        pairs += [(self.others[a], free[b]) for a, b in rest.pairs]
        kept = tuple(
            (a, b) for a, b in self.edges if best[a] >= 0 and best[b] >= 0 and best[a] < best[b]
        )
        return OrderMatching(tuple(sorted(pairs)), kept, not self.cut)

    def _descend(self, position: int, matched: int, lost: int) -> None:
        if lost >= self.best_lost:
            return  # cannot keep more edges than the best found
        if position == len(self.order):
            self.best, self.best_lost = dict(self.assigned), lost
            return
        vertex = self.order[position]
        for j, cost in self._options(vertex):
            if self.steps >= self.budget and self.best is not None:
                self.cut = True
                return
            self.steps += 1
            self.assigned[vertex] = j
            if j >= 0:
                self.used.add(j)
            if self._feasible(position + 1, matched + (j >= 0)):
                self._descend(position + 1, matched + (j >= 0), lost + cost)
            if j >= 0:
                self.used.discard(j)
            del self.assigned[vertex]

    def _options(self, vertex: int) -> list[tuple[int, int]]:
        """(call, edges lost by taking it) for each free call the expectation accepts, fewest
        lost first then lowest index, and (-1, every edge at it) for leaving it unmatched."""
        # an edge from an unmatched expectation was counted lost when it was left unmatched
        before = [i for i in (self.assigned[a] for a in self.into[vertex]) if i >= 0]
        options = []
        for j in self.candidates[vertex]:
            if j not in self.used:
                lost = sum(1 for i in before if i >= j)
                options.append((lost, j))
        options.sort()
        unmatched = len(before) + len(self.out_of[vertex])
        return [(j, lost) for lost, j in options] + [(-1, unmatched)]

    def _feasible(self, position: int, matched: int) -> bool:
        """Can the expectations not yet assigned complete a maximum matching?

        Whatever is assigned so far came from a feasible state, so one option of each vertex
        stays feasible: the first descent reaches a complete matching without backtracking.
        """
        need = self.size - matched
        if need <= 0:
            return True
        rest = [*self.order[position:], *self.others]
        if len(rest) < need:
            return False
        free = [j for j in range(self.calls) if j not in self.used]
        return max_matching(rest, free, self.accepts).size >= need


def _score(
    metric: ToolCallPartialOrder,
    expected: Sequence[Expectation],
    actual: Sequence[ToolCall],
    edges: Sequence[Edge],
    found: OrderMatching,
) -> Score:
    partner = dict(found.pairs)
    paired = set(partner.values())
    unmatched_expected = tuple(i for i in range(len(expected)) if i not in partner)
    unmatched_actual = tuple(j for j in range(len(actual)) if j not in paired)
    extra = {"edges": len(edges), "kept": len(found.kept), "exhaustive": found.exhaustive}
    pairs = tuple(Pair(i, j, (), 1.0) for i, j in found.pairs)
    if not edges:
        reason = "no order constraints (after:) among the expected calls"
        details = Details(pairs, unmatched_expected, unmatched_actual, (), extra)
        return make_score(metric.name, 1.0, metric.threshold, reason, details)
    kept = set(found.kept)
    clauses: list[str] = []
    issues: list[Issue] = []
    for a, b in edges:
        if (a, b) in kept:
            continue
        clause = _broken(expected, partner, a, b)
        clauses.append(clause)
        issues.append(Issue("wrong_order", clause, b, partner.get(b)))
    issues += missing_issues(expected, (i for i in unmatched_expected if _on_edge(i, edges)))
    value = len(found.kept) / len(edges)
    reason = f"{len(found.kept)}/{len(edges)} order constraints kept"
    if clauses:
        reason += f"; broken: {capped(clauses)}"
    details = Details(pairs, unmatched_expected, unmatched_actual, tuple(issues), extra)
    if value < metric.threshold:
        reason, details = with_invalid_causes(expected, actual, reason, details)
    return make_score(metric.name, value, metric.threshold, reason, details)


def _broken(expected: Sequence[Expectation], partner: dict[int, int], a: int, b: int) -> str:
    """Why edge a -> b is not kept: ``'look' (call #3) ran after 'pay' (call #2)``, or which
    of the two was not matched."""
    first, then = _name(expected, a), _name(expected, b)
    if a not in partner or b not in partner:
        gone = [_name(expected, i) for i in (a, b) if i not in partner]
        return f"{first} before {then}: {' and '.join(gone)} not matched"
    return f"{first} (call #{partner[a] + 1}) ran after {then} (call #{partner[b] + 1})"


def _name(expected: Sequence[Expectation], index: int) -> str:
    """An expectation by its label, else by its tool's name (the reason stays one line)."""
    exp = expected[index]
    return f"'{exp.label}'" if exp.label is not None else exp.name


def _on_edge(index: int, edges: Sequence[Edge]) -> bool:
    return any(index in edge for edge in edges)
