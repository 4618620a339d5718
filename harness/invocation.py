"""How the runner invokes an agent: the run's config, runtime context, turns, what it answered.

One run of a scenario is one conversation on one thread (docs/architecture.md, "Data flow"):

* **Config.** The scenario's ``config:`` (``configurable``, ``recursion_limit``, ``tags``,
  ``metadata``, ``max_concurrency``) goes into the RunnableConfig with the run's callbacks. A
  graph compiled with a checkpointer, and every conversation, gets a fresh ``thread_id`` per run
  unless the scenario sets one, so memory and human-in-the-loop agents run without YAML.
* **Context.** ``context:`` is passed as ``invoke(..., context=...)``; an agent without a
  ``context_schema`` is told so by name instead of failing deep inside a node.
* **Turns.** Each turn is a user message or ``Command(resume=value)``; a turn that ends in an
  ``interrupt`` is a pause, not an error, and only a paused graph may be resumed.
* **Scoring.** The scenario's expectations are scored on every turn's calls together; a turn's
  own ``expect:`` on the calls of that turn's runs (a call resumed later stays in the turn that
  requested it), its scores named ``turn<N>.<metric>`` and its check reasons prefixed. An
  ``expect: {agents: ...}`` block is scored on that agent's calls (harness.scoring), its scores
  named ``<agent>.<metric>`` (in a turn, ``turn<N>.<agent>.<metric>``).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from langchain_core.runnables import RunnableConfig

from harness.errors import ScenarioRunError
from harness.result import CheckResult, RunResult
from harness.sample import Sample
from harness.scenarios.model import Scenario, Turn
from harness.scoring import scoped_score, score_sample
from tracing.callback import ToolCallRecorder
from tracing.final_answer import final_answer, structured_call_ids, without_structured_calls

__all__ = [
    "INTERRUPT_KEY",
    "Invoke",
    "TurnOutcome",
    "converse",
    "interrupts_of",
    "record_sample",
    "run_config",
    "score_run",
]

INTERRUPT_KEY = "__interrupt__"
"""Where ``invoke`` of a paused LangGraph graph puts its ``Interrupt`` objects."""

Invoke = Callable[[Any, Any, RunnableConfig, Mapping[str, Any]], Awaitable[Any]]
"""``invoke(agent, payload, config, extra_kwargs)``: the runner's way of calling an agent."""


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    """What one turn returned: the state, its final answer, the pause, the recorder's runs."""

    index: int
    state: Any
    output: Any
    paused: tuple[Any, ...] = ()
    """The interrupt payloads when the turn ended paused (empty: it finished)."""
    run_ids: tuple[str, ...] = ()
    """The recorder's top-level runs started in this turn (conversations only)."""


def run_config(scenario: Scenario, agent: Any, callbacks: Sequence[Any]) -> RunnableConfig:
    """The RunnableConfig of one run: ``config:``, the callbacks, a fresh ``thread_id``."""
    settings = scenario.config
    config = RunnableConfig(callbacks=list(callbacks))
    for key in ("recursion_limit", "max_concurrency"):
        if key in settings:
            config[key] = settings[key]
    if "tags" in settings:
        config["tags"] = list(settings["tags"])
    if "metadata" in settings:
        config["metadata"] = dict(settings["metadata"])
    configurable = dict(settings.get("configurable") or {})
    if "thread_id" not in configurable and (scenario.turns or _has_checkpointer(agent)):
        configurable["thread_id"] = f"harness-{uuid.uuid4().hex}"
    if configurable:
        config["configurable"] = configurable
    return config


def _has_checkpointer(agent: Any) -> bool:
    # a compiled graph keeps its saver here; ``True``/``False`` mark subgraph settings
    saver = getattr(agent, "checkpointer", None)
    return saver is not None and not isinstance(saver, bool)


def context_kwargs(scenario: Scenario, agent: Any) -> dict[str, Any]:
    """``{"context": ...}`` for an agent that takes runtime context; an error for one that not."""
    if not scenario.has_context:
        return {}
    if getattr(agent, "context_schema", None) is None:
        raise ScenarioRunError(
            f"the scenario gives 'context:', but agent {scenario.agent.spec} "
            f"({type(agent).__name__}) has no context_schema; build it with "
            "context_schema=... (create_agent, StateGraph) or remove 'context:'",
            scenario=scenario.id,
        )
    return {"context": scenario.context}


def interrupts_of(state: Any) -> tuple[Any, ...]:
    """The payloads of the interrupts a returned state carries (empty when it finished)."""
    if not isinstance(state, Mapping):
        return ()
    found = state.get(INTERRUPT_KEY)
    if not isinstance(found, Sequence) or isinstance(found, str):
        return ()
    return tuple(getattr(item, "value", item) for item in found)


def _plan(scenario: Scenario) -> tuple[Turn, ...]:
    if scenario.turns:
        return scenario.turns
    return (Turn(0, scenario.input, scenario.input_text),)


def _payload(scenario: Scenario, turn: Turn, done: Sequence[TurnOutcome]) -> Any:
    if not turn.is_resume:
        return turn.input
    if not done or not done[-1].paused:
        raise ScenarioRunError(
            f"turns[{turn.index}] resumes the graph, but it is not paused: turn "
            f"{turn.index} (turns[{turn.index - 1}]) finished without an interrupt; give this "
            "turn an 'input' instead, or check why the agent did not pause",
            scenario=scenario.id,
            turn=turn.index,
        )
    from langgraph.types import Command

    return Command(resume=turn.resume)


async def converse(
    scenario: Scenario,
    agent: Any,
    config: RunnableConfig,
    recorder: ToolCallRecorder,
    invoke: Invoke,
    done: list[TurnOutcome],
) -> None:
    """Run every turn in order on one config (one thread); ``done`` gets each turn's outcome.

    ``done`` is filled as turns finish, so a run that fails or times out mid-conversation
    still says which turns completed and whether the graph was paused.
    """
    extra = context_kwargs(scenario, agent)
    track = bool(scenario.turns)
    for turn in _plan(scenario):
        payload = _payload(scenario, turn, done)
        before = set(recorder.calls_by_run()) if track else set()
        state = await invoke(agent, payload, config, extra)
        runs = tuple(run for run in recorder.calls_by_run() if run not in before) if track else ()
        done.append(TurnOutcome(turn.index, state, final_answer(state), interrupts_of(state), runs))


def record_sample(
    scenario: Scenario,
    recorder: ToolCallRecorder,
    done: Sequence[TurnOutcome],
    *,
    index: int,
    failed: bool,
    trace_id: str | None,
) -> Sample:
    """The run's sample: every recorded call but structured-output bookkeeping, the answer."""
    output = None if failed or not done else done[-1].output
    if output is None:
        output = recorder.last_output()
    metadata: dict[str, Any] = {"scenario": scenario.id, "run": index}
    if scenario.turns:
        metadata["turns"] = [
            {"turn": outcome.index, "paused": list(outcome.paused)} for outcome in done
        ]
    return Sample(
        input=scenario.input_text,
        tool_calls=without_structured_calls(recorder.calls(), _structured_ids(done)),
        expected_tool_calls=list(scenario.expected),
        output=output,
        metadata=metadata,
        trace_id=trace_id,
    )


def _structured_ids(done: Sequence[TurnOutcome]) -> frozenset[str]:
    ids: frozenset[str] = frozenset()
    for outcome in done:
        ids |= structured_call_ids(outcome.state)
    return ids


def score_run(
    scenario: Scenario,
    sample: Sample,
    recorder: ToolCallRecorder,
    done: Sequence[TurnOutcome],
    *,
    index: int,
    duration: float,
    trace_id: str | None,
) -> RunResult:
    """Score the whole run, then each turn with its own ``expect:``; record a final pause."""
    run = score_sample(scenario, sample, index=index, duration=duration, trace_id=trace_id)
    paused = done[-1].paused if done else ()
    if run.error is None and scenario.turns:
        run = _with_turn_scores(scenario, run, recorder, done)
    return replace(run, paused=paused) if paused else run


def _with_turn_scores(
    scenario: Scenario, run: RunResult, recorder: ToolCallRecorder, done: Sequence[TurnOutcome]
) -> RunResult:
    by_run = recorder.calls_by_run()
    ids = _structured_ids(done)
    scores = list(run.scores)
    checks = list(run.checks)
    for outcome in done:
        turn = scenario.turns[outcome.index]
        if not turn.has_expect:
            continue
        calls = [call for run_id in outcome.run_ids for call in by_run.get(run_id, ())]
        sample = Sample(
            input=turn.input_text,
            tool_calls=without_structured_calls(calls, ids),
            expected_tool_calls=list(turn.expected),
            output=outcome.output,
            metadata={"scenario": scenario.id, "run": run.index, "turn": turn.index},
        )
        scored = score_sample(_turn_scenario(scenario, turn), sample, index=run.index)
        if scored.error is not None:
            return replace(run, passed=False, error=scored.error)
        tag = f"turn{turn.index + 1}"
        scores.extend(scoped_score(score, tag) for score in scored.scores)
        checks.extend(
            CheckResult(check.name, check.passed, f"{tag}: {check.reason}", check.code, ())
            for check in scored.checks
        )
    passed = all(score.passed for score in scores) and all(check.passed for check in checks)
    return replace(run, passed=passed, scores=tuple(scores), checks=tuple(checks))


def _turn_scenario(scenario: Scenario, turn: Turn) -> Scenario:
    """The scenario as one turn scores it: that turn's expectations, metrics and checks."""
    return replace(
        scenario,
        expected=turn.expected,
        expected_specs=turn.expected_specs,
        order=turn.order,
        forbid=turn.forbid,
        no_errors=turn.no_errors,
        has_output=turn.has_output,
        output=turn.output,
        metrics=turn.metrics,
        agent_blocks=turn.agent_blocks,
        turns=(),
    )
