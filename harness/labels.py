"""Labels of expected calls: the ``after`` order (a DAG) and the ``$ref`` data flow between them.

One list of expectations (a scenario's, a turn's, an agent block's, a pytest assertion's) is one
namespace of labels. This module checks a list (:func:`label_problems`: duplicates, unknown
labels, cycles, each located), and derives what scoring needs from a valid one: the order
edges, the layers ``$ref`` s are resolved in, a topological order, and the list left when
absent optional expectations are dropped (docs/metrics.md, "Labels and partial order").
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from harness.errors import SampleError
from harness.expectation import Expectation
from harness.text import did_you_mean

Edge = tuple[int, int]
"""``(a, b)``: expectation ``a``'s call must come before expectation ``b``'s (indices)."""


@dataclass(frozen=True, slots=True)
class LabelProblem:
    """One problem of a list's labels: which expectation, which field, and what is wrong."""

    index: int
    field: Literal["id", "after", "args", "result"]
    pointer: str
    """For ``args`` / ``result``: the JSON pointer of the ``$ref`` inside them; else ``""``."""
    message: str


def label_problems(
    expected: Sequence[Expectation], *, name: str = "expected_tool_calls"
) -> list[LabelProblem]:
    """Every problem of the labels of one list: duplicate labels, ``after`` or ``$ref`` naming
    an unknown label (with the nearest one), and cycles of either. ``name`` is how messages
    refer to the list (``tool_calls[0]``)."""
    if all(exp.extra is None for exp in expected):
        return []  # no label, no after, no $ref: nothing to check
    problems: list[LabelProblem] = []
    labels: dict[str, int] = {}
    for index, exp in enumerate(expected):
        if exp.label is None:
            continue
        first = labels.setdefault(exp.label, index)
        if first != index:
            message = f"duplicate label '{exp.label}' (first given to {name}[{first}])"
            problems.append(LabelProblem(index, "id", "", message))
    for index, exp in enumerate(expected):
        for label in exp.after:
            if label == exp.label:
                message = f"an expected call cannot come after itself ('{label}')"
                problems.append(LabelProblem(index, "after", "", message))
            elif label not in labels:
                message = f"unknown label '{label}'{_hint(label, labels)}"
                problems.append(LabelProblem(index, "after", "", message))
        for where, pointer, ref in exp.refs:
            if ref.label == exp.label:
                message = f"$ref {ref.target}: an expected call cannot take a value from itself"
                problems.append(LabelProblem(index, where, pointer, message))
            elif ref.label not in labels:
                message = (
                    f"$ref {ref.target}: unknown label '{ref.label}'{_hint(ref.label, labels)}"
                )
                problems.append(LabelProblem(index, where, pointer, message))
    problems += _after_cycles(expected, labels)
    problems += _ref_cycles(expected, labels)
    return problems


def check_labels(expected: Sequence[Expectation], *, name: str = "expected_tool_calls") -> None:
    """Raise :class:`~harness.errors.SampleError` naming the first problem of the labels."""
    problems = label_problems(expected, name=name)
    if problems:
        first = problems[0]
        where = f"{name}[{first.index}].{first.field}{first.pointer.replace('/', '.')}"
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        raise SampleError(f"{where}: {first.message}{more}")


def _hint(label: str, labels: Iterable[str]) -> str:
    known = sorted(labels)
    hint = did_you_mean(label, known)
    if hint:
        return f" — {hint}"
    if not known:
        return " (no expected call here has a label)"
    return f" (labels here: {', '.join(known)})"


def _after_cycles(expected: Sequence[Expectation], labels: dict[str, int]) -> list[LabelProblem]:
    successors: list[list[int]] = [[] for _ in expected]
    for a, b in order_edges(expected):
        successors[a].append(b)
    cycle = _find_cycle(successors)
    if cycle is None:
        return []
    names = " → ".join(f"'{expected[i].label}'" for i in (*cycle, cycle[0]))
    message = f"cycle {names}: no order of the calls can keep it"
    return [LabelProblem(cycle[0], "after", "", message)]


def _ref_cycles(expected: Sequence[Expectation], labels: dict[str, int]) -> list[LabelProblem]:
    needs = _ref_targets(expected, labels)
    cycle = _find_cycle(needs)
    if cycle is None:
        return []
    names = " → ".join(f"'{expected[i].label}'" for i in (*cycle, cycle[0]))
    first = expected[cycle[0]]
    where, pointer, ref = next(
        site for site in first.refs if labels.get(site[2].label) == cycle[1 % len(cycle)]
    )
    message = f"$ref {ref.target}: cycle {names}: each value needs the other call first"
    return [LabelProblem(cycle[0], where, pointer, message)]


def _ref_targets(expected: Sequence[Expectation], labels: dict[str, int]) -> list[list[int]]:
    """Per expectation, the expectations its ``$ref`` s take values from (known labels only,
    not itself)."""
    out: list[list[int]] = []
    for index, exp in enumerate(expected):
        targets = {labels[ref.label] for _, _, ref in exp.refs if ref.label in labels}
        targets.discard(index)
        out.append(sorted(targets))
    return out


def _find_cycle(successors: list[list[int]]) -> list[int] | None:
    """One cycle of a directed graph (its vertices in order), or None; iterative DFS."""
    state = [0] * len(successors)  # 0 new, 1 on the stack, 2 done
    for root in range(len(successors)):
        if state[root]:
            continue
        stack = [(root, 0)]
        path = [root]
        state[root] = 1
        while stack:
            vertex, cursor = stack[-1]
            if cursor < len(successors[vertex]):
                stack[-1] = (vertex, cursor + 1)
                nxt = successors[vertex][cursor]
                if state[nxt] == 1:
                    return path[path.index(nxt) :]
                if state[nxt] == 0:
                    state[nxt] = 1
                    stack.append((nxt, 0))
                    path.append(nxt)
                continue
            state[vertex] = 2
            stack.pop()
            path.pop()
    return None


def order_edges(expected: Sequence[Expectation]) -> list[Edge]:
    """The ``after`` edges of a list, as sorted unique index pairs (unknown labels ignored)."""
    labels = {exp.label: index for index, exp in enumerate(expected) if exp.label is not None}
    edges = {
        (labels[label], index)
        for index, exp in enumerate(expected)
        for label in exp.after
        if label in labels and labels[label] != index
    }
    return sorted(edges)


def ref_layers(expected: Sequence[Expectation]) -> list[list[int]]:
    """Indices by ``$ref`` layer: layer 0 holds the expectations without a ``$ref``; layer k
    those whose ``$ref`` s name only labels of layers below k. A ``$ref`` to an unknown label
    counts as none (it stays unresolved); a cycle is a SampleError (the loader reports it)."""
    labels = {exp.label: index for index, exp in enumerate(expected) if exp.label is not None}
    needs = _ref_targets(expected, labels)
    layer: list[int] = [-1] * len(expected)
    for index in range(len(expected)):
        _layer_of(index, needs, layer, set())
    out: list[list[int]] = [[] for _ in range(max(layer, default=-1) + 1)]
    for index, depth in enumerate(layer):
        out[depth].append(index)
    return out


def _layer_of(index: int, needs: list[list[int]], layer: list[int], open_: set[int]) -> int:
    if layer[index] >= 0:
        return layer[index]
    if index in open_:
        raise SampleError("the $ref s of the expected calls form a cycle; check the labels")
    open_.add(index)
    depth = 1 + max((_layer_of(t, needs, layer, open_) for t in needs[index]), default=-1)
    open_.discard(index)
    layer[index] = depth
    return depth


def topological_order(vertices: Iterable[int], edges: Sequence[Edge]) -> list[int]:
    """``vertices`` with every edge's source before its target, lowest index first when free."""
    chosen = set(vertices)
    incoming = {v: 0 for v in chosen}
    successors: dict[int, list[int]] = {v: [] for v in chosen}
    for a, b in edges:
        if a in chosen and b in chosen:
            successors[a].append(b)
            incoming[b] += 1
    ready = [v for v, count in incoming.items() if count == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        vertex = heapq.heappop(ready)
        order.append(vertex)
        for nxt in successors[vertex]:
            incoming[nxt] -= 1
            if incoming[nxt] == 0:
                heapq.heappush(ready, nxt)
    if len(order) != len(chosen):
        raise SampleError("the after: labels of the expected calls form a cycle")
    return order


def without(expected: Sequence[Expectation], dropped: Iterable[int]) -> list[Expectation]:
    """The list without the ``dropped`` expectations, the order they stood in kept: an
    expectation that came after a dropped one now comes after what that one came after."""
    gone = set(dropped)
    if not gone:
        return list(expected)
    by_label = {exp.label: index for index, exp in enumerate(expected) if exp.label is not None}
    kept: list[Expectation] = []
    for index, exp in enumerate(expected):
        if index in gone:
            continue
        if any(by_label.get(label) in gone for label in exp.after):
            after = _through(exp.after, expected, by_label, gone, set())
            exp = exp.evolve(after=after)
        kept.append(exp)
    return kept


def _through(
    after: Iterable[str],
    expected: Sequence[Expectation],
    by_label: dict[str, int],
    gone: set[int],
    seen: set[str],
) -> tuple[str, ...]:
    """``after`` with each dropped label replaced by that expectation's own ``after``."""
    out: list[str] = []
    for label in after:
        if label in seen:
            continue
        seen.add(label)
        index = by_label.get(label)
        if index is not None and index in gone:
            out.extend(_through(expected[index].after, expected, by_label, gone, seen))
        else:
            out.append(label)
    return tuple(dict.fromkeys(out))
