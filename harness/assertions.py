"""Fluent tool-call assertions: ``expect_tools(recorder).called(...).accuracy_at_least(1.0)``.

``called`` / ``called_with_json`` only *declare* expected calls. Every other method is a check:
it evaluates at once, against the calls the source holds at that moment, and raises
``AssertionError`` when it fails, so a chain stops at the first failing check and the checks
before it have passed. The message is plain multi-line text: the check, the reasons, the match
table (the same one the console report prints) and the agent's calls in the order they were made.

Misuse raises at once too: a metric check before any ``called(...)`` is a ``ValueError`` (it
would otherwise pass or fail for no reason the test states), a threshold outside [0, 1] a
``ValueError``, a tool that is neither a name nor a LangChain tool a ``TypeError``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from harness.expectation import Expectation, agent_matches, tool_name
from harness.metrics import (
    NoUnexpectedToolCalls,
    Score,
    ToolArgumentCorrectness,
    ToolCallAccuracy,
    ToolCallF1,
    ToolCallOrder,
)
from harness.metrics.base import Metric
from harness.report import describe_call, render_match_table
from harness.run.results import RunResult, score_line
from harness.sample import Sample
from harness.text import plural, shorten
from tracing.langchain.recorder import ToolCallRecorder
from tracing.records import InvalidToolCall, ToolCall

__all__ = ["ToolExpectations", "expect_tools"]

_NOT_A_SOURCE = (
    "expect_tools() takes a ToolCallRecorder, a Sample or a list of ToolCall records, got {kind}"
)


NO_RUN_RECORDED = "no LangChain run was recorded: pass recorder.config or use capture_tool_calls()"
"""Why a check on a recorder that never saw a run failed (docs/architecture.md, "Capture")."""


def expect_tools(source: ToolCallRecorder | Sample | Iterable[ToolCall]) -> ToolExpectations:
    """Start a chain of expectations and checks over what an agent called.

    ``source`` is a :class:`~tracing.langchain.recorder.ToolCallRecorder` (read live at every
    check), a :class:`~harness.sample.Sample` (its expected calls, if any, are the starting
    expectations) or a list of :class:`~tracing.records.ToolCall`.
    """
    return ToolExpectations(source)


class ToolExpectations:
    """Expected calls declared so far, over one source of recorded calls (see expect_tools)."""

    __slots__ = ("_agent", "_calls", "_expected", "_recorder")

    def __init__(self, source: ToolCallRecorder | Sample | Iterable[ToolCall]) -> None:
        """Take the source apart: a live recorder, or a fixed list of calls."""
        self._recorder: ToolCallRecorder | None = None
        self._calls: list[ToolCall] = []
        self._expected: list[Expectation] = []
        self._agent: str | None = None
        if isinstance(source, ToolCallRecorder):
            self._recorder = source
        elif isinstance(source, Sample):
            if source.tool_calls is None:
                raise ValueError(
                    "expect_tools(sample): sample.tool_calls is None, so nothing was recorded; "
                    "attach a ToolCallRecorder to the run (or pass tool_calls=[] when the agent "
                    "really called no tool)"
                )
            self._calls = list(source.tool_calls)
            self._expected = list(source.expected_tool_calls)
        else:
            self._calls = _call_list(source)

    # --- what is being compared -----------------------------------------------------------

    @property
    def calls(self) -> list[ToolCall]:
        """The agent's calls as the source holds them now, in request order.

        After :meth:`in_agent`, only the calls made in that agent.
        """
        calls = self._recorder.calls() if self._recorder is not None else list(self._calls)
        if self._agent is None:
            return calls
        return [call for call in calls if agent_matches(self._agent, call.agent)]

    def in_agent(self, agent: str, /) -> ToolExpectations:
        """A chain over the calls made in one agent only (a path, its last segments, or a glob).

        Expectations declared on it name that agent, and its checks see only that agent's
        calls: ``expect_tools(recorder).in_agent("research_agent").called("search")``. The
        chain it was called on is left as it was.
        """
        if not isinstance(agent, str) or not agent:
            raise ValueError(f"in_agent({agent!r}): give the agent's name or path, e.g. 'research'")
        scoped = ToolExpectations(self._recorder if self._recorder is not None else self._calls)
        scoped._agent = agent
        return scoped

    @property
    def expected(self) -> tuple[Expectation, ...]:
        """The expected calls declared so far."""
        return tuple(self._expected)

    # --- declaring expected calls ---------------------------------------------------------

    def called(self, tool: Any, /, **args: Any) -> ToolExpectations:
        """Expect a call of ``tool`` (a name, a BaseTool or an @tool function) with ``args``.

        Only the arguments given are compared (others the call has are ignored); values may
        be literals, matchers such as ``Regex("^Ber")`` or ``$`` mappings like ``{"$any": True}``.
        """
        name = _tool_name(tool, "called")
        self._expected.append(self._scoped(Expectation.of(name, args)))
        return self

    def _scoped(self, expectation: Expectation) -> Expectation:
        if self._agent is None:
            return expectation
        return Expectation(expectation.name, expectation.args, agent=self._agent)

    def called_with_json(self, tool: Any, json_text: str, /) -> ToolExpectations:
        """Expect a call of ``tool`` whose arguments match a JSON object (``$`` matchers work)."""
        name = _tool_name(tool, "called_with_json")
        if not isinstance(json_text, (str, bytes, bytearray)):
            raise TypeError(
                f"called_with_json({name!r}, ...): the arguments must be a JSON object as a "
                f"string, got {type(json_text).__name__} {json_text!r}; use called({name!r}, "
                "**args) for a mapping"
            )
        self._expected.append(self._scoped(Expectation.of(name, json_text)))
        return self

    # --- checks (each evaluates now and raises AssertionError on failure) -----------------

    def not_called(self, tool: Any, /) -> ToolExpectations:
        """Check that no call of ``tool`` was made (requested or executed)."""
        __tracebackhide__ = True
        name = _tool_name(tool, "not_called")
        calls = self.calls
        bad = [index for index, call in enumerate(calls) if call.name == name]
        if bad:
            shown = ", ".join(f"#{i + 1} {describe_call(calls[i])}" for i in bad)
            times = "once" if len(bad) == 1 else f"{len(bad)} times"
            self._fail(f"not_called({name!r})", [f"{name} was called {times}: {shown}"], calls)
        return self

    def no_errors(self, *, retries: bool = True) -> ToolExpectations:
        """Check that every executed call succeeded (its last attempt did not fail).

        A call the agent retried until it worked passes; with ``retries=False`` any failed
        attempt fails the check.
        """
        __tracebackhide__ = True
        if not isinstance(retries, bool):
            raise TypeError(f"no_errors(retries={retries!r}): retries must be True or False")
        calls = self.calls
        reasons = [
            f"{describe_call(call)} failed: {call.error or 'error'}"
            for call in calls
            if call.status == "error"
        ]
        if not retries:
            reasons.extend(
                f"{describe_call(call)} failed {_count_attempts(call.failed_attempts)} before "
                f"it succeeded: {_first_failure(call)}"
                for call in calls
                if call.status != "error" and call.failed_attempts
            )
        if reasons:
            label = "no_errors()" if retries else "no_errors(retries=False)"
            self._fail(label, reasons, calls)
        return self

    def in_order(self) -> ToolExpectations:
        """Check that the expected calls happened in the order declared (others may sit between)."""
        __tracebackhide__ = True
        return self._check("in_order()", ToolCallOrder(threshold=1.0))

    def accuracy_at_least(self, threshold: float) -> ToolExpectations:
        """Check that at least this fraction of the expected calls was matched (1.0 = all)."""
        __tracebackhide__ = True
        value = _threshold("accuracy_at_least", threshold)
        return self._check(f"accuracy_at_least({threshold!r})", ToolCallAccuracy(threshold=value))

    def argument_correctness_at_least(
        self, threshold: float, strict: bool = False
    ) -> ToolExpectations:
        """Check the fraction of correct arguments; ``strict`` also fails on any extra argument."""
        __tracebackhide__ = True
        value = _threshold("argument_correctness_at_least", threshold)
        if not isinstance(strict, bool):
            raise TypeError(
                f"argument_correctness_at_least(..., strict={strict!r}): strict must be True "
                "or False"
            )
        label = f"argument_correctness_at_least({threshold!r}{', strict=True' if strict else ''})"
        return self._check(label, ToolArgumentCorrectness(threshold=value, strict=strict))

    def f1_at_least(self, threshold: float) -> ToolExpectations:
        """Check the F1 of whole calls (name and every argument, both ways) against the expected."""
        __tracebackhide__ = True
        value = _threshold("f1_at_least", threshold)
        return self._check(f"f1_at_least({threshold!r})", ToolCallF1(threshold=value))

    def no_unexpected_calls(self) -> ToolExpectations:
        """Check that every call the agent made is one of the expected calls."""
        __tracebackhide__ = True
        return self._check("no_unexpected_calls()", NoUnexpectedToolCalls(threshold=1.0))

    # --- evaluation -----------------------------------------------------------------------

    def _check(self, label: str, metric: Metric) -> ToolExpectations:
        __tracebackhide__ = True
        if not self._expected:
            raise ValueError(
                f"expect_tools(...).{label}: no expected calls declared yet, so there is nothing "
                "to measure; declare them first, e.g. expect_tools(recorder).called('get_weather',"
                f" city='Berlin').{label}"
            )
        calls = self.calls
        sample = Sample(tool_calls=calls, expected_tool_calls=self._expected)
        score = metric.evaluate(sample)
        if not score.passed:
            self._fail(label, [score_line(score)], calls, score)
        return self

    def _fail(
        self,
        label: str,
        reasons: list[str],
        calls: list[ToolCall],
        score: Score | None = None,
    ) -> None:
        __tracebackhide__ = True
        if self._recorder is not None and not self._recorder.calls_by_run():
            # nothing reached the recorder at all: say how to attach it, not "no tool calls"
            reasons = [NO_RUN_RECORDED, *reasons]
        raise AssertionError(self._message(label, reasons, calls, score))

    def _message(
        self, label: str, reasons: list[str], calls: list[ToolCall], score: Score | None
    ) -> str:
        lines = [f"expect_tools(...).{label} failed:"]
        lines.extend(f"  {reason}" for reason in reasons)
        sample = Sample(tool_calls=calls, expected_tool_calls=self._expected)
        run = RunResult(0, False, sample, (score,) if score is not None else ())
        table = render_match_table(run)
        if table:
            lines.append(
                f"expected {plural(len(self._expected), 'call')}, "
                f"the agent made {plural(len(calls), 'call')}:"
            )
            lines.extend(f"    {row}" if row else row for row in table.splitlines())
        lines.append("the agent's calls, in order:")
        if not calls:
            lines.append("    (none)")
        several_agents = len({call.agent for call in calls}) > 1
        for index, call in enumerate(calls, 1):
            status = "" if call.status == "ok" else f" [{call.status}]"
            if len(call.attempts) > 1:
                status += f" ({len(call.attempts)} attempts)"
            where = f" in {call.agent}" if several_agents and call.agent else ""
            lines.append(f"    {index}. {describe_call(call)}{status}{where}")
        return "\n".join(lines)


def _count_attempts(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _first_failure(call: ToolCall) -> str:
    failed = next((a for a in call.attempts if a.status == "error"), None)
    return (failed.error if failed is not None else None) or "error"


def _tool_name(tool: Any, method: str) -> str:
    """The tool's name from a string, a BaseTool or an @tool function; TypeError otherwise."""
    try:
        return tool_name(tool, f"{method}()")
    except InvalidToolCall as exc:
        if isinstance(tool, str):
            raise  # an empty name: a ValueError (InvalidToolCall is one), the type was right
        raise TypeError(str(exc)) from None


def _threshold(method: str, value: Any) -> float:
    """A threshold in [0, 1]; TypeError for a non-number, ValueError outside the range."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"{method}({value!r}): the threshold must be a number in [0, 1], "
            f"got {type(value).__name__}"
        )
    number = float(value)
    if math.isnan(number) or not 0.0 <= number <= 1.0:
        raise ValueError(
            f"{method}({value!r}): the threshold must be within [0, 1] (a fraction, 1.0 = all), "
            f"got {value!r}"
        )
    return number


def _call_list(source: Any) -> list[ToolCall]:
    """A list of ToolCalls (or LangChain/OpenAI call mappings) from an iterable source."""
    if isinstance(source, (str, bytes, Mapping)) or not isinstance(source, Iterable):
        raise TypeError(_NOT_A_SOURCE.format(kind=_preview(source)))
    items = list(source)
    for position, item in enumerate(items):
        if not isinstance(item, (ToolCall, Mapping)):
            kind = f"a list whose item [{position}] is {_preview(item)}"
            raise TypeError(_NOT_A_SOURCE.format(kind=kind))
    calls = Sample(tool_calls=items).tool_calls
    return list(calls or [])


def _preview(value: Any, limit: int = 80) -> str:
    return f"{type(value).__name__} {shorten(repr(value), limit)}"
