"""Process-pool sharding for ``harness run -n N``.

See docs/architecture.md, "Threading and concurrency contracts" (Processes, Agent reuse).

The selected scenarios are cut into ``N`` contiguous shards of nearly equal size (a suite file's
scenarios mostly stay together, in selection order). Each shard runs in one worker of a standard
:class:`concurrent.futures.ProcessPoolExecutor` with :func:`~harness.runner.run_scenarios` and the
same :class:`~harness.runner.RunOptions`, except that ``--concurrency`` is the total and is split
between the workers. Workers are forked: they inherit the compiled, selected scenarios (agents
imported, models built, cassettes applied), so nothing but results crosses a process boundary.

Each worker tells the parent, on one queue, when a scenario starts and when its result is ready
(each result crosses once). The parent keeps the results by position, so the reports and the
exit code are those one process would produce. ``-x`` is shared: after the first failure in any
worker, no worker starts another scenario (a flag in shared memory), as in one process.

A worker that dies (``os._exit`` in a tool, a crash in native code, the out-of-memory killer)
breaks the pool, and the executor stops the other workers. The results already sent are kept.
Every scenario that was still running somewhere then runs again alone, in a new process of its
own: the one that kills its process is told apart from those that ran beside it, and becomes an
error result naming the exit code or signal. The scenarios not started yet run in a new pool.
Where ``fork`` is not available, or with one worker, everything runs in this process.
"""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import os
import queue
import signal
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from typing import Any

from harness.result import ErrorInfo, RunResult, ScenarioResult, SuiteResult
from harness.runner import STOP_SIGNALS, RunOptions, run_scenarios
from harness.scenarios import Scenario
from harness.scoring import verdict

__all__ = ["plan_shards", "run_scenarios_in_workers", "shard_concurrency"]

CRASH_ERROR = "WorkerCrashed"
"""``ErrorInfo.type`` of a scenario whose process died under it, twice (the second time alone)."""


def plan_shards(count: int, workers: int) -> list[range]:
    """``count`` scenarios as ``workers`` contiguous, nearly equal ranges (none empty)."""
    workers = max(1, min(workers, count))
    return [range(i * count // workers, (i + 1) * count // workers) for i in range(workers)]


def shard_concurrency(concurrency: int, workers: int) -> list[int]:
    """Split a total ``concurrency`` between ``workers`` (the first ones take the remainder)."""
    base, extra = divmod(concurrency, workers)
    return [base + (1 if index < extra else 0) for index in range(workers)]


@dataclass(frozen=True, slots=True)
class _Setup:
    """What every shard runs with; a forked worker inherits it (nothing is pickled)."""

    scenarios: Sequence[Scenario]
    options: RunOptions
    messages: Any
    """The queue of ``("start", position)`` and ``("done", position, ScenarioResult)``."""
    halted: Any
    """A shared ``c_bool``: some scenario failed under ``fail_fast``; start no other."""


_SETUP: _Setup | None = None


def _install(setup: _Setup) -> None:
    """Pool initializer: remember the shared setup; leave the terminal's process group."""
    global _SETUP
    _SETUP = setup
    _own_process_group()
    gc.freeze()  # inherited pages stay shared: collections never walk (and copy) them


def _own_process_group() -> None:
    # The parent forwards SIGINT/SIGTERM to the workers itself (_forward_stops). A Ctrl-C
    # reaches the whole foreground group, so a worker still in it would get two signals, and a
    # second one forces the run to stop at once instead of ending with a partial result.
    os.setpgrp()


@dataclass(frozen=True, slots=True)
class _ShardSummary:
    """What a shard's SuiteResult says besides its results (those went on the queue)."""

    finished: int
    interrupted: bool
    warnings: tuple[str, ...]


def _run_shard(positions: tuple[int, ...], concurrency: int) -> _ShardSummary:
    """Run the scenarios at ``positions`` in this worker, telling the parent as they go."""
    assert _SETUP is not None, "the pool initializer did not run"
    setup = _SETUP
    put, halted = setup.messages.put, setup.halted
    fail_fast = setup.options.fail_fast

    def started(k: int) -> None:
        put(("start", positions[k]))

    def finished(k: int, result: ScenarioResult) -> None:
        if fail_fast and result.status in ("failed", "error"):
            halted.value = True
        put(("done", positions[k], result))

    options = replace(
        setup.options,
        concurrency=concurrency,
        progress=None,
        on_signal=None,
        on_start=started,
        on_finish=finished,
        halted=lambda: bool(halted.value),
    )
    output = run_scenarios([setup.scenarios[p] for p in positions], options)
    return _ShardSummary(len(output.scenarios), output.interrupted, output.warnings)


def run_scenarios_in_workers(
    scenarios: Sequence[Scenario], options: RunOptions, *, workers: int
) -> SuiteResult:
    """:func:`~harness.runner.run_scenarios` over ``workers`` processes, same result.

    ``options.progress`` (and ``on_start``/``on_finish``, with positions in ``scenarios``) see
    every result as it arrives; the returned SuiteResult lists them in the order of
    ``scenarios``. Span export (``tracer_provider``) is not supported here: its exporter
    threads do not survive a fork (the CLI refuses ``-n`` with export).
    """
    if options.tracer_provider is not None:
        raise ValueError("run_scenarios_in_workers cannot export spans (tracer_provider)")
    workers = min(workers, options.concurrency, len(scenarios))
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return run_scenarios(scenarios, options)
    started_at, start = time.time(), time.perf_counter()
    run = _Run(scenarios, options, workers)
    previous = _forward_stops(run.stopped, options)
    try:
        run.everything()
    finally:
        _restore(previous)
    ordered = tuple(run.results[position] for position in sorted(run.results))
    return SuiteResult(
        scenarios=ordered,
        started_at=started_at,
        duration=time.perf_counter() - start,
        interrupted=bool(run.stopped) or run.interrupted,
        not_run=len(scenarios) - len(ordered),
        warnings=tuple(run.warnings),
    )


_POLL_SECONDS = 0.05
_DRAIN_SECONDS = 5.0
_QUIET_SECONDS = 0.2
"""After a pool broke and its workers are gone: no message for this long means none is left."""
_ALONE_MARGIN_SECONDS = 10.0


@dataclass(slots=True)
class _Run:
    """One ``-n`` run: rounds of pools until every scenario has a result or cannot have one."""

    scenarios: Sequence[Scenario]
    options: RunOptions
    workers: int
    context: Any = field(default_factory=lambda: multiprocessing.get_context("fork"))
    results: dict[int, ScenarioResult] = field(default_factory=dict)
    stopped: list[int] = field(default_factory=list)
    """Signals the parent received (filled by the handler of :func:`_forward_stops`)."""
    interrupted: bool = False
    warnings: list[str] = field(default_factory=list)
    halted: Any = None

    def __post_init__(self) -> None:
        # shared memory made before any fork, so every worker and the parent see one flag
        self.halted = self.context.RawValue(ctypes.c_bool, False)

    def everything(self) -> None:
        """Run every scenario; after a worker died, run what it cut short as the module says."""
        pending = list(range(len(self.scenarios)))
        while pending and not self._ended():
            crash = self._round(pending)
            if crash is None:
                return
            running, unstarted = crash
            if not running and len(unstarted) == len(pending):
                # a worker died before it started anything: a new pool could do the same forever
                self._alone(unstarted)
                return
            self._alone(running)
            pending = unstarted

    def _ended(self) -> bool:
        return bool(self.stopped) or bool(self.halted.value)

    def _round(self, pending: list[int]) -> tuple[list[int], list[int]] | None:
        """One pool over ``pending``; None if it finished, else (running, unstarted) when a
        worker died."""
        shards = plan_shards(len(pending), self.workers)
        shares = shard_concurrency(self.options.concurrency, len(shards))
        messages = self.context.Queue()
        inbox = _Inbox(messages)
        setup = _Setup(self.scenarios, self.options, messages, self.halted)
        started: set[int] = set()
        before = len(self.results)
        try:
            pool = ProcessPoolExecutor(
                len(shards), self.context, initializer=_install, initargs=(setup,)
            )
            try:
                futures = [
                    pool.submit(_run_shard, tuple(pending[i] for i in shard), share)
                    for shard, share in zip(shards, shares, strict=True)
                ]
                while not all(future.done() for future in futures):
                    self._take(inbox.get(_POLL_SECONDS), started)
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
            errors = [future.exception() for future in futures]
            if not any(isinstance(error, BrokenProcessPool) for error in errors):
                for error in errors:
                    if error is not None:
                        raise error
                summaries = [future.result() for future in futures]
                expected = before + sum(s.finished for s in summaries)
                self._drain_until(inbox, started, expected)
                for summary in summaries:
                    self.interrupted = self.interrupted or summary.interrupted
                    self.warnings.extend(summary.warnings)
                return None
            # every worker is gone: what they sent before is in the pipe, or never will be
            self._drain_quiet(inbox, started)
        finally:
            inbox.close()
        running = sorted(p for p in started if p not in self.results)
        unstarted = [p for p in pending if p not in started and p not in self.results]
        return running, unstarted

    def _take(self, message: Any, started: set[int]) -> None:
        if message is None:
            return
        if message[0] == "start":
            started.add(message[1])
            if self.options.on_start is not None:
                self.options.on_start(message[1])
            return
        self._record(message[1], message[2])

    def _record(self, position: int, result: ScenarioResult) -> None:
        self.results[position] = result
        options = self.options
        if options.fail_fast and result.status in ("failed", "error"):
            self.halted.value = True
        if options.on_finish is not None:
            options.on_finish(position, result)
        if options.progress is not None:
            options.progress(result)

    def _drain_until(self, inbox: _Inbox, started: set[int], expected: int) -> None:
        """Messages still on the way after a finished round, until ``expected`` results are in
        (a shard's future can complete before its queue is flushed); at most
        ``_DRAIN_SECONDS``."""
        deadline = time.monotonic() + _DRAIN_SECONDS
        while len(self.results) < expected:
            left = deadline - time.monotonic()
            if left <= 0:
                return  # a worker died with results unsent
            self._take(inbox.get(min(left, _POLL_SECONDS)), started)

    def _drain_quiet(self, inbox: _Inbox, started: set[int]) -> None:
        """A broken pool's last messages: every worker is gone, so a quiet spell means none is
        left; at most ``_DRAIN_SECONDS``."""
        deadline = time.monotonic() + _DRAIN_SECONDS
        while (left := deadline - time.monotonic()) > 0:
            message = inbox.get(min(left, _QUIET_SECONDS))
            if message is None:
                return
            self._take(message, started)

    def _alone(self, positions: list[int]) -> None:
        """Each scenario in a new process of its own, ``workers`` at a time."""
        for at in range(0, len(positions), self.workers):
            if self.stopped:
                return
            batch = [_Alone.start(self, p) for p in positions[at : at + self.workers]]
            for job in batch:
                result = job.settle(stopped=bool(self.stopped))
                if result is not None:
                    self._record(job.position, result)


class _Inbox:
    """The workers' messages, moved off the multiprocessing queue by a daemon thread.

    A worker killed halfway through a ``put`` leaves a message that can never be read to its
    end; a daemon thread stuck on it costs nothing, where the main thread would hang.
    """

    def __init__(self, source: Any) -> None:
        self._source = source
        # Not a SimpleQueue: on CPython 3.11 its get(timeout) waits forever once a signal
        # handler (the parent's _forward_stops) runs past the deadline.
        self._items: queue.Queue[Any] = queue.Queue()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._move, name="harness-inbox", daemon=True)
        self._thread.start()

    def _move(self) -> None:
        get, put = self._source.get, self._items.put
        while not self._closed.is_set():
            try:
                put(get(timeout=_POLL_SECONDS))
            except queue.Empty:
                continue
            except (EOFError, OSError, ValueError):  # the queue was closed under this thread
                return

    def get(self, timeout: float) -> Any:
        """The next message, or None after ``timeout`` seconds without one."""
        try:
            return self._items.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self) -> None:
        """Stop moving messages; the queue is closed once the thread has let go of it."""
        self._closed.set()
        self._thread.join(timeout=2 * _POLL_SECONDS + 0.5)
        if not self._thread.is_alive():
            self._source.close()


@dataclass(slots=True)
class _Alone:
    """One scenario in a forked process of its own; it sends its result back on a pipe."""

    run: _Run
    position: int
    process: Any
    receiver: Any
    began: float
    limit: float

    @classmethod
    def start(cls, run: _Run, position: int) -> _Alone:
        """Fork the process and start the scenario at ``position`` in it."""
        receiver, sender = run.context.Pipe(duplex=False)
        scenario = run.scenarios[position]
        process = run.context.Process(
            target=_run_alone,
            args=(scenario, run.options, sender),
            name=f"harness-alone-{position}",
            daemon=True,
        )
        process.start()
        sender.close()  # the child holds the only writer: its death reads as the end of the pipe
        timeout = run.options.timeout or scenario.timeout
        repeat = run.options.repeat or scenario.repeat
        limit = (repeat + 2) * timeout + _ALONE_MARGIN_SECONDS  # factory, runs, closing
        return cls(run, position, process, receiver, time.monotonic(), limit)

    def settle(self, *, stopped: bool) -> ScenarioResult | None:
        """The scenario's result, the error of its process's death, or None if it was stopped."""
        result: ScenarioResult | None = None
        left = self.began + self.limit - time.monotonic()
        timed_out = False
        try:
            if self.receiver.poll(max(left, 0.0)):
                result = self.receiver.recv()
            else:
                timed_out = True
        except (EOFError, OSError):
            pass  # it died before sending anything
        finally:
            self.receiver.close()
        self.process.join(timeout=_DRAIN_SECONDS)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        if result is not None or (stopped and not timed_out):
            return result
        scenario = self.run.scenarios[self.position]
        duration = time.monotonic() - self.began
        if timed_out:
            message = (
                f"after its worker process died, this scenario ran again alone and did not "
                f"finish within {self.limit:.0f}s (its timeouts, its runs and a margin), so its "
                "process was killed"
            )
        else:
            message = _death_message(self.process.exitcode)
        repeat = self.run.options.repeat or scenario.repeat
        error = ErrorInfo(CRASH_ERROR, message, phase="run", brief=True)
        return verdict(scenario, (RunResult(0, False, None, error=error),), repeat, duration)


def _run_alone(scenario: Scenario, options: RunOptions, sender: Any) -> None:
    """In the forked process: run one scenario and send its result (nothing if stopped)."""
    _own_process_group()
    alone = replace(
        options,
        concurrency=1,
        progress=None,
        on_signal=None,
        on_start=None,
        on_finish=None,
        halted=None,
    )
    output = run_scenarios([scenario], alone)
    if output.scenarios:
        sender.send(output.scenarios[0])
    sender.close()


def _death_message(exitcode: int | None) -> str:
    """Why a scenario's process ended without a result, and what usually does that."""
    if exitcode is not None and exitcode < 0:
        try:
            how = f"was killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            how = f"was killed by signal {-exitcode}"
    else:
        how = f"exited with code {exitcode}"
    hint = "the out-of-memory killer sends SIGKILL" if exitcode == -signal.SIGKILL else None
    causes = "os._exit() in the agent or a tool, a crash in native code, or a signal"
    return (
        f"its worker process died while it ran; run again alone in a new process, that process "
        f"{how} before the scenario finished ({causes}"
        + (f"; {hint}" if hint else "")
        + "). The other scenarios ran on."
    )


def _forward_stops(stopped: list[int], options: RunOptions) -> dict[int, Any]:
    """SIGINT/SIGTERM of the parent: tell the caller once, stop every worker with SIGTERM."""
    if threading.current_thread() is not threading.main_thread():
        return {}

    def on_signal(signum: int, frame: Any) -> None:
        if not stopped and options.on_signal is not None:
            options.on_signal(signum)
        stopped.append(signum)
        again = len(stopped) > 1
        for child in multiprocessing.active_children():
            if child.pid is not None:
                # each worker's run_scenarios turns it into a partial result, as for one process
                os.kill(child.pid, signal.SIGKILL if again else signal.SIGTERM)
        if again:  # a second signal stops at once, without reports, as in one process
            raise KeyboardInterrupt

    return {signum: signal.signal(signum, on_signal) for signum in STOP_SIGNALS}


def _restore(previous: dict[int, Any]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)
