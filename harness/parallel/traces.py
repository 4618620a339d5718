"""``harness eval-traces --workers N``: trace files scored in slices on an executor.

The input is cut into slices of whole lines (:mod:`harness.parallel.shards`). A worker scores
one slice with the one scoring path, :func:`~harness.traces.evaluate.evaluate_traces`, and sends
back its results as they are: plain result data, lean for the traces that passed (scores, no
recorded calls). The parent takes the slices in input order and passes every result on as one
process would, so the reporters are fed in the parent, from one thread, with the views the
one-process feed builds (masked and scrubbed there: a secret seen in one slice is scrubbed out
of every later one). See docs/architecture.md, "Processes".

Where the slices meet, the parent mends what one process reads differently:

- a trace whose spans straddle a cut (a batching exporter split it over lines on both sides)
  shows up in both slices under one trace id: two such neighbours are scored again as one slice;
- a trace whose root never came is complete only at the end of its slice (the reader's line 0):
  one process reports it at the end of the file, after the slices that follow;
- spans of a trace an earlier slice completed are skipped with a warning, as one process does.

A worker that dies (a signal, the out-of-memory killer) breaks the local pool: each slice not
sent back yet, and every later one, is then scored in the parent, still in order, and one
warning says so. At most ``2 × workers`` slices are in flight, so memory stays bounded by the
slice size, not by the file.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.metrics.base import Score
from harness.parallel.executor import Channel, Executor, WorkerLost, in_order
from harness.parallel.local import LocalPool, stops_forwarded
from harness.parallel.shards import (
    fixed_sizes,
    iter_slices,
    joined,
    neighbours,
    shrinking_sizes,
)
from harness.run.results import CheckResult, ResultSample, RunResult, ScenarioResult, SuiteResult
from harness.scenarios import Scenario
from harness.traces.evaluate import KEPT_RESULTS, evaluate_traces, traces_result
from tracing.otlp.file_format import FileSlice, OtlpJsonError

if TYPE_CHECKING:
    from harness.policies.report import PolicyReport
    from harness.policies.run import PolicyJob, PolicyPass, TailRun

__all__ = [
    "Entry",
    "Lean",
    "ScoreSlice",
    "SliceOutput",
    "evaluate_traces_in_workers",
    "full",
    "lean",
]


Lean = tuple[tuple[Any, ...], tuple[Score, ...], tuple[CheckResult, ...], str | None, str | None]
"""A passing result of one lean run (no recorded calls, no error), as a worker sends it: its
scenario's fields (one tuple per scenario, so a slice's pickle holds it once), its scores and
checks (mostly shared too), its trace id and its source. Most traces pass, and a result
crosses as plain tuples for about a sixth of its cost: pickling and loading a passing
ScenarioResult took 26-29 µs, its lean form 3.3-4.5 µs with :func:`full` making it again
(20,000 benchmark traces, CPython 3.11)."""

Entry = ScenarioResult | Lean
"""What a worker sends for each result: the result, or its :data:`Lean` form."""

_HEAD = ("suite", "name", "file", "line", "repeat", "pass_rate", "xfail")
"""The fields of a lean result that its scenario gives (ScenarioResult's other fields are
those of one passing lean run)."""


def lean(result: ScenarioResult, heads: dict[tuple[Any, ...], tuple[Any, ...]]) -> Entry:
    """``result`` as a :data:`Lean` when :func:`full` gives it back exactly, else itself.

    ``heads``: the scenario tuples made so far, so equal ones are one object.
    """
    if result.status != "passed" or result.reasons or result.duration != 0.0:
        return result
    if len(result.runs) != 1:
        return result
    run = result.runs[0]
    if (
        run.index != 0
        or not run.passed
        or run.sample is not None
        or run.error is not None
        or run.duration != 0.0
        or run.paused
        or run.trace_id != result.trace_id
    ):
        return result
    head = tuple([getattr(result, name) for name in _HEAD])
    return (heads.setdefault(head, head), run.scores, run.checks, result.trace_id, result.source)


def full(entry: Entry) -> ScenarioResult:
    """The result a :data:`Lean` stands for (a result stays itself)."""
    if isinstance(entry, ScenarioResult):
        return entry
    (suite, name, file, line, repeat, pass_rate, xfail), scores, checks, trace_id, source = entry
    run = RunResult(0, True, None, scores, checks, None, 0.0, trace_id)
    return ScenarioResult(
        suite,
        name,
        file,
        line,
        "passed",
        (run,),
        repeat,
        pass_rate,
        xfail,
        (),
        0.0,
        trace_id,
        source,
    )


@dataclass(frozen=True, slots=True)
class SliceOutput:
    """One slice's results in file order (:data:`Entry`), and what its reading reported."""

    part: FileSlice
    entries: list[Entry]
    unreadable: list[str]
    """Files that could not be read (the reading's other warnings are ``errors``)."""
    errors: list[OtlpJsonError]
    deselected: int
    interrupted: bool
    policy: PolicyReport | None = None
    """The slice's ``--rules`` report (the traces it completed), merged by the parent."""
    policy_tail: tuple[TailRun, ...] = ()
    """Runs complete only at the slice's end: the parent scores them where one process would."""

    policy_ids: frozenset[str] = frozenset()
    """``--rules`` alone (no scenario results): the trace ids the policy pass read."""

    def trace_ids(self) -> set[str | None]:
        """The trace ids of the results (how a trace cut in two is recognised)."""
        ids = {e.trace_id if isinstance(e, ScenarioResult) else e[3] for e in self.entries}
        return (ids | self.policy_ids) - {None}


@dataclass(frozen=True, slots=True)
class ScoreSlice:
    """The eval-traces job: score one slice as :func:`evaluate_traces` scores a file.

    Plain data (a remote executor pickles it): the scenarios, the ``--scenario`` one, and the
    scenarios ``-k`` keeps (None: all); ``policies``: the ``--rules`` pass, scored on the same
    reading.
    """

    scenarios: tuple[Scenario, ...]
    only: Scenario | None
    kept: tuple[Scenario, ...] | None
    policies: PolicyJob | None = None

    def __call__(self, part: FileSlice, channel: Channel | None = None) -> SliceOutput:
        """The slice's results, every one of them (none is sampled away here)."""
        if not self.scenarios and self.policies is not None:  # --rules alone: no scenarios
            r = self.policies.read_slice(part)
            return SliceOutput(
                part, [], [], r.errors, 0, r.interrupted, r.report, r.tail, r.trace_ids
            )
        entries: list[Entry] = []
        heads: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        errors: list[OtlpJsonError] = []
        kept = None if self.kept is None else {id(scenario) for scenario in self.kept}
        skipped = 0

        def selected(scenario: Scenario) -> bool:
            nonlocal skipped
            if kept is None or id(scenario) in kept:
                return True
            skipped += 1
            return False

        tail: list[TailRun] = []
        policy = None if self.policies is None else self.policies.new_pass(tail)
        summary = evaluate_traces(
            [part],  # type: ignore[list-item]  # a FileSlice is read as its part of the file
            self.scenarios,
            only=self.only,
            selected=selected,
            progress=lambda result: entries.append(lean(result, heads)),
            errors=errors,
            keep=0,
            on_trace=policy,
        )
        # evaluate_traces lists unreadable files, then the errors, then the -k count
        unreadable = list(summary.warnings[: len(summary.warnings) - len(errors) - bool(skipped)])
        report = None if policy is None else policy.report
        return SliceOutput(
            part, entries, unreadable, errors, skipped, summary.interrupted, report, tuple(tail)
        )


def evaluate_traces_in_workers(
    paths: Sequence[str | Path],
    scenarios: Sequence[Scenario],
    *,
    executor: Executor,
    only: Scenario | None = None,
    selected: Callable[[Scenario], bool] | None = None,
    progress: Callable[[ScenarioResult], None] | None = None,
    errors: list[OtlpJsonError] | None = None,
    keep: int | None = KEPT_RESULTS,
    slice_bytes: int | None = None,
    policy: PolicyPass | None = None,
) -> SuiteResult:
    """:func:`~harness.traces.evaluate.evaluate_traces` over ``executor``'s workers.

    Same arguments and the same result: ``progress`` sees every result in input order (hand it
    a report feed's ``add``), the returned SuiteResult keeps at most ``keep`` of them with the
    counts of all, unreadable lines go to ``errors`` and the warnings. One worker or one slice
    runs in this process. ``slice_bytes``: input per slice (default:
    :func:`~harness.parallel.shards.shrinking_sizes`). ``policy``: the ``--rules`` pass; the
    workers score their slices' traces against its policies too, and their reports are merged
    into its report in input order (each trace is read once).
    """
    workers = executor.workers
    sizes = shrinking_sizes(workers) if slice_bytes is None else fixed_sizes(slice_bytes)
    parts = iter_slices(paths, sizes)
    # one local worker is this process; a cluster of one still takes the work off this machine
    alone = workers <= 1 and isinstance(executor, LocalPool)
    first = [] if alone else list(itertools.islice(parts, 2))
    if len(first) <= 1:  # one worker here, or one slice: no cut to number, nothing to send
        return evaluate_traces(
            paths,
            scenarios,
            only=only,
            selected=selected,
            progress=progress,
            errors=errors,
            keep=keep,
            on_trace=policy,
        )
    started_at, start = time.time(), time.perf_counter()
    kept = None if selected is None else tuple(s for s in scenarios if selected(s))
    policies = None
    if policy is not None:
        from harness.policies.run import PolicyJob

        policies = PolicyJob.like(policy.report)
    job = _scoring_only(ScoreSlice(tuple(scenarios), only, kept, policies))
    errors = [] if errors is None else errors
    first_error = len(errors)
    merge = _Merge(ResultSample(keep), progress, errors, policy)
    lost: list[str] = []  # the warning, once a worker died

    def output(part: FileSlice, future: Future[SliceOutput]) -> SliceOutput:
        try:
            return future.result()
        except WorkerLost as exc:
            # a worker was killed (the out-of-memory killer, a signal): score the slice here
            local = isinstance(executor, LocalPool)
            if not lost or not local:  # a cluster loses one task at a time: name each
                lost.append(_lost(part, exc, local))
            return job(part)

    session = executor.open(job)
    try:
        with stops_forwarded():
            held: SliceOutput | None = None
            for part, future in in_order(session, itertools.chain(first, parts), 2 * workers):
                scored = output(part, future)
                if (
                    held is not None
                    and neighbours(held.part, part)
                    and held.trace_ids() & scored.trace_ids()
                ):
                    # a trace cut in two: score both slices again as one, as one process reads
                    both = joined(held.part, part)
                    scored, held = output(both, session.submit(both)), None
                if held is not None:
                    merge.emit(held, last_of_file=not neighbours(held.part, part))
                held = scored
            if held is not None:
                merge.emit(held, last_of_file=True)
    except KeyboardInterrupt:
        merge.interrupted = True
    finally:
        session.close(cancel=True)
    warnings = lost + merge.unreadable + [str(error) for error in errors[first_error:]]
    return traces_result(
        merge.sample, warnings, merge.deselected, started_at, start, interrupted=merge.interrupted
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


class _Merge:
    """Passes the slices' results on in input order, as one process would have produced them."""

    def __init__(
        self,
        sample: ResultSample[ScenarioResult],
        progress: Callable[[ScenarioResult], None] | None,
        errors: list[OtlpJsonError],
        policy: PolicyPass | None = None,
    ) -> None:
        self.sample = sample
        self.policy = policy
        self.policy_tail: list[TailRun] = []
        self._progress = progress
        self.errors = errors
        self.unreadable: list[str] = []
        self.deselected = 0
        self.interrupted = False
        self.tail: list[ScenarioResult] = []  # traces the current file never completed
        self.finished = _RecentIds()  # traces already passed on from this file

    def emit(self, output: SliceOutput, *, last_of_file: bool) -> None:
        """Pass on one slice's results (``last_of_file``: then those its file never completed)."""
        self.unreadable.extend(output.unreadable)
        self.errors.extend(output.errors)
        finished = self.finished
        ids: list[str | None] = []
        for entry in output.entries:
            result = full(entry)
            if _unfinished(result):
                if result.trace_id in finished:
                    # spans of a trace already complete further up: one process skips them, too
                    message = (
                        f"spans of trace {result.trace_id} arrive after the trace was complete; "
                        "skipped"
                    )
                    self.errors.append(OtlpJsonError(os.fspath(output.part.path), 0, message))
                    continue
                # One process reports a trace whose root never came at the end of its file
                # (line 0), not at the end of the slice that happened to hold its spans.
                self.tail.append(result)
            else:
                self._pass_on(result)
            ids.append(result.trace_id)
        self._policies(output)
        # the reader of one slice skips the late spans within it itself
        finished.update(ids or output.policy_ids)
        if last_of_file:
            for result in self.tail:
                self._pass_on(result)
            self.tail.clear()
            if self.policy is not None:
                for run, source, root in self.policy_tail:
                    self.policy.score(run, source, root)
            self.policy_tail.clear()
            finished.clear()
        self.deselected += output.deselected
        self.interrupted = self.interrupted or output.interrupted

    def _policies(self, output: SliceOutput) -> None:
        """Merge the slice's policy report; keep its unfinished runs for the file's end."""
        if self.policy is None or output.policy is None:
            return
        self.policy.report.merge(output.policy)
        for item in output.policy_tail:
            if item[0].trace_id not in self.finished:  # late spans: skipped, as for scenarios
                self.policy_tail.append(item)

    def _pass_on(self, result: ScenarioResult) -> None:
        self.sample.add(result)
        if self._progress is not None:
            self._progress(result)


def _unfinished(result: ScenarioResult) -> bool:
    """Was this trace complete only because its slice ended (the reader's line 0)?"""
    return result.source is not None and result.source.endswith(":0")


def _lost(part: FileSlice, error: WorkerLost, local: bool) -> str:
    where = f"{part.path} (from line {part.first_line})"
    if not local:  # a cluster goes on: this slice alone came back without its results
        return f"{error}; that slice was scored in this process instead, with the same results"
    return (
        f"a --workers process ended abruptly (killed by a signal or the out-of-memory killer) "
        f"while {where} was being scored; the slices it had "
        "not sent back were scored in this process instead, with the same results"
    )


def _scoring_only(job: ScoreSlice) -> ScoreSlice:
    """``job`` with its scenarios as eval-traces loads them: no agent factory, no model.

    Scoring reads neither, and a factory loaded from a file (``agent: agent.py:build``) lives
    in a module that only the parent has, so a worker in a fresh process could not unpickle it.
    """
    from harness.scenarios.agents import named_agent

    plain: dict[int, Scenario] = {}
    for scenario in (*job.scenarios, *(job.kept or ()), *((job.only,) if job.only else ())):
        plain.setdefault(
            id(scenario),
            dataclasses.replace(scenario, agent=named_agent(scenario.agent.spec), model=None),
        )
    kept = None if job.kept is None else tuple(plain[id(s)] for s in job.kept)
    only = None if job.only is None else plain[id(job.only)]
    return ScoreSlice(tuple(plain[id(s)] for s in job.scenarios), only, kept, job.policies)
