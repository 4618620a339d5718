"""Runs scenarios concurrently against their agents, records the tool calls, scores them.

One asyncio loop, a semaphore for ``concurrency``. Each scenario: build the model's agent with
the factory, then ``repeat`` runs, each with a fresh ToolCallRecorder and its own ``timeout``.
Agents with ``ainvoke`` are awaited; anything else runs on a daemon worker thread (a hung sync
agent then cannot keep the process alive). Nothing a scenario does stops the others: an
exception in the factory or the run, or a timeout, becomes that scenario's ``error`` result.

With a ``tracer_provider`` in the options every run is one trace: a ``scenario {name}`` root
span (``harness.suite``, ``harness.scenario``, ``harness.run``) with the agent's spans
(SpanEmitter, GenAI conventions) under it; the run is scored *inside* that span, so the verdict
(``harness.passed``, ``harness.status``, one ``harness.score.<metric>`` per metric and a
``harness.failure`` event per reason, secrets scrubbed) is on the root span when it ends.
Without a provider no span is made at all.

Scoring lives in :mod:`harness.scoring`: ``harness run`` and ``harness eval-traces`` share it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableConfig

from harness.redaction import Redactor
from harness.result import (
    ErrorInfo,
    ErrorPhase,
    RunResult,
    ScenarioResult,
    Scrubber,
    SuiteResult,
)
from harness.scenarios import Scenario
from harness.scoring import error_info, score_sample, verdict
from tracing.callback import ToolCallRecorder

if TYPE_CHECKING:
    from opentelemetry.trace import Span, TracerProvider

DEFAULT_CONCURRENCY = 8

SUITE_ATTRIBUTE = "harness.suite"
RUN_ATTRIBUTE = "harness.run"
PASSED_ATTRIBUTE = "harness.passed"
STATUS_ATTRIBUTE = "harness.status"
SCORE_PREFIX = "harness.score."
CHECK_PREFIX = "harness.check."
FAILURE_EVENT = "harness.failure"
REASON_ATTRIBUTE = "harness.reason"
"""Verdict attributes on a run's root span (``harness.scenario`` is set by SpanEmitter)."""

T = TypeVar("T")
ProgressCallback = Callable[[ScenarioResult], None]


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How to run: concurrency, CLI overrides of ``repeat``/``timeout``, fail-fast, progress."""

    concurrency: int = DEFAULT_CONCURRENCY
    repeat: int | None = None
    timeout: float | None = None
    fail_fast: bool = False
    progress: ProgressCallback | None = None
    tracer_provider: TracerProvider | None = None
    """Export every run as one trace here (None: no spans, no OTel overhead)."""
    capture_content: bool = False
    """Put tool arguments/results and messages on the spans (the exporter may still drop them)."""
    redactor: Redactor | None = None
    """Masks secrets in the failure reasons put on spans (default: the default key list)."""


class Runner:
    """Runs a list of scenarios and returns a SuiteResult (partial if cancelled)."""

    def __init__(self, options: RunOptions | None = None) -> None:
        """Keep the options; nothing starts until :meth:`run`."""
        self.options = options or RunOptions()
        if self.options.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {self.options.concurrency}")
        self._stop = False

    async def run(self, scenarios: Sequence[Scenario]) -> SuiteResult:
        """Run every scenario; on cancellation (Ctrl-C) return what finished, marked partial."""
        started_at = time.time()
        start = time.perf_counter()
        semaphore = asyncio.Semaphore(self.options.concurrency)
        results: dict[int, ScenarioResult] = {}
        tasks = [
            asyncio.ensure_future(self._guarded(index, scenario, semaphore, results))
            for index, scenario in enumerate(scenarios)
        ]
        interrupted = False
        try:
            await asyncio.gather(*tasks)
        except asyncio.CancelledError:
            interrupted = True
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            # the cancellation is handled here (the partial result is the answer), so clear it
            uncancel = getattr(asyncio.current_task(), "uncancel", None)  # Python >= 3.11
            if uncancel is not None:
                uncancel()
        ordered = tuple(results[index] for index in sorted(results))
        return SuiteResult(
            scenarios=ordered,
            started_at=started_at,
            duration=time.perf_counter() - start,
            interrupted=interrupted,
            not_run=len(scenarios) - len(ordered),
        )

    async def _guarded(
        self,
        index: int,
        scenario: Scenario,
        semaphore: asyncio.Semaphore,
        results: dict[int, ScenarioResult],
    ) -> None:
        async with semaphore:
            if self._stop:
                return  # --fail-fast: scheduled before the failure, never started
            result = await self.run_scenario(scenario)
        results[index] = result
        if self.options.fail_fast and result.status in ("failed", "error"):
            self._stop = True
        if self.options.progress is not None:
            self.options.progress(result)

    async def run_scenario(self, scenario: Scenario) -> ScenarioResult:
        """All runs of one scenario, gated by its ``pass_rate``; never raises (but cancels)."""
        start = time.perf_counter()
        repeat = self.options.repeat or scenario.repeat
        timeout = self.options.timeout or scenario.timeout
        runs: list[RunResult] = []
        try:
            agent = await asyncio.wait_for(
                _in_thread(scenario.agent.factory, model=scenario.model), timeout
            )
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            phase: ErrorPhase = "timeout" if isinstance(exc, asyncio.TimeoutError) else "factory"
            error = error_info(exc, phase, timeout, what=f"agent factory {scenario.agent.spec}")
            runs.append(
                RunResult(0, False, None, error=error, duration=time.perf_counter() - start)
            )
        else:
            for index in range(repeat):
                runs.append(await self._one_run(scenario, agent, index, timeout))
        return verdict(scenario, tuple(runs), repeat, time.perf_counter() - start)

    async def _one_run(
        self, scenario: Scenario, agent: Any, index: int, timeout: float
    ) -> RunResult:
        provider = self.options.tracer_provider
        if provider is None:
            return await self._record_and_score(scenario, agent, index, timeout, None, None)
        from tracing.spans import SpanEmitter

        emitter = SpanEmitter(provider, capture_content=self.options.capture_content)
        attributes: dict[str, str | int] = {SUITE_ATTRIBUTE: scenario.suite, RUN_ATTRIBUTE: index}
        with emitter.start_scenario(scenario.name, attributes) as span:
            context = span.get_span_context()
            trace_id = format(context.trace_id, "032x") if context.is_valid else None
            run = await self._record_and_score(scenario, agent, index, timeout, emitter, trace_id)
            annotate_span(span, run, self.options.redactor)
        return run

    async def _record_and_score(
        self,
        scenario: Scenario,
        agent: Any,
        index: int,
        timeout: float,
        emitter: BaseCallbackHandler | None,
        trace_id: str | None,
    ) -> RunResult:
        recorder = ToolCallRecorder()
        handlers: list[BaseCallbackHandler] = [recorder] if emitter is None else [recorder, emitter]
        config = RunnableConfig(callbacks=handlers)
        start = time.perf_counter()
        output: Any = None
        error: ErrorInfo | None = None
        try:
            result = await asyncio.wait_for(_invoke(agent, scenario.input, config), timeout)
            output = final_output(result)
        except asyncio.CancelledError:
            raise
        except asyncio.TimeoutError as exc:
            error = error_info(exc, "timeout", timeout, what="the run")
        except Exception as exc:
            error = error_info(exc, "run", timeout)
        duration = time.perf_counter() - start
        # what was captured before a crash or timeout is kept: it is often the explanation
        sample = recorder.sample(
            expected=list(scenario.expected),
            input=scenario.input_text,
            output=output if error is None else None,
            metadata={"scenario": scenario.id, "run": index},
            trace_id=trace_id,
        )
        if error is not None:
            return RunResult(
                index, False, sample, error=error, duration=duration, trace_id=trace_id
            )
        return score_sample(scenario, sample, index=index, duration=duration, trace_id=trace_id)


def annotate_span(span: Span, run: RunResult, redactor: Redactor | None = None) -> None:
    """Put a run's verdict on its root span: passed, status, scores, checks, failure events."""
    from opentelemetry.trace import Status as SpanStatus
    from opentelemetry.trace import StatusCode

    scrub = Scrubber.for_runs(redactor, (run,))
    status = "error" if run.error is not None else "passed" if run.passed else "failed"
    span.set_attribute(PASSED_ATTRIBUTE, run.passed)
    span.set_attribute(STATUS_ATTRIBUTE, status)
    for score in run.scores:
        span.set_attribute(SCORE_PREFIX + score.name, float(score.value))
    for check in run.checks:
        span.set_attribute(CHECK_PREFIX + check.name, check.passed)
    for reason in run.reasons():
        span.add_event(FAILURE_EVENT, {REASON_ATTRIBUTE: scrub.text(reason)})
    if run.error is not None:
        span.set_status(SpanStatus(StatusCode.ERROR, scrub.text(run.error.summary())))


# --- invoking agents ------------------------------------------------------------------------


async def _invoke(agent: Any, payload: Any, config: RunnableConfig) -> Any:
    """``ainvoke`` when the agent has a coroutine one, else ``invoke``/call on a worker thread."""
    ainvoke = getattr(agent, "ainvoke", None)
    if ainvoke is not None and inspect.iscoroutinefunction(ainvoke):
        return await ainvoke(payload, config=config)
    invoke = getattr(agent, "invoke", None)
    if callable(invoke):
        return await _in_thread(invoke, payload, config=config)
    if callable(agent):
        if _accepts_config(agent):
            return await _in_thread(agent, payload, config=config)
        return await _in_thread(agent, payload)
    raise TypeError(
        f"the agent factory returned {type(agent).__name__}, which has no invoke/ainvoke and "
        "is not callable; return a Runnable or a compiled LangGraph graph"
    )


def _accepts_config(func: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return "config" in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())


async def _in_thread(func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run ``func`` on a fresh daemon thread: a call that never returns cannot block exit."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(setter: Callable[[Any], None], value: Any) -> None:
        if not future.done():
            setter(value)

    def work() -> None:
        try:
            value = context.run(func, *args, **kwargs)
        except BaseException as exc:
            _post(loop, settle, future.set_exception, exc)
        else:
            _post(loop, settle, future.set_result, value)

    threading.Thread(target=work, name="harness-agent", daemon=True).start()
    return await future


def _post(loop: asyncio.AbstractEventLoop, *callback: Any) -> None:
    # the loop may have closed while a hung call was still running: then nobody waits for it
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(*callback)


def final_output(result: Any) -> Any:
    """The agent's final answer: the last message's text for ``{"messages": [...]}`` states."""
    if isinstance(result, Mapping):
        messages = result.get("messages")
        if isinstance(messages, Sequence) and messages and not isinstance(messages, str):
            return _content(messages[-1])
        if "output" in result:
            return result["output"]
        return result
    if hasattr(result, "content"):
        return _content(result)
    return result


def _content(message: Any) -> Any:
    content = (
        message.get("content")
        if isinstance(message, Mapping)
        else getattr(message, "content", message)
    )
    if isinstance(content, list):  # content blocks: keep the text parts
        texts = [
            block if isinstance(block, str) else block.get("text", "")
            for block in content
            if isinstance(block, str) or (isinstance(block, Mapping) and "text" in block)
        ]
        return "".join(texts)
    return content


# --- synchronous entry point ----------------------------------------------------------------


def run_scenarios(scenarios: Sequence[Scenario], options: RunOptions | None = None) -> SuiteResult:
    """Run on a private event loop; Ctrl-C cancels the run and returns the partial result.

    The loop's default executor (where LangChain runs sync tools) is sized to the concurrency
    and shut down without waiting, so a tool that hangs past its timeout cannot hang the exit.
    """
    runner = Runner(options)
    loop = asyncio.new_event_loop()
    executor = ThreadPoolExecutor(
        max_workers=runner.options.concurrency + 4, thread_name_prefix="harness-tool"
    )
    loop.set_default_executor(executor)
    task = loop.create_task(runner.run(scenarios))
    previous = _install_sigint(loop, task)
    try:
        return loop.run_until_complete(task)
    finally:
        _restore_sigint(previous)
        executor.shutdown(wait=False, cancel_futures=True)
        loop.close()


def _install_sigint(loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> Any:
    """First Ctrl-C cancels the run (partial report); a second one interrupts for real."""
    if threading.current_thread() is not threading.main_thread():
        return None
    hits = 0

    def on_sigint(signum: int, frame: Any) -> None:
        nonlocal hits
        hits += 1
        if hits > 1:
            raise KeyboardInterrupt
        loop.call_soon_threadsafe(task.cancel)

    return signal.signal(signal.SIGINT, on_sigint)


def _restore_sigint(previous: Any) -> None:
    if previous is not None:
        signal.signal(signal.SIGINT, previous)


def with_overrides(scenario: Scenario, **changes: Any) -> Scenario:
    """A copy of a scenario with some fields replaced (tests and tools use it)."""
    return replace(scenario, **changes)
