"""Process-pool sharding for ``harness eval-traces --workers N`` (docs/architecture.md).

The input is cut into :class:`~tracing.otlp_json.FileSlice` s: each file, and each run of about
:data:`SLICE_BYTES` whole lines within a large one. Worker processes of a standard
:class:`concurrent.futures.ProcessPoolExecutor` score one slice each with the one scoring path,
:func:`~harness.evaluate_traces.evaluate_traces`; the parent takes the slices in input order, so
the report feed sees exactly the sequence one process would produce and writes the same reports.

The parent competes with the workers for the cores, so a worker does everything per result that
needs no state shared across slices: it also builds each result's report view, masked and
scrubbed as :meth:`ReportFeed.add <harness.report.base.ReportFeed.add>` builds it
(docs/architecture.md, "Reporter"), renders them for the reporters that render (the JSON and
JUnit files' bytes), and sends back whole only the views a sampling reporter may keep, plus the
full results only of the few the summary may keep (:class:`~harness.result.ResultSample`: a
result the whole stream keeps is one its slice alone keeps, too); the others travel as a
status (:func:`~harness.report.base.prepare`). Once the parent's samples keep nothing more, a
flag in shared memory says so and the workers send neither. The parent appends the chunks,
hands the views to the reporters and counts.

A stream's scrubber remembers the secrets of earlier results (docs/architecture.md,
"Redaction"), and a worker does not know the slices before its own. So a worker's views are
used only while no result so far carried a secret: a slice that holds one comes back as
results, and from then on every slice does, and the parent builds the views as one process
would. A trace whose root never came (complete only at the end of its file) also comes back as
a result: one process reports it at the end of the file, after the slices that follow.

A trace whose spans straddle a cut (a batching exporter split it over lines on both sides) shows
up in both slices under one trace id. Slices are compared with their neighbour before their
results are passed on; two that share a trace id are scored again as one slice, which is what
one process reads, so the verdicts never depend on where the cuts fell.

A worker killed by a signal (the out-of-memory killer) breaks the pool for good: each slice
it had not sent back, and every later one, is then scored in the parent, still in order, and
one warning says so.

At most ``2 × workers`` slices are in flight, so memory stays bounded by the slice size, not by
the file. Workers are forked (they inherit the loaded scenarios); where ``fork`` is not
available, or with one worker or one slice, everything runs in this process.
"""

from __future__ import annotations

import dataclasses
import gc
import itertools
import multiprocessing
import os
import pickle
import shutil
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from harness.evaluate_traces import KEPT_RESULTS, evaluate_traces, traces_result
from harness.redaction import Redactor, Scrubber, StreamScrubber
from harness.report.base import (
    Counted,
    Prepared,
    Renders,
    Reporter,
    ReportFeed,
    Samples,
    ViewList,
    prepare,
)
from harness.report.view import ScenarioView
from harness.result import ResultSample, ScenarioResult, SuiteResult
from harness.scenarios import Scenario
from tracing.otlp_json import FileSlice, OtlpJsonError

__all__ = ["SLICE_BYTES", "default_workers", "evaluate_traces_in_workers", "plan_slices"]

SLICE_BYTES = 8 * 1024 * 1024
"""Input per task: big enough that a task's overhead is small, small enough to stay in memory."""

_MIN_SLICE_BYTES = 1024 * 1024
"""The smallest slice :func:`_slice_size` cuts (below, a task's overhead would start to show)."""

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
    return list(_iter_slices(paths, slice_bytes))


def _slice_size(paths: Iterable[str | Path], workers: int) -> int:
    """:data:`SLICE_BYTES`, or less so each worker gets four slices or more: the last slices
    then take little time, so no worker waits long for the others at the end."""
    total = 0
    for path in paths:
        with suppress(OSError):
            total += os.path.getsize(path)
    return min(SLICE_BYTES, max(_MIN_SLICE_BYTES, total // (4 * max(workers, 1))))


def _iter_slices(paths: Iterable[str | Path], slice_bytes: int) -> Iterator[FileSlice]:
    """:func:`plan_slices`, one slice at a time (the first is scored while the rest are cut)."""
    for path in paths:
        try:
            size = os.path.getsize(path)
        except OSError:
            size = 0
        if size <= slice_bytes:
            yield FileSlice(path)
            continue
        yield from _cut(path, size, slice_bytes)


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
class _Views:
    """How the workers build the views: as the parent's stream feed would (redactor, link)."""

    redactor: Redactor
    trace_url: str | None
    reporters: tuple[Reporter, ...]
    """The parent feed's reporters: a worker renders for those that can (``prepare``)."""


@dataclass(frozen=True, slots=True)
class _Setup:
    """What every slice is scored with; a forked worker inherits it."""

    scenarios: Sequence[Scenario]
    only: Scenario | None
    selected: Callable[[Scenario], bool] | None
    keep: int | None
    views: _Views | None
    """None: the parent wants every result (a ``progress`` callback), no views."""
    spool: str
    """The folder the outputs are written to (:func:`_spool`)."""
    saturated: Any
    """A flag in memory shared with the parent (``multiprocessing.RawValue``), set once its
    samples keep nothing more (:func:`_saturated`); it is never cleared, so reading it late is
    safe, and a slice read after it was set need send no view or result for them."""


_Entry = ScenarioResult | ScenarioView | Counted


@dataclass(frozen=True, slots=True)
class _SliceOutput:
    """A slice's results in file order, and what its reading reported.

    ``entries`` holds the results, or (``views``) the views of the results, except a trace
    complete only because the slice ended, which stays a result (see the module docstring);
    a view no reporter needs whole is a :class:`~harness.report.base.Counted`, and ``chunks``
    are what the reporters that render rendered for the views (:func:`prepare`).
    ``kept``: by position, the full result of each view the summary may keep.
    """

    part: FileSlice
    entries: list[_Entry]
    warnings: list[str]
    """Files that could not be read (the reading's other warnings are ``errors``)."""
    errors: list[OtlpJsonError]
    deselected: int
    interrupted: bool
    views: bool = False
    kept: dict[int, ScenarioResult] = field(default_factory=dict)
    chunks: tuple[Any, ...] = ()

    def trace_ids(self) -> set[str | None]:
        """The trace ids of the results (how a trace cut in two is recognised)."""
        return {entry.trace_id for entry in self.entries} - {None}


_SETUP: _Setup | None = None


def _install(setup: _Setup) -> None:
    """Pool initializer: remember what the slices are scored with."""
    global _SETUP
    _SETUP = setup
    # What the worker inherited stays put: collections then never walk (and so copy) the
    # parent's pages, only what this worker allocates.
    gc.freeze()


def _results_in_worker(part: FileSlice) -> _Spooled:
    assert _SETUP is not None, "the pool initializer did not run"
    with _collections_paused():  # a slice's results are all kept until it is spooled
        return _spool(_score_slice(_SETUP, part), _SETUP.spool)


def _views_in_worker(part: FileSlice) -> _Spooled:
    setup = _SETUP
    assert setup is not None and setup.views is not None, "the pool initializer did not run"
    # A slice's results and views are all kept until it is spooled: each collection would walk
    # them all again (and there are 100,000s of objects); reference counting frees them after.
    with _collections_paused():
        scored = _score_slice(setup, part)
        saturated = bool(setup.saturated.value)  # read as late as possible: it only gets set
        keep = 0 if saturated else setup.keep
        return _spool(_with_views(scored, setup.views, keep, saturated), setup.spool)


@dataclass(frozen=True, slots=True)
class _Spooled:
    """Where a worker wrote a slice's output, with what the parent decides on before loading it.

    A pool sends a result through a pipe the parent drains on a thread of its own, which waits
    for the interpreter lock while the parent reports: a worker sending a whole slice would wait
    with it, idle. So the output goes to a file, and only this comes through the pipe.
    """

    part: FileSlice
    path: str
    views: bool
    trace_ids: frozenset[str | None]


def _spool(output: _SliceOutput, folder: str) -> _Spooled:
    """Write ``output`` to a new file of ``folder``."""
    fd, path = tempfile.mkstemp(suffix=".pickle", dir=folder)
    with os.fdopen(fd, "wb") as fp:
        _Pickler(fp, pickle.HIGHEST_PROTOCOL).dump(output)
    return _Spooled(output.part, path, output.views, frozenset(output.trace_ids()))


def _load(spooled: _Spooled) -> _SliceOutput:
    """The output a worker spooled; the file is removed.

    Call with collections paused (:func:`_collections_paused`): loading makes some 100,000
    objects, none of them garbage, and each collection would walk them all again.
    """
    with open(spooled.path, "rb") as fp:
        data = fp.read()
    os.unlink(spooled.path)
    output: _SliceOutput = pickle.loads(data)
    return output


def _discard(spooled: _Spooled) -> None:
    os.unlink(spooled.path)


@contextmanager
def _collections_paused() -> Iterator[None]:
    """No cyclic garbage collection inside: a slice's objects are freed by reference counting
    when it has been passed on, before a collection would walk them (seconds over a big file)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


class _Pickler(pickle.Pickler):
    """Pickles a plain dataclass as a call of the class with its fields.

    The default (``__setstate__``, one ``dataclasses.fields`` lookup per object) makes loading
    the views of a slice take about twice as long, and the parent loads every one of them.
    """

    def reducer_override(self, obj: Any) -> Any:
        names = _positional_fields(type(obj))
        if names is None:
            return NotImplemented
        return type(obj), tuple([getattr(obj, name) for name in names])


_FIELDS: dict[type, tuple[str, ...] | None] = {}


def _positional_fields(cls: type) -> tuple[str, ...] | None:
    """The fields ``cls(*values)`` takes in order, if that rebuilds an instance (plain ones)."""
    try:
        return _FIELDS[cls]
    except KeyError:
        pass
    names = None
    params = cls.__dict__.get("__dataclass_params__")  # its own decorator's, not a base's
    if params is not None and params.init and not hasattr(cls, "__post_init__"):
        fields = dataclasses.fields(cls)
        if all(f.init and not f.kw_only for f in fields):
            names = tuple(f.name for f in fields)
    _FIELDS[cls] = names
    return names


def _score_slice(setup: _Setup, part: FileSlice) -> _SliceOutput:
    """Score one slice exactly as evaluate_traces scores a file, keeping every result."""
    results: list[_Entry] = []
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


class _SecretWatch:
    """The stream scrubber, noting whether any result was scrubbed of a secret."""

    def __init__(self, redactor: Redactor) -> None:
        self._stream = StreamScrubber(redactor)
        self.found = False

    @property
    def redactor(self) -> Redactor:
        return self._stream.redactor

    def for_result(self, result: ScenarioResult) -> Scrubber:
        scrubber = self._stream.for_result(result)
        self.found = self.found or bool(scrubber.secrets)
        return scrubber

    def for_summary(self, summary: SuiteResult) -> Scrubber:
        return self._stream.for_summary(summary)


def _with_views(
    output: _SliceOutput, how: _Views, keep: int | None, saturated: bool
) -> _SliceOutput:
    """The slice's views built by a feed like the parent's, or its results if one had a secret.

    A fresh stream scrubber that meets no secret gives each result the scrubber the parent's
    would give it as long as no earlier result had one (the parent checks that).
    """
    collected = ViewList()
    watch = _SecretWatch(how.redactor)
    feed = ReportFeed([collected], watch, trace_url=how.trace_url)
    positions: list[int] = []  # where each view goes among the entries
    entries: list[_Entry] = []
    sample: ResultSample[ScenarioResult] = ResultSample(keep)
    for entry in output.entries:
        result = cast(ScenarioResult, entry)
        if _unfinished(result):
            entries.append(result)  # reported at the end of the file: the parent builds it
            continue
        feed.add(result)
        positions.append(len(entries))
        entries.append(result)
        sample.add(result)
    if watch.found:
        return output
    prepared = prepare(how.reporters, collected.views, saturated=saturated)
    for position, ready in zip(positions, prepared.entries, strict=True):
        entries[position] = ready
    # what the summary may keep is a subset of what the slice alone keeps (see ResultSample)
    chosen = {id(result) for result in sample.scenarios}
    kept = {i: cast(ScenarioResult, r) for i, r in enumerate(output.entries) if id(r) in chosen}
    return _SliceOutput(
        output.part,
        entries,
        output.warnings,
        output.errors,
        output.deselected,
        output.interrupted,
        views=True,
        kept=kept,
        chunks=prepared.chunks,
    )


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
    temporary folder runs in-process. ``slice_bytes``: input per task (default: at most
    :data:`SLICE_BYTES`, four slices or more per worker).
    """
    take = _taker(progress, feed)
    size = _slice_size(paths, workers) if slice_bytes is None else slice_bytes
    parts = _iter_slices(paths, size)
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
    died: list[str] = []  # the warning, once a worker died: the pool is then unusable

    def scored(part: FileSlice) -> Future[_Spooled]:
        # once a result with a secret was passed on, a worker's scrubber would miss it
        task = _views_in_worker if views is not None and clean else _results_in_worker
        if not died:
            with suppress(BrokenProcessPool):
                return pool.submit(task, part)
        return _done(part)

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
        with _collections_paused():
            merge.emit(_load(spooled), last_of_file)
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


def _done(part: FileSlice) -> Future[_Spooled]:
    """A future the broken pool's slices stand in with: :func:`resolve` scores them here."""
    future: Future[_Spooled] = Future()
    future.set_exception(BrokenProcessPool(f"not scored in a worker: {part}"))
    return future


def _score_here(setup: _Setup, part: FileSlice) -> _Spooled:
    """A slice scored in this process, spooled as a worker would (its full results)."""
    with _collections_paused():
        return _spool(_score_slice(setup, part), setup.spool)


def _died(part: FileSlice) -> str:
    return (
        f"a --workers process ended abruptly (killed by a signal or the out-of-memory killer) "
        f"while {part.path} was being scored (from line {part.first_line}); the slices it had "
        "not sent back were scored in this process instead, with the same results"
    )
