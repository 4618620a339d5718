"""``harness run -n N``: the selected scenarios run in shards on worker processes.

The selection is cut into ``N`` contiguous shards of nearly equal size (a suite file's
scenarios mostly stay together, in selection order). Each shard runs in one forked worker of a
:class:`~harness.parallel.local.LocalPool` with :func:`~harness.run.runner.run_scenarios` and the
same :class:`~harness.run.runner.RunOptions`, except that ``--concurrency`` is the total and is
split between the workers. The workers inherit the compiled, selected scenarios (agents
imported, models built), so nothing but results crosses a process boundary.

Each worker sends the parent a message when a scenario starts and its result when it is done
(each result crosses once). The parent keeps the results by position, so the reports and the
exit code are those one process would produce. ``-x`` is shared: after the first failure in
any worker, no worker starts another scenario (the session's halt flag).

A worker that dies (``os._exit`` in a tool, a crash in native code, the out-of-memory killer)
breaks the pool, which stops the other workers. The results already sent are kept. Every
scenario that had started and has no result then runs again alone, in a process of its own
(:class:`~harness.parallel.local.Alone`): the one that kills its process is told apart from
those that ran beside it, and becomes an error result naming the exit code or signal. The
scenarios not started yet run in a new pool. See docs/architecture.md, "A worker that dies".
"""

from __future__ import annotations

import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from harness.parallel.executor import Channel, Session, WorkerLost
from harness.parallel.local import Alone, LocalPool, stops_forwarded
from harness.parallel.shards import plan_shards, shard_concurrency
from harness.run.results import ErrorInfo, RunResult, ScenarioResult, SuiteResult
from harness.run.runner import RunOptions, run_scenarios
from harness.scenarios import Scenario
from harness.scoring import verdict

__all__ = ["CRASH_ERROR", "RunShard", "Shard", "run_scenarios_in_workers"]

CRASH_ERROR = "WorkerCrashed"
"""``ErrorInfo.type`` of a scenario whose process died under it, twice (the second time alone)."""


@dataclass(frozen=True, slots=True)
class Shard:
    """Positions in the selection, and how many of them may run at once."""

    positions: tuple[int, ...]
    concurrency: int


@dataclass(frozen=True, slots=True)
class ShardSummary:
    """What a shard's SuiteResult says besides its results (those went as messages)."""

    finished: int
    interrupted: bool
    warnings: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RunShard:
    """The ``run -n`` job: run a shard's scenarios, telling the parent as they start and end.

    Messages: ``("start", position)`` and ``("done", position, ScenarioResult)``.
    """

    scenarios: Sequence[Scenario]
    options: RunOptions

    def __call__(self, shard: Shard, channel: Channel) -> ShardSummary:
        """Run the scenarios at ``shard.positions`` in this worker."""
        positions, send = shard.positions, channel.send
        fail_fast = self.options.fail_fast

        def started(k: int) -> None:
            send(("start", positions[k]))

        def finished(k: int, result: ScenarioResult) -> None:
            if fail_fast and result.status in ("failed", "error"):
                channel.halt()
            send(("done", positions[k], result))

        options = replace(
            self.options,
            concurrency=shard.concurrency,
            progress=None,
            on_signal=None,
            on_start=started,
            on_finish=finished,
            halted=channel.halted,
        )
        output = run_scenarios([self.scenarios[p] for p in positions], options)
        return ShardSummary(len(output.scenarios), output.interrupted, output.warnings)


def run_scenarios_in_workers(
    scenarios: Sequence[Scenario], options: RunOptions, *, workers: int
) -> SuiteResult:
    """:func:`~harness.run.runner.run_scenarios` over ``workers`` processes, same result.

    ``options.progress`` (and ``on_start``/``on_finish``, with positions in ``scenarios``) see
    every result as it arrives; the returned SuiteResult lists them in the order of
    ``scenarios``. Span export (``tracer_provider``) is not supported here: its exporter
    threads do not survive a fork (the CLI refuses ``-n`` with export). One worker, or a
    platform that cannot fork, runs in this process.
    """
    if options.tracer_provider is not None:
        raise ValueError("run_scenarios_in_workers cannot export spans (tracer_provider)")
    pool = LocalPool(min(workers, options.concurrency, len(scenarios)))
    if pool.workers <= 1:
        return run_scenarios(scenarios, options)
    started_at, start = time.time(), time.perf_counter()
    run = _Run(scenarios, options, pool.workers)

    def on_stop(signum: int, frame: Any) -> None:
        if not run.stopped and options.on_signal is not None:
            options.on_signal(signum)
        run.stopped.append(signum)
        if len(run.stopped) > 1:  # a second signal stops at once, without reports
            raise KeyboardInterrupt

    # each worker's run_scenarios turns the SIGTERM it gets into a partial result
    with stops_forwarded(on_stop):
        run.everything()
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
    results: dict[int, ScenarioResult] = field(default_factory=dict)
    stopped: list[int] = field(default_factory=list)
    """Signals the parent received."""
    halted: bool = False
    """A scenario failed under ``fail_fast``: start no other."""
    interrupted: bool = False
    warnings: list[str] = field(default_factory=list)

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
        return bool(self.stopped) or self.halted

    def _round(self, pending: list[int]) -> tuple[list[int], list[int]] | None:
        """One pool over ``pending``; None if it finished, else (running, unstarted) when a
        worker died."""
        shards = plan_shards(len(pending), self.workers)
        shares = shard_concurrency(self.options.concurrency, len(shards))
        session = LocalPool(len(shards)).open(RunShard(self.scenarios, self.options))
        started: set[int] = set()
        before = len(self.results)
        try:
            futures = [
                session.submit(Shard(tuple(pending[i] for i in shard), share))
                for shard, share in zip(shards, shares, strict=True)
            ]
            while not all(future.done() for future in futures):
                self._take(session, session.receive(_POLL_SECONDS), started)
            errors = [future.exception() for future in futures]
            if not any(isinstance(error, WorkerLost) for error in errors):
                for error in errors:
                    if error is not None:
                        raise error
                summaries = [future.result() for future in futures]
                expected = before + sum(s.finished for s in summaries)
                self._drain_until(session, started, expected)
                for summary in summaries:
                    self.interrupted = self.interrupted or summary.interrupted
                    self.warnings.extend(summary.warnings)
                return None
            # every worker is gone: what they sent before is on its way, or never will be
            self._drain_quiet(session, started)
        finally:
            session.close(cancel=True)
        running = sorted(p for p in started if p not in self.results)
        unstarted = [p for p in pending if p not in started and p not in self.results]
        return running, unstarted

    def _take(self, session: Session[Any, Any], message: Any, started: set[int]) -> None:
        if message is None:
            return
        if message[0] == "start":
            started.add(message[1])
            if self.options.on_start is not None:
                self.options.on_start(message[1])
            return
        if self.options.fail_fast and message[2].status in ("failed", "error"):
            session.halt()
        self._record(message[1], message[2])

    def _record(self, position: int, result: ScenarioResult) -> None:
        self.results[position] = result
        options = self.options
        if options.fail_fast and result.status in ("failed", "error"):
            self.halted = True
        if options.on_finish is not None:
            options.on_finish(position, result)
        if options.progress is not None:
            options.progress(result)

    def _drain_until(self, session: Session[Any, Any], started: set[int], expected: int) -> None:
        """Messages still on the way after a finished round, until ``expected`` results are in
        (a shard's future can complete before its messages arrive); at most
        ``_DRAIN_SECONDS``."""
        deadline = time.monotonic() + _DRAIN_SECONDS
        while len(self.results) < expected:
            left = deadline - time.monotonic()
            if left <= 0:
                return  # a worker died with results unsent
            self._take(session, session.receive(min(left, _POLL_SECONDS)), started)

    def _drain_quiet(self, session: Session[Any, Any], started: set[int]) -> None:
        """A broken pool's last messages: every worker is gone, so a quiet spell means none is
        left; at most ``_DRAIN_SECONDS``."""
        deadline = time.monotonic() + _DRAIN_SECONDS
        while (left := deadline - time.monotonic()) > 0:
            message = session.receive(min(left, _QUIET_SECONDS))
            if message is None:
                return
            self._take(session, message, started)

    def _alone(self, positions: list[int]) -> None:
        """Each scenario in a new process of its own, ``workers`` at a time."""
        for at in range(0, len(positions), self.workers):
            if self.stopped:
                return
            batch = [(p, self._start_alone(p)) for p in positions[at : at + self.workers]]
            for position, alone in batch:
                result = self._settled(position, alone)
                if result is not None:
                    self._record(position, result)

    def _start_alone(self, position: int) -> Alone:
        scenario, options = self.scenarios[position], self.options
        timeout = options.timeout or scenario.timeout
        repeat = options.repeat or scenario.repeat
        limit = (repeat + 2) * timeout + _ALONE_MARGIN_SECONDS  # factory, runs, closing
        return Alone.start(
            lambda: _run_alone(scenario, options), limit, name=f"harness-alone-{position}"
        )

    def _settled(self, position: int, alone: Alone) -> ScenarioResult | None:
        """The scenario's result, the error of its process's death, or None if it was stopped."""
        settled = alone.settle()
        if settled.sent:
            return settled.result  # type: ignore[no-any-return]
        if self.stopped and not settled.timed_out:
            return None
        scenario = self.scenarios[position]
        if settled.timed_out:
            message = (
                f"after its worker process died, this scenario ran again alone and did not "
                f"finish within {alone.limit:.0f}s (its timeouts, its runs and a margin), so its "
                "process was killed"
            )
        else:
            message = _death_message(settled.exitcode)
        repeat = self.options.repeat or scenario.repeat
        error = ErrorInfo(CRASH_ERROR, message, phase="run", brief=True)
        return verdict(scenario, (RunResult(0, False, None, error=error),), repeat, alone.seconds)


def _run_alone(scenario: Scenario, options: RunOptions) -> ScenarioResult | None:
    """In the process of its own: run one scenario (None if it was stopped first)."""
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
    return output.scenarios[0] if output.scenarios else None


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
