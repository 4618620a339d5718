"""Score trace files against policies, streamed: memory is the open traces plus the report.

Each trace the OTLP reader completes is read into a :class:`~tracing.otel.trace_run.TraceRun`
(:func:`~tracing.otel.trace_run.trace_run`) and added to a :class:`PolicyReport`; nothing of it
is kept but the counts and the first examples. An unreadable line or file, or a trace the reader
cannot turn into a run, is a located warning and the traces after it are still scored.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from harness.policies.policy import Policy
from harness.policies.report import DEFAULT_EXAMPLES, PolicyReport
from harness.redaction import Redactor
from harness.rules import RuleResult
from tracing.otel.trace_run import TraceRun, trace_run
from tracing.otlp.reader import OtlpJsonError, OtlpJsonReader

__all__ = ["evaluate_policies", "iter_trace_runs"]


def iter_trace_runs(
    path: str | os.PathLike[str], warnings: list[str]
) -> Iterator[tuple[TraceRun, str]]:
    """Every trace of an OTLP JSON file as ``(run, "path:line")``; problems go to ``warnings``."""
    shown = str(path)
    try:
        Path(path).open("rb").close()
    except OSError as exc:
        warnings.append(f"{shown}: cannot read: {exc.strerror or exc}")
        return
    reader = OtlpJsonReader(Path(path))
    reported = 0
    for trace in reader.iter_traces():
        reported = _collect(reader.errors, reported, warnings)
        try:
            run = trace_run(trace)
        except (ValueError, TypeError, ArithmeticError, RecursionError) as exc:
            what = "nested too deeply to read" if isinstance(exc, RecursionError) else str(exc)
            warnings.append(f"{shown}:{trace.line}: trace {trace.trace_id} skipped: {what}")
            continue
        yield run, f"{shown}:{trace.line}"
    _collect(reader.errors, reported, warnings)


def _collect(errors: list[OtlpJsonError], seen: int, warnings: list[str]) -> int:
    warnings.extend(str(error) for error in errors[seen:])
    return len(errors)


def evaluate_policies(
    paths: Iterable[str | os.PathLike[str]],
    policies: Sequence[Policy],
    *,
    examples: int = DEFAULT_EXAMPLES,
    redactor: Redactor | None = None,
    progress: Callable[[TraceRun, list[RuleResult]], None] | None = None,
) -> PolicyReport:
    """Score every trace of the files against every policy that selects it, in file order.

    ``progress`` sees each run and its rule results as they are scored (``--emit-otel``, a
    per-trace report). Ctrl-C stops the reading: the report so far, marked ``interrupted``.
    """
    report = PolicyReport(policies, examples=examples, redactor=redactor)
    try:
        for path in paths:
            for run, source in iter_trace_runs(path, report.warnings):
                results = report.add(run, source)
                if progress is not None:
                    progress(run, results)
    except KeyboardInterrupt:
        report.interrupted = True
    return report
