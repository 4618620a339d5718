"""Rule (a named, located kind with a severity) and its result; :func:`evaluate_rules`.

Every rule runs on its own: an exception inside one (a bug, a hostile value) is that rule's
``rule_error`` result, never the end of the run, and never an exception raised into the caller
(docs/metrics.md, "Rules").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from harness.rules.kinds import RuleKind, passes_by_names
from harness.rules.trajectory import Trajectory
from harness.text import shorten

Severity = Literal["error", "warn"]
"""``error``: a failed rule fails the run; ``warn``: reported failed, never fails the run."""

RuleCode = Literal[
    "forbidden_call",
    "not_allowed",
    "missing_before",
    "ungrounded_arg",
    "too_many_calls",
    "repeated_call",
    "over_budget",
    "unevaluable",
    "rule_error",
]
"""The reason code of a rule result that did not pass."""

ERROR_WIDTH = 200
"""An exception's message is cut to this many characters in a ``rule_error`` reason."""


@dataclass(frozen=True, slots=True)
class RuleResult:
    """One rule on one run: passed or not, why, and the offending calls."""

    rule: str
    """The rule's name (reported as check ``rule:<name>``)."""
    passed: bool
    severity: Severity
    code: str | None
    """A :data:`RuleCode`, None when the rule passed."""
    reason: str
    """One line; a failure names the first offending call as ``#3 cancel_order(...)``."""
    calls: tuple[int, ...] = ()
    """0-based indices of the offending calls (reports show them + 1)."""
    error: bool = False
    """The rule could not be evaluated (``unevaluable``, ``rule_error``): not a verdict."""
    policy: str | None = None
    """The policy the rule came from (set by policies)."""


@dataclass(frozen=True, slots=True)
class Rule:
    """A named rule kind, with its severity and where it was written."""

    name: str
    kind: RuleKind
    severity: Severity = "error"
    max_rate: float = 0.0
    """Policies: the fraction of traces that may violate the rule before it fails."""
    line: int | None = None
    file: str | None = None

    def evaluate(self, trajectory: Trajectory, policy: str | None = None) -> RuleResult:
        """The rule's result on ``trajectory`` (naming ``policy`` when given); never raises.

        A rule the run's tool names already decide (:func:`~harness.rules.kinds.
        passes_by_names`: say a ``forbid`` of a tool the run never called) passes without
        reading the calls: most rules of a policy concern tools a given trace does not call.
        """
        try:
            decided = passes_by_names(self.kind, trajectory)
        except Exception as exc:  # a rule's bug or a hostile value: this rule's result only
            return self._raised(exc, policy)
        return self.passed(policy) if decided else self.run(trajectory, policy)

    def run(self, trajectory: Trajectory, policy: str | None = None) -> RuleResult:
        """:meth:`evaluate` reading the whole run, whatever its tool names; never raises."""
        try:
            outcome = self.kind.evaluate(trajectory)
        except Exception as exc:  # a rule's bug or a hostile value: this rule's result only
            return self._raised(exc, policy)
        return RuleResult(
            self.name,
            outcome.passed,
            self.severity,
            outcome.code,
            outcome.reason,
            outcome.calls,
            outcome.error,
            policy,
        )

    def passed(self, policy: str | None = None) -> RuleResult:
        """The result of this rule passing (its kind's ``PASSED`` outcome)."""
        outcome = self.kind.PASSED
        return RuleResult(self.name, True, self.severity, None, outcome.reason, policy=policy)

    def _raised(self, exc: Exception, policy: str | None) -> RuleResult:
        message = _message(exc)
        reason = f"the rule raised {type(exc).__name__}" + (f": {message}" if message else "")
        return RuleResult(
            self.name, False, self.severity, "rule_error", reason, error=True, policy=policy
        )


def _message(exc: Exception) -> str:
    try:
        text = str(exc)
    except Exception:  # an exception whose own __str__ fails still gets its type reported
        return ""
    return shorten(" ".join(text.split()), ERROR_WIDTH)


def evaluate_rules(
    rules: Iterable[Rule], trajectory: Trajectory, policy: str | None = None
) -> tuple[RuleResult, ...]:
    """Every rule's result on ``trajectory``, in the rules' order, each naming ``policy`` when
    given; never raises."""
    return tuple(rule.evaluate(trajectory, policy) for rule in rules)


DECIDED_LIMIT = 4096
"""Sets of tool names (with counts) whose decided rules a :class:`RuleBook` keeps; past it,
a new set is worked out for each run (a bound on memory, not on correctness)."""


@dataclass(frozen=True, slots=True)
class RuleBook:
    """Rules evaluated together on many runs (a policy's), each result naming ``policy``.

    Which rules the run's tool names decide (:meth:`Rule.evaluate`) depends only on the names
    and their counts, and production runs repeat a few such sets: it is worked out once per
    set, and those rules' results are the same passing result each time.
    """

    rules: tuple[Rule, ...]
    policy: str | None = None
    _passed: tuple[RuleResult, ...] = field(init=False, repr=False, compare=False)
    _decided: dict[frozenset[tuple[str, int]], tuple[bool, ...]] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        passed = tuple(rule.passed(self.policy) for rule in self.rules)
        object.__setattr__(self, "_passed", passed)
        object.__setattr__(self, "_decided", {})

    def evaluate(self, trajectory: Trajectory) -> list[RuleResult]:
        """Every rule's result on ``trajectory``, in order; equal to :func:`evaluate_rules`."""
        counts = trajectory.tool_counts
        key = frozenset(counts.items())
        decided = self._decided.get(key)
        if decided is None:
            try:
                decided = tuple(passes_by_names(rule.kind, trajectory) for rule in self.rules)
            except Exception:  # a hostile value: each rule on its own says which one raised
                return list(evaluate_rules(self.rules, trajectory, self.policy))
            if len(self._decided) < DECIDED_LIMIT:
                self._decided[key] = decided
        policy = self.policy
        return [
            passed if skip else rule.run(trajectory, policy)
            for rule, passed, skip in zip(self.rules, self._passed, decided, strict=True)
        ]
