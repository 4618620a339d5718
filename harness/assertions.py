"""Fluent tool-call assertions: ``expect_tools(recorder).called(...).accuracy_at_least(1.0)``.

``called`` / ``called_with_json`` only *declare* expected calls. Every other method is a check:
it evaluates at once, against the calls the source holds at that moment, and raises
``AssertionError`` when it fails, so a chain stops at the first failing check and the checks
before it have passed. The message is plain multi-line text: the check, the reasons, the match
table (the same one the console report prints) and the agent's calls in the order they were made.

The rule checks (``forbid``, ``allow``, ``called_before``, ``grounded``, ``max_calls``,
``max_repeats``, ``within_budget``) each build one :class:`harness.rules.Rule` and evaluate it
with the engine scenarios use (:mod:`harness.assertion_rules`). A rule given
``severity="warn"`` that fails emits a :class:`~harness.assertion_rules.RuleWarning` instead;
a rule that cannot be decided on what the source holds fails with its reason, never passes.

Misuse raises at once too: a metric check before any ``called(...)`` is a ``ValueError`` (it
would otherwise pass or fail for no reason the test states), a threshold outside [0, 1] a
``ValueError``, a tool that is neither a name nor a LangChain tool a ``TypeError``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NoReturn

from harness.assertion_rules import (
    RuleWarning,
    build_rule,
    call_pattern,
    check_duration,
    fluent_tool_name,
    rule_hint,
    signature,
    trajectory_of,
    with_same,
)
from harness.errors import RefError
from harness.expectation import Expectation, agent_matches
from harness.labels import label_problems
from harness.metrics import (
    NoUnexpectedToolCalls,
    Score,
    ToolArgumentCorrectness,
    ToolCallAccuracy,
    ToolCallF1,
    ToolCallOrder,
    ToolCallPartialOrder,
)
from harness.metrics.base import Metric
from harness.report import describe_call, render_match_table
from harness.resolve import resolve_sample
from harness.rules import Rule, Severity, evaluate_rules
from harness.run.results import CheckResult, RunResult, score_line
from harness.sample import Sample
from harness.scoring import rule_check
from harness.text import plural, shorten
from harness.values import ABSENT
from tracing.langchain.recorder import ToolCallRecorder
from tracing.records import ModelCall, ToolCall

__all__ = ["RuleWarning", "ToolExpectations", "expect_tools"]

_NOT_A_SOURCE = (
    "expect_tools() takes a ToolCallRecorder, a Sample or a list of ToolCall records, got {kind}"
)


NO_RUN_RECORDED = "no LangChain run was recorded: pass recorder.config or use capture_tool_calls()"
"""Why a check on a recorder that never saw a run failed (docs/architecture.md, "Capture")."""


def expect_tools(
    source: ToolCallRecorder | Sample | Iterable[ToolCall],
    *,
    input: Any = ABSENT,
    duration: float | None = None,
) -> ToolExpectations:
    """Start a chain of expectations and checks over what an agent called.

    ``source`` is a :class:`~tracing.langchain.recorder.ToolCallRecorder` (read live at every
    check), a :class:`~harness.sample.Sample` (its expected calls, if any, are the starting
    expectations) or a list of :class:`~tracing.records.ToolCall`. Rules read two things a
    recorder does not keep: ``input``, what the agent was asked (a string or
    ``{"messages": [...]}``: the user's text ``grounded`` looks values up in), and
    ``duration``, the run's seconds (``within_budget(seconds=...)``); a Sample gives its own
    unless these are passed.
    """
    return ToolExpectations(source, input=input, duration=duration)


class ToolExpectations:
    """Expected calls declared so far, over one source of recorded calls (see expect_tools)."""

    __slots__ = (
        "_agent",
        "_calls",
        "_duration",
        "_expected",
        "_input",
        "_models",
        "_recorder",
        "_sample",
    )

    def __init__(
        self,
        source: ToolCallRecorder | Sample | Iterable[ToolCall],
        *,
        input: Any = ABSENT,
        duration: float | None = None,
    ) -> None:
        """Take the source apart: a live recorder, or a fixed list of calls."""
        self._recorder: ToolCallRecorder | None = None
        self._calls: list[ToolCall] = []
        self._expected: list[Expectation] = []
        self._agent: str | None = None
        self._sample: Sample | None = None
        self._models: tuple[ModelCall, ...] | None = None
        self._input = input
        self._duration = check_duration(duration)
        if isinstance(source, ToolCallRecorder):
            self._recorder = source
        elif isinstance(source, Sample):
            if source.tool_calls is None:
                raise ValueError(
                    "expect_tools(sample): sample.tool_calls is None, so nothing was recorded; "
                    "attach a ToolCallRecorder to the run (or pass tool_calls=[] when the agent "
                    "really called no tool)"
                )
            self._sample = source
            self._calls = list(source.tool_calls)
            self._expected = list(source.expected_tool_calls)
        else:
            models = getattr(source, "model_calls", None)  # a recorder's turn keeps them too
            if callable(models):
                self._models = tuple(models())
            self._calls = _call_list(source)

    # --- what is being compared -----------------------------------------------------------

    @property
    def calls(self) -> list[ToolCall]:
        """The agent's calls as the source holds them now, in request order.

        After :meth:`in_agent`, only the calls made in that agent.
        """
        return [call for _, call in self._scoped_calls()]

    def _scoped_calls(self) -> list[tuple[int, ToolCall]]:
        """The calls checked, each with its index in the whole run."""
        calls = self._recorder.calls() if self._recorder is not None else self._calls
        agent = self._agent
        return [
            (index, call)
            for index, call in enumerate(calls)
            if agent is None or agent_matches(agent, call.agent)
        ]

    def in_agent(self, agent: str, /) -> ToolExpectations:
        """A chain over the calls made in one agent only (a path, its last segments, or a glob).

        Expectations declared on it name that agent, and its checks see only that agent's
        calls: ``expect_tools(recorder).in_agent("research_agent").called("search")``. The
        chain it was called on is left as it was.
        """
        if not isinstance(agent, str) or not agent:
            raise ValueError(f"in_agent({agent!r}): give the agent's name or path, e.g. 'research'")
        scoped = ToolExpectations(self._calls, input=self._input, duration=self._duration)
        scoped._recorder = self._recorder
        scoped._sample = self._sample
        scoped._models = self._models
        scoped._agent = agent
        return scoped

    @property
    def expected(self) -> tuple[Expectation, ...]:
        """The expected calls declared so far."""
        return tuple(self._expected)

    # --- declaring expected calls ---------------------------------------------------------

    def called(
        self,
        tool: Any,
        args: Mapping[str, Any] | None = None,
        /,
        *,
        label: str | None = None,
        after: str | Iterable[str] = (),
        optional: bool = False,
        result: Any = ABSENT,
        **kwargs: Any,
    ) -> ToolExpectations:
        """Expect a call of ``tool`` (a name, a BaseTool or an @tool function) with arguments.

        The arguments are keywords, a mapping in second place, or both. Only those given are
        compared (others the call has are ignored); values may be literals, matchers such as
        ``Regex("^Ber")`` or ``$`` mappings like ``{"$any": True}`` or
        ``{"$ref": "find.result.order_id"}``. ``label`` names this call for ``after`` and
        ``$ref``; ``after``: the label(s) whose calls must come first (checked by
        :meth:`in_order`); ``optional``: costs nothing when absent; ``result``: a pattern the
        call's result must match. A tool argument named ``label``, ``after``, ``optional`` or
        ``result`` goes in the mapping: ``called("search", {"after": "2024-01-01"})``.
        """
        name = fluent_tool_name(tool, "called()")
        given = _arguments(name, args, kwargs)
        own = {"label": label, "after": after, "optional": optional, "result": result}
        _refuse_shadowed(tool, name, given, {k: v for k, v in own.items() if _set(k, v)})
        expectation = Expectation(
            name, given, label=label, after=after, optional=optional, result=result
        )
        self._expected.append(self._scoped(expectation))
        return self

    def _scoped(self, expectation: Expectation) -> Expectation:
        if self._agent is None:
            return expectation
        return expectation.evolve(agent=self._agent)

    def called_with_json(self, tool: Any, json_text: str, /) -> ToolExpectations:
        """Expect a call of ``tool`` whose arguments match a JSON object (``$`` matchers work)."""
        name = fluent_tool_name(tool, "called_with_json()")
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
        name = fluent_tool_name(tool, "not_called()")
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
        """Check that the expected calls happened in the order declared (others may sit between).

        When a ``called(..., after=...)`` gave an order, that partial order is the one checked
        (``tool_call_partial_order``): each call after the calls it names, the others free.
        """
        __tracebackhide__ = True
        if any(expectation.after for expectation in self._expected):
            return self._check("in_order()", ToolCallPartialOrder(threshold=1.0))
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

    # --- rules (each builds one harness.rules.Rule and evaluates it now) ---------------------

    def forbid(
        self, tool: Any, /, *, name: str | None = None, severity: Severity = "error"
    ) -> ToolExpectations:
        """Rule: no call matches ``tool`` (a name, a glob such as ``"delete_*"``, a tool, or
        ``{"name": ..., "args": {...}}``), whatever its status."""
        __tracebackhide__ = True
        label = signature("forbid", (tool,), name=name, severity=severity)
        pattern = call_pattern(tool, label)
        return self._rule(label, build_rule(label, "forbid", pattern, name, severity))

    def allow(
        self, *tools: Any, name: str | None = None, severity: Severity = "error"
    ) -> ToolExpectations:
        """Rule (least privilege): every call matches one of ``tools`` (names, globs, tools or
        ``{"name", "args"}`` patterns)."""
        __tracebackhide__ = True
        label = signature("allow", tools, name=name, severity=severity)
        if not tools:
            raise ValueError(
                f"{label}: name the allowed tools, e.g. allow('get_order', 'search_*')"
            )
        patterns = [call_pattern(tool, label) for tool in tools]
        return self._rule(label, build_rule(label, "allow", patterns, name, severity))

    def called_before(
        self,
        first: Any,
        then: Any,
        /,
        *,
        same: Sequence[str] | Mapping[str, str] = (),
        name: str | None = None,
        severity: Severity = "error",
    ) -> ToolExpectations:
        """Rule: every call matching ``then`` has an earlier call matching ``first``; with
        ``same=["order_id"]``, one whose ``order_id`` equals that ``then`` call's
        (``{"id": "order_id"}``: first's ``id`` equal to then's ``order_id``)."""
        __tracebackhide__ = True
        label = signature("called_before", (first, then), same=same, name=name, severity=severity)
        value = {
            "first": with_same(call_pattern(first, label), same, label),
            "then": call_pattern(then, label),
        }
        return self._rule(label, build_rule(label, "before", value, name, severity))

    def grounded(
        self, tool: Any, /, *args: str, name: str | None = None, severity: Severity = "error"
    ) -> ToolExpectations:
        """Rule: each value of these arguments (names or dot paths such as ``items.0.sku``) of
        every call matching ``tool`` was seen before it, in the user's input (pass
        ``expect_tools(..., input=...)``) or an earlier call's result: no invented ids."""
        __tracebackhide__ = True
        label = signature("grounded", (tool, *args), name=name, severity=severity)
        if not args:
            raise ValueError(
                f"{label}: name the arguments to check, e.g. grounded('cancel_order', 'order_id')"
            )
        value = {"tool": call_pattern(tool, label), "args": list(args)}
        return self._rule(label, build_rule(label, "grounded", value, name, severity))

    def max_calls(
        self, n: int, /, tool: Any = None, *, name: str | None = None, severity: Severity = "error"
    ) -> ToolExpectations:
        """Rule: at most ``n`` calls in all, or of ``tool`` (a name, glob, tool or pattern)."""
        __tracebackhide__ = True
        shown = (n,) if tool is None else (n, tool)
        label = signature("max_calls", shown, name=name, severity=severity)
        value = {"tool": call_pattern("*" if tool is None else tool, label), "max": n}
        return self._rule(label, build_rule(label, "max_calls", value, name, severity))

    def max_repeats(
        self, n: int, /, *, name: str | None = None, severity: Severity = "error"
    ) -> ToolExpectations:
        """Rule: no call (the same tool with equal arguments) is made more than ``n`` times."""
        __tracebackhide__ = True
        label = signature("max_repeats", (n,), name=name, severity=severity)
        return self._rule(label, build_rule(label, "max_repeats", n, name, severity))

    def within_budget(
        self,
        *,
        tool_calls: int | None = None,
        model_calls: int | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        total_tokens: int | None = None,
        seconds: float | None = None,
        name: str | None = None,
        severity: Severity = "error",
    ) -> ToolExpectations:
        """Rule: each figure given is at most its cap. Tokens are summed over the model turns a
        ToolCallRecorder kept; a token cap when no turn reported usage fails, never passes."""
        __tracebackhide__ = True
        caps = {
            "tool_calls": tool_calls,
            "model_calls": model_calls,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "total_tokens": total_tokens,
            "seconds": seconds,
        }
        given = {key: cap for key, cap in caps.items() if cap is not None}
        label = signature("within_budget", (), **given, name=name, severity=severity)
        if not given:
            raise ValueError(
                f"{label}: give at least one cap, e.g. within_budget(tool_calls=8, "
                "total_tokens=6000)"
            )
        return self._rule(label, build_rule(label, "budget", given, name, severity))

    def _rule(self, label: str, rule: Rule) -> ToolExpectations:
        """Evaluate one rule on the calls now; fail, or warn for ``severity="warn"``."""
        __tracebackhide__ = True
        positioned = self._scoped_calls()
        calls = [call for _, call in positioned]
        trajectory = trajectory_of(
            calls,
            [index for index, _ in positioned],
            sample=self._sample,
            models=self._recorder.model_calls() if self._recorder is not None else self._models,
            run_input=self._input,
            input_given=self._input is not ABSENT,
            duration=self._duration,
        )
        (result,) = evaluate_rules((rule,), trajectory)
        if result.passed:
            return self
        check = rule_check(result)
        reasons = [f"{check.name}: {check.reason}"]
        hint = rule_hint(rule.kind, trajectory) if result.error else None
        if hint:
            reasons.append(hint)
        if check.severity == "warn":
            message = f"expect_tools(...).{label}: " + "; ".join(reasons)
            warnings.warn(message, RuleWarning, stacklevel=3)
            return self
        self._fail(label, reasons, calls, checks=(check,))
        return self

    # --- evaluation -----------------------------------------------------------------------

    def _check(self, label: str, metric: Metric) -> ToolExpectations:
        __tracebackhide__ = True
        if not self._expected:
            raise ValueError(
                f"expect_tools(...).{label}: no expected calls declared yet, so there is nothing "
                "to measure; declare them first, e.g. expect_tools(recorder).called('get_weather',"
                f" city='Berlin').{label}"
            )
        _check_labels(label, self._expected)
        calls = self.calls
        try:
            sample = resolve_sample(Sample(tool_calls=calls, expected_tool_calls=self._expected))
        except RefError as exc:
            self._fail(label, [str(exc)], calls)
        expected = sample.expected_tool_calls
        score = metric.evaluate(sample)
        if not score.passed:
            self._fail(label, [score_line(score)], calls, score, expected=expected)
        return self

    def _fail(
        self,
        label: str,
        reasons: list[str],
        calls: list[ToolCall],
        score: Score | None = None,
        *,
        expected: Sequence[Expectation] | None = None,
        checks: tuple[CheckResult, ...] = (),
    ) -> NoReturn:
        __tracebackhide__ = True
        if self._recorder is not None and not self._recorder.calls_by_run():
            # nothing reached the recorder at all: say how to attach it, not "no tool calls"
            reasons = [NO_RUN_RECORDED, *reasons]
        expected = self._scored_expectations(calls) if expected is None else expected
        raise AssertionError(self._message(label, reasons, calls, score, expected, checks))

    def _scored_expectations(self, calls: list[ToolCall]) -> Sequence[Expectation]:
        """The expected calls as a metric check scores them (``$ref`` s resolved, absent
        optional calls dropped), for the table of any failure; as declared when they cannot be
        resolved (that failure says why)."""
        if label_problems(self._expected, name="called"):
            return self._expected
        try:
            sample = resolve_sample(Sample(tool_calls=calls, expected_tool_calls=self._expected))
        except RefError:
            return self._expected
        return sample.expected_tool_calls

    def _message(
        self,
        label: str,
        reasons: list[str],
        calls: list[ToolCall],
        score: Score | None,
        expected: Sequence[Expectation],
        checks: tuple[CheckResult, ...],
    ) -> str:
        lines = [f"expect_tools(...).{label} failed:"]
        lines.extend(f"  {reason}" for reason in reasons)
        sample = Sample(tool_calls=calls, expected_tool_calls=expected)
        run = RunResult(0, False, sample, (score,) if score is not None else (), checks)
        table = render_match_table(run)
        if table:
            lines.append(
                f"expected {plural(len(expected), 'call')}, "
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


def _arguments(name: str, args: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``called``'s arguments: the mapping in second place and the keywords, merged."""
    if args is None:
        return kwargs
    if not isinstance(args, Mapping):
        raise TypeError(
            f"called({name!r}, ...): the arguments in second place must be a mapping, got "
            f"{type(args).__name__} {shorten(repr(args), 80)}; use called_with_json for JSON text"
        )
    both = sorted(str(key) for key in set(args) & set(kwargs))
    if both:
        raise TypeError(f"called({name!r}, ...): argument {both[0]!r} is given twice")
    return {**args, **kwargs}


def _set(keyword: str, value: Any) -> bool:
    """Was ``called``'s own keyword given a value other than its default?"""
    if keyword == "label":
        return value is not None
    if keyword == "after":
        return bool(value != ())
    if keyword == "optional":
        return value is not False
    return value is not ABSENT


def _refuse_shadowed(tool: Any, name: str, given: Mapping[str, Any], own: dict[str, Any]) -> None:
    """A tool object with an argument named like one of ``called``'s keywords that the test
    set, while the mapping leaves that argument out: most likely meant as the argument, so say
    how to write it (with a tool's name as a string, the keyword is taken as written)."""
    schema = getattr(tool, "args", None)
    if isinstance(tool, str) or not isinstance(schema, Mapping):
        return
    for key, value in own.items():
        if key in schema and key not in given:
            raise TypeError(
                f"called({name!r}, {key}={value!r}): {name} has an argument named {key!r}, but "
                f"the keyword {key}= belongs to the expected call; to expect the argument, give "
                f"it in the mapping: called({name!r}, {{{key!r}: {value!r}}})"
            )


def _check_labels(label: str, expected: Sequence[Expectation]) -> None:
    """ValueError naming the first label problem (unknown ``after`` label, cycle, duplicate)."""
    problems = label_problems(expected, name="called")
    if problems:
        first = problems[0]
        which = expected[first.index].name
        raise ValueError(
            f"expect_tools(...).{label}: expected call {first.index + 1} ({which}): "
            f"{first.field}: {first.message}"
        )


def _count_attempts(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _first_failure(call: ToolCall) -> str:
    failed = next((a for a in call.attempts if a.status == "error"), None)
    return (failed.error if failed is not None else None) or "error"


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
