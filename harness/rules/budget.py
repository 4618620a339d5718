"""``budget``: caps on a run's counts, tokens and seconds (docs/metrics.md, "Rules", budget)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from math import inf
from typing import ClassVar

from harness.rules.outcome import RuleOutcome, positive_int, unevaluable
from harness.rules.trajectory import Trajectory
from tracing.records import ModelCall

BUDGET_KEYS = (
    "tool_calls",
    "model_calls",
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "seconds",
)
"""The figures a budget may cap, in the order reasons list them."""


@dataclass(frozen=True, slots=True)
class Budget:
    """``budget: {...}``: each given figure of the run is at most its cap."""

    tool_calls: int | None = None
    model_calls: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    seconds: float | None = None
    kind: ClassVar[str] = "budget"
    PASSED: ClassVar[RuleOutcome] = RuleOutcome(True, None, "within budget")

    def __post_init__(self) -> None:
        caps = {key: getattr(self, key) for key in BUDGET_KEYS}
        if all(cap is None for cap in caps.values()):
            raise ValueError(f"a budget needs at least one of {', '.join(BUDGET_KEYS)}")
        for key, cap in caps.items():
            if key == "seconds" and cap is not None:
                if isinstance(cap, bool) or not isinstance(cap, (int, float)) or not 0 < cap < inf:
                    raise ValueError(f"budget seconds must be a finite number > 0, got {cap!r}")
            elif cap is not None:
                positive_int("budget", key, cap)

    def passes_by_names(self, counts: Mapping[str, int]) -> bool:
        """Only ``tool_calls`` is capped, and the run's calls are within it (every other
        figure needs the model turns or the duration)."""
        return (
            self.tool_calls is not None
            and all(getattr(self, key) is None for key in BUDGET_KEYS[1:])
            and sum(counts.values()) <= self.tool_calls
        )

    def evaluate(self, trajectory: Trajectory) -> RuleOutcome:
        """Fail listing every figure over its cap; unknown figures are an error only when no
        figure is over."""
        over: list[str] = []
        missing: list[str] = []
        for key in BUDGET_KEYS:
            cap = getattr(self, key)
            if cap is None:
                continue
            value, why = _figure(trajectory, key)
            if value is not None and value > cap:
                over.append(f"{key} {_number(value)} > {_number(cap)}")
            elif why is not None:
                missing.append(f"{key}: {why}")
        if over:
            return RuleOutcome(False, "over_budget", "over budget: " + "; ".join(over))
        if missing:
            return unevaluable("; ".join(missing))
        return self.PASSED


def _figure(trajectory: Trajectory, key: str) -> tuple[float | int | None, str | None]:
    """The run's figure for a budget key (a lower bound when part is unknown), and why it is
    not fully known (None when it is)."""
    if key == "tool_calls":
        return len(trajectory.calls), None
    if key == "seconds":
        known = trajectory.duration
        return known, None if known is not None else "the run's duration is not known"
    model_calls = trajectory.model_calls
    if model_calls is None:
        return None, "the model turns were not recorded"
    if key == "model_calls":
        return len(model_calls), None
    figures = [_tokens(call, key) for call in model_calls]
    reported = [figure for figure in figures if figure is not None]
    if not reported:
        return None, "no model turn reported token usage"
    total = sum(reported)
    if len(reported) < len(figures):
        return total, f"{len(figures) - len(reported)} of {len(figures)} model turns reported none"
    return total, None


def _tokens(call: ModelCall, key: str) -> int | None:
    if key == "input_tokens":
        return call.input_tokens
    if key == "output_tokens":
        return call.output_tokens
    if call.total_tokens is not None:
        return call.total_tokens
    if call.input_tokens is not None and call.output_tokens is not None:
        return call.input_tokens + call.output_tokens
    return None


def _number(value: float) -> str:
    """``6,420``; ``12.35``; ``10`` — thousands separated, at most two decimals."""
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")
