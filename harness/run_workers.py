"""Process-pool sharding for ``harness run -n N``.

See docs/architecture.md, "Threading and concurrency contracts" (Processes, Agent reuse).

The selected scenarios are cut into ``N`` contiguous shards of nearly equal size (a suite file's
scenarios mostly stay together, in selection order). Each shard runs in one worker of a standard
:class:`concurrent.futures.ProcessPoolExecutor` with :func:`~harness.runner.run_scenarios` and the
same :class:`~harness.runner.RunOptions`, except that ``--concurrency`` is the total and is split
between the workers. Workers are forked: they inherit the compiled, selected scenarios (agents
imported, models built, cassettes applied), so nothing but results crosses a process boundary.

With live progress each result goes to the parent as it finishes, and each shard's SuiteResult,
when the shard is done, says only where its results came; without progress the results come
with the shard's SuiteResult (each result crosses once). The parent puts them back in selection
order, so the reports (and the
exit code) are those one process would produce. ``-x`` stops each worker after its own first
failure. Where ``fork`` is not available, or with one worker, everything runs in this process.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import queue
import signal
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from harness.result import ScenarioResult, SuiteResult
from harness.runner import STOP_SIGNALS, RunOptions, run_scenarios
from harness.scenarios import Scenario

__all__ = ["plan_shards", "run_scenarios_in_workers", "shard_concurrency"]


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
    results: Any
    """The queue each finished ScenarioResult is put on, for the parent's live progress."""


_SETUP: _Setup | None = None


def _install(setup: _Setup) -> None:
    """Pool initializer: remember the shared setup; leave the terminal's process group."""
    global _SETUP
    _SETUP = setup
    # The parent forwards SIGINT/SIGTERM to the workers itself (_forward_stops). A Ctrl-C
    # reaches the whole foreground group, so a worker still in it would get two signals, and a
    # second one forces the run to stop at once instead of ending with a partial result.
    os.setpgrp()
    gc.freeze()  # inherited pages stay shared: collections never walk (and copy) them


@dataclass(frozen=True, slots=True)
class _ShardOutput:
    """A shard's SuiteResult, and where its results came on the progress queue.

    With live progress each result crosses to the parent once, on the queue, as it finishes;
    ``result`` then lists no scenarios and ``queued[k]`` is the queue position (within this
    shard) of its k-th result. Without progress ``result`` carries them and ``queued`` is None.
    Either way a result is pickled once (pickling resolves each score's reason and details).
    """

    result: SuiteResult
    queued: tuple[int, ...] | None = None


def _run_shard(number: int, shard: range, concurrency: int) -> _ShardOutput:
    """Run one shard in this worker (the ``number``-th), as :class:`_ShardOutput` says."""
    assert _SETUP is not None, "the pool initializer did not run"
    setup = _SETUP
    selected = [setup.scenarios[index] for index in shard]
    if setup.options.progress is None:
        options = replace(setup.options, concurrency=concurrency, on_signal=None)
        return _ShardOutput(run_scenarios(selected, options))
    sent: dict[int, int] = {}  # id of a result put on the queue -> its place in this shard's
    put = setup.results.put

    def send(result: ScenarioResult) -> None:
        sent[id(result)] = len(sent)
        put((number, result))

    options = replace(setup.options, concurrency=concurrency, progress=send, on_signal=None)
    output = run_scenarios(selected, options)
    queued = tuple(sent[id(result)] for result in output.scenarios)
    return _ShardOutput(replace(output, scenarios=()), queued)


def run_scenarios_in_workers(
    scenarios: Sequence[Scenario], options: RunOptions, *, workers: int
) -> SuiteResult:
    """:func:`~harness.runner.run_scenarios` over ``workers`` processes, same result.

    ``options.progress`` sees every result as it finishes; the returned SuiteResult lists them
    in the order of ``scenarios``. Span export (``tracer_provider``) is not supported here:
    its exporter threads do not survive a fork (the CLI refuses ``-n`` with export).
    """
    if options.tracer_provider is not None:
        raise ValueError("run_scenarios_in_workers cannot export spans (tracer_provider)")
    workers = min(workers, options.concurrency, len(scenarios))
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return run_scenarios(scenarios, options)
    started_at, start = time.time(), time.perf_counter()
    shards = plan_shards(len(scenarios), workers)
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    setup = _Setup(scenarios, options, results)
    pool = ProcessPoolExecutor(len(shards), context, initializer=_install, initargs=(setup,))
    stopped: list[int] = []
    previous = _forward_stops(stopped, options)
    try:
        futures = [
            pool.submit(_run_shard, number, shard, concurrency)
            for number, (shard, concurrency) in enumerate(
                zip(shards, shard_concurrency(options.concurrency, workers), strict=True)
            )
        ]
        arrived: list[list[ScenarioResult]] = [[] for _ in shards]
        _relay(results, futures, options, arrived)
        outputs = [future.result() for future in futures]
        _drain(results, outputs, options, arrived)
    finally:
        _restore(previous)
        pool.shutdown(wait=True, cancel_futures=True)
        results.close()
    suites = [_shard_result(output, came) for output, came in zip(outputs, arrived, strict=True)]
    return SuiteResult(
        scenarios=_in_selection_order(scenarios, shards, suites),
        started_at=started_at,
        duration=time.perf_counter() - start,
        interrupted=bool(stopped) or any(suite.interrupted for suite in suites),
        not_run=sum(suite.not_run for suite in suites),
        warnings=tuple(warning for suite in suites for warning in suite.warnings),
    )


def _shard_result(output: _ShardOutput, arrived: list[ScenarioResult]) -> SuiteResult:
    """The shard's SuiteResult with its results, those that came on the queue put back."""
    if output.queued is None:
        return output.result
    came = tuple(arrived[k] for k in output.queued if k < len(arrived))  # none lost, normally
    return replace(output.result, scenarios=came)


def _relay(
    results: Any,
    futures: Sequence[Future[_ShardOutput]],
    options: RunOptions,
    arrived: list[list[ScenarioResult]],
) -> None:
    """Pass the workers' finished results to ``options.progress`` (and ``arrived``, per shard)
    until every shard is done."""
    if options.progress is None:  # the shards send nothing on the queue
        for future in futures:
            future.exception()  # waits; future.result() raises it afterwards
        return
    while not all(future.done() for future in futures):
        try:
            number, result = results.get(timeout=0.05)
        except queue.Empty:
            continue
        arrived[number].append(result)
        options.progress(result)


def _drain(
    results: Any,
    outputs: Sequence[_ShardOutput],
    options: RunOptions,
    arrived: list[list[ScenarioResult]],
) -> None:
    """The results still on the queue: a shard's future can complete before its queue is
    flushed."""
    left = sum(len(o.queued) for o in outputs if o.queued is not None) - sum(map(len, arrived))
    for _ in range(left):
        try:
            number, result = results.get(timeout=_DRAIN_SECONDS)
        except queue.Empty:  # a worker died with results unsent
            return
        arrived[number].append(result)
        if options.progress is not None:
            options.progress(result)


_DRAIN_SECONDS = 5.0


def _in_selection_order(
    scenarios: Sequence[Scenario], shards: Sequence[range], outputs: Sequence[SuiteResult]
) -> tuple[ScenarioResult, ...]:
    """Every shard's results, shard after shard: each shard keeps its scenarios' order.

    A shard's SuiteResult lists its results in its scenarios' order, minus those never started
    (``-x``, a stop); matching them in order by file, suite and name finds each one's place.
    """
    ordered: list[ScenarioResult] = []
    for shard, output in zip(shards, outputs, strict=True):
        pending = iter(output.scenarios)
        result = next(pending, None)
        for index in shard:
            scenario = scenarios[index]
            if result is not None and (result.file, result.suite, result.name) == (
                scenario.file,
                scenario.suite,
                scenario.name,
            ):
                ordered.append(result)
                result = next(pending, None)
    return tuple(ordered)


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
