"""Rules: deterministic properties of one run, the same engine for scenarios, pytest, recorded
traces and the in-app processor (docs/metrics.md, "Rules").

A rule is a pure function of a :class:`Trajectory` (the calls in request order, the user's
text, the model turns, the duration). Build rules from YAML/JSON mappings, a trajectory from a
run, and evaluate; nothing raises out of :func:`evaluate_rules`::

    from harness.rules import Trajectory, evaluate_rules, load_rules

    rules = load_rules([
        {"name": "grounded ids", "grounded": {"tool": "cancel_order", "args": ["order_id"]}},
        {"name": "lookup first", "before": {
            "first": {"name": "get_order", "args": {"order_id": {"$same": "order_id"}}},
            "then": "refund_order"}},
        {"name": "budget", "budget": {"tool_calls": 8, "total_tokens": 6000},
         "severity": "warn"},
    ])                                      # ConfigError listing every problem
    trajectory = Trajectory.from_sample(sample)    # or Trajectory(calls=..., user_inputs=...)
    for result in evaluate_rules(rules, trajectory):
        result.rule, result.passed, result.code, result.reason, result.calls, result.error

The same rules built in Python (each kind checks its values; MatcherError / ValueError)::

    Rule("no deletes", Forbid(CallPattern("delete_*")))
    Rule("lookup first", Before(
        CallPattern.build("get_order", {"order_id": Same("order_id")}, same_allowed=True),
        CallPattern("refund_order")))
    Rule("ids", Grounded(CallPattern.build("cancel_order"), ("order_id",)), severity="warn")

Loaders with a line map call :func:`compile_rules(raw, loc, collector)
<harness.rules.load.compile_rules>` instead, which adds located issues to the collector.
Modules: ``trajectory``, ``patterns``, ``grounding``, ``outcome``, ``kinds``, ``budget``,
``rule``, ``schema`` (the pydantic models), ``load``.
"""

from __future__ import annotations

from harness.rules.kinds import (
    Allow,
    Before,
    Budget,
    Forbid,
    Grounded,
    MaxCalls,
    MaxRepeats,
    RuleKind,
    RuleOutcome,
)
from harness.rules.load import compile_rule, compile_rules, load_rules
from harness.rules.patterns import CallPattern, Same
from harness.rules.rule import Rule, RuleCode, RuleResult, Severity, evaluate_rules
from harness.rules.schema import KINDS, PolicyRuleSpec, RuleSpec, RulesSpec
from harness.rules.trajectory import Trajectory

__all__ = [
    "KINDS",
    "Allow",
    "Before",
    "Budget",
    "CallPattern",
    "Forbid",
    "Grounded",
    "MaxCalls",
    "MaxRepeats",
    "PolicyRuleSpec",
    "Rule",
    "RuleCode",
    "RuleKind",
    "RuleOutcome",
    "RuleResult",
    "RuleSpec",
    "RulesSpec",
    "Same",
    "Severity",
    "Trajectory",
    "compile_rule",
    "compile_rules",
    "evaluate_rules",
    "load_rules",
]
