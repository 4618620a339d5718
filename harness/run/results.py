"""The one result model every report renders from: suite run -> scenarios -> runs -> scores.

Statuses follow pytest: ``passed``, ``failed`` (a metric or check said no), ``error`` (the agent
factory or the run raised, or the timeout hit), ``xfailed`` / ``xpassed`` for scenarios marked
``xfail``. As in pytest's default (non-strict) mode an ``xpassed`` scenario is reported apart and
does not fail the run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar

from harness.metrics.base import Score
from harness.sample import Sample
from tracing.records import ToolCall

__all__ = [
    "RULE_ERROR_CODES",
    "STATUSES",
    "CheckCode",
    "CheckKind",
    "CheckName",
    "CheckResult",
    "CheckSeverity",
    "ErrorInfo",
    "ErrorPhase",
    "ResultSample",
    "RunResult",
    "ScenarioResult",
    "Status",
    "SuiteResult",
    "score_line",
]

Status = Literal["passed", "failed", "error", "xfailed", "xpassed"]
STATUSES: tuple[Status, ...] = ("passed", "failed", "error", "xfailed", "xpassed")

CheckName = Literal["forbid", "no_errors", "output"]
"""The scenario's own checks; a rule's check is named ``rule:<name>``."""
CheckCode = Literal["unexpected_call", "tool_error", "wrong_output"]
"""``unexpected_call``: a forbidden tool was called; ``tool_error``: an executed call failed;
``wrong_output``: the final answer did not match. A rule's check has a rule code
(``harness.rules.RuleCode``)."""
CheckKind = Literal["check", "rule"]
CheckSeverity = Literal["error", "warn"]
"""``warn``: a failed check is reported (``passed: false``) but never fails the run."""
RULE_ERROR_CODES = frozenset(("unevaluable", "rule_error"))
"""Codes of a rule that gave no verdict: the run's error (``warn``: a warning), not a fail."""

ErrorPhase = Literal["factory", "run", "timeout", "scoring", "match"]
"""``match``: ``harness eval-traces`` found no scenario for a recorded trace."""


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The verdict of a ``forbid``, ``no_errors`` or ``output`` check, or of a rule, on one run."""

    name: str
    """A :data:`CheckName`, or ``rule:<name>`` for a rule."""
    passed: bool
    reason: str
    code: str | None = None
    """A :data:`CheckCode`, or a rule's code; None when it passed."""
    calls: tuple[int, ...] = ()
    """Indices (into the run's recorded calls) of the calls that broke the check."""
    kind: CheckKind = "check"
    severity: CheckSeverity = "error"

    @property
    def fails_run(self) -> bool:
        """Does this check fail the run (failed, and not a warning)?"""
        return not self.passed and self.severity == "error"

    @property
    def warned(self) -> bool:
        """A ``warn`` check that did not pass: reported, never failing the run."""
        return not self.passed and self.severity == "warn"


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """Why a run errored: the exception type and message, its traceback, and the phase."""

    type: str
    message: str
    traceback: str = ""
    phase: ErrorPhase = "run"
    brief: bool = False
    """The message says it all (``HarnessError.brief``: a provider failure, a cassette miss):
    the console and JUnit reports leave the traceback to the JSON report and ``-v``."""

    def summary(self) -> str:
        """``Type: message`` in one line."""
        return f"{self.type}: {self.message}" if self.message else self.type


@dataclass(frozen=True, slots=True)
class RunResult:
    """One run of a scenario (``repeat`` gives several): what was captured and how it scored."""

    index: int
    passed: bool
    sample: Sample | None = None
    scores: tuple[Score, ...] = ()
    checks: tuple[CheckResult, ...] = ()
    error: ErrorInfo | None = None
    duration: float = 0.0
    trace_id: str | None = None
    """The run's trace (32 hex digits) when it was exported or read from a trace file."""
    paused: tuple[Any, ...] = ()
    """The interrupt payloads when the run's last turn left the graph paused (``interrupt()``);
    empty when it finished. A pause is not an error: the run is scored as it stands."""

    @property
    def calls(self) -> list[ToolCall]:
        """The recorded calls (empty when nothing was captured)."""
        if self.sample is None or self.sample.tool_calls is None:
            return []
        return self.sample.tool_calls

    @property
    def output(self) -> Any:
        """The agent's final answer, if the run got that far."""
        return self.sample.output if self.sample is not None else None

    def reasons(self) -> list[str]:
        """One line per failing score or check, or the error (warnings are not reasons; a
        rule that gave no verdict is said by the error it made)."""
        out: list[str] = []
        if self.error is not None:
            out.append(f"error ({self.error.phase}): {self.error.summary()}")
        for score in self.scores:
            if not score.passed:
                out.append(score_line(score))
        for check in self.checks:
            if not check.fails_run:
                continue
            if check.kind == "check":
                out.append(check.reason)
            elif check.code not in RULE_ERROR_CODES or self.error is None:
                out.append(f"{check.name}: {check.reason}")
        return out

    @property
    def warnings(self) -> tuple[CheckResult, ...]:
        """The ``warn`` checks that did not pass."""
        return tuple(check for check in self.checks if check.warned)


def score_line(score: Score) -> str:
    """``name 0.50 < 1.00: reason`` — a failing (or passing) score in one line."""
    relation = ">=" if score.value >= score.threshold else "<"
    return f"{score.name} {score.value:.2f} {relation} {score.threshold:.2f}: {score.reason}"


class ScenarioIdentity:
    """How every report names a scenario: ``suite::name[trace]`` and ``file:line``.

    Shared by :class:`ScenarioResult` and the report view of it, so the two cannot drift.
    """

    __slots__ = ()
    suite: str
    name: str
    file: str
    line: int | None
    trace_id: str | None

    @property
    def display_name(self) -> str:
        """The name, with ``[trace id prefix]`` when the result scores a recorded trace."""
        return f"{self.name}[{self.trace_id[:12]}]" if self.trace_id else self.name

    @property
    def id(self) -> str:
        """``suite::name`` (``suite::name[trace]`` for a recorded trace)."""
        return f"{self.suite}::{self.display_name}"

    @property
    def location(self) -> str:
        """``file:line``."""
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass(frozen=True, slots=True)
class ScenarioResult(ScenarioIdentity):
    """A scenario's verdict over all its runs, with the reasons for anything not passed."""

    suite: str
    name: str
    file: str
    line: int | None
    status: Status
    runs: tuple[RunResult, ...] = ()
    repeat: int = 1
    pass_rate: float = 1.0
    xfail: str | None = None
    reasons: tuple[str, ...] = ()
    duration: float = 0.0
    trace_id: str | None = None
    """Set when the result scores one recorded trace (``harness eval-traces``)."""
    source: str | None = None
    """Where that trace was read: ``file:line`` of its root span (``harness eval-traces``)."""

    @property
    def passes(self) -> int:
        """How many runs passed."""
        return sum(1 for run in self.runs if run.passed)

    @property
    def observed_rate(self) -> float:
        """Fraction of runs that passed (0 when nothing ran)."""
        return self.passes / len(self.runs) if self.runs else 0.0

    def first_failing_run(self) -> RunResult | None:
        """The run a report should show in detail: the first that did not pass, else the last."""
        for run in self.runs:
            if not run.passed:
                return run
        return self.runs[-1] if self.runs else None


@dataclass(frozen=True, slots=True)
class SuiteResult:
    """Everything one ``harness run`` produced: every scenario result, counts and timing."""

    scenarios: tuple[ScenarioResult, ...] = ()
    started_at: float = 0.0
    """Wall-clock start, seconds since the epoch."""
    duration: float = 0.0
    interrupted: bool = False
    """Stopped by Ctrl-C: the results are partial."""
    not_run: int = 0
    """Selected scenarios with no result: never started (``--fail-fast``) or cut by Ctrl-C."""
    warnings: tuple[str, ...] = ()
    """Problems that did not stop the run (an unreadable trace-file line, export trouble)."""
    counts: dict[str, int] = field(default_factory=dict)
    omitted: Mapping[str, int] = field(default_factory=dict)
    """Results counted in ``counts`` but not kept in ``scenarios``, per status: ``harness
    eval-traces`` streams every result to the JSON and JUnit writers and keeps a bounded
    sample (see :class:`ResultSample`). Empty for ``harness run``, which keeps everything."""
    rule_warnings: int = field(default=0, init=False)
    """``warn`` rules that did not pass, once per scenario and rule, over the kept
    ``scenarios`` (reported, never failing the run)."""

    def __post_init__(self) -> None:
        tally = dict.fromkeys(STATUSES, 0)
        for scenario in self.scenarios:
            tally[scenario.status] += 1
        for status, count in self.omitted.items():
            if status not in tally:
                raise ValueError(
                    f"omitted counts name an unknown status {status!r}; use one of {STATUSES}"
                )
            tally[status] += count
        object.__setattr__(self, "counts", tally)
        warned = {
            (id(scenario), check.name)
            for scenario in self.scenarios
            for run in scenario.runs
            for check in run.warnings
        }
        object.__setattr__(self, "rule_warnings", len(warned))

    @property
    def total(self) -> int:
        """How many results there were, kept or not."""
        return sum(self.counts.values())

    @property
    def omitted_total(self) -> int:
        """How many results were counted but not kept (0 unless the result is a sample)."""
        return sum(self.omitted.values())

    @property
    def ok(self) -> bool:
        """No scenario failed or errored (xfailed and xpassed do not fail a run)."""
        return self.counts["failed"] == 0 and self.counts["error"] == 0

    @property
    def suites(self) -> list[str]:
        """Suite names in first-seen order."""
        return list(dict.fromkeys(scenario.suite for scenario in self.scenarios))

    def summary_line(self) -> str:
        """``3 passed, 1 failed, 2 xfailed in 1.23s`` (pytest's wording)."""
        parts = [f"{self.counts[s]} {s}" for s in STATUSES if self.counts[s]]
        if self.not_run:
            parts.append(f"{self.not_run} not run")
        if not parts:
            parts.append("no scenarios ran")
        if self.rule_warnings:
            parts.append(f"{self.rule_warnings} warning{'s' if self.rule_warnings > 1 else ''}")
        text = ", ".join(parts) + f" in {self.duration:.2f}s"
        return text + (" (interrupted)" if self.interrupted else "")


class _HasStatus(Protocol):
    @property
    def status(self) -> Status: ...


Kept = TypeVar("Kept", bound=_HasStatus)


class ResultSample(Generic[Kept]):
    """At most ``limit`` results of a stream, those that did not pass first; the rest counted.

    While there is room every result is kept, in arrival order. When full, a result that did not
    pass replaces the most recent passing one still kept; anything else is only counted. So a
    small run keeps everything, and a huge one keeps up to ``limit`` failures, errors and xfail
    outcomes, never more. ``limit=None`` keeps every result. Anything with a ``status`` can be
    sampled: the results themselves, or their report views (the console and HTML reporters).
    """

    __slots__ = ("_kept", "_omitted", "_passing", "limit")

    # ``_passing``: the positions in ``_kept`` of the passing results, ascending. The last one is
    # the one to evict, and removing it shifts no position still listed.

    def __init__(self, limit: int | None) -> None:
        """Keep at most ``limit`` results (None: all)."""
        if limit is not None and limit < 0:
            raise ValueError(f"a result sample keeps 0 or more results, got limit={limit}")
        self.limit = limit
        self._kept: list[Kept] = []
        self._omitted: dict[str, int] = {}
        self._passing: list[int] = []

    def add(self, result: Kept) -> None:
        """Count ``result``, and keep it if the rule above lets it in."""
        # Runs once per result of a stream (``harness eval-traces``): the two common cases,
        # room left and a passing result once full, are inlined.
        status = result.status
        limit = self.limit
        kept = self._kept
        if limit is None or len(kept) < limit:
            if status == "passed":
                self._passing.append(len(kept))
            kept.append(result)
            return
        omitted = self._omitted
        if status != "passed" and self._passing:
            del kept[self._passing.pop()]
            omitted["passed"] = omitted.get("passed", 0) + 1
            kept.append(result)
            return
        omitted[status] = omitted.get(status, 0) + 1

    @property
    def scenarios(self) -> tuple[Kept, ...]:
        """The kept results, in arrival order."""
        return tuple(self._kept)

    @property
    def omitted(self) -> dict[str, int]:
        """Per status, how many results were counted but not kept."""
        return dict(self._omitted)
