"""Process-pool sharding for ``harness eval-traces --workers N`` (docs/architecture.md).

The input is cut into :class:`~tracing.otlp_json.FileSlice` s: each file, and each run of about
:data:`SLICE_BYTES` whole lines within a large one. Worker processes of a standard
:class:`concurrent.futures.ProcessPoolExecutor` score one slice each with the one scoring path,
:func:`~harness.evaluate_traces.evaluate_traces`, and send back its results; the parent takes
them in input order, so ``progress`` (the report feed) sees exactly the sequence one process
would produce and writes the same reports.

A trace whose spans straddle a cut (a batching exporter split it over lines on both sides) shows
up in both slices under one trace id. Slices are compared with their neighbour before their
results are passed on; two that share a trace id are scored again as one slice, which is what
one process reads, so the verdicts never depend on where the cuts fell.

At most ``2 × workers`` slices are in flight, so memory stays bounded by the slice size, not by
the file. Workers are forked (they inherit the loaded scenarios); where ``fork`` is not
available, or with one worker or one slice, everything runs in this process.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.evaluate_traces import KEPT_RESULTS, evaluate_traces, traces_result
from harness.result import ResultSample, ScenarioResult, SuiteResult
from harness.scenarios import Scenario
from tracing.otlp_json import FileSlice, OtlpJsonError

__all__ = ["SLICE_BYTES", "default_workers", "evaluate_traces_in_workers", "plan_slices"]

SLICE_BYTES = 8 * 1024 * 1024
"""Input per task: big enough that a task's overhead is small, small enough to stay in memory."""

_BLOCK = 1024 * 1024


def default_workers() -> int:
    """The number of cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


# --- cutting the input ------------------------------------------------------------------------


def plan_slices(paths: Sequence[str | Path], slice_bytes: int) -> list[FileSlice]:
    """Each file as one slice, or, past ``slice_bytes``, as runs of whole lines of about that size.

    A file that cannot be read stays one slice: the scoring reports it as one process would.
    """
    slices: list[FileSlice] = []
    for path in paths:
        try:
            size = os.path.getsize(path)
        except OSError:
            size = 0
        if size <= slice_bytes:
            slices.append(FileSlice(path))
            continue
        slices.extend(_cut(path, size, slice_bytes))
    return slices


def _cut(path: str | Path, size: int, slice_bytes: int) -> Iterator[FileSlice]:
    """Slices of one file, each ending at a newline; line numbers counted on the way."""
    start, first_line = 0, 1
    with open(path, "rb") as fp:
        while True:
            fp.seek(start + slice_bytes)
            fp.readline()  # to the end of the line the target falls in
            end = fp.tell()
            if end >= size:
                yield FileSlice(path, start, first_line, None)
                return
            fp.seek(start)
            count = _newlines(fp, end - start)
            yield FileSlice(path, start, first_line, count)
            start, first_line = end, first_line + count


def _newlines(fp: Any, length: int) -> int:
    """Newlines in the next ``length`` bytes of ``fp`` (the text reader splits lines there)."""
    count = 0
    while length > 0:
        block = fp.read(min(_BLOCK, length))
        if not block:
            break
        count += block.count(b"\n")
        length -= len(block)
    return count


# --- one slice --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Setup:
    """What every slice is scored with; a forked worker inherits it."""

    scenarios: Sequence[Scenario]
    only: Scenario | None
    selected: Callable[[Scenario], bool] | None


@dataclass(frozen=True, slots=True)
class _SliceOutput:
    """A slice's results in file order, and what its reading reported."""

    part: FileSlice
    results: list[ScenarioResult]
    warnings: list[str]
    """Files that could not be read (the reading's other warnings are ``errors``)."""
    errors: list[OtlpJsonError]
    deselected: int
    interrupted: bool

    def trace_ids(self) -> set[str]:
        """The trace ids of the results (how a trace cut in two is recognised)."""
        return {r.trace_id for r in self.results if r.trace_id is not None}


_SETUP: _Setup | None = None


def _install(setup: _Setup) -> None:
    """Pool initializer: remember what the slices are scored with."""
    global _SETUP
    _SETUP = setup
    # What the worker inherited stays put: collections then never walk (and so copy) the
    # parent's pages, only what this worker allocates.
    gc.freeze()


def _score_in_worker(part: FileSlice) -> _SliceOutput:
    assert _SETUP is not None, "the pool initializer did not run"
    return _score_slice(_SETUP, part)


def _score_slice(setup: _Setup, part: FileSlice) -> _SliceOutput:
    """Score one slice exactly as evaluate_traces scores a file, keeping every result."""
    results: list[ScenarioResult] = []
    errors: list[OtlpJsonError] = []
    skipped = [0]
    selected = setup.selected

    def counted(scenario: Scenario) -> bool:
        if selected is None or selected(scenario):
            return True
        skipped[0] += 1
        return False

    summary = evaluate_traces(
        [part],  # type: ignore[list-item]  # a FileSlice is read as its part of the file
        setup.scenarios,
        only=setup.only,
        selected=counted,
        progress=results.append,
        errors=errors,
        keep=0,
    )
    # evaluate_traces lists unreadable files, then the errors, then the -k count: keep the first
    unreadable = list(summary.warnings[: len(summary.warnings) - len(errors) - bool(skipped[0])])
    return _SliceOutput(part, results, unreadable, errors, skipped[0], summary.interrupted)


class _RecentIds:
    """The most recent trace ids, as many as the reader remembers complete traces."""

    def __init__(self, limit: int = 65_536) -> None:
        self.limit = limit
        self._ids: dict[str, None] = {}

    def __contains__(self, trace_id: object) -> bool:
        return trace_id in self._ids

    def update(self, trace_ids: Iterator[str | None]) -> None:
        for trace_id in trace_ids:
            if trace_id is not None:
                self._ids[trace_id] = None
        while len(self._ids) > self.limit:
            del self._ids[next(iter(self._ids))]

    def clear(self) -> None:
        self._ids.clear()


def _unfinished(result: ScenarioResult) -> bool:
    """Was this trace complete only because its slice ended (the reader's line 0)?"""
    return result.source is not None and result.source.endswith(":0")


def _joined(first: FileSlice, second: FileSlice) -> FileSlice:
    """Two neighbouring slices of one file as one."""
    count = None
    if first.line_count is not None and second.line_count is not None:
        count = first.line_count + second.line_count
    return FileSlice(first.path, first.start, first.first_line, count)


def _neighbours(first: FileSlice, second: FileSlice) -> bool:
    return (
        os.fspath(first.path) == os.fspath(second.path)
        and first.line_count is not None
        and first.first_line + first.line_count == second.first_line
    )


# --- the pool ---------------------------------------------------------------------------------


def evaluate_traces_in_workers(
    paths: Sequence[str | Path],
    scenarios: Sequence[Scenario],
    *,
    workers: int,
    only: Scenario | None = None,
    selected: Callable[[Scenario], bool] | None = None,
    progress: Callable[[ScenarioResult], None] | None = None,
    errors: list[OtlpJsonError] | None = None,
    keep: int | None = KEPT_RESULTS,
    slice_bytes: int | None = None,
) -> SuiteResult:
    """:func:`~harness.evaluate_traces.evaluate_traces` over ``workers`` processes.

    Same arguments and the same result: ``progress`` sees every result in input order, the
    returned SuiteResult keeps at most ``keep`` of them with the counts of all, unreadable lines
    go to ``errors`` and the warnings. One worker, one slice or no ``fork`` runs in-process.
    ``slice_bytes``: input per task (default :data:`SLICE_BYTES`).
    """
    parts = plan_slices(paths, SLICE_BYTES if slice_bytes is None else slice_bytes)
    if workers <= 1 or len(parts) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return evaluate_traces(
            paths,
            scenarios,
            only=only,
            selected=selected,
            progress=progress,
            errors=errors,
            keep=keep,
        )
    started_at, start = time.time(), time.perf_counter()
    setup = _Setup(scenarios, only, selected)
    sample: ResultSample[ScenarioResult] = ResultSample(keep)
    errors = [] if errors is None else errors
    unreadable: list[str] = []
    first_error = len(errors)
    deselected = 0
    interrupted = False

    tail: list[ScenarioResult] = []  # traces the current file never completed

    def pass_on(results: Sequence[ScenarioResult]) -> None:
        for result in results:
            sample.add(result)
            if progress is not None:
                progress(result)

    finished = _RecentIds()  # traces already passed on from this file

    def emit(output: _SliceOutput, last_of_file: bool) -> None:
        nonlocal deselected, interrupted
        unreadable.extend(output.warnings)
        errors.extend(output.errors)
        kept: list[ScenarioResult] = []
        for result in output.results:
            if result.trace_id in finished and _unfinished(result):
                # spans of a trace already complete further up: one process skips them, too
                message = f"spans of trace {result.trace_id} arrive after the trace was complete"
                errors.append(OtlpJsonError(os.fspath(output.part.path), 0, message + "; skipped"))
                continue
            kept.append(result)
        finished.update(r.trace_id for r in kept)
        # One process reports a trace whose root never came at the end of its file (line 0),
        # not at the end of the slice that happened to hold its spans.
        pass_on([r for r in kept if not _unfinished(r)])
        tail.extend(r for r in kept if _unfinished(r))
        if last_of_file:
            pass_on(tail)
            tail.clear()
            finished.clear()
        deselected += output.deselected
        interrupted = interrupted or output.interrupted

    context = multiprocessing.get_context("fork")
    pool = ProcessPoolExecutor(workers, context, initializer=_install, initargs=(setup,))
    try:
        held: _SliceOutput | None = None
        for output in _in_order(pool, parts, 2 * workers):
            if (
                held is not None
                and _neighbours(held.part, output.part)
                and held.trace_ids() & output.trace_ids()
            ):
                # a trace cut in two: score both slices again as one, as one process reads
                output = _score_slice(setup, _joined(held.part, output.part))
                held = None
            if held is not None:
                emit(held, not _neighbours(held.part, output.part))
            held = output
        if held is not None:
            emit(held, True)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        pool.shutdown(wait=not interrupted, cancel_futures=True)
    warnings = unreadable + [str(error) for error in errors[first_error:]]
    return traces_result(sample, warnings, deselected, started_at, start, interrupted=interrupted)


def _in_order(
    pool: ProcessPoolExecutor, parts: Sequence[FileSlice], ahead: int
) -> Iterator[_SliceOutput]:
    """Each slice's output in input order, with at most ``ahead`` slices submitted at a time."""
    pending: deque[Future[_SliceOutput]] = deque()
    queued = iter(parts)
    for part in queued:
        pending.append(pool.submit(_score_in_worker, part))
        if len(pending) >= ahead:
            break
    while pending:
        output = pending.popleft().result()
        for part in queued:
            pending.append(pool.submit(_score_in_worker, part))
            break
        yield output
