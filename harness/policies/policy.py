"""Policy: named rules and the traces they apply to (docs/production-traces.md).

A policy is data: a :class:`~harness.policies.select.Selector` and the rules of
:mod:`harness.rules`, evaluated by the one rule engine on the trajectory of a read trace
(:meth:`~harness.rules.Trajectory.from_trace_run`). Nothing raises out of :meth:`Policy.evaluate`:
a rule's exception is that rule's ``rule_error`` result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from harness.policies.select import Selector
from harness.rules import Rule, RuleResult, Trajectory
from harness.rules.rule import RuleBook

if TYPE_CHECKING:
    from tracing.otel.trace_run import TraceRun

__all__ = ["Policy"]


@dataclass(frozen=True, slots=True)
class Policy:
    """A named set of rules, the traces it selects, and where it was written."""

    name: str
    select: Selector
    rules: tuple[Rule, ...]
    path: str | None = None
    line: int | None = None
    book: RuleBook = field(init=False, repr=False, compare=False)
    """The rules as one book (:class:`~harness.rules.rule.RuleBook`), naming this policy."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "book", RuleBook(tuple(self.rules), self.name))

    def selects(self, run: TraceRun) -> bool:
        """Does this policy apply to ``run``?"""
        return self.select.selects(run)

    def evaluate(self, run: TraceRun) -> list[RuleResult]:
        """Every rule's result on ``run``, in the rules' order, each naming this policy; never
        raises (selection is the caller's: see :meth:`selects`)."""
        return self.evaluate_trajectory(Trajectory.from_trace_run(run))

    def evaluate_trajectory(self, trajectory: Trajectory) -> list[RuleResult]:
        """:meth:`evaluate` on a trajectory built once for every policy that selects a run."""
        return self.book.evaluate(trajectory)
