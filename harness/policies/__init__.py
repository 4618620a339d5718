"""Policies: the rules every production trace must satisfy, whatever produced it (issue 27).

A policy file names a policy, the traces it applies to and its rules (the forms of
docs/metrics.md "Rules", plus ``max_rate``); ``harness eval-traces FILES --rules POLICY.yaml``
reads each trace into a :class:`~tracing.otel.trace_run.TraceRun` and scores it against every
policy that selects it, with the one rule engine (docs/production-traces.md)::

    from harness.policies import evaluate_policies, load_policies

    policies = load_policies(["policies.yaml"])       # ConfigError listing every problem
    report = evaluate_policies(["traces.jsonl"], policies, examples=5)  # paths or sources
    for stats in report.policies:
        for rule in stats.rules:
            rule.rule, rule.evaluated, rule.violations, rule.rate, rule.failed, rule.examples
    report.unselected, report.failed, report.stats.to_json()

One trace at a time (the in-app processor): ``policy.selects(run)`` and
``policy.evaluate(run)`` (a list of :class:`~harness.rules.RuleResult`, never raising), or
``PolicyReport.add(run)`` to count. Modules: ``schema`` (pydantic models of the file),
``select`` (:class:`Selector`), ``policy`` (:class:`Policy`), ``load``, ``report``, ``stats``
(the population's figures), ``run`` (streaming inputs; :class:`PolicyPass`, the hook that
scores the traces another reading reads), ``console`` (the command's output and exit code),
``markdown``, ``html``, ``emit`` (``--emit-otel``).
"""

from __future__ import annotations

from harness.policies.load import load_policies, load_policy_file, looks_like_policies
from harness.policies.policy import Policy
from harness.policies.report import (
    DEFAULT_EXAMPLES,
    Example,
    PolicyReport,
    PolicyStats,
    RuleStats,
)
from harness.policies.run import PolicyPass, evaluate_policies, iter_trace_runs
from harness.policies.select import Selector

__all__ = [
    "DEFAULT_EXAMPLES",
    "Example",
    "Policy",
    "PolicyPass",
    "PolicyReport",
    "PolicyStats",
    "RuleStats",
    "Selector",
    "evaluate_policies",
    "iter_trace_runs",
    "load_policies",
    "load_policy_file",
    "looks_like_policies",
]
