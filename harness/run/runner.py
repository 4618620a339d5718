"""Runs scenarios concurrently against their agents, records the tool calls, scores them.

One asyncio loop, a semaphore for ``concurrency``. Each scenario: build the model's agent with
the factory, then ``repeat`` runs, each with a fresh ToolCallRecorder and its own ``timeout``.
Agents with ``ainvoke`` (and ``async def`` application functions) are awaited; anything else
runs on a daemon worker thread (a hung sync agent then cannot keep the process alive). A run
records whatever LangChain runs start in its context, config or not (an application function
that invokes the agent itself, :func:`harness.run.invocation.capturing`), and its deadline leaves
out the time its model calls waited for a ``max_concurrency`` slot (up to one more timeout,
:mod:`harness.models.limits`). Nothing a scenario does stops the others: whatever
the factory or the run raises (``BaseException`` included), a timeout, a call that ignores its
cancellation (abandoned) or one that blocks the loop (interrupted, see :mod:`harness.run.isolation`)
becomes that scenario's ``error`` result. Only a SIGINT or SIGTERM of the process stops the run
(a partial result); a second one interrupts at once.

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
import signal
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks import BaseCallbackHandler

from harness.redaction import Redactor, Scrubber
from harness.run.invocation import (
    NOTHING_SEEN,
    TurnOutcome,
    capturing,
    converse,
    record_sample,
    run_config,
    score_run,
)
from harness.run.invocation import invoke_agent as _invoke
from harness.run.isolation import FACTORY_HOLD as FACTORY_HOLD  # re-exported: tests read it here
from harness.run.isolation import (
    DaemonExecutor,
    LoopBlocked,
    LoopWatch,
    Outcome,
    StopState,
    WaitLedger,
    contained,
    counting_waits,
)
from harness.run.isolation import build_in_thread as _build_in_thread
from harness.run.output_attribute import OUTPUT_ATTRIBUTE, encode_output
from harness.run.results import ErrorInfo, RunResult, ScenarioResult, SuiteResult
from harness.scenarios import Scenario
from harness.scenarios.agents import AgentSession
from harness.scoring import error_info, verdict
from tracing.langchain.final_answer import final_answer
from tracing.langchain.recorder import ToolCallRecorder

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
RATE_PREFIX = "harness.rate."
"""A repeated scenario's last run's root span: ``harness.rate.passes``, ``.runs``, ``.k``,
``.pass_at_1``, ``.pass_at_k``, ``.pass_hat_k`` over all its runs (docs/metrics.md)."""
AGENT_ATTRIBUTE = "harness.agent.spec"
"""The scenario's ``agent:`` as written, on the root span: ``harness draft`` of a trace file."""

ProgressCallback = Callable[[ScenarioResult], None]

GRACE_SECONDS = 1.0
"""How long a cancelled call may take to stop before it is abandoned (and reported so)."""

STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM") if hasattr(signal, name)
)
"""Signals that stop a run like Ctrl-C: CI sends SIGTERM on cancel or timeout."""


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
    on_signal: Callable[[int], None] | None = None
    """Told the signal (SIGINT, SIGTERM) that stopped the run, for the exit code (128 + n)."""
    on_start: Callable[[int], None] | None = None
    """Told the position (in the list run) of each scenario as it starts, past the concurrency
    gate: ``-n`` learns which scenarios a worker was running if it dies."""
    on_finish: Callable[[int, ScenarioResult], None] | None = None
    """Told each result with its position, before ``progress``: how ``-n`` workers send them."""
    k: int | None = None
    """``--k``: the K of pass@K and pass^K on a repeated scenario's spans (None: its runs)."""
    halted: Callable[[], bool] | None = None
    """Asked before each scenario starts; True skips it, as ``fail_fast`` does after a failure
    (``-n`` shares one ``-x`` between its workers this way)."""


class Runner:
    """Runs a list of scenarios and returns a SuiteResult (partial if cancelled)."""

    def __init__(self, options: RunOptions | None = None) -> None:
        """Keep the options; nothing starts until :meth:`run`."""
        self.options = options or RunOptions()
        if self.options.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {self.options.concurrency}")
        self._stop = False
        self.stop_state = StopState()
        """Set by the signal handler of :func:`run_scenarios` (not by anything an agent does)."""
        self.watch: LoopWatch | None = None
        """The loop's watchdog, when :func:`run_scenarios` runs one."""
        self.abandoned: set[asyncio.Future[Any]] = set()
        """Calls that ignored their cancellation past the grace period, still running."""
        self._shared: dict[tuple[Any, str], asyncio.Future[tuple[Outcome, ErrorInfo | None]]] = {}
        """``agent_reuse``: the opening of each (factory, model config)'s one agent."""
        self._shared_sessions: list[tuple[AgentSession, float, str]] = []
        """Those agents' sessions, with a timeout and a name for closing them after the run."""
        self._unseen: set[str] = set()
        """Scenarios that passed a run in which no LangChain run was seen (a warning)."""

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
            # a scenario task cancels its agent call and returns at once; bounded all the same
            done, pending = await asyncio.wait(tasks, timeout=GRACE_SECONDS)
            for task in done:
                if not task.cancelled():
                    task.exception()  # retrieved: nothing to log at garbage collection
            self._abandon(pending)
            # the cancellation is handled here (the partial result is the answer), so clear it
            uncancel = getattr(asyncio.current_task(), "uncancel", None)  # Python >= 3.11
            if uncancel is not None:
                uncancel()
        warnings = await self._close_shared() + self._unseen_warnings()
        ordered = tuple(results[index] for index in sorted(results))
        return SuiteResult(
            scenarios=ordered,
            started_at=started_at,
            duration=time.perf_counter() - start,
            interrupted=interrupted,
            not_run=len(scenarios) - len(ordered),
            warnings=warnings,
        )

    async def _guarded(
        self,
        index: int,
        scenario: Scenario,
        semaphore: asyncio.Semaphore,
        results: dict[int, ScenarioResult],
    ) -> None:
        options = self.options
        async with semaphore:
            if self._stop or (options.halted is not None and options.halted()):
                return  # --fail-fast: scheduled before the failure, never started
            if options.on_start is not None:
                options.on_start(index)
            result = await self.run_scenario(scenario)
        results[index] = result
        if options.fail_fast and result.status in ("failed", "error"):
            self._stop = True
        if options.on_finish is not None:
            options.on_finish(index, result)
        if options.progress is not None:
            options.progress(result)

    async def run_scenario(self, scenario: Scenario) -> ScenarioResult:
        """All runs of one scenario, gated by its ``pass_rate``; never raises (but cancels)."""
        start = time.perf_counter()
        repeat = self.options.repeat or scenario.repeat
        timeout = self.options.timeout or scenario.timeout
        runs: list[RunResult] = []
        what = f"agent factory {scenario.agent.spec}"
        # async factories are awaited and a returned context manager is closed after the runs
        session = None
        if scenario.agent_reuse:
            outcome, error = await self._shared_agent(scenario, timeout, what)
        else:
            session = AgentSession(scenario.agent.factory, scenario.model, _build_in_thread)
            outcome, error = await self.bounded(session.open, timeout, what)
        if error is not None:
            if error.phase == "run":
                error = replace(error, phase="factory")
            runs.append(
                RunResult(0, False, None, error=error, duration=time.perf_counter() - start)
            )
        else:
            agent = outcome.value
            for index in range(repeat):
                passes = sum(1 for run in runs if run.passed)
                runs.append(await self._one_run(scenario, agent, (index, repeat, passes), timeout))
        # a plain agent's session has already ended: no close call (one task and wait fewer)
        if session is not None and session.needs_closing:
            _, close_error = await self.bounded(session.close, timeout, f"closing {what}")
            if close_error is not None:
                closing = replace(close_error, phase="factory")
                runs.append(RunResult(len(runs), False, None, error=closing))
        return verdict(scenario, tuple(runs), repeat, time.perf_counter() - start)

    async def _shared_agent(
        self, scenario: Scenario, timeout: float, what: str
    ) -> tuple[Outcome, ErrorInfo | None]:
        """The one agent of the scenario's (factory, model config), built by the first scenario
        that needs it; the others await that build (its error is theirs too)."""
        key = (scenario.agent.factory, scenario.model_config)
        opening = self._shared.get(key)
        if opening is None:
            session = AgentSession(scenario.agent.factory, scenario.model, _build_in_thread)
            self._shared_sessions.append((session, timeout, what))
            opening = asyncio.ensure_future(self.bounded(session.open, timeout, what))
            self._shared[key] = opening
        # shielded: a scenario cancelled while waiting must not cancel the others' agent
        return await asyncio.shield(opening)

    def _unseen_warnings(self) -> tuple[str, ...]:
        return tuple(
            f"{scenario}: passed, but no LangChain run was seen in a run of it, so no call "
            f"could be recorded ({NOTHING_SEEN.partition(': ')[2]})"
            for scenario in sorted(self._unseen)
        )

    async def _close_shared(self) -> tuple[str, ...]:
        """Close the reused agents after every scenario is done; what fails is a warning."""
        warnings: list[str] = []
        for session, timeout, what in self._shared_sessions:
            _, error = await self.bounded(session.close, timeout, f"closing {what}")
            if error is not None:
                warnings.append(f"closing {what}: {error.type}: {error.message}")
        self._shared_sessions.clear()
        self._shared.clear()
        return tuple(warnings)

    async def _one_run(
        self, scenario: Scenario, agent: Any, place: tuple[int, int, int], timeout: float
    ) -> RunResult:
        """Run ``place`` = (index, repeat, passes of the runs before) of the scenario."""
        index, repeat, passes = place
        provider = self.options.tracer_provider
        if provider is None:
            return await self._record_and_score(scenario, agent, index, timeout, None, None)
        from tracing.otel.emitter import SpanEmitter

        emitter = SpanEmitter(provider, capture_content=self.options.capture_content)
        attributes: dict[str, str | int] = {
            SUITE_ATTRIBUTE: scenario.suite,
            RUN_ATTRIBUTE: index,
            AGENT_ATTRIBUTE: scenario.agent.spec,
        }
        with emitter.start_scenario(scenario.name, attributes) as span:
            context = span.get_span_context()
            trace_id = format(context.trace_id, "032x") if context.is_valid else None
            run = await self._record_and_score(scenario, agent, index, timeout, emitter, trace_id)
            annotate_span(span, run, self.options.redactor)
            if repeat > 1 and index == repeat - 1:  # the last run knows the scenario's rate
                annotate_rate(span, passes + run.passed, repeat, self.options.k)
            if self.options.capture_content and run.sample is not None:
                # the answer this run scored, for eval-traces (harness/run/output_attribute.py)
                span.set_attribute(
                    OUTPUT_ATTRIBUTE, encode_output(run.output, self.options.redactor)
                )
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
        extra: list[BaseCallbackHandler] = []
        if emitter is not None:
            from harness.span_export import secret_watchers

            # secrets noted before the emitter sees the event: spans are scrubbed by value
            extra += [*secret_watchers(self.options.tracer_provider), emitter]
        config = run_config(scenario, agent, [recorder, *extra])
        start = time.perf_counter()
        turns: list[TurnOutcome] = []  # filled turn by turn: a failed run keeps what finished
        waits = WaitLedger()

        async def run_turns() -> None:
            # inside the run's own task: the capture hooks and the ledger are this run's only
            with capturing(recorder, extra), counting_waits(waits):
                await converse(scenario, agent, config, recorder, _invoke, turns)

        _, error = await self.bounded(run_turns, timeout, "the run", waits)
        duration = time.perf_counter() - start
        # what was captured before a crash or timeout is kept: it is often the explanation
        sample = record_sample(
            scenario,
            recorder,
            turns,
            index=index,
            failed=error is not None,
            trace_id=trace_id,
            duration=duration,
        )
        if error is not None:
            paused = turns[-1].paused if turns else ()
            return RunResult(
                index,
                False,
                sample,
                error=error,
                duration=duration,
                trace_id=trace_id,
                paused=paused,
            )
        run = score_run(
            scenario, sample, recorder, turns, index=index, duration=duration, trace_id=trace_id
        )
        if run.passed and not recorder.calls_by_run():
            self._unseen.add(scenario.id)
        return run

    async def bounded(
        self,
        call: Callable[[], Awaitable[Any]],
        timeout: float,
        what: str,
        waits: WaitLedger | None = None,
    ) -> tuple[Outcome, ErrorInfo | None]:
        """Run one agent call in its own task within ``timeout``, whatever the call does.

        The call's own exceptions, ``BaseException`` included, are its error; past the timeout
        it is cancelled, and abandoned if it has not stopped ``GRACE_SECONDS`` later. Only the
        cancellation of the task awaiting here (a stop of the run) propagates. The time the
        call's model calls waited for a ``max_concurrency`` slot (``waits``) is not counted,
        up to one more ``timeout`` (harness.models.limits).
        """
        owner = object()  # this call; every task it starts is known by it (LoopWatch)
        task = asyncio.ensure_future(contained(call(), self.stop_state, owner))
        watch = self.watch
        start = time.monotonic()
        stalled_before = watch.stalled if watch is not None else 0.0
        if watch is not None:
            watch.own(task, owner)
        try:
            done = await self._wait_credited(task, start, timeout, owner, stalled_before, waits)
        except asyncio.CancelledError:
            task.cancel()
            self._abandon({task})
            raise
        finally:
            if waits is not None:
                waits.ended.set()  # a model call still waiting for a slot gives up
        waited = _waited(waits, timeout)
        blocked = 0.0
        if watch is not None:
            blocked = watch.blocked_by(owner)
            watch.release(owner)
        if not done:
            return Outcome(), await self._cancel_late(task, timeout, what, blocked, waited)
        outcome = task.result()
        elapsed = time.monotonic() - start
        stalled = watch.stalled - stalled_before if watch is not None else 0.0
        # the loop was blocked, so no timer could fire: finishing late is a timeout all the
        # same; a stall some other call caused does not count against this one
        late = elapsed - (0.0 if blocked else stalled) - waited > timeout + 0.05
        error = _outcome_error(outcome, timeout, what, late)
        if error is None and late:
            error = _timeout(what, timeout, _late_note(blocked, waited))
        return outcome, error

    async def _wait_credited(
        self,
        task: asyncio.Future[Outcome],
        start: float,
        timeout: float,
        owner: object,
        stalled_before: float,
        waits: WaitLedger | None,
    ) -> bool:
        """Wait for ``task`` until its deadline, moved by the time that is not its own; done?"""
        watch = self.watch
        stall_credit = 0.0
        deadline = start + timeout
        while True:
            token = watch.expect(deadline) if watch is not None else None
            try:
                if await _wait(task, deadline):
                    return True
            finally:
                if watch is not None and token is not None:
                    watch.forget(token)
            if watch is not None and not stall_credit and not watch.blocked_by(owner):
                # another call blocked the loop while this one waited: give that time back once
                credit = watch.stalled - stalled_before
                stall_credit = credit if credit > 0.1 else -1.0
            moved = start + timeout + max(stall_credit, 0.0) + _waited(waits, timeout)
            if moved <= deadline:
                return False
            deadline = moved

    async def _cancel_late(
        self,
        task: asyncio.Future[Outcome],
        timeout: float,
        what: str,
        blocked: float,
        waited: float = 0.0,
    ) -> ErrorInfo:
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=GRACE_SECONDS)
        if done:
            outcome = task.result()
            if isinstance(outcome.error, LoopBlocked):
                blocked = max(blocked, outcome.error.seconds)
            return _timeout(what, timeout, _late_note(blocked, waited))
        self._abandon({task})
        return _timeout(
            what,
            timeout,
            f"; it ignored its cancellation for {GRACE_SECONDS:g}s and was abandoned"
            + _late_note(0.0, waited),
        )

    def _abandon(self, tasks: Iterable[asyncio.Future[Any]]) -> None:
        """Tasks that may not stop: kept referenced until they do, not logged at loop close."""
        for task in tasks:
            if not task.done():
                task._log_destroy_pending = False  # type: ignore[attr-defined]
                self.abandoned.add(task)
                task.add_done_callback(self.abandoned.discard)

    def stop(self, signum: int) -> None:
        """A SIGINT/SIGTERM of the process: remember it (the run is being cancelled)."""
        if self.stop_state.signal is None:
            self.stop_state.signal = signum
            if self.options.on_signal is not None:
                self.options.on_signal(signum)


async def _wait(task: asyncio.Future[Any], deadline: float) -> bool:
    """Wait for ``task`` until ``deadline`` (monotonic); did it finish?"""
    done, _ = await asyncio.wait({task}, timeout=max(0.0, deadline - time.monotonic()))
    return bool(done)


def _timeout(what: str, timeout: float, note: str = "") -> ErrorInfo:
    error = error_info(asyncio.TimeoutError(), "timeout", timeout, what=what)
    return replace(error, message=error.message + note) if note else error


def _waited(waits: WaitLedger | None, timeout: float) -> float:
    """The time a run's model calls waited for slots, as far as it moves the deadline."""
    return min(waits.waited(), timeout) if waits is not None else 0.0


def _late_note(blocked: float, waited: float) -> str:
    """Why a late run was late, beyond its own work: a blocked loop, slots waited for."""
    note = _blocked_note(blocked) if blocked else ""
    if waited >= 0.05:
        note += (
            f"; {waited:.1f}s its model calls waited for a max_concurrency slot were not "
            "counted (at most one timeout more)"
        )
    return note


def _blocked_note(seconds: float) -> str:
    return (
        f"; it blocked the event loop for {seconds:.1f}s (a blocking call such as time.sleep "
        "inside async code stalls every other scenario)"
    )


def _outcome_error(outcome: Outcome, timeout: float, what: str, late: bool) -> ErrorInfo | None:
    """The error of a call that finished: what it raised, said as the scenario's error."""
    exc = outcome.error
    if exc is None:
        return None
    if isinstance(exc, LoopBlocked):
        return _timeout(what, timeout, _blocked_note(exc.seconds))
    if isinstance(exc, asyncio.TimeoutError) and late:
        return _timeout(what, timeout)
    if isinstance(exc, Exception):
        return error_info(exc, "run", timeout, what=what if what != "the run" else "")
    # KeyboardInterrupt, SystemExit(n), GeneratorExit, CancelledError, ...: they would stop a
    # program, and here they stop only this scenario's run
    return error_info(exc, "run", timeout, what=what)


def annotate_span(span: Span, run: RunResult, redactor: Redactor | None = None) -> None:
    """Put a run's verdict on its root span: passed, status, scores, checks, failure events."""
    from harness.span_export import record_verdict

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
    record_verdict(span, run, scrub)  # GenAI evaluation events; status ERROR unless passed


def annotate_rate(span: Span, passes: int, runs: int, k: int | None) -> None:
    """Put a repeated scenario's pass rate, pass@k and pass^k on a span (``RATE_PREFIX``)."""
    from harness.compare.stats import rate

    measured = rate(passes, runs, k)
    span.set_attribute(RATE_PREFIX + "passes", passes)
    span.set_attribute(RATE_PREFIX + "runs", runs)
    span.set_attribute(RATE_PREFIX + "k", measured.k)
    span.set_attribute(RATE_PREFIX + "pass_at_1", passes / runs)
    if measured.pass_at_k is not None and measured.pass_hat_k is not None:
        span.set_attribute(RATE_PREFIX + "pass_at_k", measured.pass_at_k)
        span.set_attribute(RATE_PREFIX + "pass_hat_k", measured.pass_hat_k)


def final_output(result: Any) -> Any:
    """The agent's final answer (``structured_response``, else the last message's text, ...).

    The one rule of :func:`tracing.langchain.final_answer.final_answer`, shared with the recorder
    and the root span's ``harness.output`` that ``harness eval-traces`` reads.
    """
    return final_answer(result)


# --- synchronous entry point ----------------------------------------------------------------


def run_scenarios(
    scenarios: Sequence[Scenario],
    options: RunOptions | None = None,
    *,
    loop: asyncio.AbstractEventLoop | None = None,
) -> SuiteResult:
    """Run on a private event loop; SIGINT/SIGTERM cancel the run and return the partial result.

    The loop's default executor (where LangChain runs sync tools) runs on daemon threads that
    nothing joins, so a tool that hangs past its timeout cannot hang the exit. A watchdog
    interrupts an async call that blocks the loop past its deadline. With ``loop`` the run
    uses that loop and leaves it open: the pytest plugin runs every item on one loop, because
    clients that cache connections across calls (langchain-openai does) fail with "Event
    loop is closed" once the loop they were made on is gone.
    """
    runner = Runner(options)
    owned = loop is None
    loop = asyncio.new_event_loop() if loop is None else loop
    executor = DaemonExecutor("harness-tool")
    loop.set_default_executor(executor)
    runner.watch = LoopWatch(loop)
    loop.set_task_factory(runner.watch.task_factory)
    task = loop.create_task(runner.run(scenarios))
    previous = _install_stop_signals(loop, task, runner)
    runner.watch.start()
    try:
        return _run_until_done(loop, task, runner.stop_state)
    finally:
        runner.watch.close()
        _restore_signals(previous)
        executor.shutdown(wait=False, cancel_futures=True)
        if owned:
            loop.close()
        else:
            loop.set_task_factory(None)  # the watch of this run is closed
        # collected, an abandoned coroutine would run its except/finally with no loop left
        # (and complain); it is kept until the process ends instead
        _ABANDONED.update(runner.abandoned)


_ABANDONED: set[asyncio.Future[Any]] = set()
"""Calls abandoned by finished runs (see :meth:`Runner.bounded`)."""


def _run_until_done(
    loop: asyncio.AbstractEventLoop, task: asyncio.Task[SuiteResult], stop: StopState
) -> SuiteResult:
    """Run the loop until ``task`` is done, riding out what an agent's own tasks raise.

    asyncio re-raises ``KeyboardInterrupt`` and ``SystemExit`` out of the loop from whatever
    task raised them, even a tool's task inside a LangGraph graph; that task has already failed
    with it (and the run awaiting it gets it as its error), so unless the process was really
    interrupted the loop simply carries on. A :class:`LoopBlocked` landing between callbacks
    is the same.
    """
    while True:
        try:
            return loop.run_until_complete(task)
        except (KeyboardInterrupt, SystemExit, LoopBlocked):
            if stop.forced or task.done():
                raise


def _install_stop_signals(
    loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any], runner: Runner
) -> dict[int, Any]:
    """First SIGINT/SIGTERM cancels the run (partial report); a second one interrupts for real."""
    if threading.current_thread() is not threading.main_thread():
        return {}

    def on_signal(signum: int, frame: Any) -> None:
        if runner.stop_state.signal is not None:
            runner.stop_state.forced = True
            raise KeyboardInterrupt
        runner.stop(signum)
        loop.call_soon_threadsafe(task.cancel)

    return {signum: signal.signal(signum, on_signal) for signum in STOP_SIGNALS}


def _restore_signals(previous: dict[int, Any]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)


def with_overrides(scenario: Scenario, **changes: Any) -> Scenario:
    """A copy of a scenario with some fields replaced (tests and tools use it)."""
    return replace(scenario, **changes)
