"""The pydantic schema of rules as written in YAML / JSON (``extra="forbid"``, strict).

Every field carries a description: ``harness schema`` turns these models into the JSON Schema
editors use. A call pattern is written as a tool name, a glob or ``{name, args}``; the models
take all three (a bare name becomes ``{name: ...}`` before validation).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, RootModel
from pydantic_core import PydanticCustomError

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
