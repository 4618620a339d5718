"""The one result model every report renders from: suite run -> scenarios -> runs -> scores.

Statuses follow pytest: ``passed``, ``failed`` (a metric or check said no), ``error`` (the agent
factory or the run raised, or the timeout hit), ``xfailed`` / ``xpassed`` for scenarios marked
``xfail``. As in pytest's default (non-strict) mode an ``xpassed`` scenario is reported apart and
does not fail the run.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from harness.metrics.base import Score
from harness.redaction import Redactor
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

ErrorPhase = Literal["factory", "run", "timeout", "scoring", "match"]
"""``match``: ``harness eval-traces`` found no scenario for a recorded trace."""


class Scrubber:
    """Masks secrets at render time: values under redacted keys, and those values in any text.

    ``Redactor`` masks by key; a secret can also travel inside free text (a metric's reason, a
    forbidden-call message, a traceback), so the values found under redacted keys in the runs
    are also replaced wherever they appear in a string. Scoring never sees this: it happens
    only when a report or a span is written.
    """

    __slots__ = ("_secrets", "redactor")

    def __init__(self, redactor: Redactor | None = None, secrets: Iterable[str] = ()) -> None:
        """Mask with ``redactor`` (default key list) and scrub ``secrets`` out of text."""
        self.redactor = Redactor() if redactor is None else redactor
        # longest first, so a secret that contains another is replaced whole
        self._secrets = tuple(sorted(set(secrets), key=len, reverse=True))

    @classmethod
    def for_runs(cls, redactor: Redactor | None, runs: Iterable[RunResult]) -> Scrubber:
        """A scrubber for everything these runs recorded or expected."""
        redactor = Redactor() if redactor is None else redactor
        found: set[str] = set()
        if redactor.enabled:
            for run in runs:
                _run_secrets(run, redactor, found)
        return cls(redactor, found)

    @classmethod
    def for_suite(cls, redactor: Redactor | None, result: SuiteResult) -> Scrubber:
        """A scrubber for every run of every scenario of a suite result."""
        return cls.for_runs(redactor, (run for s in result.scenarios for run in s.runs))

    @property
    def secrets(self) -> tuple[str, ...]:
        """The secret values scrubbed out of text, longest first."""
        return self._secrets

    def text(self, text: str) -> str:
        """``text`` with every known secret value replaced by the mask."""
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, self.redactor.mask)
        return text

    def value(self, value: Any) -> Any:
        """A JSON-ready copy of ``value``: redacted keys masked, secret values scrubbed."""
        return self._strings(jsonable(self.redactor.redact(value)))

    def _strings(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value) if self._secrets else value
        if isinstance(value, dict):
            return {k: self._strings(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._strings(item) for item in value]
        return value


_MIN_SECRET = 4
"""Shorter values under a secret key are not scrubbed out of free text (too many false hits)."""


def _run_secrets(run: RunResult, redactor: Redactor, found: set[str]) -> None:
    sample = run.sample
    if sample is None:
        return
    for call in sample.tool_calls or ():
        _secrets_in(call.args, redactor, found, False)
        _secrets_in(call.result, redactor, found, False)
    for expectation in sample.expected_tool_calls:
        _secrets_in(jsonable(dict(expectation.args)), redactor, found, False)


def _secrets_in(value: Any, redactor: Redactor, found: set[str], secret: bool) -> None:
    """Collect the leaf values under redacted keys (JSON text is looked into as well)."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "["):
            try:
                _secrets_in(json.loads(stripped), redactor, found, secret)
            except ValueError:
                pass
            else:
                if not secret:
                    return
        if secret and len(stripped) >= _MIN_SECRET:
            found.add(stripped)
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            hit = secret or (isinstance(key, str) and redactor.matches(key))
            _secrets_in(item, redactor, found, hit)
        return
    if isinstance(value, (list, tuple)):
        for item in value:
            _secrets_in(item, redactor, found, secret)
        return
    if secret and isinstance(value, (int, float)) and not isinstance(value, bool):
        text = repr(value)
        if len(text) >= _MIN_SECRET:
            found.add(text)


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
    trace_id: str | None = None
    """The run's trace (32 hex digits) when it was exported or read from a trace file."""

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

    def to_dict(self, scrubber: Scrubber | None = None) -> dict[str, Any]:
        """JSON-ready form, secrets masked (default: the default redaction list)."""
        scrub = Scrubber.for_runs(None, (self,)) if scrubber is None else scrubber
        sample = self.sample
        data = {
            "index": self.index,
            "passed": self.passed,
            "trace_id": self.trace_id,
            "duration": self.duration,
            "output": scrub.value(sample.output) if sample is not None else None,
            "tool_calls": [_call_dict(call, scrub) for call in self.calls],
            "expected_tool_calls": [
                {"name": exp.name, "args": scrub.value(dict(exp.args))}
                for exp in (sample.expected_tool_calls if sample is not None else [])
            ],
            "scores": [_score_dict(score, scrub) for score in self.scores],
            "checks": [scrub.value(check.to_dict()) for check in self.checks],
            "error": scrub.value(self.error.to_dict()) if self.error is not None else None,
        }
        return data


def score_line(score: Score) -> str:
    """``name 0.50 < 1.00: reason`` — a failing (or passing) score in one line."""
    relation = ">=" if score.value >= score.threshold else "<"
    return f"{score.name} {score.value:.2f} {relation} {score.threshold:.2f}: {score.reason}"


def _call_dict(call: ToolCall, scrub: Scrubber) -> dict[str, Any]:
    return {
        "name": call.name,
        "args": scrub.value(dict(call.args)),
        "id": call.id,
        "status": call.status,
        "error": scrub.text(call.error) if call.error is not None else None,
        "result": scrub.value(call.result),
        "node": call.node,
        "turn": call.turn,
        "duration_ns": call.duration_ns,
    }


def _score_dict(score: Score, scrub: Scrubber) -> dict[str, Any]:
    return {
        "name": score.name,
        "value": score.value,
        "threshold": score.threshold,
        "passed": score.passed,
        "reason": scrub.text(score.reason),
        "codes": list(score.codes),
        "details": scrub.value(score.details.to_dict()),
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
    trace_id: str | None = None
    """Set when the result scores one recorded trace (``harness eval-traces``)."""
    source: str | None = None
    """Where that trace was read: ``file:line`` of its root span (``harness eval-traces``)."""

    @property
    def display_name(self) -> str:
        """The name, with ``[trace id prefix]`` when the result scores a recorded trace."""
        return f"{self.name}[{self.trace_id[:12]}]" if self.trace_id else self.name

    @property
    def id(self) -> str:
        """``suite::name`` (``suite::name[trace]`` for a recorded trace)."""
        return f"{self.suite}::{self.display_name}"

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

    def to_dict(self, scrubber: Scrubber | None = None) -> dict[str, Any]:
        """JSON-ready form, secrets masked (default: the default redaction list)."""
        scrub = Scrubber.for_runs(None, self.runs) if scrubber is None else scrubber
        data: dict[str, Any] = {
            "suite": self.suite,
            "name": self.name,
            "file": self.file,
            "line": self.line,
            "status": self.status,
            "xfail": self.xfail,
            "repeat": self.repeat,
            "pass_rate": self.pass_rate,
            "passes": self.passes,
            "reasons": [scrub.text(reason) for reason in self.reasons],
            "duration": self.duration,
            "trace_ids": [run.trace_id for run in self.runs if run.trace_id],
            "runs": [run.to_dict(scrub) for run in self.runs],
        }
        if self.trace_id is not None:
            data["trace_id"] = self.trace_id
            data["source"] = self.source
        return data


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
        text = ", ".join(parts) + f" in {self.duration:.2f}s"
        return text + (" (interrupted)" if self.interrupted else "")

    def to_dict(
        self, redactor: Redactor | None = None, *, scenarios: bool = True
    ) -> dict[str, Any]:
        """The JSON report: ``schema_version`` first, then counts and every scenario.

        Secrets are masked with ``redactor`` (default: the default key list).
        ``scenarios=False`` leaves the scenario list out (a streaming writer adds it).
        """
        scrub = Scrubber.for_suite(redactor, self)
        data = {
            "schema_version": SCHEMA_VERSION,
            "started_at": self.started_at,
            "duration": self.duration,
            "interrupted": self.interrupted,
            "not_run": self.not_run,
            "ok": self.ok,
            "counts": dict(self.counts),
            "summary": self.summary_line(),
            "warnings": [scrub.text(warning) for warning in self.warnings],
        }
        if self.omitted_total:
            # a sample: the scenario list below is not every result the counts count
            data["omitted"] = {status: self.omitted.get(status, 0) for status in STATUSES}
        if scenarios:
            data["scenarios"] = [scenario.to_dict(scrub) for scenario in self.scenarios]
        return data


class ResultSample:
    """At most ``limit`` results of a stream, those that did not pass first; the rest counted.

    While there is room every result is kept, in arrival order. When full, a result that did not
    pass replaces the most recent passing one still kept; anything else is only counted. So a
    small run keeps everything, and a huge one keeps up to ``limit`` failures, errors and xfail
    outcomes, never more. ``limit=None`` keeps every result.
    """

    __slots__ = ("_kept", "_omitted", "_passing", "limit")

    def __init__(self, limit: int | None) -> None:
        """Keep at most ``limit`` results (None: all)."""
        if limit is not None and limit < 0:
            raise ValueError(f"a result sample keeps 0 or more results, got limit={limit}")
        self.limit = limit
        self._kept: list[ScenarioResult] = []
        self._omitted: dict[str, int] = {}
        self._passing = 0

    def add(self, result: ScenarioResult) -> None:
        """Count ``result``, and keep it if the rule above lets it in."""
        if self.limit is None or len(self._kept) < self.limit:
            self._keep(result)
            return
        if result.status != "passed" and self._passing:
            self._evict_last_passing()
            self._keep(result)
            return
        self._omit(result.status)

    def _keep(self, result: ScenarioResult) -> None:
        self._kept.append(result)
        if result.status == "passed":
            self._passing += 1

    def _evict_last_passing(self) -> None:
        for position in range(len(self._kept) - 1, -1, -1):
            if self._kept[position].status == "passed":
                del self._kept[position]
                self._passing -= 1
                self._omit("passed")
                return

    def _omit(self, status: str) -> None:
        self._omitted[status] = self._omitted.get(status, 0) + 1

    @property
    def scenarios(self) -> tuple[ScenarioResult, ...]:
        """The kept results, in arrival order."""
        return tuple(self._kept)

    @property
    def omitted(self) -> dict[str, int]:
        """Per status, how many results were counted but not kept."""
        return dict(self._omitted)
