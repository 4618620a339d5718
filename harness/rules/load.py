"""Rules as written in YAML / JSON: the pydantic schema of one rule, and compilation into Rules.

:func:`compile_rules` takes the raw list (as a scenario file's ``expect.rules`` /
``defaults.rules`` or a policy file's ``rules`` holds it), adds every problem to the caller's
:class:`~harness.scenarios.issues.Collector` as ``file:line: field: message`` with the nearest
valid name, and returns the rules that compiled. :func:`load_rules` does the same for Python
data and raises one :class:`~harness.errors.ConfigError` listing every problem.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, RootModel, ValidationError
from pydantic_core import PydanticCustomError

from harness.errors import ConfigError, MatcherError
from harness.rules.kinds import (
    Allow,
    Before,
    Budget,
    Forbid,
    Grounded,
    MaxCalls,
    MaxRepeats,
    RuleKind,
)
from harness.rules.patterns import CallPattern, parse_path
from harness.rules.rule import Rule
from harness.text import did_you_mean

if TYPE_CHECKING:
    from harness.scenarios.issues import Collector, PathKey

KINDS = ("forbid", "allow", "before", "grounded", "max_calls", "max_repeats", "budget")
"""The rule kinds: a rule mapping holds exactly one of these keys."""


def _call_pattern(value: Any) -> Any:
    # `forbid: delete_*` is shorthand for `forbid: {name: delete_*}`
    if isinstance(value, str):
        return {"name": value}
    if not isinstance(value, Mapping):
        raise PydanticCustomError("call_pattern", "expected a tool name, a glob or {name, args}")
    return value


def _one_or_more(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class CallPatternSpec(_Strict):
    """``{name, args}``: the calls of a tool (or a glob of tools), optionally by arguments."""

    name: str = Field(min_length=1, description="A tool name, or a glob: * ? [abc].")
    args: dict[str, Any] | None = Field(
        default=None,
        description="Argument patterns (literals or $ matchers); arguments not listed are free.",
    )


Pattern = Annotated[CallPatternSpec, BeforeValidator(_call_pattern)]
"""A call pattern as written: a tool name, a glob, or ``{name, args}``."""


class BeforeSpec(_Strict):
    """``before: {first, then}``: every ``then`` call has an earlier ``first`` call."""

    first: Pattern = Field(
        description="The call that must come earlier; {$same: <arg>} in its args means equal "
        "to that 'then' call's argument."
    )
    then: Pattern = Field(description="The calls that each need an earlier 'first' call.")


class GroundedSpec(_Strict):
    """``grounded: {tool, args}``: these argument values were seen before the call."""

    tool: Pattern = Field(description="The calls to check: a tool name, glob or {name, args}.")
    args: Annotated[list[str], BeforeValidator(_one_or_more)] = Field(
        min_length=1,
        description="The arguments to check: names or dot paths (items.0.sku); absent ones are "
        "not checked.",
    )


class MaxCallsSpec(_Strict):
    """``max_calls: {tool, max}``: at most ``max`` calls of ``tool``."""

    tool: Pattern = Field(
        default_factory=lambda: CallPatternSpec(name="*"),
        description="The calls to count (default: every call).",
    )
    max: int = Field(ge=1, description="The most calls allowed (a positive integer).")


class BudgetSpec(_Strict):
    """``budget: {...}``: caps on the run's figures (any subset)."""

    tool_calls: int | None = Field(default=None, ge=1, description="Most tool calls.")
    model_calls: int | None = Field(
        default=None, ge=1, description="Most model calls, the final answer's included."
    )
    input_tokens: int | None = Field(
        default=None, ge=1, description="Most input tokens, summed over the model calls."
    )
    output_tokens: int | None = Field(
        default=None, ge=1, description="Most output tokens, summed over the model calls."
    )
    total_tokens: int | None = Field(
        default=None, ge=1, description="Most tokens in all, summed over the model calls."
    )
    seconds: float | None = Field(
        default=None, gt=0, allow_inf_nan=False, description="Most seconds the run may take."
    )


class RuleSpec(_Strict):
    """One rule: a name, exactly one kind, and optionally ``severity: warn``."""

    name: str = Field(min_length=1, description="Unique in its list; reported as rule:<name>.")
    severity: Literal["error", "warn"] = Field(
        default="error", description="warn: reported as failed, never fails the run."
    )
    forbid: Pattern | None = Field(default=None, description="No call matches this pattern.")
    allow: list[Pattern] | None = Field(
        default=None, min_length=1, description="Every call matches one of these patterns."
    )
    before: BeforeSpec | None = Field(default=None, description="{first, then}: order.")
    grounded: GroundedSpec | None = Field(
        default=None, description="{tool, args}: argument values seen earlier in the run."
    )
    max_calls: MaxCallsSpec | None = Field(default=None, description="{tool, max}: a count.")
    max_repeats: int | None = Field(
        default=None, ge=1, description="No identical call (name and arguments) more often."
    )
    budget: BudgetSpec | None = Field(default=None, description="Caps on counts and tokens.")


class PolicyRuleSpec(RuleSpec):
    """A rule of a policy file: a rule, and the violation rate the policy tolerates."""

    max_rate: float = Field(
        default=0.0, ge=0, le=1, description="The fraction of traces that may violate it."
    )


class RulesSpec(RootModel[list[RuleSpec]]):
    """A list of rules (``expect.rules``, ``defaults.rules``)."""


def compile_rules(
    raw: Any, loc: PathKey, out: Collector, *, spec: type[RuleSpec] = RuleSpec
) -> tuple[Rule, ...]:
    """Compile a raw list of rule mappings found at ``loc``; every problem goes to ``out``.

    ``spec``: :class:`RuleSpec`, or :class:`PolicyRuleSpec` for a policy file. Returns the rules
    that compiled (a rule with any issue is left out); None or a missing list gives none.
    """
    from harness.scenarios.issues import describe_found, render_path

    if raw is None:
        return ()
    if not isinstance(raw, list):
        out.add(loc, f"expected a list of rules, found {describe_found(raw)}")
        return ()
    rules: list[Rule] = []
    first: dict[str, PathKey] = {}
    for position, item in enumerate(raw):
        where: PathKey = (*loc, position)
        rule = compile_rule(item, where, out, spec=spec)
        name = item.get("name") if isinstance(item, Mapping) else None
        if not isinstance(name, str):
            continue
        if name in first:
            line = out.line_of(first[name])
            shown = f"line {line}" if line else render_path(first[name])
            out.add((*where, "name"), f"duplicate rule name '{name}' (first defined on {shown})")
            continue
        first[name] = where
        if rule is not None:
            rules.append(rule)
    return tuple(rules)


def compile_rule(
    raw: Any, where: PathKey, out: Collector, *, spec: type[RuleSpec] = RuleSpec
) -> Rule | None:
    """Compile one rule mapping found at ``where``; None (issues in ``out``) when it is bad."""
    from harness.scenarios.issues import describe_found, pydantic_issues

    if not isinstance(raw, Mapping):
        out.add(
            where,
            f"expected a rule mapping (name and one of {', '.join(KINDS)}), "
            f"found {describe_found(raw)}",
        )
        return None
    before = len(out.issues)
    kinds = [key for key in KINDS if key in raw]
    for key in (key for key in raw if key not in spec.model_fields):
        out.add(
            where,
            _unknown_key(key, list(spec.model_fields), kinds),
            line=out.line_of((*where, key)),
        )
    if len(kinds) > 1:
        out.add(
            (*where, kinds[1]),
            f"a rule has exactly one kind, found {' and '.join(kinds)}: split it into "
            f"{len(kinds)} rules, each with its own name",
        )
    elif not kinds and all(key in spec.model_fields for key in raw):
        out.add(where, f"a rule needs one kind: one of {', '.join(KINDS)}")
    try:
        parsed = spec.model_validate({k: v for k, v in raw.items() if k in spec.model_fields})
    except ValidationError as exc:
        pydantic_issues(exc, spec, where, out)
        return None
    if len(out.issues) > before or not kinds:
        return None
    kind = _kind(parsed, kinds[0], (*where, kinds[0]), out)
    if kind is None:
        return None
    max_rate = parsed.max_rate if isinstance(parsed, PolicyRuleSpec) else 0.0
    return Rule(parsed.name, kind, parsed.severity, max_rate, out.line_of(where), out.file)


def _unknown_key(key: Any, fields: list[str], kinds: list[str]) -> str:
    """An unknown key's message: an unknown kind when the rule has none, with the nearest name."""
    if key == "max_rate":
        return (
            "'max_rate' only goes in a policy file's rules (the share of traces that may "
            "violate it); here a rule fails on any violation"
        )
    hint = did_you_mean(str(key), fields)
    if kinds:
        return f"unknown key '{key}'" + (
            f" — {hint}" if hint else f" (valid keys: {', '.join(fields)})"
        )
    return f"unknown rule kind '{key}'" + (
        f" — {hint}" if hint else f" (kinds: {', '.join(KINDS)})"
    )


def load_rules(
    raw: Any, *, file: str = "<rules>", spec: type[RuleSpec] = RuleSpec
) -> tuple[Rule, ...]:
    """Compile a list of rule mappings given in Python; ConfigError listing every problem."""
    from harness.scenarios.issues import Collector

    out = Collector(file)
    rules = compile_rules(raw, ("rules",), out, spec=spec)
    if out.issues:
        raise ConfigError(out.issues)
    return rules


def _kind(spec: RuleSpec, name: str, where: PathKey, out: Collector) -> RuleKind | None:
    """The compiled kind ``name`` of a validated rule; None (issues in ``out``) when bad."""
    value = getattr(spec, name)
    if value is None:
        out.add(where, f"expected the {name} rule's value, found nothing (null)")
        return None
    before = len(out.issues)
    try:
        kind = _build(name, value, where, out)
    except ValueError as exc:  # the kinds' own checks, which the schema already made
        out.add(where, str(exc))
        return None
    return kind if len(out.issues) == before else None


def _build(name: str, value: Any, where: PathKey, out: Collector) -> RuleKind | None:
    kind: RuleKind | None = None
    if name == "forbid":
        pattern = _pattern(value, where, out)
        kind = Forbid(pattern) if pattern else None
    elif name == "allow":
        patterns = [_pattern(item, (*where, i), out) for i, item in enumerate(value)]
        kind = Allow(tuple(p for p in patterns if p))
    elif name == "before":
        first = _pattern(value.first, (*where, "first"), out, same_allowed=True)
        then = _pattern(value.then, (*where, "then"), out)
        kind = Before(first, then) if first and then else None
    elif name == "grounded":
        tool = _pattern(value.tool, (*where, "tool"), out)
        paths = _paths(value.args, (*where, "args"), out)
        kind = Grounded(tool, paths) if tool and paths else None
    elif name == "max_calls":
        tool = _pattern(value.tool, (*where, "tool"), out)
        kind = MaxCalls(tool, value.max) if tool else None
    elif name == "budget":
        kind = _budget(value, where, out)
    else:  # max_repeats: pydantic checked it is a positive int
        kind = MaxRepeats(value)
    return kind


def _pattern(
    spec: CallPatternSpec, where: PathKey, out: Collector, *, same_allowed: bool = False
) -> CallPattern | None:
    try:
        return CallPattern.build(spec.name, spec.args, same_allowed=same_allowed)
    except MatcherError as exc:
        sub = (*where, "args", *_pointer_parts(exc.path))
        message = str(exc)
        prefix = f"at {exc.path}: "
        out.add(sub, message[len(prefix) :] if message.startswith(prefix) else message)
        return None


def _pointer_parts(pointer: str) -> tuple[str | int, ...]:
    """A JSON pointer (``/items/0``) as field-path parts."""
    parts: list[str | int] = []
    for token in pointer.split("/")[1:]:
        parts.append(int(token) if token.isdigit() else token.replace("~1", "/").replace("~0", "~"))
    return tuple(parts)


def _paths(written: list[str], where: PathKey, out: Collector) -> tuple[str, ...]:
    """The argument paths that parse; an issue for each that does not."""
    paths: list[str] = []
    for position, text in enumerate(written):
        try:
            parse_path(text)
        except ValueError as exc:
            out.add((*where, position), str(exc))
            continue
        paths.append(text)
    return tuple(paths)


def _budget(spec: BudgetSpec, where: PathKey, out: Collector) -> Budget | None:
    given = {key: getattr(spec, key) for key in BudgetSpec.model_fields}
    if all(value is None for value in given.values()):
        out.add(where, f"a budget needs at least one of {', '.join(BudgetSpec.model_fields)}")
        return None
    return Budget(**given)
