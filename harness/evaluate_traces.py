"""Offline evaluation: score recorded traces (OTLP JSON files) against scenario expectations.

``harness eval-traces FILE... --scenarios PATH...`` reads the collector's file-exporter format
(also what ``harness run --trace-file`` writes) line by line through ``tracing.otlp_json``, so
memory is bounded by the traces still open, never by the file. Each trace is matched to a
scenario by its root span's ``harness.scenario`` attribute (and ``harness.suite`` when present)
or, with ``--scenario NAME``, scored against that one scenario, and goes through the runner's
:func:`~harness.runner.score_sample` (one scoring path). A trace without a matching scenario is
an ``error`` result that says why; an unreadable line becomes a warning with its line number.

A trace is complete at the end of the line that brought its root span (exporters write a span
when it ends, and a root ends after its children); a trace whose root never comes is complete
at the end of the file.

What a trace can tell: tool arguments and results are on the spans only when the run captured
content (``--capture-content``), and redacted values arrive as ``"***"``; the final answer (for
``output`` checks) is read from the last chat span's output messages, so it too needs content
capture.
"""

from __future__ import annotations

import difflib
import json
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.metrics.base import Score
from harness.result import ErrorInfo, RunResult, ScenarioResult, SuiteResult
from harness.runner import score_sample, verdict
from harness.sample import Sample
from harness.scenarios import Scenario
from tracing.conventions import GENAI_OUTPUT_MESSAGES
from tracing.exporter import SpanView, calls_from_spans, relevant_role
from tracing.otlp_json import OtlpJsonError, OtlpJsonReader
from tracing.records import ToolCall
from tracing.spans import SCENARIO_NAME

__all__ = [
    "RecordedTrace",
    "ScenarioIndex",
    "UnknownScenarioError",
    "evaluate_traces",
    "iter_recorded_traces",
]

SUITE_ATTRIBUTE = "harness.suite"
UNMATCHED_SUITE = "(no scenario)"
_REMEMBERED_COMPLETE = 65_536
"""Completed trace ids remembered to report a span arriving after its trace was scored."""


class UnknownScenarioError(ValueError):
    """``--scenario NAME`` names no loaded scenario; the message suggests the closest names."""


@dataclass(frozen=True, slots=True)
class RecordedTrace:
    """One complete trace from a file: its tool calls, its root span, and where it was read."""

    trace_id: str
    calls: list[ToolCall]
    root: SpanView | None
    output: Any
    path: str
    line: int

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


@dataclass(slots=True)
class _Open:
    """What an open trace holds: its tool/chat spans, every other span's parent, its root."""

    views: list[SpanView] = field(default_factory=list)
    parents: dict[str, str | None] = field(default_factory=dict)
    root: SpanView | None = None


def _final_output(views: Sequence[SpanView]) -> Any:
    """The text of the last chat reply that requested no tool (None without content capture)."""
    chats = [v for v in views if GENAI_OUTPUT_MESSAGES in v.attributes]
    for view in sorted(chats, key=lambda v: v.end_ns, reverse=True):
        try:
            messages = json.loads(str(view.attributes[GENAI_OUTPUT_MESSAGES]))
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


def _finish(trace_id: str, trace: _Open, path: str, line: int) -> RecordedTrace:
    calls = calls_from_spans(trace.views, trace.parents) if trace.views else []
    return RecordedTrace(trace_id, calls, trace.root, _final_output(trace.views), path, line)


def iter_recorded_traces(
    path: str | Path, errors: list[OtlpJsonError] | None = None
) -> Iterator[RecordedTrace]:
    """Stream every trace of an OTLP JSON file; unreadable lines go to ``errors``."""
    reader = OtlpJsonReader(path)
    open_traces: dict[str, _Open] = {}
    complete: OrderedDict[str, int] = OrderedDict()
    shown = str(path)
    reported = 0
    # _lines() is the reader's line-by-line stream (its public iterators drop root spans)
    for number, views in reader._lines():
        finished: list[str] = []
        for view in views:
            if view.trace_id in complete:
                reader._error(
                    number,
                    f"span {view.span_id} of trace {view.trace_id} arrives after the trace was "
                    f"complete (root span on line {complete[view.trace_id]}); skipped",
                )
                continue
            trace = open_traces.get(view.trace_id)
            if trace is None:
                trace = open_traces[view.trace_id] = _Open()
            if relevant_role(view.attributes) is not None:
                trace.views.append(view)
            else:
                trace.parents[view.span_id] = view.parent_id
            if view.parent_id is None:
                trace.root = view
                finished.append(view.trace_id)
        reported = _collect(reader, errors, reported)
        for trace_id in finished:
            trace = open_traces.pop(trace_id, None)
            if trace is None:
                continue  # two roots of one trace on one line
            complete[trace_id] = number
            if len(complete) > _REMEMBERED_COMPLETE:
                complete.popitem(last=False)
            yield _finish(trace_id, trace, shown, number)
    _collect(reader, errors, reported)
    last_line = 0
    for trace_id, trace in open_traces.items():
        yield _finish(trace_id, trace, shown, last_line)


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
        name, suite = trace.scenario, trace.suite
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
    scores = tuple(Score(s.name, s.value, s.threshold, s.passed, s.reason) for s in run.scores)
    return RunResult(run.index, run.passed, None, scores, run.checks, None, 0.0, run.trace_id)


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


def score_trace(scenario: Scenario, trace: RecordedTrace, *, lean: bool = True) -> ScenarioResult:
    """Score one recorded trace against a scenario, as ``harness run`` scores a run."""
    sample = Sample(
        input=scenario.input_text,
        tool_calls=trace.calls,
        expected_tool_calls=list(scenario.expected),
        output=trace.output,
        metadata={"scenario": scenario.id, "trace": trace.trace_id},
        trace_id=trace.trace_id,
    )
    run = score_sample(scenario, sample, trace_id=trace.trace_id)
    result = verdict(scenario, (run,), 1, 0.0, trace_id=trace.trace_id, source=trace.source)
    if lean and result.status == "passed":
        return verdict(
            scenario, (_lean(run),), 1, 0.0, trace_id=trace.trace_id, source=trace.source
        )
    return result


def evaluate_traces(
    paths: Sequence[str | Path],
    scenarios: Sequence[Scenario],
    *,
    only: Scenario | None = None,
    selected: Callable[[Scenario], bool] | None = None,
    progress: Callable[[ScenarioResult], None] | None = None,
    lean: bool = True,
    errors: list[OtlpJsonError] | None = None,
) -> SuiteResult:
    """Score every trace of the files; the result has one entry per trace, in file order.

    ``only``: score every trace against this scenario. ``selected``: traces whose scenario it
    rejects are skipped (``-k``). ``lean``: passing traces keep scores, not recorded calls.
    Unreadable lines become the result's warnings and are also appended to ``errors``.
    """
    started_at = time.time()
    start = time.perf_counter()
    index = ScenarioIndex(scenarios)
    results: list[ScenarioResult] = []
    errors = [] if errors is None else errors
    first_error = len(errors)
    warnings: list[str] = []
    deselected = 0
    for path in paths:
        try:
            traces = _stream_guard(path, errors)
        except OSError as exc:
            warnings.append(f"{path}: cannot read: {exc.strerror or exc}")
            continue
        for trace in traces:
            found = only if only is not None else index.match(trace)
            if isinstance(found, str):
                result = _unmatched(trace, found)
            elif selected is not None and not selected(found):
                deselected += 1
                continue
            else:
                result = score_trace(found, trace, lean=lean)
            results.append(result)
            if progress is not None:
                progress(result)
    warnings.extend(str(error) for error in errors[first_error:])
    if deselected:
        warnings.append(f"{deselected} trace(s) of scenarios not selected by -k were skipped")
    return SuiteResult(
        scenarios=tuple(results),
        started_at=started_at,
        duration=time.perf_counter() - start,
        warnings=tuple(warnings),
    )


def _stream_guard(path: str | Path, errors: list[OtlpJsonError]) -> Iterator[RecordedTrace]:
    """The file's traces, streamed; an unopenable file raises OSError before the first one."""
    Path(path).open("rb").close()
    return iter_recorded_traces(path, errors)
