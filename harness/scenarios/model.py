"""The compiled form of a scenario file: what the runner executes (no YAML, no pydantic)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from harness.expectation import Expectation
from harness.metrics.base import Metric

if TYPE_CHECKING:
    from harness.rules import Rule

DEFAULT_TIMEOUT = 60.0
"""Seconds one run of a scenario may take when neither the file nor the CLI says otherwise."""

SCENARIO_SUFFIXES = (".yaml", ".yml")

Order = Literal["any", "strict", "flexible"]


@dataclass(frozen=True, slots=True)
class AgentRef:
    """An agent factory resolved from ``module:callable`` or ``file.py:callable``."""

    spec: str
    factory: Callable[..., Any]


@dataclass(frozen=True, slots=True)
class ExpectedCallSpec:
    """An expected call as written in YAML (raw args, for tool-schema checks) and its line."""

    name: str
    args: Mapping[str, Any]
    path: str
    line: int | None
    label: str | None = None
    """Its ``id:``, which other expected calls' ``$ref``s name."""


@dataclass(frozen=True, slots=True)
class RulePatternSpec:
    """A rule's call pattern as written (a tool name or glob, raw args) and where, for the
    tool checks of ``harness validate``; ``arg_paths``: ``grounded``'s argument paths."""

    name: str
    args: Mapping[str, Any]
    path: str
    line: int | None
    arg_paths: tuple[str, ...] = ()
    arg_paths_at: str = ""
    """Where ``arg_paths`` are written (``...grounded.args``)."""
    same_of: str | None = None
    """``before.first``: the ``then`` pattern's tool name or glob, whose arguments ``$same``
    reads."""


@dataclass(frozen=True, slots=True)
class AgentBlock:
    """``expect: {agents: {name: ...}}``: one agent's expectations, scored on its calls only.

    Its metrics are the scenario's, applied to the calls whose ``agent`` path matches
    :attr:`agent` (Expectation.pairs_with's rule); scores are named ``<agent>.<metric>``
    (docs/metrics.md, "Scope").
    """

    agent: str
    """The block's key: an agent path, its last segments or a glob."""
    expected: tuple[Expectation, ...] = ()
    forbid: tuple[str, ...] = ()
    metrics: tuple[Metric, ...] = ()


@dataclass(frozen=True)
class Turn:
    """One turn of a conversation: a user message, or ``resume`` of a paused graph, and what
    that turn alone must do (its own expectations, metrics and checks)."""

    index: int
    input: Any = None
    """The payload of a user turn (``{"messages": [...]}``); None for a resume."""
    input_text: Any = None
    is_resume: bool = False
    resume: Any = None
    """The value handed to ``Command(resume=...)``."""
    has_expect: bool = False
    """Does this turn carry its own ``expect:`` (scored on this turn's calls)?"""
    expected: tuple[Expectation, ...] = ()
    expected_specs: tuple[ExpectedCallSpec, ...] = ()
    """Every expected call as written, the ``agents:`` blocks' too (for tool-schema checks)."""
    order: Order = "any"
    forbid: tuple[str, ...] = ()
    no_errors: bool = False
    has_output: bool = False
    output: Any = None
    metrics: tuple[Metric, ...] = ()
    line: int | None = None
    path: str = ""
    agent_blocks: tuple[AgentBlock, ...] = ()
    """This turn's ``expect: {agents: ...}``, each scored on that agent's calls of the turn."""
    rules: tuple[Rule, ...] = ()
    """This turn's ``expect: {rules: ...}``, scored on the turn's calls only."""
    rule_specs: tuple[RulePatternSpec, ...] = ()


@dataclass(frozen=True)
class Scenario:
    """One runnable scenario: agent, model, input, expectations, metrics and checks."""

    suite: str
    name: str
    file: str
    line: int | None
    agent: AgentRef
    model: Any
    input: Any
    input_text: Any
    expected: tuple[Expectation, ...] = ()
    expected_specs: tuple[ExpectedCallSpec, ...] = ()
    """Every expected call as written, the ``agents:`` blocks' too (for tool-schema checks)."""
    order: Order = "any"
    forbid: tuple[str, ...] = ()
    no_errors: bool = False
    no_errors_retries: bool = True
    """With ``no_errors: {retries: false}``, False: a failed attempt fails even if retried."""
    agent_blocks: tuple[AgentBlock, ...] = ()
    """``expect: {agents: ...}``: per agent, expectations and metrics scored on its calls only;
    :attr:`expected` holds the scenario-level ones, scored on every call."""
    has_output: bool = False
    output: Any = None
    metrics: tuple[Metric, ...] = ()
    repeat: int = 1
    pass_rate: float = 1.0
    timeout: float = DEFAULT_TIMEOUT
    xfail: str | None = None
    description: str | None = None
    path: str = ""
    config: Mapping[str, Any] = field(default_factory=dict)
    """RunnableConfig keys from ``config:`` (suite defaults merged under the scenario's)."""
    context: Any = None
    has_context: bool = False
    """Was ``context:`` given (passed as ``invoke(..., context=...)``)?"""
    turns: tuple[Turn, ...] = ()
    """A conversation, run in order on one thread; empty for a single ``input``."""
    tags: tuple[str, ...] = ()
    """The suite's ``tags:`` then the scenario's, for ``-m`` selection (harness.run.filtering)."""
    cassettes: str | None = None
    """The suite's ``cassettes:`` folder, resolved against the file (harness.cassettes)."""
    agent_reuse: bool = False
    """The suite's ``agent_reuse:``: the runner builds one agent per (factory, model config)
    and hands it to every scenario that shares them (docs/architecture.md, "Threading and
    concurrency contracts", Agent reuse)."""
    model_config: str = ""
    """The model's spec and script as canonical JSON: with :attr:`agent_reuse`, scenarios
    whose factory and ``model_config`` are equal share one agent."""
    rules: tuple[Rule, ...] = ()
    """The suite's ``defaults.rules`` (less ``disable_rules``; one of the scenario's with the
    same name in its place), then the scenario's own ``expect.rules``."""
    rule_specs: tuple[RulePatternSpec, ...] = ()
    """The call patterns of :attr:`rules`, as written (each turn has its own)."""

    @property
    def id(self) -> str:
        """``suite::name``, the identifier ``-k`` matches against."""
        return f"{self.suite}::{self.name}"

    @property
    def agent_forbid(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """(agent pattern, tools it must not call) of every block with a ``forbid``."""
        return tuple((block.agent, block.forbid) for block in self.agent_blocks if block.forbid)


@dataclass(frozen=True)
class Suite:
    """The scenarios of one YAML file."""

    name: str
    file: str
    scenarios: tuple[Scenario, ...] = field(default_factory=tuple)
