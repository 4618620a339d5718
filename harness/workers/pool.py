"""The pool of ``eval-traces --workers``: slices in flight, their outputs merged in order.

See :mod:`harness.workers`.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import shutil
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import suppress
from pathlib import Path
from typing import cast

from harness.evaluate_traces import KEPT_RESULTS, evaluate_traces, traces_result
from harness.redaction import StreamScrubber
from harness.report.base import (
    Counted,
    Prepared,
    Renders,
    Reporter,
    ReportFeed,
    Samples,
)
from harness.report.view import ScenarioView
from harness.result import ResultSample, ScenarioResult, SuiteResult
from harness.scenarios import Scenario
from harness.workers.slices import (
    _iter_slices,
    _joined,
    _neighbours,
    fixed_sizes,
    shrinking_sizes,
)
from harness.workers.task import (
    _collections_paused,
    _discard,
    _Entry,
    _install,
    _load,
    _load_counts,
    _results_in_worker,
    _score_here,
    _Setup,
    _SliceOutput,
    _Spooled,
    _unfinished,
    _Views,
    _views_in_worker,
)
from tracing.otlp_json import FileSlice, OtlpJsonError

__all__ = ["default_workers", "evaluate_traces_in_workers"]


def default_workers() -> int:
    """The number of cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


class _RecentIds:
    """The most recent trace ids, as many as the reader remembers complete traces."""

    def __init__(self, limit: int = 65_536) -> None:
        self.limit = limit
        self._ids: dict[str | None, None] = {}

    def __contains__(self, trace_id: object) -> bool:
        return trace_id in self._ids

    def update(self, trace_ids: Iterable[str | None]) -> None:
        self._ids.update(dict.fromkeys(trace_ids))
        self._ids.pop(None, None)
        while len(self._ids) > self.limit:
            del self._ids[next(iter(self._ids))]

    def clear(self) -> None:
        self._ids.clear()


class _Merge:
    """Passes the slices' results on in input order, as one process would have produced them."""

    def __init__(
        self,
        sample: ResultSample[_Entry],
        results: Callable[[ScenarioResult], None],
        prepared: Callable[[Prepared], None],
        errors: list[OtlpJsonError],
    ) -> None:
        self.sample = sample
        self._results = results
        self._prepared = prepared
        self.errors = errors
        self.unreadable: list[str] = []
        self.deselected = 0
        self.interrupted = False
        self.tail: list[ScenarioResult] = []  # traces the current file never completed
        self.finished = _RecentIds()  # traces already passed on from this file

    def emit(self, output: _SliceOutput, last_of_file: bool) -> None:
        """Pass on one slice's results (``last_of_file``: then those its file never completed)."""
        self.unreadable.extend(output.warnings)
        self.errors.extend(output.errors)
        finished, kept = self.finished, output.kept
        ids: list[str | None] = []
        ready: list[ScenarioView | Counted] = []  # the views (and stand-ins) for the feed
        for index, entry in enumerate(output.entries):
            if type(entry) is ScenarioResult and _unfinished(entry):
                if entry.trace_id in finished:
                    # spans of a trace already complete further up: one process skips them, too
                    message = f"spans of trace {entry.trace_id} arrive after the trace was complete"
                    path = os.fspath(output.part.path)
                    self.errors.append(OtlpJsonError(path, 0, message + "; skipped"))
                    continue
                # One process reports a trace whose root never came at the end of its file
                # (line 0), not at the end of the slice that happened to hold its spans.
                self.tail.append(entry)
            elif type(entry) is ScenarioResult:
                self.sample.add(entry)
                self._results(entry)
            else:
                self.sample.add(kept.get(index, entry))
                ready.append(cast(ScenarioView | Counted, entry))
            ids.append(entry.trace_id)
        finished.update(ids)
        if output.views:
            self._prepared(Prepared(ready, output.chunks))
        if last_of_file:
            for result in self.tail:
                self.sample.add(result)
                self._results(result)
            self.tail.clear()
            finished.clear()
        self.deselected += output.deselected
        self.interrupted = self.interrupted or output.interrupted


def evaluate_traces_in_workers(
    paths: Sequence[str | Path],
    scenarios: Sequence[Scenario],
    *,
    workers: int,
    only: Scenario | None = None,
    selected: Callable[[Scenario], bool] | None = None,
    progress: Callable[[ScenarioResult], None] | None = None,
    feed: ReportFeed | None = None,
    errors: list[OtlpJsonError] | None = None,
    keep: int | None = KEPT_RESULTS,
    slice_bytes: int | None = None,
) -> SuiteResult:
    """:func:`~harness.evaluate_traces.evaluate_traces` over ``workers`` processes.

    Same arguments and the same result: ``progress`` sees every result in input order, the
    returned SuiteResult keeps at most ``keep`` of them with the counts of all, unreadable lines
    go to ``errors`` and the warnings. ``feed`` (a stream feed, :meth:`ReportFeed.for_stream`)
    gets every result in input order, as ``progress=feed.add`` would, but without a
    ``progress`` the workers build its views. One worker, one slice, no ``fork`` or no
    temporary folder runs in-process. ``slice_bytes``: input per task (default:
    :func:`~harness.workers.slices.shrinking_sizes`, at most :data:`SLICE_BYTES`).
    """
    take = _taker(progress, feed)
    sizes = shrinking_sizes(workers) if slice_bytes is None else fixed_sizes(slice_bytes)
    parts = _iter_slices(paths, sizes)
    first = list(itertools.islice(parts, 2))
    spool = None
    if workers > 1 and len(first) > 1 and "fork" in multiprocessing.get_all_start_methods():
        with suppress(OSError):  # no temporary folder: one process needs none
            spool = tempfile.mkdtemp(prefix="harness-eval-traces-")
    if spool is None:
        return evaluate_traces(
            paths,
            scenarios,
            only=only,
            selected=selected,
            progress=take,
            errors=errors,
            keep=keep,
        )
    started_at, start = time.time(), time.perf_counter()
    views = _views_for(feed) if progress is None else None
    context = multiprocessing.get_context("fork")
    saturated = context.RawValue("b", 0)
    setup = _Setup(scenarios, only, selected, keep, views, spool, saturated)
    errors = [] if errors is None else errors
    first_error = len(errors)
    sample: ResultSample[_Entry] = ResultSample(keep)
    merge = _Merge(sample, take or _ignore, _prepared_taker(feed, views), errors)
    pool = ProcessPoolExecutor(workers, context, initializer=_install, initargs=(setup,))

    clean = True  # no result with a secret passed on yet: the workers' views hold
    counts_suffice = views is not None and _counts_suffice(views.reporters)
    died: list[str] = []  # the warning, once a worker died: the pool is then unusable

    def scored(part: FileSlice) -> Future[_Spooled]:
        # once a result with a secret was passed on, a worker's scrubber would miss it
        task = _views_in_worker if views is not None and clean else _results_in_worker
        if not died:
            try:
                return pool.submit(task, part)
            except BrokenProcessPool:
                died.append(_died(part))
        return _finished(_score_here(setup, part))

    def resolve(part: FileSlice, future: Future[_Spooled]) -> _Spooled:
        try:
            return future.result()
        except BrokenProcessPool:
            # a worker was killed (the out-of-memory killer, a signal): score the slice here
            if not died:
                died.append(_died(part))
            return _score_here(setup, part)

    def emit(spooled: _Spooled, last_of_file: bool) -> None:
        nonlocal clean
        if spooled.views and not clean:
            _discard(spooled)
            spooled = resolve(spooled.part, scored(spooled.part))
        clean = clean and spooled.views
        # the samples were full before this slice came (it was in flight when they filled up)
        load = _load_counts if spooled.views and counts_suffice and saturated.value else _load
        with _collections_paused():
            merge.emit(load(spooled), last_of_file)
        if views is not None and not saturated.value and _saturated(sample, views.reporters):
            saturated.value = 1

    try:
        held: _Spooled | None = None
        for spooled in _in_order(scored, resolve, itertools.chain(first, parts), 2 * workers):
            if (
                held is not None
                and _neighbours(held.part, spooled.part)
                and held.trace_ids & spooled.trace_ids
            ):
                # a trace cut in two: score both slices again as one, as one process reads
                _discard(held)
                _discard(spooled)
                joined = _joined(held.part, spooled.part)
                spooled = resolve(joined, scored(joined))
                held = None
            if held is not None:
                emit(held, not _neighbours(held.part, spooled.part))
            held = spooled
        if held is not None:
            emit(held, True)
    except KeyboardInterrupt:
        merge.interrupted = True
    finally:
        pool.shutdown(wait=not merge.interrupted, cancel_futures=True)
        shutil.rmtree(spool, ignore_errors=True)
    warnings = died + merge.unreadable + [str(error) for error in errors[first_error:]]
    # only full results stay kept: a view is only ever kept on its way (see _with_views)
    kept = cast(ResultSample[ScenarioResult], sample)
    assert all(type(result) is ScenarioResult for result in kept.scenarios)
    interrupted = merge.interrupted
    return traces_result(
        kept, warnings, merge.deselected, started_at, start, interrupted=interrupted
    )


def _saturated(sample: ResultSample[_Entry], reporters: Sequence[Reporter]) -> bool:
    """Do the summary's sample and every sampling reporter keep nothing more? (It stays so:
    a slice submitted now is passed on later, when they are no less full.)"""
    return sample.saturated and all(
        r.saturated for r in reporters if isinstance(r, Samples) and not isinstance(r, Renders)
    )


def _counts_suffice(reporters: Sequence[Reporter]) -> bool:
    """Once every sample is full, do these reporters need nothing but the chunks and counts?
    (Not if one neither renders nor samples: that one takes every view.)"""
    return all(isinstance(r, (Renders, Samples)) for r in reporters)


def _ignore(entry: object) -> None:
    pass


def _taker(
    progress: Callable[[ScenarioResult], None] | None, feed: ReportFeed | None
) -> Callable[[ScenarioResult], None] | None:
    """What takes each result the parent passes on: ``progress``, the feed, or both."""
    if feed is None or progress is None:
        return progress if feed is None else feed.add

    def both(result: ScenarioResult) -> None:
        progress(result)
        feed.add(result)

    return both


def _views_for(feed: ReportFeed | None) -> _Views | None:
    """How workers build the views ``feed`` builds, if they can (a stream feed with reporters)."""
    if feed is None or not feed.reporters or type(feed.scrub) is not StreamScrubber:
        return None
    return _Views(feed.scrub.redactor, feed.trace_url, tuple(feed.reporters))


def _prepared_taker(feed: ReportFeed | None, views: _Views | None) -> Callable[[Prepared], None]:
    """What hands the workers' prepared views to ``feed``'s reporters."""
    if feed is None or views is None:
        return _ignore
    reporters = views.reporters
    return lambda prepared: feed.add_prepared(prepared, reporters)


def _in_order(
    submit: Callable[[FileSlice], Future[_Spooled]],
    resolve: Callable[[FileSlice, Future[_Spooled]], _Spooled],
    parts: Iterator[FileSlice],
    ahead: int,
) -> Iterator[_Spooled]:
    """Each slice's output in input order, with at most ``ahead`` slices submitted at a time."""
    pending: deque[tuple[FileSlice, Future[_Spooled]]] = deque()
    for part in parts:
        pending.append((part, submit(part)))
        if len(pending) >= ahead:
            break
    while pending:
        spooled = resolve(*pending.popleft())
        for part in parts:
            pending.append((part, submit(part)))
            break
        yield spooled


def _finished(spooled: _Spooled) -> Future[_Spooled]:
    """A slice scored here once the pool broke, as the future a worker would have given."""
    future: Future[_Spooled] = Future()
    future.set_result(spooled)
    return future


def _died(part: FileSlice) -> str:
    return (
        f"a --workers process ended abruptly (killed by a signal or the out-of-memory killer) "
        f"while {part.path} was being scored (from line {part.first_line}); the slices it had "
        "not sent back were scored in this process instead, with the same results"
    )
