"""One slice in a worker: score it, build and render its report views, spool the output.

See :mod:`harness.workers` for what a worker sends back and why.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import pickle
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, cast

from harness.evaluate_traces import evaluate_traces
from harness.redaction import Redactor, Scrubber, StreamScrubber
from harness.report.base import (
    Counted,
    Reporter,
    ReportFeed,
    ViewList,
    prepare,
)
from harness.report.view import ScenarioView
from harness.result import ResultSample, ScenarioResult, SuiteResult
from harness.scenarios import Scenario
from tracing.otlp_json import FileSlice, OtlpJsonError


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


@dataclass(frozen=True, slots=True)
class _Whole:
    """What a spooled slice of views keeps apart from its counts (see :func:`_spool`): by
    position, each view some sample may keep, and the full results the summary may keep."""

    views: dict[int, ScenarioView]
    kept: dict[int, ScenarioResult]


def _spool(output: _SliceOutput, folder: str) -> _Spooled:
    """Write ``output`` to a new file of ``folder``.

    A slice of views is written in two pickles: first the output with each whole view as a
    :class:`~harness.report.base.Counted` and no kept result, then its :class:`_Whole`. A
    slice scored before the parent's samples were full may arrive after they are: the parent
    then reads only the first, about a twentieth of the loading (:func:`_load_counts`).
    """
    fd, path = tempfile.mkstemp(suffix=".pickle", dir=folder)
    with os.fdopen(fd, "wb") as fp:
        pickler = _Pickler(fp, pickle.HIGHEST_PROTOCOL)
        if not output.views:
            pickler.dump(output)
        else:
            entries = list(output.entries)
            whole: dict[int, ScenarioView] = {}
            for position, entry in enumerate(entries):
                if type(entry) is ScenarioView:
                    whole[position] = entry
                    entries[position] = Counted(entry.status, entry.trace_id)
            pickler.dump(dataclasses.replace(output, entries=entries, kept={}))
            pickler.clear_memo()  # each pickle loads on its own
            pickler.dump(_Whole(whole, output.kept))
    return _Spooled(output.part, path, output.views, frozenset(output.trace_ids()))


def _load(spooled: _Spooled) -> _SliceOutput:
    """The output a worker spooled; the file is removed.

    Call with collections paused (:func:`_collections_paused`): loading makes some 100,000
    objects, none of them garbage, and each collection would walk them all again.
    """
    with open(spooled.path, "rb") as fp:
        output: _SliceOutput = pickle.load(fp)
        if spooled.views:
            whole: _Whole = pickle.load(fp)
            entries = output.entries
            for position, view in whole.views.items():
                entries[position] = view
            output = dataclasses.replace(output, kept=whole.kept)
    os.unlink(spooled.path)
    return output


def _load_counts(spooled: _Spooled) -> _SliceOutput:
    """A spooled slice of views without its whole views and kept results: what the parent
    needs once no sample keeps anything more (each stands for its view as a ``Counted``, which
    a full sample counts as it would count the view). The file is removed."""
    assert spooled.views, "a slice of results has no counts-only form"
    with open(spooled.path, "rb") as fp:
        output: _SliceOutput = pickle.load(fp)
    os.unlink(spooled.path)
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


def _unfinished(result: ScenarioResult) -> bool:
    """Was this trace complete only because its slice ended (the reader's line 0)?"""
    return result.source is not None and result.source.endswith(":0")


def _score_here(setup: _Setup, part: FileSlice) -> _Spooled:
    """A slice scored in this process, spooled as a worker would (its full results)."""
    with _collections_paused():
        return _spool(_score_slice(setup, part), setup.spool)
