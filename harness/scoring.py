"""Scoring one recorded run, and a scenario's verdict over its runs: the one scoring path.

``harness run`` (through the runner) and ``harness eval-traces`` both score with
:func:`score_sample` and decide with :func:`verdict`, so a trace scored offline gets exactly the
verdict the live run got.
"""

from __future__ import annotations

import math
import traceback
from collections.abc import Sequence
from typing import Any

from harness.result import CheckResult, ErrorInfo, ErrorPhase, RunResult, ScenarioResult, Status
from harness.sample import Sample
from harness.scenarios import Scenario
from harness.text import shorten
from tracing.records import ToolCall


def score_sample(
    scenario: Scenario,
    sample: Sample,
    *,
    index: int = 0,
    duration: float = 0.0,
    trace_id: str | None = None,
) -> RunResult:
    """Score one recorded run with the scenario's metrics and checks (the one scoring path)."""
    try:
        scores = tuple(metric.evaluate(sample) for metric in scenario.metrics)
    except Exception as exc:
        failure = error_info(exc, "scoring", 0.0)
        return RunResult(index, False, sample, error=failure, duration=duration, trace_id=trace_id)
    checks = run_checks(scenario, sample)
    passed = all(score.passed for score in scores) and all(check.passed for check in checks)
    return RunResult(index, passed, sample, scores, checks, None, duration, trace_id)


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
    return ErrorInfo(type(exc).__name__, message, trace, phase)


def run_checks(scenario: Scenario, sample: Sample) -> tuple[CheckResult, ...]:
    """The scenario's own checks (forbid, no_errors, output) on one run's sample."""
    calls = sample.tool_calls or []
    checks: list[CheckResult] = []
    if scenario.forbid:
        checks.append(check_forbid(scenario.forbid, calls))
    for agent, forbidden in getattr(scenario, "agent_forbid", ()):
        # expect: {agents: {name: {forbid: [...]}}}: only that agent's calls count.
        checks.append(check_forbid(forbidden, calls_in_agent(calls, agent)))
    if scenario.no_errors:
        checks.append(check_no_errors(calls, retries=getattr(scenario, "no_errors_retries", True)))
    if scenario.has_output:
        checks.append(check_output(scenario.output, sample.output))
    return tuple(checks)


def check_forbid(forbidden: Sequence[str], calls: Sequence[ToolCall]) -> CheckResult:
    """Fail when any call (requested or executed) has a forbidden name."""
    names = set(forbidden)
    bad = tuple(index for index, call in enumerate(calls) if call.name in names)
    if not bad:
        return CheckResult("forbid", True, f"no call of {', '.join(forbidden)}")
    shown = ", ".join(f"#{i + 1} {calls[i].describe()}" for i in bad[:3])
    more = f" (+{len(bad) - 3} more)" if len(bad) > 3 else ""
    return CheckResult(
        "forbid", False, f"forbidden tool called: {shown}{more}", "unexpected_call", bad
    )


def calls_in_agent(calls: Sequence[ToolCall], agent: str) -> list[ToolCall]:
    """The calls made in one agent (a path, its last segments, or a glob)."""
    from harness.expectation import agent_matches

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
    shown = shorten(output, 200) if isinstance(output, str) else output
    return CheckResult(
        "output",
        False,
        f"final answer {shown!r} does not match {describe_pattern(pattern)}",
        "wrong_output",
    )


def verdict(
    scenario: Scenario,
    runs: tuple[RunResult, ...],
    repeat: int,
    duration: float,
    **extra: Any,
) -> ScenarioResult:
    """A scenario's result over its runs, gated by ``pass_rate``; ``extra`` goes to the result."""
    passes = sum(1 for run in runs if run.passed)
    needed = math.ceil(scenario.pass_rate * repeat - 1e-9)
    gate_ok = bool(runs) and passes >= needed and len(runs) == repeat
    status: Status
    if gate_ok:
        status = "passed"
    elif any(run.error is not None for run in runs):
        status = "error"
    else:
        status = "failed"
    reasons = _reasons(runs, repeat, passes, needed, scenario.pass_rate, gate_ok)
    if scenario.xfail is not None:
        status = "xpassed" if status == "passed" else "xfailed"
    return ScenarioResult(
        suite=scenario.suite,
        name=scenario.name,
        file=scenario.file,
        line=scenario.line,
        status=status,
        runs=runs,
        repeat=repeat,
        pass_rate=scenario.pass_rate,
        xfail=scenario.xfail,
        reasons=reasons,
        duration=duration,
        **extra,
    )


def _reasons(
    runs: tuple[RunResult, ...],
    repeat: int,
    passes: int,
    needed: int,
    pass_rate: float,
    gate_ok: bool,
) -> tuple[str, ...]:
    """Distinct reasons over the failing runs, each tagged with the runs it happened in."""
    seen: dict[str, list[int]] = {}
    for run in runs:
        if run.passed:
            continue
        for reason in run.reasons():
            seen.setdefault(reason, []).append(run.index + 1)
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
            f"pass_rate {pass_rate:.0%} (needs {needed})"
        )
    return tuple(lines)


def _ranges(indices: list[int]) -> str:
    return ", ".join(str(i) for i in indices)
