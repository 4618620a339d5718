"""The JSON report: ``schema_version``, counts and summary, then every scenario, from the views.

:class:`JsonReporter` writes it as the results come (``harness eval-traces`` streams 100,000s
of them): each scenario view is serialized, appended to a temporary file next to the target and
forgotten; :meth:`~JsonReporter.close` then writes the head (``schema_version``, counts,
summary, warnings — only known at the end) followed by the scenarios, and moves the file into
place. The layout is exactly :func:`render_json`'s, so readers see no difference; memory holds
one scenario at a time.

The serialisation of the result model lives here, and only here (docs/architecture.md,
"Data flow": the result model is data only).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import IO, Any

import orjson

from harness.redaction import Redactor, Scrubber, StreamScrubber
from harness.report.base import FeedWriter, write_whole
from harness.report.files import atomic_output
from harness.report.view import (
    CallView,
    ExpectationView,
    RunView,
    ScenarioView,
    SuiteView,
    scenario_view,
    suite_view,
)
from harness.run.results import STATUSES, ScenarioResult, SuiteResult

__all__ = [
    "SCHEMA_VERSION",
    "JsonReportWriter",
    "JsonReporter",
    "StreamScrubber",
    "render_json",
    "scenario_dict",
    "suite_dict",
    "write_json",
]

SCHEMA_VERSION = 1
"""Version of the JSON layout; bumped on a breaking change."""

_NESTED_HEAD = len(b"[\n  [\n")
_NESTED_TAIL = -len(b"\n  ]\n]")
"""What ``[[scenario]]`` adds around the scenario's lines, as the encoder writes it."""
_COPY_CHUNK = 256 * 1024
_BODY_BUFFER = 1024 * 1024
"""Bytes of scenarios held before they go to the temporary file (one system call)."""


# --- the layout -----------------------------------------------------------------------------


def head_data(summary: SuiteView) -> dict[str, Any]:
    """The report's head: ``schema_version`` first, then timing, counts, summary, warnings."""
    data: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "started_at": summary.started_at,
        "duration": summary.duration,
        "interrupted": summary.interrupted,
        "not_run": summary.not_run,
        "ok": summary.ok,
        "counts": dict(summary.counts),
        "summary": summary.summary,
        "rule_warnings": summary.rule_warnings,
        "warnings": list(summary.warnings),
    }
    if summary.omitted_total:
        # a sample: the scenario list that follows is not every result the counts count
        data["omitted"] = {status: summary.omitted.get(status, 0) for status in STATUSES}
    if summary.comparison is not None:
        from harness.compare import comparison_json

        data["comparison"] = comparison_json(summary.comparison)
    return data


def scenario_data(view: ScenarioView) -> dict[str, Any]:
    """One scenario as the report writes it."""
    data: dict[str, Any] = {
        "suite": view.suite,
        "name": view.name,
        "file": view.file,
        "line": view.line,
        "status": view.status,
        "xfail": view.xfail,
        "repeat": view.repeat,
        "pass_rate": view.pass_rate,
        "passes": view.passes,
        "reasons": list(view.reasons),
        "duration": view.duration,
        "trace_ids": [run.trace_id for run in view.runs if run.trace_id],
        "runs": [_run_data(run) for run in view.runs],
    }
    if view.trace_id is not None:
        data["trace_id"] = view.trace_id
        data["source"] = view.source
    if view.repeated:
        data["rate"] = _rate_data(view)
    return data


def _rate_data(view: ScenarioView) -> dict[str, Any]:
    """A repeated scenario's pass rate, its Wilson 95 % interval, pass@k and pass^k at k = 1
    and k = K (docs/metrics.md, "Comparing runs")."""
    from harness.compare.sections import rate_json

    return rate_json(view.rate())


def _expected_data(exp: ExpectationView) -> dict[str, Any]:
    """``{name, args}``, and ``id``, ``after``, ``optional``, ``result`` when set (YAML's keys)."""
    data: dict[str, Any] = {"name": exp.name, "args": {arg.key: arg.value for arg in exp.args}}
    if exp.label is not None:
        data["id"] = exp.label
    if exp.after:
        data["after"] = list(exp.after)
    if exp.optional:
        data["optional"] = True
    if exp.result is not None:
        data["result"] = exp.result.value
    return data


def _run_data(run: RunView) -> dict[str, Any]:
    error = run.error
    data: dict[str, Any] = {
        "index": run.index,
        "passed": run.passed,
        "trace_id": run.trace_id,
        "duration": run.duration,
        "output": run.output,
        "paused": list(run.paused),
        "tool_calls": [_call_data(call) for call in run.calls],
        "expected_tool_calls": [_expected_data(exp) for exp in run.expected],
        "scores": [
            {
                "name": score.name,
                "value": score.value,
                "threshold": score.threshold,
                "passed": score.passed,
                "reason": score.reason,
                "codes": list(score.codes),
                "details": score.details,
            }
            for score in run.scores
        ],
        "checks": [
            {
                "name": check.name,
                "kind": check.kind,
                "passed": check.passed,
                "severity": check.severity,
                "code": check.code,
                "reason": check.reason,
                "calls": list(check.calls),
                "call_numbers": list(check.call_numbers),
            }
            for check in run.checks
        ],
        "error": (
            {
                "type": error.type,
                "message": error.message,
                "phase": error.phase,
                "traceback": error.traceback,
            }
            if error is not None
            else None
        ),
    }
    if run.turns:
        # 1-based, as the per-turn scores are named (turn1.tool_call_accuracy)
        data["turns"] = [{"turn": t.index + 1, "paused": list(t.paused)} for t in run.turns]
    return data


def _call_data(call: CallView) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": call.name,
        "args": {arg.key: arg.value for arg in call.args},
        "id": call.id,
        "status": call.status,
        "error": call.error,
        "result": call.result,
        "node": call.node,
        "turn": call.turn,
        "duration_ns": call.duration_ns,
    }
    if not call.args_captured:
        data["args_captured"] = False  # recorded without content: `args` is empty for that
    return data


def _dumps(data: Any) -> str:
    return _dumps_utf8(data).decode("utf-8")


# orjson's C encoder lays out exactly as ``json.dumps(indent=2)``; values it has no native form
# for (dataclasses, datetimes) go to ``repr`` as with the standard encoder.
_ORJSON_OPTIONS = (
    orjson.OPT_INDENT_2
    | orjson.OPT_NON_STR_KEYS
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
)


def _dumps_utf8(data: Any) -> bytes:
    """:func:`_dumps` as UTF-8, by orjson (a scenario per call: this is the report's hot path).

    What orjson refuses (a lone surrogate, an integer past 64 bits) takes the standard encoder,
    its surrogates as JSON escapes. orjson writes NaN as null where the standard encoder writes
    the non-JSON ``NaN``.
    """
    try:
        return orjson.dumps(data, default=repr, option=_ORJSON_OPTIONS)
    except orjson.JSONEncodeError:
        text = json.dumps(data, indent=2, ensure_ascii=False, default=repr)
        return text.encode("utf-8", "backslashreplace")


# --- results in, for callers that hold results ----------------------------------------------


def suite_dict(
    result: SuiteResult, redactor: Redactor | None = None, *, scenarios: bool = True
) -> dict[str, Any]:
    """The whole report as a dict, secrets masked with ``redactor`` (default: the default keys).

    ``scenarios=False`` leaves the scenario list out.
    """
    scrub = Scrubber.for_suite(redactor, result)
    data = head_data(suite_view(result, scrub))
    if scenarios:
        data["scenarios"] = [scenario_data(scenario_view(s, scrub)) for s in result.scenarios]
    return data


def scenario_dict(result: ScenarioResult, scrubber: Scrubber | None = None) -> dict[str, Any]:
    """One scenario as the report writes it (default: scrubbed over its own runs)."""
    scrub = Scrubber.for_runs(None, result.runs) if scrubber is None else scrubber
    return scenario_data(scenario_view(result, scrub))


def render_json(result: SuiteResult, *, redactor: Redactor | None = None) -> str:
    """The report as a JSON string (UTF-8 text, stable key order, indented), secrets masked."""
    return _dumps(suite_dict(result, redactor))


def write_json(
    result: SuiteResult, path: str | os.PathLike[str], *, redactor: Redactor | None = None
) -> Path:
    """Write the report, creating parent folders; returns the path written.

    The same text as :func:`render_json`, written one scenario at a time.
    """
    writer = JsonReportWriter(path, scrubber=Scrubber.for_suite(redactor, result))
    return write_whole(writer, result)


# --- the reporter ---------------------------------------------------------------------------


class JsonReporter:
    """The JSON report as a :class:`~harness.report.base.Reporter`: one scenario at a time.

    Nothing is at ``path`` until :meth:`close` (the file appears whole, never half-written);
    :meth:`abort` throws the partial work away.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        """Report to ``path`` (parents created now: an unwritable place fails here, early)."""
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # open across add() calls; close() or abort() closes it (and the OS deletes it)
        # bytes, not text: copying a text file back decodes and re-encodes it in big chunks
        # a large buffer: a scenario is a few KB, and the default 8 KB one made a write system
        # call every few scenarios, the JSON report's largest cost per passing result
        self._body: IO[bytes] = tempfile.TemporaryFile(  # noqa: SIM115
            "w+b", buffering=_BODY_BUFFER, dir=self.path.parent, prefix=f".{self.path.name}."
        )
        self.count = 0
        self.counts: dict[str, int] = dict.fromkeys(STATUSES, 0)

    def add(self, result: ScenarioView) -> None:
        """Append one scenario (nothing of it is kept)."""
        body = self._body  # two buffered writes: no copy of the scenario to prepend a comma
        body.write(b",\n" if self.count else b"\n")
        body.write(_scenario_bytes(result))
        self.count += 1
        self.counts[result.status] += 1

    def close(self, summary: SuiteView) -> Path:
        """Write the head from ``summary`` (its counts, timing, warnings), then every scenario.

        ``summary`` may be a sample (``omitted`` set): the file lists every scenario added, so
        the head carries the counts and no ``omitted`` key. Returns the path written.
        """
        head = head_data(summary)
        head.pop("omitted", None)
        before, _, _ = _dumps({**head, "scenarios": []}).rpartition('"scenarios": []')
        try:
            with atomic_output(self.path) as out:
                out.write((before + '"scenarios": [').encode("utf-8", "backslashreplace"))
                self._body.seek(0)
                shutil.copyfileobj(self._body, out, _COPY_CHUNK)
                out.write(b"\n  ]\n}\n" if self.count else b"]\n}\n")
        finally:
            self._body.close()
        return self.path

    def abort(self) -> None:
        """Drop what was written so far (the temporary file); ``path`` is left untouched."""
        self._body.close()


def _scenario_bytes(view: ScenarioView) -> bytes:
    """One scenario as the report's list holds it (indented, no separator)."""
    # nested two lists deep, the encoder indents the scenario as the report's list holds
    # it: no second pass over the bytes to shift every line (docs/architecture.md, "Reporter")
    return _dumps_utf8([[scenario_data(view)]])[_NESTED_HEAD:_NESTED_TAIL]


class JsonReportWriter(FeedWriter[JsonReporter]):
    """The JSON report fed with results (not views): each masked as it is added.

    ``scrubber``: mask every scenario with this one (a whole-suite scrubber); default: a
    :class:`~harness.redaction.StreamScrubber` over ``redactor``. The summary given to
    :meth:`close` is masked with the same redactor.
    """

    def _open(self, path: str | os.PathLike[str]) -> JsonReporter:
        return JsonReporter(path)

    @property
    def count(self) -> int:
        """Scenarios written so far."""
        return self._reporter.count

    @property
    def counts(self) -> dict[str, int]:
        """Scenarios written so far, per status."""
        return dict(self._reporter.counts)
