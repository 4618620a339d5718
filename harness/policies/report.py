"""PolicyReport: per policy and rule, over every trace read — counts, rates, example traces.

Counting (docs/production-traces.md): a trace is *selected* by a policy whose selector takes it;
each of the policy's rules then gives one result on it. A verdict (passed or violated) counts
as *evaluated*; a result that is no verdict (``unevaluable``: the trace lacks what the rule
needs, or ``rule_error``: the rule raised) counts as *unevaluable*, never as a violation. The
*rate* is violations / evaluated. A rule *fails* the run when its severity is ``error`` and its
rate is above its ``max_rate`` (default 0: any violation); ``warn`` rules never fail. Traces no
policy selects are counted as ``unselected``, not errors.

Memory is per rule, not per trace: the first ``examples`` violating traces of each rule are
kept (trace id, the first offending call, the reason), masked by the redactor as they are
taken, plus the population's figures (:class:`~harness.policies.stats.TraceStats`). With
``per_trace`` each trace's results are kept too, as small dicts (``--per-trace``: memory then
grows with the traces, as the JSON written does). :meth:`PolicyReport.merge` adds the report of
a later part of the input (shards).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.policies.policy import Policy
from harness.policies.stats import TraceStats
from harness.redaction import DEFAULT_REDACT_KEYS, Redactor
from harness.rules import RuleResult, Trajectory

if TYPE_CHECKING:
    from tracing.otel.trace_run import TraceRun

__all__ = ["DEFAULT_EXAMPLES", "Example", "PolicyReport", "PolicyStats", "RuleStats"]

DEFAULT_EXAMPLES = 5
"""Violating traces kept per rule unless ``--examples N`` says otherwise."""


@dataclass(frozen=True, slots=True)
class Example:
    """One violating trace of a rule: where to open it, and what broke the rule."""

    trace_id: str
    code: str | None
    reason: str
    call: Mapping[str, Any] | None = None
    """The first offending call as ``{index, name, args}`` (index 1-based), masked."""
    source: str | None = None
    """``path:line`` of the input line that completed the trace, when read from a file."""
    calls: tuple[Mapping[str, Any], ...] = ()
    """Every call of the trace as ``{index, name, args, status, error}``, masked (the HTML
    report's call table; kept for the examples only)."""
    offending: tuple[int, ...] = ()
    """1-based indices of the calls the rule blames."""

    def to_json(self) -> dict[str, Any]:
        """The example as the JSON report writes it (its call table stays in the HTML)."""
        data: dict[str, Any] = {"trace_id": self.trace_id, "code": self.code, "reason": self.reason}
        if self.call is not None:
            data["call"] = dict(self.call)
        if self.source is not None:
            data["source"] = self.source
        return data


@dataclass(slots=True)
class RuleStats:
    """One rule of one policy, counted over the traces its policy selected."""

    rule: str
    severity: str
    max_rate: float
    line: int | None = None
    evaluated: int = 0
    violations: int = 0
    unevaluable: int = 0
    examples: list[Example] = field(default_factory=list)

    @property
    def rate(self) -> float:
        """violations / evaluated (0.0 when nothing was evaluated)."""
        return self.violations / self.evaluated if self.evaluated else 0.0

    @property
    def failed(self) -> bool:
        """An ``error`` rule whose rate is above its ``max_rate``."""
        return self.severity == "error" and self.violations > 0 and self.rate > self.max_rate

    def to_json(self) -> dict[str, Any]:
        """The rule's figures as the JSON report writes them."""
        return {
            "rule": self.rule,
            "severity": self.severity,
            "max_rate": self.max_rate,
            "line": self.line,
            "evaluated": self.evaluated,
            "violations": self.violations,
            "rate": self.rate,
            "unevaluable": self.unevaluable,
            "failed": self.failed,
            "examples": [example.to_json() for example in self.examples],
        }


@dataclass(slots=True)
class PolicyStats:
    """One policy: how many traces it selected, and each rule's figures."""

    policy: Policy
    rules: list[RuleStats]
    selected: int = 0
    selection_errors: int = 0
    """Traces whose selection raised (a matcher on a hostile value): not scored, counted."""

    @classmethod
    def of(cls, policy: Policy) -> PolicyStats:
        """Empty figures for ``policy``."""
        rules = [RuleStats(r.name, r.severity, r.max_rate, r.line) for r in policy.rules]
        return cls(policy, rules)

    @property
    def failed(self) -> bool:
        """Does a rule of this policy fail the run?"""
        return any(rule.failed for rule in self.rules)

    @property
    def warned(self) -> int:
        """Violations of the policy's ``warn`` rules (reported, never failing)."""
        return sum(rule.violations for rule in self.rules if rule.severity == "warn")

    def to_json(self) -> dict[str, Any]:
        """The policy's figures as the JSON report's ``policies[]`` item."""
        policy = self.policy
        return {
            "policy": policy.name,
            "file": policy.path,
            "line": policy.line,
            "select": policy.select.describe(),
            "selected": self.selected,
            "selection_errors": self.selection_errors,
            "failed": self.failed,
            "warned": self.warned,
            "rules": [rule.to_json() for rule in self.rules],
        }


class PolicyReport:
    """Every policy's figures over the traces added so far (module docstring)."""

    def __init__(
        self,
        policies: Sequence[Policy],
        *,
        examples: int = DEFAULT_EXAMPLES,
        redactor: Redactor | None = None,
        per_trace: bool = False,
    ) -> None:
        """Empty figures for ``policies``; keep ``examples`` violating traces per rule (and
        each trace's results, with ``per_trace``)."""
        self.policies = [PolicyStats.of(policy) for policy in policies]
        self.examples = examples
        self.redactor = redactor if redactor is not None else Redactor(DEFAULT_REDACT_KEYS)
        self.traces = 0
        """Traces read and scored."""
        self.unselected = 0
        """Traces no policy selected."""
        self.warnings: list[str] = []
        """What the reading reported (unreadable lines, files), one line each."""
        self.interrupted = False
        self.stats = TraceStats()
        self.per_trace: list[dict[str, Any]] | None = [] if per_trace else None
        """Each trace's results, in input order (``per_trace``), else None."""

    def add(self, run: TraceRun, source: str | None = None) -> list[RuleResult]:
        """Score ``run`` against every policy that selects it; its results (never raises)."""
        self.traces += 1
        self.stats.add(run)
        results: list[RuleResult] = []
        chosen: list[str] = []
        trajectory: Trajectory | None = None  # built once, for the first policy selecting it
        for stats in self.policies:
            try:
                selected = stats.policy.selects(run)
            except Exception:  # a matcher on a hostile value: this trace, this policy only
                stats.selection_errors += 1
                continue
            if not selected:
                continue
            chosen.append(stats.policy.name)
            stats.selected += 1
            if trajectory is None:
                trajectory = Trajectory.from_trace_run(run)
            found = stats.policy.evaluate_trajectory(trajectory)
            for rule, result in zip(stats.rules, found, strict=True):
                if result.passed and not result.error:  # most: counted, nothing kept
                    rule.evaluated += 1
                else:
                    self._count(rule, result, run, source)
            results.extend(found)
        if not chosen:
            self.unselected += 1
        if self.per_trace is not None:
            self.per_trace.append(_trace_entry(run.trace_id, source, chosen, results))
        return results

    def _count(
        self, rule: RuleStats, result: RuleResult, run: TraceRun, source: str | None
    ) -> None:
        """Count a result that did not pass: a violation (kept as an example while there is
        room), or no verdict."""
        if result.error:
            rule.unevaluable += 1
            return
        rule.evaluated += 1
        if result.passed:
            return
        rule.violations += 1
        if len(rule.examples) < self.examples:
            rule.examples.append(self._example(result, run, source))

    def _example(self, result: RuleResult, run: TraceRun, source: str | None) -> Example:
        redactor = self.redactor
        secrets = _secret_values(run, redactor)
        reason = redactor.mask_values(
            redactor.redact_text(_scrub(result.reason, secrets, redactor.mask))
        )
        call: dict[str, Any] | None = None
        if result.calls and 0 <= result.calls[0] < len(run.calls):
            found = run.calls[result.calls[0]]
            call = {
                "index": result.calls[0] + 1,
                "name": found.name,
                "args": redactor.redact(dict(found.args)),
            }
        table = tuple(
            {
                "index": index,
                "name": found.name,
                "args": redactor.redact(dict(found.args)),
                "status": found.status,
                "error": None
                if found.error is None
                else redactor.mask_values(
                    redactor.redact_text(_scrub(found.error, secrets, redactor.mask))
                ),
            }
            for index, found in enumerate(run.calls, 1)
        )
        blamed = tuple(i + 1 for i in result.calls)
        return Example(run.trace_id, result.code, reason, call, source, table, blamed)

    @property
    def failed(self) -> bool:
        """Does any rule fail the run (an ``error`` rule above its ``max_rate``)?"""
        return any(stats.failed for stats in self.policies)

    def merge(self, other: PolicyReport) -> None:
        """Add the figures of ``other`` (the same policies, a later part of the input)."""
        self.traces += other.traces
        self.unselected += other.unselected
        self.warnings.extend(other.warnings)
        self.interrupted = self.interrupted or other.interrupted
        self.stats.merge(other.stats)
        if self.per_trace is not None and other.per_trace is not None:
            self.per_trace.extend(other.per_trace)
        for mine, theirs in zip(self.policies, other.policies, strict=True):
            mine.selected += theirs.selected
            mine.selection_errors += theirs.selection_errors
            for rule, more in zip(mine.rules, theirs.rules, strict=True):
                rule.evaluated += more.evaluated
                rule.violations += more.violations
                rule.unevaluable += more.unevaluable
                room = self.examples - len(rule.examples)
                rule.examples.extend(more.examples[: max(room, 0)])

    def to_json(self) -> dict[str, Any]:
        """The whole report as the JSON report's policy part (``per_trace`` when kept)."""
        data = {
            "traces": self.traces,
            "unselected": self.unselected,
            "ok": not self.failed,
            "interrupted": self.interrupted,
            "warnings": list(self.warnings),
            "policies": [stats.to_json() for stats in self.policies],
            "stats": self.stats.to_json(),
        }
        if self.per_trace is not None:
            data["per_trace"] = list(self.per_trace)
        return data


def outcome(result: RuleResult) -> str:
    """``pass``, ``fail`` or ``unevaluable`` (no verdict: the trace lacks what the rule needs,
    or the rule raised)."""
    if result.error:
        return "unevaluable"
    return "pass" if result.passed else "fail"


def _trace_entry(
    trace_id: str, source: str | None, chosen: list[str], results: list[RuleResult]
) -> dict[str, Any]:
    return {
        "trace_id": trace_id,
        "source": source,
        "policies": chosen,
        "rules": [
            {"policy": r.policy, "rule": r.rule, "result": outcome(r), "code": r.code}
            for r in results
        ],
    }


def _secret_values(run: TraceRun, redactor: Redactor) -> list[str]:
    """The values the run's calls pass under secret keys (top level), longest first."""
    found: set[str] = set()
    for call in run.calls:
        for key, value in call.args.items():
            if isinstance(key, str) and redactor.matches(key) and isinstance(value, (str, int)):
                text = str(value)
                if len(text) >= 4:  # a short value would mask ordinary text
                    found.add(text)
    return sorted(found, key=len, reverse=True)


def _scrub(text: str, secrets: list[str], mask: str) -> str:
    for secret in secrets:
        text = text.replace(secret, mask)
    return text
