"""Offline evaluation: score recorded traces (OTLP JSON files) against scenario expectations.

``harness eval-traces FILE... --scenarios PATH...`` reads the collector's file-exporter format
(also what ``harness run --trace-file`` writes) line by line through ``tracing.otlp.file_format``,
so memory is bounded by the traces still open, never by the file. Each trace is matched to a
scenario by its root span's ``harness.scenario`` attribute (and ``harness.suite`` when present)
or, with ``--scenario NAME``, scored against that one scenario, and goes through the runner's
:func:`~harness.scoring.score_sample` (one scoring path). A trace without a matching scenario is
an ``error`` result that says why; an unreadable line becomes a warning with its line number.

A trace is complete at the end of the line that brought its root span (exporters write a span
when it ends, and a root ends after its children); a trace whose root never comes is complete
at the end of the file.

Results stream too: each one goes to the ``progress`` callback as it is scored (the CLI hands it
to its report feed, whose JSON and JUnit reporters write it to disk and forget it), and the returned
:class:`~harness.run.results.SuiteResult` keeps only a bounded sample (``keep``, default
:data:`KEPT_RESULTS`, failures and errors first) with counts of every result. So peak memory is
the open traces plus that sample, whatever the number of traces; the console and HTML reports
render from the sample and say how many results they do not show.

What a trace can tell: tool arguments and results are on the spans only when the run captured
content (``harness run --trace-file`` does unless ``--no-capture-content``; an OTLP export with
``--capture-content``), and redacted values arrive as ``"***"``; the final answer (for ``output``
checks) is the root span's ``harness.output``, else the last chat span's output messages, so it
too needs content capture. A trace without content says which calls have no arguments (and
whether the answer is missing): a scenario it cannot pass is an ``error`` that says so per call
and how to record content, never a failure blaming arguments that were not recorded
(:data:`harness.scoring.NOT_CAPTURED`).
"""

from __future__ import annotations

import difflib
import functools
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import UnknownScenarioError
from harness.metrics.base import Score
from harness.rules.trajectory import MODEL_CALLS_KEY
from harness.run.output_attribute import read_output
from harness.run.results import ErrorInfo, ResultSample, RunResult, ScenarioResult, SuiteResult
from harness.sample import Sample
from harness.scenarios import Scenario
from harness.scoring import NOT_CAPTURED, all_passed, judge, scored_run, verdict
from tracing.otel.conventions import GENAI_OUTPUT_MESSAGES, SCENARIO_NAME, CallSpanKind, classify
from tracing.otel.span_reading import json_value
from tracing.otel.span_view import SpanView
from tracing.otel.trace_run import chat_spans, model_calls_of
from tracing.otlp.reader import OtlpJsonError, OtlpJsonReader, OtlpTrace
from tracing.otlp.sources import SpanSource, readable
from tracing.records import ModelCall, ToolCall

__all__ = [
    "KEPT_RESULTS",
    "RecordedTrace",
    "ScenarioIndex",
    "TraceHook",
    "UnknownScenarioError",
    "evaluate_traces",
    "iter_recorded_traces",
]

SUITE_ATTRIBUTE = "harness.suite"
UNMATCHED_SUITE = "(no scenario)"


@dataclass(frozen=True, slots=True)
class RecordedTrace:
    """One complete trace from a file: its tool calls, its root span, and where it was read."""

    trace_id: str
    calls: list[ToolCall]
    root: SpanView | None
    output: Any
    path: str
    line: int
    uncaptured: tuple[int, ...] = ()
    """Indices of the calls whose tool span carries no arguments (recorded without content)."""
    output_captured: bool = True
    """False when the trace carries no final answer (no ``harness.output``, no chat output)."""
    spans: tuple[SpanView, ...] = ()
    """Its tool and chat spans, in file order (``OtlpTrace.spans``): what ``harness draft``
    reads the input and the model from."""
    model_calls: tuple[ModelCall, ...] | None = None
    """Its model calls (token usage, times) from its chat spans, in start order; None without
    any chat span (what rules on model calls and tokens read)."""

    @property
    def scenario(self) -> str | None:
        """The root span's ``harness.scenario`` attribute, if any."""
        return _str_attribute(self.root, SCENARIO_NAME)

    @property
    def suite(self) -> str | None:
        """The root span's ``harness.suite`` attribute, if any."""
        return _str_attribute(self.root, SUITE_ATTRIBUTE)

    @property
    def source(self) -> str:
        """``path:line`` of the line that completed the trace."""
        return f"{self.path}:{self.line}"


def _str_attribute(span: SpanView | None, key: str) -> str | None:
    if span is None:
        return None
    value = span.attributes.get(key)
    return value if isinstance(value, str) and value else None


def _final_output(views: Sequence[SpanView]) -> Any:
    """The text of the last chat reply that requested no tool (None without content capture)."""
    chats = [v for v in views if GENAI_OUTPUT_MESSAGES in v.attributes]
    for view in sorted(chats, key=lambda v: v.end_ns, reverse=True):
        try:
            messages = json_value(str(view.attributes[GENAI_OUTPUT_MESSAGES]))
        except ValueError:
            continue
        if not isinstance(messages, list) or not messages:
            continue
        last = messages[-1]
        parts = last.get("parts", []) if isinstance(last, Mapping) else []
        if any(isinstance(p, Mapping) and p.get("type") == "tool_call" for p in parts):
            return None  # the run's last turn still asked for tools: no final answer yet
        texts = [
            str(p.get("content", ""))
            for p in parts
            if isinstance(p, Mapping) and p.get("type") == "text"
        ]
        return "".join(texts)
    return None


def _uncaptured(
    calls: Sequence[ToolCall],
    views: Sequence[SpanView],
    kinds: Sequence[CallSpanKind | None] | None = None,
) -> tuple[int, ...]:
    """The calls without arguments whose tool span lacks its convention's arguments key: the
    run was recorded without content, so ``{}`` is not what the model sent.

    ``kinds``: :func:`~tracing.otel.conventions.classify` of each view, when the reader knows it.
    """
    lacking: list[int] = []
    spans: dict[str | None, tuple[SpanView, CallSpanKind | None]] | None = None
    for index, call in enumerate(calls):
        if call.args or call.run_id is None:
            continue  # most calls: arguments recorded, no span to look up
        if spans is None:  # built once, for the first call without arguments
            if kinds is None:
                kinds = [classify(view.attributes) for view in views]
            # the last span of each id, as the spans' order gives them
            spans = {view.span_id: (view, kind) for view, kind in zip(views, kinds, strict=True)}
        found = spans.get(call.run_id)
        if found is not None and _lacks_arguments(*found):
            lacking.append(index)
    return tuple(lacking)


def _lacks_arguments(view: SpanView | None, kind: CallSpanKind | None) -> bool:
    """A tool span (of that kind) without the attribute its convention keeps the arguments
    under."""
    if view is None or kind is None or kind[0] != "tool":
        return False
    return kind[1].arguments not in view.attributes


def _recorded(trace: OtlpTrace, path: str) -> RecordedTrace:
    # the answer the live run scored, from its root span (harness/run/output_attribute.py); else the
    # last chat reply, for traces that were not written by `harness run`
    root = trace.root
    found, output = read_output(root.attributes) if root is not None else (False, None)
    calls = trace.calls()
    chats = [view for view in trace.spans if GENAI_OUTPUT_MESSAGES in view.attributes]
    if not found:  # no chat span (most traces): no reply to look through
        output = _final_output(chats) if chats else None
    return RecordedTrace(
        trace.trace_id,
        calls,
        root,
        output,
        path,
        trace.line,
        _uncaptured(calls, trace.spans, trace.span_kinds),
        found or bool(chats),
        trace.spans,
        _model_calls(trace),
    )


def _model_calls(trace: OtlpTrace) -> tuple[ModelCall, ...] | None:
    """The model calls of a trace's chat spans, in start order (None when it has none)."""
    return model_calls_of(chat_spans(trace.spans, trace.span_kinds))


TraceHook = Callable[[OtlpTrace, str], None]
"""Sees every trace read, with the input's name, before it is scored (the ``--rules`` pass
reads each trace once with the scenarios: harness.policies.run.PolicyPass); never raises."""


def iter_recorded_traces(
    path: str | Path | SpanSource,
    errors: list[OtlpJsonError] | None = None,
    on_trace: TraceHook | None = None,
) -> Iterator[RecordedTrace]:
    """Stream every trace of a trace file (any format) or source; what cannot be read goes to
    ``errors``; ``on_trace`` sees each trace as read."""
    reader = OtlpJsonReader(path)
    shown = str(path)
    reported = 0
    for trace in reader.iter_traces():
        reported = _collect(reader, errors, reported)
        if on_trace is not None:
            on_trace(trace, shown)
        try:
            recorded = _recorded(trace, shown)
        except (ValueError, TypeError, ArithmeticError, RecursionError) as exc:
            # one unreadable trace (arguments nested 100,000 deep, a number out of range) is a
            # located warning; the traces after it are still scored
            if errors is not None:
                errors.append(OtlpJsonError(shown, trace.line, _skipped(trace.trace_id, exc)))
            continue
        yield recorded
    _collect(reader, errors, reported)


def _skipped(trace_id: str, exc: Exception) -> str:
    what = "nested too deeply to read" if isinstance(exc, RecursionError) else str(exc)
    return f"trace {trace_id} skipped: {what}"


def _collect(reader: OtlpJsonReader, errors: list[OtlpJsonError] | None, seen: int) -> int:
    if errors is not None:
        errors.extend(reader.errors[seen:])
    return len(reader.errors)


# --- matching traces to scenarios ---------------------------------------------------------------


class ScenarioIndex:
    """Finds the scenario a trace belongs to by name, and by suite when the trace names one."""

    def __init__(self, scenarios: Iterable[Scenario]) -> None:
        """Index ``scenarios`` by name and by (suite, name)."""
        self.scenarios = list(scenarios)
        self.by_name: dict[str, list[Scenario]] = {}
        self.by_key: dict[tuple[str, str], Scenario] = {}
        for scenario in self.scenarios:
            self.by_name.setdefault(scenario.name, []).append(scenario)
            self.by_key[(scenario.suite, scenario.name)] = scenario

    def named(self, name: str) -> Scenario:
        """The scenario ``name`` (or ``suite::name``); raises UnknownScenarioError with hints."""
        if "::" in name:
            suite, _, bare = name.partition("::")
            found = self.by_key.get((suite, bare))
            if found is not None:
                return found
        candidates = self.by_name.get(name, [])
        if len(candidates) == 1:
            return candidates[0]
        if len(candidates) > 1:
            ids = ", ".join(f"{s.suite}::{s.name}" for s in candidates)
            raise UnknownScenarioError(
                f"--scenario {name!r} is ambiguous: it names {ids}; pass one of those ids"
            )
        raise UnknownScenarioError(
            f"--scenario {name!r} names no scenario in the --scenarios files{self._hint(name)}"
        )

    def _hint(self, name: str) -> str:
        known = sorted({*self.by_name, *(f"{s}::{n}" for s, n in self.by_key)})
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        if close:
            return "; did you mean " + " or ".join(repr(c) for c in close) + "?"
        shown = ", ".join(repr(n) for n in sorted(self.by_name)[:10])
        return f"; known scenarios: {shown}" if shown else ""

    def match(self, trace: RecordedTrace) -> Scenario | str:
        """The trace's scenario, or a one-line reason why there is none."""
        root = trace.root  # trace.scenario and trace.suite, reading the root span once
        name = suite = None
        if root is not None:
            get = root.attributes.get
            name, suite = get(SCENARIO_NAME), get(SUITE_ATTRIBUTE)
            name = name if isinstance(name, str) and name else None
            suite = suite if isinstance(suite, str) and suite else None
        if name is None:
            return (
                f"the trace's root span has no {SCENARIO_NAME!r} attribute: pass --scenario NAME "
                "to score every trace against one scenario"
            )
        if suite is not None:
            found = self.by_key.get((suite, name))
            if found is not None:
                return found
            return f"no scenario {suite}::{name} in the --scenarios files{self._hint(name)}"
        candidates = self.by_name.get(name, [])
        if len(candidates) == 1:
            return candidates[0]
        if candidates:
            ids = ", ".join(f"{s.suite}::{s.name}" for s in candidates)
            return f"scenario name {name!r} is ambiguous ({ids}) and the trace names no suite"
        return f"no scenario named {name!r} in the --scenarios files{self._hint(name)}"


# --- scoring --------------------------------------------------------------------------------


def _lean(run: RunResult) -> RunResult:
    """A passing run without its recorded calls: a huge file keeps little per passing trace."""
    scores = _lean_scores(run.scores)
    return RunResult(run.index, run.passed, None, scores, run.checks, None, 0.0, run.trace_id)


def _lean_scores(scores: tuple[Score, ...]) -> tuple[Score, ...]:
    """The scores without their details (what a lean run keeps)."""
    return tuple([_lean_score(s.name, s.value, s.threshold, s.passed, s.reason) for s in scores])


def _lean_score(name: str, value: float, threshold: float, passed: bool, reason: str) -> Score:
    """A score without details; passing traces mostly repeat a few, so those are shared."""
    if value and threshold:
        return _shared_score(name, value, threshold, passed, reason)
    # 0.0 and -0.0 are one cache key but print apart: a zero is built, never shared
    return Score(name, value, threshold, passed, reason)


@functools.lru_cache(maxsize=1024, typed=True)
def _shared_score(name: str, value: float, threshold: float, passed: bool, reason: str) -> Score:
    """One Score per distinct (name, value, threshold, passed, reason): a Score is immutable,
    and ``typed`` keeps ``1`` and ``1.0`` apart (they print apart in the JSON report)."""
    return Score(name, value, threshold, passed, reason)


def _unmatched(trace: RecordedTrace, reason: str) -> ScenarioResult:
    sample = Sample(tool_calls=trace.calls, output=trace.output, trace_id=trace.trace_id)
    error = ErrorInfo("NoScenario", reason, "", "match")
    run = RunResult(0, False, sample, error=error, trace_id=trace.trace_id)
    return ScenarioResult(
        suite=trace.suite or UNMATCHED_SUITE,
        name=trace.scenario or "(unnamed)",
        file=trace.path,
        line=trace.line or None,
        status="error",
        runs=(run,),
        reasons=(f"error (match): {reason}",),
        trace_id=trace.trace_id,
        source=trace.source,
    )


def _trace_sample(scenario: Scenario, trace: RecordedTrace) -> Sample:
    """The sample a trace is scored on: its calls, answer and model calls, and what the
    recording lacks (scoring turns a verdict it decides on missing content into an error)."""
    metadata: dict[str, Any] = {"scenario": scenario.id, "trace": trace.trace_id}
    if trace.uncaptured or not trace.output_captured:
        gaps = {"calls": list(trace.uncaptured), "output": not trace.output_captured}
        metadata[NOT_CAPTURED] = gaps
    if trace.model_calls is not None:
        metadata[MODEL_CALLS_KEY] = list(trace.model_calls)
    return Sample(
        input=scenario.input_text,
        tool_calls=trace.calls,
        expected_tool_calls=scenario.expected,
        output=trace.output,
        metadata=metadata,
        trace_id=trace.trace_id,
    )


def score_trace(scenario: Scenario, trace: RecordedTrace, *, lean: bool = True) -> ScenarioResult:
    """Score one recorded trace against a scenario, as ``harness run`` scores a run."""
    trace_id = trace.trace_id
    sample = _trace_sample(scenario, trace)
    judged = judge(scenario, sample)  # then scored_run: score_sample, in two steps
    source = trace.source
    if lean and not isinstance(judged, ErrorInfo) and all_passed(*judged):
        # A passing run gives no reasons: its lean form (_lean) decides as it would, in one
        # verdict, and the full run is never built.
        scores, checks = judged
        run = RunResult(0, True, None, _lean_scores(scores), checks, None, 0.0, trace_id)
        result = verdict(scenario, (run,), 1, 0.0, trace_id=trace_id, source=source)
        if result.status == "passed":
            return result
    run = scored_run(scenario, sample, judged, trace_id=trace_id)
    result = verdict(scenario, (run,), 1, 0.0, trace_id=trace_id, source=source)
    if lean and result.status == "passed":
        return verdict(scenario, (_lean(run),), 1, 0.0, trace_id=trace_id, source=source)
    return result


KEPT_RESULTS = 500
"""Results :func:`evaluate_traces` keeps in memory by default (those that did not pass first)."""


def evaluate_traces(
    paths: Sequence[str | Path | SpanSource],
    scenarios: Sequence[Scenario],
    *,
    only: Scenario | None = None,
    selected: Callable[[Scenario], bool] | None = None,
    progress: Callable[[ScenarioResult], None] | None = None,
    lean: bool = True,
    errors: list[OtlpJsonError] | None = None,
    keep: int | None = KEPT_RESULTS,
    on_trace: TraceHook | None = None,
) -> SuiteResult:
    """Score every trace of the files, in file order; ``progress`` sees every result.

    Memory stays flat however many traces there are: each result goes to ``progress`` (where
    the streaming JSON and JUnit writers take it) and the returned SuiteResult keeps at most
    ``keep`` of them (:class:`~harness.run.results.ResultSample`: failures and errors first) while
    its ``counts`` count them all; ``keep=None`` keeps every result.

    ``only``: score every trace against this scenario. ``selected``: traces whose scenario it
    rejects are skipped (``-k``). ``lean``: passing traces keep scores, not recorded calls.
    Unreadable lines become the result's warnings and are also appended to ``errors``. Ctrl-C
    stops the reading and returns what was scored so far, marked ``interrupted``.
    ``on_trace``: :data:`TraceHook`, sees every trace read (selected by ``-k`` or not).
    """
    started_at = time.time()
    start = time.perf_counter()
    index = ScenarioIndex(scenarios)
    scoring = bool(scenarios) or only is not None or on_trace is None
    sample: ResultSample[ScenarioResult] = ResultSample(keep)
    errors = [] if errors is None else errors
    first_error = len(errors)
    warnings: list[str] = []
    deselected = 0
    interrupted = False
    try:
        for path in paths:
            try:
                traces = _stream_guard(path, errors, on_trace)
            except OSError as exc:
                warnings.append(f"{path}: cannot read: {exc.strerror or exc}")
                continue
            for trace in traces:
                if not scoring:  # no scenario (``--rules`` alone): read for ``on_trace`` only
                    continue
                found = only if only is not None else index.match(trace)
                if isinstance(found, str):
                    result = _unmatched(trace, found)
                elif selected is not None and not selected(found):
                    deselected += 1
                    continue
                else:
                    result = score_trace(found, trace, lean=lean)
                sample.add(result)
                if progress is not None:
                    progress(result)
    except KeyboardInterrupt:
        interrupted = True
    warnings.extend(str(error) for error in errors[first_error:])
    return traces_result(sample, warnings, deselected, started_at, start, interrupted=interrupted)


def traces_result(
    sample: ResultSample[ScenarioResult],
    warnings: list[str],
    deselected: int,
    started_at: float,
    start: float,
    *,
    interrupted: bool,
) -> SuiteResult:
    """The suite result of scored traces (one process or many: the same wording and counts)."""
    if deselected:
        warnings.append(f"{deselected} trace(s) of scenarios not selected by -k were skipped")
    return SuiteResult(
        scenarios=sample.scenarios,
        started_at=started_at,
        duration=time.perf_counter() - start,
        interrupted=interrupted,
        warnings=tuple(warnings),
        omitted=sample.omitted,
    )


def _stream_guard(
    path: str | Path | SpanSource, errors: list[OtlpJsonError], on_trace: TraceHook | None
) -> Iterator[RecordedTrace]:
    """The input's traces, streamed; an unopenable file raises OSError before the first one."""
    readable(path)
    return iter_recorded_traces(path, errors, on_trace)
