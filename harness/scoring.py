"""Scoring one recorded run, and a scenario's verdict over its runs: the one scoring path.

``harness run`` (through the runner) and ``harness eval-traces`` both score with
:func:`score_sample` and decide with :func:`verdict`, so a trace scored offline gets exactly the
verdict the live run got.

A recorded trace may lack content (a run exported without content capture: no tool arguments,
no final answer). Its sample says so under :data:`NOT_CAPTURED`, and a run that does not pass
on such a sample is an error, not a failure: "missing argument 'a'" would be a wrong verdict
with a misleading reason (docs/observability.md, "Score recorded traces offline").
"""

from __future__ import annotations

import math
import traceback
from collections.abc import Sequence
from typing import Any

from harness.errors import HarnessError
from harness.expectation import agent_matches
from harness.metrics.base import Score
from harness.resolve import resolve_expectations
from harness.rules import Rule, RuleResult
from harness.run.results import (
    RULE_ERROR_CODES,
    CheckResult,
    ErrorInfo,
    ErrorPhase,
    RunResult,
    ScenarioResult,
    Status,
)
from harness.sample import Sample
from harness.scenarios import Scenario
from harness.scenarios.model import AgentBlock
from harness.text import shorten
from tracing.records import ToolCall

CONTENT_NOT_CAPTURED = "ContentNotCaptured"
"""``ErrorInfo.type`` of a run that cannot be judged: its trace was recorded without content."""

NOT_CAPTURED = "not_captured"
"""Sample metadata key set by ``harness eval-traces``: what the trace did not capture, as
``{"calls": [indices of calls without arguments], "output": True when there is no answer}``."""

RULE_UNEVALUABLE = "RuleUnevaluable"
RULE_RAISED = "RuleError"
"""``ErrorInfo.type`` of a run whose rule gave no verdict: it could not be decided on what was
recorded (``unevaluable``), or it raised (``rule_error``)."""

CAPTURE_HINT = (
    "record it with content: `harness run --trace-file FILE` keeps content unless "
    "--no-capture-content is given; an OTLP export needs --capture-content"
)
"""How to record a trace that can be scored offline."""


def content_gaps(sample: Sample | None) -> tuple[tuple[int, ...], bool]:
    """(indices of the calls whose arguments were not captured, whether the answer was not)."""
    gaps = sample.metadata.get(NOT_CAPTURED) if sample is not None else None
    if not isinstance(gaps, dict):
        return (), False
    calls = tuple(i for i in gaps.get("calls", ()) if isinstance(i, int))
    return calls, bool(gaps.get("output"))


def _unjudged(scenario: Scenario, run: RunResult) -> RunResult | None:
    """The error run for a sample whose missing content decides the verdict, else None."""
    if run.passed or run.error is not None:
        return None
    calls, output = content_gaps(run.sample)
    output = output and scenario.has_output
    if not (calls or output):
        return None
    missing = [f"{len(calls)} call{'s' if len(calls) > 1 else ''} without arguments"]
    missing = (missing if calls else []) + (["no final answer"] if output else [])
    message = (
        f"the trace was recorded without content capture ({', '.join(missing)}), so the "
        f"scenario cannot be judged; {CAPTURE_HINT}"
    )
    error = ErrorInfo(CONTENT_NOT_CAPTURED, message, "", "scoring")
    return RunResult(run.index, False, run.sample, (), (), error, run.duration, run.trace_id)


def not_captured_reasons(run: RunResult, scenario: Scenario) -> list[str]:
    """One line per call whose arguments were not captured (and for the answer, when the
    scenario checks it), for a run :func:`score_sample` could not judge; else empty."""
    if run.error is None or run.error.type != CONTENT_NOT_CAPTURED:
        return []
    calls, output = content_gaps(run.sample)
    recorded = run.calls
    lines = [
        f"call #{i + 1} {recorded[i].name}: arguments were not captured"
        for i in calls
        if i < len(recorded)
    ]
    if output and scenario.has_output:
        lines.append("final answer: not captured")
    return lines


def score_sample(
    scenario: Scenario,
    sample: Sample,
    *,
    index: int = 0,
    duration: float = 0.0,
    trace_id: str | None = None,
) -> RunResult:
    """Score one recorded run with the scenario's metrics and checks (the one scoring path)."""
    judged = judge(scenario, sample)
    return scored_run(scenario, sample, judged, index=index, duration=duration, trace_id=trace_id)


Judged = tuple[tuple[Score, ...], tuple[CheckResult, ...]] | ErrorInfo
"""What :func:`judge` found: the scores and checks, or the error scoring raised."""


def judge(scenario: Scenario, sample: Sample) -> Judged:
    """The scenario's scores and checks on one sample, or the error that stopped the scoring.

    :func:`score_sample` is this, then :func:`scored_run`; ``harness eval-traces`` calls the two
    apart so that a passing trace's lean result is built without the full run. The sample's
    expectations are first resolved in place (``$ref`` s, absent optional calls:
    :func:`harness.resolve.resolve_expectations`), so the run's report shows what was scored.
    """
    try:
        calls = sample.tool_calls
        if calls is not None:
            sample.expected_tool_calls = resolve_expectations(sample.expected_tool_calls, calls)
        # List comprehensions, not generators: ``harness eval-traces`` runs this per trace.
        scores = tuple([metric.evaluate(sample) for metric in scenario.metrics])
        if scenario.agent_blocks:
            scores += tuple(
                [score for block in scenario.agent_blocks for score in agent_scores(block, sample)]
            )
        checks = run_checks(scenario, sample)  # a value no check can compare: this run's error
    except Exception as exc:
        return error_info(exc, "scoring", 0.0)
    return scores, checks


def scored_run(
    scenario: Scenario,
    sample: Sample,
    judged: Judged,
    *,
    index: int = 0,
    duration: float = 0.0,
    trace_id: str | None = None,
) -> RunResult:
    """The run a judged sample makes: passed, failed, or an error (scoring raised, or the
    sample lacks content that decides the verdict)."""
    if isinstance(judged, ErrorInfo):
        return RunResult(index, False, sample, error=judged, duration=duration, trace_id=trace_id)
    scores, checks = judged
    passed = all_passed(scores, checks)
    error = None if passed else rule_error(checks)
    run = RunResult(index, passed, sample, scores, checks, error, duration, trace_id)
    return run if passed else _unjudged(scenario, run) or run


def all_passed(scores: tuple[Score, ...], checks: tuple[CheckResult, ...]) -> bool:
    """Did every score and every check pass (a failed ``warn`` check does not count)?"""
    # Plain loops: all() over a generator costs more than these few comparisons.
    for score in scores:
        if not score.passed:
            return False
    for check in checks:  # noqa: SIM110
        if not check.passed and check.severity == "error":
            return False
    return True


def rule_error(checks: Sequence[CheckResult]) -> ErrorInfo | None:
    """The run's error when a rule of severity ``error`` gave no verdict (docs/metrics.md,
    "Rules in scenario files"): never a pass, and not a failure either."""
    for check in checks:
        if check.kind == "rule" and check.severity == "error" and check.code in RULE_ERROR_CODES:
            kind = RULE_UNEVALUABLE if check.code == "unevaluable" else RULE_RAISED
            return ErrorInfo(kind, f"{check.name}: {check.reason}", "", "scoring", True)
    return None


def agent_scores(block: AgentBlock, sample: Sample) -> tuple[Score, ...]:
    """A block's metrics on the calls made in its agent only, named ``<agent>.<metric>``.

    ``expect: {agents: ...}`` is scored next to the scenario-level expectations (which score
    every call), the way a conversation's turns are (``turn<N>.<metric>``, harness.run.invocation);
    docs/metrics.md, "Scope".
    """
    if not block.metrics:
        return ()
    calls = calls_in_agent(sample.tool_calls or [], block.agent)
    scoped = Sample(
        input=sample.input,
        tool_calls=calls,
        expected_tool_calls=resolve_expectations(list(block.expected), calls),
        output=sample.output,
        metadata={**sample.metadata, "agent": block.agent},
        trace_id=sample.trace_id,
    )
    return tuple(scoped_score(metric.evaluate(scoped), block.agent) for metric in block.metrics)


def scoped_score(score: Score, scope: str) -> Score:
    """The score renamed ``<scope>.<metric>``: it judged part of the run (a turn, an agent)."""
    return Score(
        f"{scope}.{score.name}",
        score.value,
        score.threshold,
        score.passed,
        score.reason,
        score.details,
    )


def error_info(exc: BaseException, phase: ErrorPhase, timeout: float, what: str = "") -> ErrorInfo:
    """What went wrong in a phase (factory, run, timeout, scoring), with the traceback."""
    if phase == "timeout":
        subject = what or "the run"
        return ErrorInfo(
            "TimeoutError",
            f"{subject} did not finish within the timeout of {timeout:g}s",
            "",
            "timeout",
        )
    message = str(exc)
    if what:
        message = f"{what} raised: {message}" if message else f"{what} raised"
    trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    brief = isinstance(exc, HarnessError) and exc.brief
    return ErrorInfo(type(exc).__name__, message, trace, phase, brief)


def run_checks(scenario: Scenario, sample: Sample) -> tuple[CheckResult, ...]:
    """The scenario's own checks (forbid, no_errors, output), then its rules, on one run's
    sample."""
    calls = sample.tool_calls or []
    checks: list[CheckResult] = []
    if scenario.forbid:
        checks.append(check_forbid(scenario.forbid, calls))
    for block in scenario.agent_blocks:
        # expect: {agents: {name: {forbid: [...]}}}: only that agent's calls count.
        if block.forbid:
            checks.append(check_forbid(block.forbid, calls, agent=block.agent))
    if scenario.no_errors:
        checks.append(check_no_errors(calls, retries=getattr(scenario, "no_errors_retries", True)))
    if scenario.has_output:
        checks.append(check_output(scenario.output, sample.output))
    if scenario.rules:
        checks.extend(rule_checks(scenario.rules, sample))
    return tuple(checks)


def rule_checks(rules: Sequence[Rule], sample: Sample) -> list[CheckResult]:
    """Each rule's result on the sample's trajectory (``harness.rules.Trajectory``), as a
    check named ``rule:<name>``; SampleError when the sample's metadata is malformed."""
    from harness.rules import Trajectory, evaluate_rules

    trajectory = Trajectory.from_sample(sample)
    return [rule_check(result) for result in evaluate_rules(rules, trajectory)]


def rule_check(result: RuleResult) -> CheckResult:
    """A rule's result as the check reports show: ``rule:<name>``, its code, reason, calls."""
    return CheckResult(
        f"rule:{result.rule}",
        result.passed,
        result.reason,
        result.code,
        result.calls,
        "rule",
        result.severity,
    )


def check_forbid(
    forbidden: Sequence[str], calls: Sequence[ToolCall], *, agent: str | None = None
) -> CheckResult:
    """Fail when any call (requested or executed) has a forbidden name (in ``agent``, if given).

    The indices name calls of the whole run, so reports mark the right rows.
    """
    names = set(forbidden)
    hits = [
        index
        for index, call in enumerate(calls)
        if call.name in names and (agent is None or agent_matches(agent, call.agent))
    ]
    where = f"{agent}: " if agent is not None else ""
    if not hits:
        return CheckResult("forbid", True, f"{where}no call of {', '.join(forbidden)}")
    bad = tuple(hits)
    shown = ", ".join(f"#{i + 1} {calls[i].describe()}" for i in bad[:3])
    more = f" (+{len(bad) - 3} more)" if len(bad) > 3 else ""
    return CheckResult(
        "forbid", False, f"{where}forbidden tool called: {shown}{more}", "unexpected_call", bad
    )


def calls_in_agent(calls: Sequence[ToolCall], agent: str) -> list[ToolCall]:
    """The calls made in one agent (a path, its last segments, or a glob)."""
    return [call for call in calls if agent_matches(agent, call.agent)]


def check_no_errors(calls: Sequence[ToolCall], *, retries: bool = True) -> CheckResult:
    """Fail when any executed call's last attempt failed (``retries=False``: any attempt).

    A call the agent retried until it worked has status ``ok`` and passes by default
    (docs/metrics.md, "Call statuses").
    """
    bad = tuple(
        index
        for index, call in enumerate(calls)
        if call.status == "error" or (not retries and call.failed_attempts)
    )
    if not bad:
        return CheckResult("no_errors", True, "every executed call succeeded")
    shown = "; ".join(
        f"#{i + 1} {calls[i].describe()} failed: {_failure(calls[i])}" for i in bad[:3]
    )
    more = f" (+{len(bad) - 3} more)" if len(bad) > 3 else ""
    return CheckResult("no_errors", False, f"tool error: {shown}{more}", "tool_error", bad)


def _failure(call: ToolCall) -> str | None:
    """The call's error, or (a retried call that then worked) its first failed attempt's."""
    if call.error is not None or call.status == "error":
        return call.error
    return next((a.error for a in call.attempts if a.status == "error"), None)


def check_output(pattern: Any, output: Any) -> CheckResult:
    """Compare the final answer with a literal or a matcher (docs/metrics.md#values)."""
    from harness.values import describe_pattern, match_value

    if match_value(pattern, output):
        return CheckResult("output", True, "final answer matches")
    from harness.redaction import safe_repr  # a 10 MB, cyclic or unprintable answer: short text

    shown = repr(shorten(output, 200)) if isinstance(output, str) else safe_repr(output, 300)
    return CheckResult(
        "output",
        False,
        f"final answer {shown} does not match {describe_pattern(pattern)}",
        "wrong_output",
    )


def verdict(
    scenario: Scenario,
    runs: tuple[RunResult, ...],
    repeat: int,
    duration: float,
    *,
    trace_id: str | None = None,
    source: str | None = None,
) -> ScenarioResult:
    """A scenario's result over its runs, gated by ``pass_rate``; ``trace_id`` and ``source``
    name the recorded trace a result scores (``harness eval-traces``)."""
    passes = 0
    for run in runs:
        if run.passed:
            passes += 1
    needed = math.ceil(scenario.pass_rate * repeat - 1e-9)
    gate_ok = bool(runs) and passes >= needed and len(runs) == repeat
    status: Status
    if gate_ok:
        status = "passed"
    elif any(run.error is not None for run in runs):
        status = "error"
    else:
        status = "failed"
    reasons = _reasons(scenario, runs, repeat, passes, needed, gate_ok)
    if scenario.xfail is not None and not (status == "error" and _unjudged_in(runs)):
        # a run that cannot be judged (content not captured, a rule with no verdict) is no
        # expected failure either: it stays an error
        status = "xpassed" if status == "passed" else "xfailed"
    # Positional: keyword arguments cost a third more, once per recorded trace.
    return ScenarioResult(
        scenario.suite,
        scenario.name,
        scenario.file,
        scenario.line,
        status,
        runs,
        repeat,
        scenario.pass_rate,
        scenario.xfail,
        reasons,
        duration,
        trace_id,
        source,
    )


_NO_VERDICT = frozenset((CONTENT_NOT_CAPTURED, RULE_UNEVALUABLE, RULE_RAISED))


def _unjudged_in(runs: tuple[RunResult, ...]) -> bool:
    """Is one of the runs an error because it could not be judged: its trace lacks content
    (:func:`_unjudged`), or a rule gave no verdict (:func:`rule_error`)?"""
    return any(run.error is not None and run.error.type in _NO_VERDICT for run in runs)


def _reasons(
    scenario: Scenario,
    runs: tuple[RunResult, ...],
    repeat: int,
    passes: int,
    needed: int,
    gate_ok: bool,
) -> tuple[str, ...]:
    """Distinct reasons over the failing runs, each tagged with the runs it happened in."""
    if repeat == 1:
        # a single run gets no tags and no pass-rate line: its own distinct reasons, if any
        if passes == len(runs):
            return ()
        if len(runs) == 1:
            return tuple(dict.fromkeys(_run_reasons(runs[0], scenario)))
    seen: dict[str, list[int]] = {}
    for run in runs:
        if run.passed:
            continue
        number = run.index + 1
        for reason in _run_reasons(run, scenario):
            where = seen.setdefault(reason, [])
            if not where or where[-1] != number:  # a run says one reason twice: tag it once
                where.append(number)
    lines = []
    for reason, where in seen.items():
        tag = ""
        if repeat > 1:
            tag = f"[run {where[0]}] " if len(where) == 1 else f"[runs {_ranges(where)}] "
        lines.append(tag + reason)
    if repeat > 1 and runs and not (len(runs) == 1 and runs[0].sample is None):
        verdict = "meets" if gate_ok else "below"
        lines.append(
            f"passed {passes} of {repeat} runs ({passes / repeat:.0%}), {verdict} "
            f"pass_rate {scenario.pass_rate:.0%} (needs {needed})"
        )
    return tuple(lines)


def _run_reasons(run: RunResult, scenario: Scenario) -> list[str]:
    """A failing run's reasons, then the calls and answer its trace did not capture."""
    reasons = run.reasons()
    if run.error is not None:
        reasons += not_captured_reasons(run, scenario)  # only an error has such lines
    return reasons


def _ranges(indices: list[int]) -> str:
    return ", ".join(str(i) for i in indices)
