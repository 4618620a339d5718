"""Rules for the fluent assertions (``expect_tools(...).grounded(...)`` and the like).

Each fluent rule method writes its rule as a scenario file would (``{name, <kind>: ...}``) and
compiles it with :func:`harness.rules.compile_rule`, so the fluent API checks and evaluates
exactly what YAML does (docs/metrics.md, "Rules"); this module only translates arguments,
names the rule when the test does not, builds the run's :class:`~harness.rules.Trajectory`
and says what a test can pass when a rule could not be decided.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from harness.expectation import tool_name
from harness.rules import (
    Allow,
    Before,
    Budget,
    CallPattern,
    Forbid,
    Grounded,
    MaxCalls,
    MaxRepeats,
    Rule,
    RuleKind,
    Severity,
    Trajectory,
    compile_rule,
)
from harness.rules.budget import BUDGET_KEYS
from harness.rules.trajectory import user_texts
from harness.sample import Sample
from tracing.records import InvalidToolCall, ModelCall, ToolCall

__all__ = [
    "RuleWarning",
    "build_rule",
    "call_pattern",
    "fluent_tool_name",
    "rule_hint",
    "signature",
    "trajectory_of",
]

_PATTERN_KEYS = frozenset(("name", "args"))


class RuleWarning(UserWarning):
    """A fluent rule of ``severity="warn"`` that did not pass: shown, never failing the test."""


def call_pattern(tool: Any, method: str) -> str | dict[str, Any]:
    """A call pattern as a rule file writes it: a tool name or glob (a BaseTool or @tool
    function gives its name), or a ``{"name", "args"}`` mapping (its name may be a tool too)."""
    if isinstance(tool, Mapping):
        unknown = sorted(str(key) for key in tool if key not in _PATTERN_KEYS)
        if unknown or "name" not in tool:
            problem = f"unknown key {unknown[0]!r}" if unknown else "no 'name'"
            raise ValueError(
                f"{method}: a call pattern mapping has 'name' and optionally 'args', found "
                f"{problem} in {dict(tool)!r}; e.g. {{'name': 'refund_order', "
                "'args': {'amount': {'$gt': 100}}}"
            )
        return {**tool, "name": fluent_tool_name(tool["name"], method)}
    return fluent_tool_name(tool, method)


def fluent_tool_name(tool: Any, who: str) -> str:
    """The tool's name from a string, a BaseTool or an @tool function, ``who`` starting the
    message: TypeError for something else, ValueError for an empty name."""
    try:
        return tool_name(tool, who)
    except InvalidToolCall as exc:
        if isinstance(tool, str):
            raise  # an empty name: a ValueError (InvalidToolCall is one), the type was right
        raise TypeError(str(exc)) from None


def build_rule(method: str, kind: str, value: Any, name: str | None, severity: Severity) -> Rule:
    """Compile ``{name, <kind>: value, severity}`` through the rule loader; a bad value is a
    ValueError (TypeError for a name that is not a string) naming the method and the field."""
    from harness.scenarios.issues import Collector

    if name is not None and (not isinstance(name, str) or not name):
        raise TypeError(f"{method}: name must be a non-empty string, got {name!r}")
    raw = {"name": name or kind, kind: value, "severity": severity}
    out = Collector(method)
    rule = compile_rule(raw, (), out)
    if rule is None or out.issues:
        problems = "; ".join(
            f"{issue.path}: {issue.message}" if issue.path else issue.message
            for issue in out.issues
        )
        raise ValueError(f"{method}: {problems or 'not a valid rule'}")
    if name is None:
        return Rule(default_name(rule.kind), rule.kind, rule.severity)
    return rule


def default_name(kind: RuleKind) -> str:
    """A rule's name when the test gives none, read off the compiled kind: ``forbid delete_*``,
    ``get_order before refund_order (same order_id)``, ``grounded order_id of cancel_order``."""
    if isinstance(kind, Forbid):
        return f"forbid {kind.pattern.describe()}"
    if isinstance(kind, Allow):
        return "allow " + ", ".join(pattern.describe() for pattern in kind.patterns)
    if isinstance(kind, Before):
        first = CallPattern(kind.first.name, kind.first.args).describe()
        same = ", ".join(reference.path for _, reference in kind.first.same)
        return f"{first} before {kind.then.describe()}" + (f" (same {same})" if same else "")
    if isinstance(kind, Grounded):
        return f"grounded {', '.join(kind.args)} of {kind.tool.describe()}"
    if isinstance(kind, MaxCalls):
        tool = kind.tool.describe()
        return f"max_calls {kind.max}" + ("" if tool == "*" else f" of {tool}")
    if isinstance(kind, MaxRepeats):
        return f"max_repeats {kind.max}"
    caps = ((key, getattr(kind, key)) for key in BUDGET_KEYS)
    return "budget " + ", ".join(f"{key} {_cap(cap)}" for key, cap in caps if cap is not None)


def _cap(value: float) -> str:
    """A cap as the test wrote it: ``6000``, ``2`` (seconds the schema made a float), ``2.5``."""
    return str(int(value)) if float(value).is_integer() else repr(value)


def same_args(same: Any, method: str) -> dict[str, dict[str, str]]:
    """``same=["order_id"]`` (one name each side) or ``{"first_arg": "then.path"}`` as the
    ``{arg: {"$same": path}}`` arguments of the ``first`` pattern."""
    if isinstance(same, str):
        same = [same]
    if isinstance(same, Mapping):
        pairs = list(same.items())
    elif isinstance(same, Sequence):
        pairs = [(item, item) for item in same]
    else:
        raise TypeError(
            f"{method}: same takes argument names (['order_id']) or a mapping of the first "
            f"call's argument to the then call's ({{'id': 'order_id'}}), got {same!r}"
        )
    for key, path in pairs:
        if not isinstance(key, str) or not key or not isinstance(path, str) or not path:
            raise TypeError(f"{method}: same names arguments as non-empty strings, got {same!r}")
    return {key: {"$same": path} for key, path in pairs}


def with_same(first: str | dict[str, Any], same: Any, method: str) -> str | dict[str, Any]:
    """The ``first`` pattern with ``same``'s ``$same`` arguments added."""
    extra = same_args(same, method)
    if not extra:
        return first
    pattern: dict[str, Any] = {"name": first} if isinstance(first, str) else dict(first)
    args = dict(pattern.get("args") or {})
    both = sorted(set(args) & set(extra))
    if both:
        raise ValueError(
            f"{method}: argument {both[0]!r} is given both in first's args and in same=; keep one"
        )
    pattern["args"] = {**args, **extra}
    return pattern


def check_duration(duration: Any) -> float | None:
    """The run's seconds as given to ``expect_tools(..., duration=)``; None when not given."""
    if duration is None:
        return None
    if isinstance(duration, bool) or not isinstance(duration, (int, float)):
        raise TypeError(f"expect_tools(duration={duration!r}): give the run's seconds as a number")
    if not math.isfinite(duration) or duration < 0:
        raise ValueError(f"expect_tools(duration={duration!r}): seconds must be finite and >= 0")
    return float(duration)


def trajectory_of(
    calls: Sequence[ToolCall],
    positions: Sequence[int],
    *,
    sample: Sample | None,
    models: Sequence[ModelCall] | None,
    run_input: Any,
    input_given: bool,
    duration: float | None,
) -> Trajectory:
    """The trajectory rules see: the calls checked (``positions``: their indices in the whole
    run), the user's text (None when unknown: ``grounded`` then never fails on a guess), the
    model turns and the duration as the source knows them."""
    user_inputs: tuple[str, ...] | None = tuple(user_texts(run_input)) if input_given else None
    not_captured: frozenset[int] = frozenset()
    if sample is not None:
        base = Trajectory.from_sample(sample)  # the sample's metadata, as scoring reads it
        if not input_given:
            user_inputs = base.user_inputs
        models = base.model_calls
        duration = duration if duration is not None else base.duration
        where = {position: index for index, position in enumerate(positions)}
        not_captured = frozenset(where[p] for p in base.not_captured if p in where)
    return Trajectory(
        calls=tuple(calls),
        user_inputs=user_inputs,
        model_calls=tuple(models) if models is not None else None,
        duration=duration,
        not_captured=not_captured,
    )


def rule_hint(kind: RuleKind, trajectory: Trajectory) -> str | None:
    """What the test can pass so that an undecided rule gets a verdict, if anything."""
    if isinstance(kind, Grounded) and trajectory.user_inputs is None:
        return (
            "the user's input is not known: pass what the agent was asked, "
            "expect_tools(recorder, input=question)"
        )
    if isinstance(kind, Budget):
        if kind.seconds is not None and trajectory.duration is None:
            return "the run's duration is not known: pass it, expect_tools(recorder, duration=s)"
        tokens = (kind.model_calls, kind.input_tokens, kind.output_tokens, kind.total_tokens)
        if trajectory.model_calls is None and any(cap is not None for cap in tokens):
            return (
                "the model turns are not known: check a ToolCallRecorder (it keeps them) "
                "rather than a list of calls"
            )
    return None


def signature(method: str, args: Sequence[Any], **keywords: Any) -> str:
    """How the test wrote the call, tools shown by name: ``grounded('cancel_order', 'id')``."""
    shown = [repr(shown_value(arg)) for arg in args]
    defaults = {"name": None, "severity": "error", "same": ()}
    shown += [
        f"{key}={shown_value(value)!r}"
        for key, value in keywords.items()
        if key not in defaults or value != defaults[key]
    ]
    return f"{method}({', '.join(shown)})"


def shown_value(value: Any) -> Any:
    if isinstance(value, (str, int, float, Mapping, list, tuple)) or value is None:
        return value
    name = getattr(value, "name", None)
    return name if isinstance(name, str) else value
