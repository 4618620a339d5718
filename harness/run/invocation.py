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
* **Capture.** Every LangChain run started in the run's context reports to the run's recorder
  (and the span exporter's handlers), through the run's config *and* LangChain's configure hooks
  (:func:`capturing`, the mechanism of ``capture_tool_calls()``): an agent factory may return
  an application function that invokes the real agent without passing any config. The context
  reaches the tasks the run starts and the threads that copy it (the runner's, LangChain's
  executor, ``asyncio.to_thread``), never those of another run; a thread the app starts by hand
  does not get it, and a run that saw no LangChain run at all says so (:data:`NOTHING_SEEN`).
* **Scoring.** The scenario's expectations are scored on every turn's calls together; a turn's
  own ``expect:`` on the calls of that turn's runs (a call resumed later stays in the turn that
  requested it), its scores named ``turn<N>.<metric>`` and its check reasons prefixed. An
  ``expect: {agents: ...}`` block is scored on that agent's calls (harness.scoring), its scores
  named ``<agent>.<metric>`` (in a turn, ``turn<N>.<agent>.<metric>``).
"""

from __future__ import annotations

import inspect
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableConfig
from langchain_core.tracers.context import register_configure_hook

from harness.errors import ScenarioRunError
from harness.metrics.base import Score
from harness.rules.trajectory import DURATION_KEY, MODEL_CALLS_KEY, USER_INPUTS_KEY, user_texts
from harness.run.isolation import in_thread
from harness.run.results import RunResult
from harness.sample import Sample
from harness.scenarios.model import Scenario, Turn
from harness.scoring import all_passed, scoped_score, score_sample
from tracing.langchain.capture import capture_tool_calls
from tracing.langchain.final_answer import (
    final_answer,
    structured_call_ids,
    without_structured_calls,
)
from tracing.langchain.recorder import ToolCallRecorder

__all__ = [
    "INTERRUPT_KEY",
    "NOTHING_SEEN",
    "Invoke",
    "TurnOutcome",
    "capturing",
    "converse",
    "interrupts_of",
    "invoke_agent",
    "record_sample",
    "run_config",
    "score_run",
]

INTERRUPT_KEY = "__interrupt__"
"""Where ``invoke`` of a paused LangGraph graph puts its ``Interrupt`` objects."""

Invoke = Callable[[Any, Any, RunnableConfig, Mapping[str, Any]], Awaitable[Any]]
"""``invoke(agent, payload, config, extra_kwargs)``: the runner's way of calling an agent."""


NOTHING_SEEN = (
    "no LangChain run was seen in this run: the agent never called LangChain, or called it "
    "outside the run's context (on a thread it started itself, or a pool that does not copy "
    "contextvars: use asyncio.to_thread, LangChain's executor or contextvars.copy_context())"
)
"""Said before the reasons of a failed run whose recorder saw no run at all."""

_hooks: list[ContextVar[BaseCallbackHandler | None]] = []
_hooks_lock = threading.Lock()


def _hook(position: int) -> ContextVar[BaseCallbackHandler | None]:
    """The configure-hook variable of the ``position``-th extra handler, registered once.

    Registered after ``tracing.langchain.capture``'s (imported above), so LangChain calls the
    recorder first and then these in order: the secret watchers before the SpanEmitter they serve.
    """
    with _hooks_lock:
        while len(_hooks) <= position:
            var: ContextVar[BaseCallbackHandler | None] = ContextVar(
                f"harness_run_handler_{len(_hooks)}", default=None
            )
            register_configure_hook(var, inheritable=True)
            _hooks.append(var)
        return _hooks[position]


@contextmanager
def capturing(
    recorder: ToolCallRecorder, handlers: Sequence[BaseCallbackHandler]
) -> Iterator[None]:
    """Every LangChain run started in the block reports to ``recorder`` and ``handlers``.

    Open it inside the run's own task: the hooks are ContextVars, so concurrent runs never
    cross. A run given the same handlers in its config gets each once (LangChain skips a hook
    handler it already has).
    """
    with ExitStack() as stack:
        stack.enter_context(capture_tool_calls(recorder))
        for position, handler in enumerate(handlers):
            var = _hook(position)
            stack.callback(var.reset, var.set(handler))
        yield


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
    duration: float | None = None
    """Seconds the turn took."""


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
        start = time.perf_counter()
        state = await invoke(agent, payload, config, extra)
        took = time.perf_counter() - start
        runs = tuple(run for run in recorder.calls_by_run() if run not in before) if track else ()
        answer = final_answer(state)
        done.append(TurnOutcome(turn.index, state, answer, interrupts_of(state), runs, took))


def record_sample(
    scenario: Scenario,
    recorder: ToolCallRecorder,
    done: Sequence[TurnOutcome],
    *,
    index: int,
    failed: bool,
    trace_id: str | None,
    duration: float | None = None,
) -> Sample:
    """The run's sample: every recorded call but structured-output bookkeeping, the answer,
    and what rules read besides (harness.rules.trajectory): the model calls, every user
    message (a resume value too: the user gave it), the run's ``duration`` in seconds."""
    output = None if failed or not done else done[-1].output
    if output is None:
        output = recorder.last_output()
    metadata: dict[str, Any] = {
        "scenario": scenario.id,
        "run": index,
        MODEL_CALLS_KEY: recorder.model_calls(),
        USER_INPUTS_KEY: [text for turn in _plan(scenario) for text in _user_texts(turn)],
    }
    if duration is not None:
        metadata[DURATION_KEY] = duration
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


def _user_texts(turn: Turn) -> list[str]:
    """The user's text in a turn: its message(s), or the value it resumes the graph with."""
    return list(user_texts(turn.resume if turn.is_resume else turn.input))


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
    if not run.passed and run.error is None and not recorder.calls_by_run():
        run = _nothing_seen(run)
    return replace(run, paused=paused) if paused else run


def _nothing_seen(run: RunResult) -> RunResult:
    """The failed run's first reason, led by :data:`NOTHING_SEEN`: the likely cause."""
    for position, score in enumerate(run.scores):
        if not score.passed:
            reason = f"{NOTHING_SEEN}; {score.reason}"
            noted = Score(score.name, score.value, score.threshold, False, reason, score.details)
            scores = (*run.scores[:position], noted, *run.scores[position + 1 :])
            return replace(run, scores=scores)
    for position, check in enumerate(run.checks):
        if check.fails_run:
            noted_check = replace(check, reason=f"{NOTHING_SEEN}; {check.reason}")
            checks = (*run.checks[:position], noted_check, *run.checks[position + 1 :])
            return replace(run, checks=checks)
    return run


def _with_turn_scores(
    scenario: Scenario, run: RunResult, recorder: ToolCallRecorder, done: Sequence[TurnOutcome]
) -> RunResult:
    by_run = recorder.calls_by_run()
    ids = _structured_ids(done)
    # where each top-level run's calls start among the run's (a turn's check names its calls
    # by their place in the whole run, as the reports' call table does)
    offsets: dict[str, int] = {}
    position = 0
    for run_id, calls in by_run.items():
        offsets[run_id] = position
        position += len(without_structured_calls(calls, ids))
    scores = list(run.scores)
    checks = list(run.checks)
    for outcome in done:
        turn = scenario.turns[outcome.index]
        if not turn.has_expect:
            continue
        calls = [call for run_id in outcome.run_ids for call in by_run.get(run_id, ())]
        metadata: dict[str, Any] = {
            "scenario": scenario.id,
            "run": run.index,
            "turn": turn.index,
            MODEL_CALLS_KEY: [m for r in outcome.run_ids for m in recorder.model_calls(r)],
            USER_INPUTS_KEY: _user_texts(turn),
        }
        if outcome.duration is not None:
            metadata[DURATION_KEY] = outcome.duration
        sample = Sample(
            input=turn.input_text,
            tool_calls=without_structured_calls(calls, ids),
            expected_tool_calls=list(turn.expected),
            output=outcome.output,
            metadata=metadata,
        )
        scored = score_sample(_turn_scenario(scenario, turn), sample, index=run.index)
        if scored.error is not None:
            return replace(run, passed=False, error=scored.error)
        tag = f"turn{turn.index + 1}"
        scores.extend(scoped_score(score, tag) for score in scored.scores)
        start = offsets.get(outcome.run_ids[0], 0) if outcome.run_ids else 0
        checks.extend(
            replace(
                check,
                reason=f"{tag}: {check.reason}",
                calls=tuple(start + i for i in check.calls),
            )
            for check in scored.checks
        )
    passed = all_passed(tuple(scores), tuple(checks))
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
        rules=turn.rules,
        rule_specs=turn.rule_specs,
    )


async def invoke_agent(
    agent: Any, payload: Any, config: RunnableConfig, extra: Mapping[str, Any] | None = None
) -> Any:
    """``ainvoke`` when the agent has a coroutine one, else ``invoke``/call on a worker thread.

    ``extra`` holds further keyword arguments of ``invoke`` (``context=`` for runtime context).
    """
    kwargs = dict(extra or {})
    ainvoke = getattr(agent, "ainvoke", None)
    if ainvoke is not None and inspect.iscoroutinefunction(ainvoke):
        return await ainvoke(payload, config=config, **kwargs)
    invoke = getattr(agent, "invoke", None)
    if callable(invoke):
        return await in_thread(invoke, payload, config=config, **kwargs)
    if callable(agent):
        # an application function: the run's capture hooks see what it invokes (no config)
        if _accepts_config(agent):
            kwargs["config"] = config
        if _is_async(agent):
            return await agent(payload, **kwargs)  # on the loop, in the run's task
        result = await in_thread(agent, payload, **kwargs)
        if inspect.isawaitable(result):  # a sync callable that returned a coroutine
            return await result
        return result
    raise TypeError(
        f"the agent factory returned {type(agent).__name__}, which has no invoke/ainvoke and "
        "is not callable; return a Runnable or a compiled LangGraph graph"
    )


def _is_async(func: Callable[..., Any]) -> bool:
    if inspect.iscoroutinefunction(func):
        return True
    call = getattr(func, "__call__", None)  # noqa: B004 - an object whose __call__ is async
    return call is not None and inspect.iscoroutinefunction(call)


def _accepts_config(func: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return "config" in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())
