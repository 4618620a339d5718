"""The pydantic schema of a scenario file, as written (before compilation).

Every field carries a description: ``harness schema`` turns these models into the JSON Schema
editors complete and check a suite with (docs/ci.md), so the text is what a user sees on hover.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from harness.scenarios.model import Order
from harness.values.refs import LABEL

Tag = Annotated[
    str,
    Field(
        pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*$",
        description="A label for -m selection: letters, digits, _ . + - (no spaces).",
    ),
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, arbitrary_types_allowed=True)


class ToolCallSpec(_Strict):
    """``{name, args}``: an expected tool call (args may hold ``$`` matchers)."""

    name: str = Field(min_length=1, description="The tool's name, as the agent binds it.")
    args: dict[str, Any] | None = Field(
        default=None,
        description="Expected arguments: literals or $ matchers. Without args, any call of "
        "that name matches.",
    )
    agent: str | None = Field(
        default=None,
        min_length=1,
        description="Only a call made in this agent matches: its path (supervisor/research), "
        "its last segments (research) or a glob.",
    )
    node: str | None = Field(
        default=None,
        min_length=1,
        description="Only a call made in this LangGraph node matches (a name or a glob).",
    )
    id: str | None = Field(
        default=None,
        description="A label for this call: other expected calls name it in after: and in "
        "{$ref: <label>.args.<path>} / {$ref: <label>.result.<path>}.",
        json_schema_extra={"pattern": LABEL.pattern},
    )
    after: str | list[Any] | None = Field(
        default=None,
        description="The label(s) of expected calls that must run before this one "
        "(adds tool_call_partial_order at 1.0).",
    )
    optional: bool = Field(
        default=False,
        description="Matched when the agent makes this call; costs nothing when it does not.",
    )
    result: Any = Field(
        default=None,
        description="A literal or $ matcher the call's result must match (a JSON object or "
        "array text is read as its structure).",
    )


def _bare_names(value: Any) -> Any:
    # `- get_time` is shorthand for `- {name: get_time}` (any call of that name).
    if isinstance(value, list):
        return [{"name": item} if isinstance(item, str) else item for item in value]
    return value


class AgentExpectSpec(_Strict):
    """One entry of ``expect: {agents: {name: ...}}``: what one agent of the graph must do."""

    tool_calls: list[ToolCallSpec] | None = Field(
        default=None, description="Calls expected in this agent: {name, args} or a bare name."
    )
    forbid: list[str] = Field(default_factory=list, description="Tools this agent must never call.")

    @field_validator("tool_calls", mode="before")
    @classmethod
    def _bare_names(cls, value: Any) -> Any:
        return _bare_names(value)


class NoErrorsSpec(_Strict):
    """``no_errors: {retries: false}``: a failed attempt fails even if a retry then worked."""

    retries: bool = Field(
        default=True,
        description="false: any failed attempt fails; true (default): only a last attempt.",
    )


class ExpectSpec(_Strict):
    """The ``expect:`` block of a scenario."""

    tool_calls: list[ToolCallSpec] | None = Field(
        default=None,
        description="Expected calls: {name, args} or a bare tool name; [] expects no call.",
    )
    order: Order = Field(
        default="any",
        description="any (default), strict or flexible: adds tool_call_sequence_accuracy in "
        "that mode at 1.0.",
    )
    forbid: list[str] = Field(default_factory=list, description="Tools that must never be called.")
    no_errors: bool | NoErrorsSpec | None = Field(
        default=None,
        description="Every executed call must succeed (its last attempt); {retries: false}: "
        "every attempt.",
    )
    output: Any = Field(
        default=None, description="A literal or $ matcher the final answer must match."
    )
    agents: dict[str, AgentExpectSpec] | None = Field(
        default=None,
        description="Per agent (a name, path or glob): the calls expected there and the tools "
        "it must not call.",
    )
    # checked by harness.rules.load (located errors with the nearest name), not here
    rules: list[Any] | None = Field(
        default=None,
        description="Rules: {name, one of forbid / allow / before / grounded / max_calls / "
        "max_repeats / budget, severity?}; each reported as check rule:<name>.",
    )
    disable_rules: list[str] = Field(
        default_factory=list,
        description="Names of the suite's rules (defaults.rules) this scenario switches off.",
    )

    @field_validator("tool_calls", mode="before")
    @classmethod
    def _bare_names(cls, value: Any) -> Any:
        return _bare_names(value)


class ConfigSpec(_Strict):
    """The ``config:`` block: the RunnableConfig keys a scenario may set (docs/architecture.md)."""

    configurable: dict[str, Any] | None = Field(
        default=None, description="RunnableConfig 'configurable' (e.g. thread_id, user_id)."
    )
    recursion_limit: int | None = Field(
        default=None, ge=1, description="LangGraph's recursion limit for the run."
    )
    tags: list[str] | None = Field(
        default=None, description="RunnableConfig tags passed to the agent (not -m tags)."
    )
    metadata: dict[str, Any] | None = Field(
        default=None, description="RunnableConfig metadata passed to the agent."
    )
    max_concurrency: int | None = Field(
        default=None, ge=1, description="RunnableConfig max_concurrency (parallel tool calls)."
    )


class TurnSpec(_Strict):
    """One entry of ``turns:``: a user message (``input`` / ``messages``) or a ``resume``."""

    input: str | dict[str, Any] | None = Field(
        default=None, description="The user's message of this turn (or a whole input mapping)."
    )
    messages: list[Any] | None = Field(
        default=None,
        description="A message list for this turn: {role, content} or [role, content].",
    )
    resume: Any = Field(
        default=None, description="Resume the paused graph with this value (Command(resume=...))."
    )
    expect: ExpectSpec = Field(
        default_factory=ExpectSpec, description="What this turn alone must do."
    )
    metrics: Any = Field(
        default=None, description="Metrics scored on this turn's calls: {name: options}."
    )


class DefaultsSpec(_Strict):
    """The ``defaults:`` block, merged into every scenario of the file."""

    metrics: Any = Field(
        default=None, description="Metrics for every scenario: {name: {threshold, ...options}}."
    )
    timeout: float | None = Field(default=None, gt=0, description="Seconds per run.")
    repeat: int | None = Field(default=None, ge=1, description="Runs per scenario.")
    pass_rate: float | None = Field(
        default=None, ge=0, le=1, description="Fraction of runs that must pass."
    )
    forbid: list[str] = Field(
        default_factory=list, description="Tools no scenario of the file may call."
    )
    no_errors: bool | None = Field(
        default=None, description="Every executed call must succeed, in every scenario."
    )
    config: ConfigSpec | None = Field(
        default=None, description="RunnableConfig keys for every scenario."
    )
    context: Any = Field(
        default=None, description="Runtime context for every scenario (invoke(context=...))."
    )
    rules: list[Any] | None = Field(
        default=None,
        description="Rules for every scenario of the file, before each scenario's own (one of "
        "the same name replaces it; expect.disable_rules switches one off).",
    )


class ScenarioSpec(_Strict):
    """One entry of ``scenarios:``."""

    name: str = Field(min_length=1, description="Unique within the suite.")
    description: str | None = Field(default=None, description="What the scenario checks.")
    input: str | dict[str, Any] | None = Field(
        default=None,
        description='The user\'s message (becomes {"messages": [("user", input)]}), or a whole '
        "input mapping.",
    )
    messages: list[Any] | None = Field(
        default=None, description="A whole message list: {role, content} or [role, content]."
    )
    expect: ExpectSpec = Field(
        default_factory=ExpectSpec, description="Expected calls and the checks that must hold."
    )
    metrics: Any = Field(
        default=None,
        description="{metric_name: {threshold, ...options}} merged over the defaults; "
        "metric: false switches one off.",
    )
    repeat: int | None = Field(default=None, ge=1, description="Run N times.")
    pass_rate: float | None = Field(
        default=None, ge=0, le=1, description="Pass when at least this fraction of runs pass."
    )
    timeout: float | None = Field(
        default=None, gt=0, description="Seconds per run; past it the run is an error."
    )
    xfail: str | bool | None = Field(
        default=None, description="Why this scenario is expected to fail."
    )
    script: list[Any] | None = Field(
        default=None,
        description="With the scripted model: its turns, - tool_calls: [{name, args}] / "
        '- content: "...".',
    )
    model: str | dict[str, Any] | None = Field(
        default=None,
        description='{provider: demo}, {provider: scripted}, "provider:model" or a factory '
        '"module:callable" / "file.py:callable"; max_concurrency: N limits its calls.',
    )
    agent: str | None = Field(
        default=None, description="module:callable or file.py:callable for this scenario."
    )
    config: ConfigSpec | None = Field(
        default=None, description="RunnableConfig keys, merged over the defaults'."
    )
    context: Any = Field(default=None, description="Runtime context (invoke(context=...)).")
    turns: list[TurnSpec] | None = Field(
        default=None,
        min_length=1,
        description="A conversation run in order on one thread, instead of input/messages.",
    )
    tags: list[Tag] | None = Field(
        default=None, description="Labels for -m selection, added to the suite's tags."
    )


class SuiteSpec(_Strict):
    """A scenario file's top level."""

    suite: str | None = Field(default=None, description="Suite name (default: the file's stem).")
    description: str | None = Field(default=None, description="What the suite covers.")
    agent: str | None = Field(
        default=None,
        description="module:callable or file.py:callable; called as callable(model=...).",
    )
    model: str | dict[str, Any] | None = Field(
        default=None,
        description='{provider: demo} (default), {provider: scripted}, "provider:model" or a '
        'factory "module:callable" / "file.py:callable" returning your BaseChatModel (the '
        "mapping's other keys are its options); max_concurrency: N limits its calls.",
    )
    defaults: DefaultsSpec = Field(
        default_factory=DefaultsSpec, description="Merged into every scenario of the file."
    )
    scenarios: list[Any] = Field(min_length=1, description="The scenarios of the suite.")
    tags: list[Tag] | None = Field(
        default=None, description="Labels for -m selection, on every scenario of the suite."
    )
    cassettes: str | None = Field(
        default=None,
        description="Folder of this suite's cassettes for --record/--replay, relative to the file.",
    )
    agent_reuse: bool = Field(
        default=False,
        description="Build the agent once per (factory, model config) and reuse it across the "
        "suite's scenarios (per process); only for agents that keep no state between invocations.",
    )
