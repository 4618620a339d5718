"""What the online processor evaluates (a policy) and what it hands out (a trace's result).

A policy is any object with a ``name``, ``selects(run)`` and ``evaluate(run)``: the policy files
of ``harness eval-traces`` load into such objects, and a team may write its own. The processor
only calls those three, so it works with whatever builds them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from harness.rules import RuleResult
from tracing.otel.trace_run import TraceRun

__all__ = ["OnlinePolicy", "TraceResult"]


@runtime_checkable
class OnlinePolicy(Protocol):
    """A named set of rules that picks the traces it applies to."""

    @property
    def name(self) -> str:
        """The policy's name (the ``policy`` attribute of events and counters)."""
        ...

    def selects(self, run: TraceRun) -> bool:
        """Does the policy apply to this trace (its ``select:``)?"""
        ...

    def evaluate(self, run: TraceRun) -> Sequence[RuleResult]:
        """One result per rule of the policy on this trace."""
        ...


@dataclass(frozen=True, slots=True)
class TraceResult:
    """One rule's result on one live trace, as handed to ``on_result``."""

    result: RuleResult
    policy: str
    trace_id: str
    """32 lowercase hex digits."""
    span_id: str | None
    """The trace's root span (16 hex digits); without a root (timed out), its first span."""
    complete: bool
    """False when the trace was evaluated without its root span (timeout or shutdown)."""

    @property
    def violation(self) -> bool:
        """Did the rule fail with a verdict (not an ``unevaluable`` / ``rule_error`` result)?"""
        return not self.result.passed and not self.result.error
