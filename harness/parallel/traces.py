"""``harness eval-traces --workers N``: trace files scored in slices on an executor.

The input is cut into slices of whole lines (:mod:`harness.parallel.shards`). A worker scores
one slice with the one scoring path, :func:`~harness.traces.evaluate.evaluate_traces`, and sends
back its results as they are: plain result data, lean for the traces that passed (scores, no
recorded calls). The parent takes the slices in input order and passes every result on as one
process would, so the reporters are fed in the parent, from one thread, with the views the
one-process feed builds (masked and scrubbed there: a secret seen in one slice is scrubbed out
of every later one). See docs/architecture.md, "Processes".

Where the slices meet: a cut falls at any newline, so a trace's spans may sit on both sides of
it (a batching exporter, or concurrent requests, write traces interleaved). Each slice owns the
traces it *completes* (their root comes last: exporters write a span when it ends), and the
trace whose root never comes is the last slice's (one process reports it at the end of the
file). Its worker first reads a lead-in, the lines before the slice
(:class:`~harness.parallel.shards.LeadIn`), only to gather the earlier spans of those traces:
traces completed there, and what cannot be read there, are the slice before's; traces still
open at its end are not its own, and are not scored. Each worker lists every trace it handed
out with the line of its first span and the line that completed it (``SliceOutput.ledger``),
and the parent, taking slices in input order, keeps what one process would know at the cut:
the traces open there with the line of their first span, and the traces already complete. A
slice is taken as it is when its worker saw every trace it completes from its first span on,
took no span of a completed trace for a new trace, and (the last slice) saw every trace still
open; otherwise (a trace longer than the lead-in, late spans of a trace completed before it) it
is scored again with a lead-in from the first span of the open traces it completes (all open
ones, the last slice), reading only their spans there, and told the traces complete before
it, so it reads as one process would. So the results, errors and policy reports are one
process's, in its order, with no trace scored twice, and a file whose traces are always
interleaved is still cut. The parent holds trace ids only: those open at the cut (as one
process holds those traces) and the complete ones the reader remembers
(:data:`~tracing.otlp.reader.REMEMBERED_COMPLETE`, replayed in the same order, so a late span
is reported, or read as a new trace, exactly when one process does).

How long a lead-in: what the file shows. A cut file's first slice is short
(:data:`~harness.parallel.shards.FIRST_SLICE_BYTES`); the input's first one is scored in the
parent before a worker starts (the workers then fork with what it warmed up, and its results
are passed on while they start), a later file's with only ``workers`` slices out. Each later
slice is cut when the one before it is taken, so its lead-in covers twice the longest trace
seen so far, first span to root, in lines at the file's bytes per line (before a trace
completed, twice the age of the oldest open one), at least 64 KB, and twice any lead-in that
fell short (:meth:`~harness.parallel.shards.LeadIn.bytes_before`); the slice is at least
twice its lead-in. A trace longer than that costs its slice a second scoring, and the spread it
shows sizes the next lead-ins. Cutting a file must not cost more than it saves: before each
slice the parent reads the rest of the file itself, as one process would, when more than
:data:`_ROOTLESS` traces are open and more stay open than complete (roots in another service:
the last slice would read them all again), when a third of its slices had to be scored again,
or when the lead-in the file asks for reaches half of
:data:`~harness.parallel.shards.SLICE_BYTES`; the slices of it in flight are dropped, and its
later lines are not cut. Such a file costs little more than in one process (its first slice
is read twice at most, in a lead-in that holds only the open traces' spans), and the parent
passes the results on as it scores them.

Why not partitions by trace id (N tasks over one range, each keeping the traces whose id
hashes to it): each task still reads every line, and the parent must hold and interleave N
whole streams of results to restore one process's order; the lead-in costs a few hundred
kilobytes read twice per slice.

A worker that dies (a signal, the out-of-memory killer) breaks the local pool: each slice not
sent back yet, and every later one, is then scored in the parent, still in order, and one
warning says so. At most ``2 × workers`` slices are in flight, so memory stays bounded by the
slice size, not by the file.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.metrics.base import Score
from harness.parallel.executor import Channel, Executor, Session, WorkerLost
from harness.parallel.local import LocalPool, stops_forwarded
from harness.parallel.shards import (
    FIRST_SLICE_BYTES,
    LeadIn,
    fixed_sizes,
    iter_slices,
    refit,
    shrinking_sizes,
)
from harness.run.results import CheckResult, ResultSample, RunResult, ScenarioResult, SuiteResult
from harness.scenarios import Scenario
from harness.traces.evaluate import KEPT_RESULTS, evaluate_traces, traces_result
from tracing.otlp.file_format import FileSlice, OtlpJsonError
from tracing.otlp.reader import REMEMBERED_COMPLETE, OtlpTrace, RecentTraces

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


Ledger = tuple[tuple[str, int, int], ...]
"""``(trace id, line of its first span, line that completed it)`` of every trace a worker's
reader handed out, in that order (line 0: still open at the slice's end)."""


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
    ledger: Ledger = ()
    """What the parent checks the slice against (:data:`Ledger`)."""


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
        """The slice's results, every one of them (none is sampled away here).

        A trace still open at the end of a slice that stops before the end of its file is
        not this slice's (a later one completes it, or the last one reports it): it goes to
        the ledger only, unscored.
        """
        entries: list[Entry] = []
        heads: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        output = self.scored(part, lambda result: entries.append(lean(result, heads)))
        return dataclasses.replace(output, entries=entries)

    def scored(self, part: FileSlice, sink: Callable[[ScenarioResult], None]) -> SliceOutput:
        """Score ``part``, handing each of its results to ``sink`` as it comes (the output's
        ``entries`` stay empty)."""
        final = part.line_count is None
        errors: list[OtlpJsonError] = []
        ledger: list[tuple[str, int, int]] = []
        kept = None if self.kept is None else {id(scenario) for scenario in self.kept}
        skipped = declined = 0  # -k's count; and with the traces not this slice's
        others = False  # the trace being scored is not this slice's

        def on_trace(trace: OtlpTrace, shown: str) -> None:
            nonlocal others
            ledger.append((trace.trace_id, trace.first_line, trace.line))
            others = not final and not trace.line
            if policy is not None and not others:
                policy(trace, shown)

        def selected(scenario: Scenario) -> bool:
            nonlocal skipped, declined
            if kept is not None and id(scenario) not in kept:
                skipped += not others
            elif not others:
                return True
            declined += 1  # (others: not scored here, its results would be dropped)
            return False

        def progress(result: ScenarioResult) -> None:
            if not others:
                sink(result)

        tail: list[TailRun] = []
        policy = None if self.policies is None else self.policies.new_pass(tail)
        summary = evaluate_traces(
            [part],  # type: ignore[list-item]  # a FileSlice is read as its part of the file
            self.scenarios,
            only=self.only,
            selected=selected,
            progress=progress,
            errors=errors,
            keep=0,
            on_trace=on_trace,
        )
        # evaluate_traces lists unreadable files, then the errors, then what selected declined
        unreadable = list(summary.warnings[: len(summary.warnings) - len(errors) - bool(declined)])
        if not final:  # (a trace skipped at the slice's end, line 0, is not this slice's)
            errors = [error for error in errors if error.line]
        report = None
        if policy is not None:
            for run, source, root in tail:  # the traces open at the end, as one process
                policy.score(run, source, root)
            report = policy.report
        return SliceOutput(
            part,
            [],
            unreadable,
            errors,
            skipped,
            summary.interrupted,
            report,
            tuple(ledger),
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
    lead_in = LeadIn.first()
    parts = iter_slices(paths, sizes, lead_in, FIRST_SLICE_BYTES)
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
    cut, rest, files = _Cut(), first[0], -1  # (rest: what is read here to its file's end)

    def output(part: FileSlice, future: Future[SliceOutput]) -> SliceOutput:
        try:
            return future.result()
        except WorkerLost as exc:
            # a worker was killed (the out-of-memory killer, a signal): score the slice here
            local = isinstance(executor, LocalPool)
            if not lost or not local:  # a cluster loses one task at a time: name each
                lost.append(_lost(part, exc, local))
            return job(part)

    def passed_on(result: ScenarioResult) -> None:
        merge.emit(SliceOutput(rest, [result], [], [], 0, False))

    def read_on(number: int, part: FileSlice) -> None:
        # cutting this file costs more than it saves: its rest is read here, as one process
        # would, and the slices of it in flight are dropped
        nonlocal rest
        lead_in.uncut.add(number)
        rest = cut.again(dataclasses.replace(part, line_count=None))
        merge.emit(job.scored(rest, passed_on))

    head = None
    if first[0].line_count is not None:
        # a cut file's first slice is scored here before a worker starts: the lead-in of every
        # later slice is sized from it, a file whose traces never complete is read on here
        # with no slice scored in vain, and the workers fork with what it warmed up
        head = job(first[0])
        cut.advance(head)
        lead_in.lines = cut.reach
        first, files = [refit(first[1], lead_in)], 0  # (cut before the lead-in was sized)
        if head.interrupted:
            merge.emit(head)
            first, parts, head = [], iter(()), None
        elif cut.hopeless(first[0], lead_in):
            merge.emit(head)
            read_on(0, first[0])
            first, head = [], None
    session = executor.open(job)
    slices = _InFlight(session, itertools.chain(first, parts), workers, files)
    try:
        with stops_forwarded():
            slices.fill()  # the workers start while this process passes the first results on
            if head is not None:
                merge.emit(head)
            for number, part, future in slices:
                if number in lead_in.uncut:
                    continue  # its file's rest was read here
                if not part.start:  # a file's first slice
                    cut = _Cut()
                elif cut.hopeless(part, lead_in):
                    read_on(number, part)
                    continue
                scored = output(part, future)
                short = cut.missed(scored)
                if short is not None:
                    # scored again with a lead-in from where one process began those traces
                    again = cut.again(part, scored)
                    scored = output(again, session.submit(again))
                    cut.rescored += 1
                    if short and part.lead_in is not None:  # (lines longer than most, too)
                        lead_in.fell_short = max(lead_in.fell_short, part.start - part.lead_in)
                cut.advance(scored)
                lead_in.lines = cut.reach
                slices.fill()  # the next slices cut with the lead-in sized from it
                merge.emit(scored)
    except KeyboardInterrupt:
        merge.interrupted = True
    finally:
        session.close(cancel=True)
    warnings = lost + merge.unreadable + [str(error) for error in errors[first_error:]]
    return traces_result(
        merge.sample, warnings, merge.deselected, started_at, start, interrupted=merge.interrupted
    )


class _InFlight:
    """The slices, each with its future, in input order, with the number of its file.

    :func:`~harness.parallel.executor.in_order`, but a slice is cut and submitted when the
    parent asks (:meth:`fill`), after it took the slice before, so its lead-in is sized from
    all the slices taken; and while a cut file's first slice is out, only ``workers`` are (the
    later ones wait for the lead-in it sizes).
    """

    def __init__(
        self,
        session: Session[FileSlice, SliceOutput],
        parts: Iterator[FileSlice],
        workers: int,
        files: int = -1,
    ) -> None:
        """``files``: the position in the input of the file ``parts`` go on with (-1: they
        begin with a file's first slice)."""
        self._session, self._parts, self._workers = session, parts, workers
        self._pending: deque[tuple[int, FileSlice, Future[SliceOutput]]] = deque()
        self._files = files  # the file of the last slice cut (its position in the input)
        self._probing = 0  # cut files' first slices in flight

    def fill(self) -> None:
        """Submit slices up to the limit."""
        pending = self._pending
        while len(pending) < (self._workers if self._probing else 2 * self._workers):
            part = next(self._parts, None)
            if part is None:
                return
            if not part.start:
                self._files += 1
                self._probing += part.line_count is not None
            pending.append((self._files, part, self._session.submit(part)))

    def __iter__(self) -> Iterator[tuple[int, FileSlice, Future[SliceOutput]]]:
        self.fill()
        pending = self._pending
        while pending:
            number, part, future = pending.popleft()
            if not part.start and part.line_count is not None:
                self._probing -= 1
            yield number, part, future
            self.fill()


_ROOTLESS = 100
"""Open traces above which a file where more stay open than complete is read as one process."""


class _Cut:
    """What one process reading a file would know where the current slice starts, and what
    cutting it has cost so far."""

    def __init__(self) -> None:
        self.open: dict[str, int] = {}
        """Traces open here: the line of each one's first span."""
        self.complete = RecentTraces(REMEMBERED_COMPLETE)
        """The complete traces the reader remembers (their late spans are errors)."""
        self.lines: list[int] = []
        self.offsets: list[int] = []
        """The first line and the byte offset of each slice so far."""
        self.spread = 0
        """The most lines from a trace's first span to its root so far."""
        self.end = 1
        """The line after the slices so far."""
        self.completed = 0
        self.rescored = 0
        """Slices scored again (:meth:`missed`)."""

    def missed(self, output: SliceOutput) -> bool | None:
        """None when the slice read its traces as one process; else True when a trace it
        completed began before its lead-in, False for another reason."""
        if output.interrupted:
            return None  # (what it scored is reported as it is)
        part, opened, complete = output.part, self.open, self.complete.lines
        final = part.line_count is None
        for trace_id, first, line in output.ledger:
            began = opened.get(trace_id)
            if began is not None:
                # a trace it completes (or, the last slice, reports open) whose first spans
                # are before its lead-in; one it leaves open is not its to report
                if began != first and (line or final):
                    return bool(line)
            elif trace_id in complete or first < part.first_line:
                return False  # spans after its root: one process reports them
        if final and opened:  # the last slice reports the open traces
            ids = {trace_id for trace_id, _, _ in output.ledger}
            if not ids.issuperset(opened):
                return False
        return None

    def hopeless(self, part: FileSlice, lead_in: LeadIn) -> bool:
        """Would cutting the rest of the file at ``part`` cost more than it saves?

        When more traces stay open than complete (their roots live elsewhere), the last slice
        would read them all again; when a third of the slices had to be scored again, or the
        lead-in the spread asks for reaches half a slice, every slice is read nearly twice.
        """
        if len(self.open) > max(_ROOTLESS, self.completed):
            return True
        if self.rescored >= 2 and 3 * self.rescored > len(self.lines):
            return True
        return not lead_in.fits(part.start, part.first_line)

    def again(self, part: FileSlice, output: SliceOutput | None = None) -> FileSlice:
        """``part`` with a lead-in from the first span of the traces open at its start that it
        needs (those ``output``, its first scoring, completed; all when it is the file's last),
        reading only theirs, and the traces complete before it."""
        complete = tuple(self.complete.lines.items())
        needed = self.open
        if output is not None and part.line_count is not None:
            completes = {trace_id for trace_id, _, line in output.ledger if line}
            needed = {key: line for key, line in needed.items() if key in completes}
        begins = min(needed.values(), default=part.first_line)
        if begins >= part.first_line:
            return dataclasses.replace(part, lead_in=None, lead_ids=None, complete=complete)
        index = bisect.bisect_right(self.lines, begins) - 1  # the slice it began in
        return dataclasses.replace(
            part,
            lead_in=self.offsets[index],
            lead_in_line=self.lines[index],
            lead_ids=frozenset(needed),
            complete=complete,
        )

    def advance(self, output: SliceOutput) -> None:
        """Move past ``output``'s slice."""
        opened, complete = self.open, self.complete
        for trace_id, first, line in output.ledger:
            if line:
                began = opened.pop(trace_id, first)
                complete.add(trace_id, line)
                self.completed += 1
                self.spread = max(self.spread, line - began)
            else:
                opened.setdefault(trace_id, first)
        self.lines.append(output.part.first_line)
        self.offsets.append(output.part.start)
        self.end = output.part.first_line + (output.part.line_count or 0)

    @property
    def reach(self) -> int | None:
        """The lines a lead-in should cover (:attr:`LeadIn.lines`): the longest trace so far;
        before any completed, twice the age of the oldest one open (None: no trace yet)."""
        if self.completed:
            return self.spread
        if self.open:
            return 2 * (self.end - min(self.open.values()))
        return None


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
        self._progress = progress
        self.errors = errors
        self.unreadable: list[str] = []
        self.deselected = 0
        self.interrupted = False

    def emit(self, output: SliceOutput) -> None:
        """Pass on one slice's results."""
        self.unreadable.extend(output.unreadable)
        self.errors.extend(output.errors)
        for entry in output.entries:
            result = full(entry)
            self.sample.add(result)
            if self._progress is not None:
                self._progress(result)
        if self.policy is not None and output.policy is not None:
            self.policy.report.merge(output.policy)
        self.deselected += output.deselected
        self.interrupted = self.interrupted or output.interrupted


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
