"""Score trace inputs against policies, streamed: memory is the open traces plus the report.

Each trace the OTLP reader completes is read into a :class:`~tracing.otel.trace_run.TraceRun`
(:func:`~tracing.otel.trace_run.trace_run`) and added to a :class:`PolicyReport`; nothing of it
is kept but the counts, the figures of :mod:`harness.policies.stats` and the first examples. An
unreadable line or file, or a trace the reader cannot turn into a run, is a located warning and
the traces after it are still scored.

The inputs are those of ``harness eval-traces`` (:func:`tracing.otlp.inputs.trace_inputs`):
paths and sources (standard input, ``--logs``, ``--from``), read by the one reader. With
``--scenarios`` too, each trace is read once: :class:`PolicyPass` is the scenario pass's
per-trace hook (:data:`harness.traces.evaluate.TraceHook`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.policies.policy import Policy
from harness.policies.report import DEFAULT_EXAMPLES, PolicyReport
from harness.redaction import Redactor
from harness.rules import RuleResult
from tracing.otel.trace_run import TraceRun, trace_run
from tracing.otlp.reader import OtlpJsonError, OtlpJsonReader, OtlpTrace
from tracing.otlp.sources import SpanSource, readable

if TYPE_CHECKING:
    from harness.parallel.executor import Executor

__all__ = [
    "PolicyJob",
    "PolicyPass",
    "Progress",
    "TailRun",
    "evaluate_policies",
    "evaluate_policies_in_workers",
    "iter_trace_runs",
    "read_trace_run",
]

Progress = Callable[[TraceRun, list[RuleResult], str | None], None]
"""Sees each run, its rule results and its root span id as they are scored (``--emit-otel``)."""

Input = str | Path | SpanSource

TailRun = tuple[TraceRun, str, str | None]
"""A run complete only at the end of its slice: ``(run, "name:0", root span id)``."""


def read_trace_run(trace: OtlpTrace, shown: str, warnings: list[str]) -> TraceRun | None:
    """The run of one read trace; None (a located warning) when it cannot be read."""
    try:
        return trace_run(trace)
    except (ValueError, TypeError, ArithmeticError, RecursionError) as exc:
        what = "nested too deeply to read" if isinstance(exc, RecursionError) else str(exc)
        warnings.append(f"{shown}:{trace.line}: trace {trace.trace_id} skipped: {what}")
        return None


def iter_trace_runs(path: Input, warnings: list[str]) -> Iterator[tuple[TraceRun, str]]:
    """Every trace of an input as ``(run, "name:line")``; problems go to ``warnings``."""
    for _, run, source in _iter_runs(path, warnings):
        yield run, source


def _iter_runs(path: Input, warnings: list[str]) -> Iterator[tuple[OtlpTrace, TraceRun, str]]:
    shown = str(path)
    try:
        readable(path)
    except OSError as exc:
        warnings.append(f"{shown}: cannot read: {exc.strerror or exc}")
        return
    reader = OtlpJsonReader(path)
    reported = 0
    for trace in reader.iter_traces():
        reported = _collect(reader.errors, reported, warnings)
        run = read_trace_run(trace, shown, warnings)
        if run is not None:
            yield trace, run, f"{shown}:{trace.line}"
    _collect(reader.errors, reported, warnings)


def _collect(errors: list[OtlpJsonError], seen: int, warnings: list[str]) -> int:
    warnings.extend(str(error) for error in errors[seen:])
    return len(errors)


def _root_id(trace: OtlpTrace) -> str | None:
    return trace.root.span_id if trace.root is not None else None


class PolicyPass:
    """The policy pass as a per-trace hook of another reading (the scenario pass's).

    ``tail``: when given, traces complete only at the end of their input (the reader's line 0)
    are put there as ``(run, source, root span id)`` instead of being scored: a worker scoring
    one slice of a file leaves them to the parent, which scores them where one process would.
    """

    def __init__(
        self,
        report: PolicyReport,
        progress: Progress | None = None,
        tail: list[TailRun] | None = None,
    ) -> None:
        """Add every trace seen to ``report``; ``progress`` sees each trace's results."""
        self.report = report
        self.progress = progress
        self.tail = tail

    def __call__(self, trace: OtlpTrace, shown: str) -> None:
        """Score one trace read from the input named ``shown``; never raises."""
        run = read_trace_run(trace, shown, self.report.warnings)
        if run is None:
            return
        source, root = f"{shown}:{trace.line}", _root_id(trace)
        if self.tail is not None and not trace.line:
            self.tail.append((run, source, root))
            return
        self.score(run, source, root)

    def score(self, run: TraceRun, source: str | None, root: str | None) -> None:
        """Add one run to the report (and hand its results to ``progress``)."""
        results = self.report.add(run, source)
        if self.progress is not None:
            self.progress(run, results, root)


def evaluate_policies(
    paths: Iterable[Input],
    policies: Sequence[Policy],
    *,
    examples: int = DEFAULT_EXAMPLES,
    redactor: Redactor | None = None,
    progress: Progress | None = None,
    per_trace: bool = False,
) -> PolicyReport:
    """Score every trace of the inputs (paths or sources) against every policy that selects
    it, in input order.

    ``progress`` sees each run, its rule results and its root span id as they are scored
    (``--emit-otel``); ``per_trace`` keeps each trace's results in the report (``--per-trace``).
    Ctrl-C stops the reading: the report so far, marked ``interrupted``.
    """
    report = PolicyReport(policies, examples=examples, redactor=redactor, per_trace=per_trace)
    scoring = PolicyPass(report, progress)
    try:
        for path in paths:
            for trace, run, source in _iter_runs(path, report.warnings):
                scoring.score(run, source, _root_id(trace))
    except KeyboardInterrupt:
        report.interrupted = True
    return report


def evaluate_policies_in_workers(
    paths: Sequence[str],
    policies: Sequence[Policy],
    *,
    executor: Executor,
    examples: int = DEFAULT_EXAMPLES,
    redactor: Redactor | None = None,
    per_trace: bool = False,
    slice_bytes: int | None = None,
) -> PolicyReport:
    """:func:`evaluate_policies` of trace files on ``executor`` (the local pool, a Dask
    cluster; :func:`harness.parallel.traces.evaluate_traces_in_workers`, no scenario): the same
    report, the slices' reports merged in input order. One local worker or one slice: this
    process. ``slice_bytes``: input per slice (default: the pool's shrinking sizes)."""
    import itertools

    from harness.parallel import LocalPool
    from harness.parallel.shards import fixed_sizes, iter_slices, shrinking_sizes
    from harness.parallel.traces import evaluate_traces_in_workers

    workers = executor.workers
    alone = isinstance(executor, LocalPool) and workers <= 1
    sizes = shrinking_sizes(workers) if slice_bytes is None else fixed_sizes(slice_bytes)
    if alone or len(list(itertools.islice(iter_slices(paths, sizes), 2))) <= 1:
        return evaluate_policies(
            paths, policies, examples=examples, redactor=redactor, per_trace=per_trace
        )
    report = PolicyReport(policies, examples=examples, redactor=redactor, per_trace=per_trace)
    result = evaluate_traces_in_workers(
        paths, (), executor=executor, keep=0, slice_bytes=slice_bytes, policy=PolicyPass(report)
    )
    report.warnings.extend(result.warnings)  # unreadable lines and files, a lost worker
    report.interrupted = report.interrupted or result.interrupted
    return report


@dataclass(frozen=True, slots=True)
class PolicyJob:
    """What a worker needs to score its slice's traces against the policies (plain data)."""

    policies: tuple[Policy, ...]
    examples: int = DEFAULT_EXAMPLES
    redactor: Redactor | None = None
    per_trace: bool = False

    @classmethod
    def like(cls, report: PolicyReport) -> PolicyJob:
        """The job whose reports merge into ``report``."""
        policies = tuple(stats.policy for stats in report.policies)
        return cls(policies, report.examples, report.redactor, report.per_trace is not None)

    def new_pass(self, tail: list[TailRun]) -> PolicyPass:
        """A pass into an empty report, leaving the traces its slice did not complete in
        ``tail``."""
        report = PolicyReport(
            self.policies,
            examples=self.examples,
            redactor=self.redactor,
            per_trace=self.per_trace,
        )
        return PolicyPass(report, tail=tail)
