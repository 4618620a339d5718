"""The one result model every report renders from: suite run -> scenarios -> runs -> scores.

Statuses follow pytest: ``passed``, ``failed`` (a metric or check said no), ``error`` (the agent
factory or the run raised, or the timeout hit), ``xfailed`` / ``xpassed`` for scenarios marked
``xfail``. As in pytest's default (non-strict) mode an ``xpassed`` scenario is reported apart and
does not fail the run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from harness.metrics.base import Score
from harness.sample import Sample
from tracing.records import ToolCall

SCHEMA_VERSION = 1
"""Version of the JSON layout written by :meth:`SuiteResult.to_dict`; bumped on breaking change."""

Status = Literal["passed", "failed", "error", "xfailed", "xpassed"]
STATUSES: tuple[Status, ...] = ("passed", "failed", "error", "xfailed", "xpassed")

CheckName = Literal["forbid", "no_errors", "output"]
CheckCode = Literal["unexpected_call", "tool_error", "wrong_output"]
"""``unexpected_call``: a forbidden tool was called; ``tool_error``: an executed call failed;
``wrong_output``: the final answer did not match."""

ErrorPhase = Literal["factory", "run", "timeout", "scoring"]

REDACTED = "***"
REDACT_KEYS: tuple[str, ...] = ("api_key", "password", "token", "authorization", "secret")
"""Argument keys whose values reports mask (exact key, or ending in ``_<key>``/``-<key>``)."""


def is_secret_key(key: str, keys: tuple[str, ...] = REDACT_KEYS) -> bool:
    """Does an argument key name a secret (``api_key``, ``openai_api_key``, ``X-Token``)?"""
    norm = key.lower().replace("-", "_")
    return any(norm == k or norm.endswith("_" + k) for k in keys)


def redact(value: Any) -> Any:
    """A copy of ``value`` with the values of secret-named keys masked, at any depth."""
    if isinstance(value, Mapping):
        return {
            k: REDACTED if isinstance(k, str) and is_secret_key(k) else redact(v)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [redact(item) for item in value]
    return value


def jsonable(value: Any) -> Any:
    """A JSON-ready copy: matchers and other objects become their readable text form."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    to_json = getattr(value, "to_json", None)  # matchers: back to their `$` mapping
    if callable(to_json):
        return jsonable(to_json())
    return _describe(value)


def _describe(value: Any) -> str:
    try:
        from harness.values import describe_pattern

        return describe_pattern(value)
    except Exception:  # a stub or an odd object: a repr still tells the reader what it was
        return repr(value)


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The verdict of a ``forbid``, ``no_errors`` or ``output`` check on one run."""

    name: CheckName
    passed: bool
    reason: str
    code: CheckCode | None = None
    calls: tuple[int, ...] = ()
    """Indices (into the run's recorded calls) of the calls that broke the check."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "name": self.name,
            "passed": self.passed,
            "code": self.code,
            "reason": self.reason,
            "calls": list(self.calls),
        }


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """Why a run errored: the exception type and message, its traceback, and the phase."""

    type: str
    message: str
    traceback: str = ""
    phase: ErrorPhase = "run"

    def summary(self) -> str:
        """``Type: message`` in one line."""
        return f"{self.type}: {self.message}" if self.message else self.type

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "type": self.type,
            "message": self.message,
            "phase": self.phase,
            "traceback": self.traceback,
        }


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
        """One line per failing score or check, or the error."""
        out: list[str] = []
        if self.error is not None:
            out.append(f"error ({self.error.phase}): {self.error.summary()}")
        for score in self.scores:
            if not score.passed:
                out.append(score_line(score))
        out.extend(check.reason for check in self.checks if not check.passed)
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, secrets in arguments masked."""
        sample = self.sample
        return {
            "index": self.index,
            "passed": self.passed,
            "duration": self.duration,
            "output": jsonable(sample.output) if sample is not None else None,
            "tool_calls": [_call_dict(call) for call in self.calls],
            "expected_tool_calls": [
                {"name": exp.name, "args": jsonable(redact(dict(exp.args)))}
                for exp in (sample.expected_tool_calls if sample is not None else [])
            ],
            "scores": [_score_dict(score) for score in self.scores],
            "checks": [check.to_dict() for check in self.checks],
            "error": self.error.to_dict() if self.error is not None else None,
        }


def score_line(score: Score) -> str:
    """``name 0.50 < 1.00: reason`` — a failing (or passing) score in one line."""
    relation = ">=" if score.value >= score.threshold else "<"
    return f"{score.name} {score.value:.2f} {relation} {score.threshold:.2f}: {score.reason}"


def _call_dict(call: ToolCall) -> dict[str, Any]:
    return {
        "name": call.name,
        "args": jsonable(redact(dict(call.args))),
        "id": call.id,
        "status": call.status,
        "error": call.error,
        "result": jsonable(redact(call.result)),
        "node": call.node,
        "turn": call.turn,
        "duration_ns": call.duration_ns,
    }


def _score_dict(score: Score) -> dict[str, Any]:
    return {
        "name": score.name,
        "value": score.value,
        "threshold": score.threshold,
        "passed": score.passed,
        "reason": score.reason,
        "codes": list(score.codes),
        "details": jsonable(redact(score.details.to_dict())),
    }


@dataclass(frozen=True, slots=True)
class ScenarioResult:
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

    @property
    def id(self) -> str:
        """``suite::name``."""
        return f"{self.suite}::{self.name}"

    @property
    def passes(self) -> int:
        """How many runs passed."""
        return sum(1 for run in self.runs if run.passed)

    @property
    def observed_rate(self) -> float:
        """Fraction of runs that passed (0 when nothing ran)."""
        return self.passes / len(self.runs) if self.runs else 0.0

    @property
    def location(self) -> str:
        """``file:line``."""
        return f"{self.file}:{self.line}" if self.line else self.file

    def first_failing_run(self) -> RunResult | None:
        """The run a report should show in detail: the first that did not pass, else the last."""
        for run in self.runs:
            if not run.passed:
                return run
        return self.runs[-1] if self.runs else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "suite": self.suite,
            "name": self.name,
            "file": self.file,
            "line": self.line,
            "status": self.status,
            "xfail": self.xfail,
            "repeat": self.repeat,
            "pass_rate": self.pass_rate,
            "passes": self.passes,
            "reasons": list(self.reasons),
            "duration": self.duration,
            "runs": [run.to_dict() for run in self.runs],
        }


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
    counts: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        tally = dict.fromkeys(STATUSES, 0)
        for scenario in self.scenarios:
            tally[scenario.status] += 1
        object.__setattr__(self, "counts", tally)

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
        text = ", ".join(parts) + f" in {self.duration:.2f}s"
        return text + (" (interrupted)" if self.interrupted else "")

    def to_dict(self) -> dict[str, Any]:
        """The JSON report: ``schema_version`` first, then counts and every scenario."""
        return {
            "schema_version": SCHEMA_VERSION,
            "started_at": self.started_at,
            "duration": self.duration,
            "interrupted": self.interrupted,
            "not_run": self.not_run,
            "ok": self.ok,
            "counts": dict(self.counts),
            "summary": self.summary_line(),
            "scenarios": [scenario.to_dict() for scenario in self.scenarios],
        }
