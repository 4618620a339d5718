"""Reading a JSON report (``--json`` of ``harness run``, ``eval-traces``): checked, upgraded.

The file is validated as it is parsed (pydantic from the bytes: a 100,000-trace report is not
first built as Python dicts), keeping only what :class:`~harness.compare.report.ReportScenario`
needs. Whatever is wrong gets one :class:`~harness.errors.ReportError` naming the file, the
field (``scenarios[3].runs[0].passed``) or the line of a JSON syntax error, and the fix:

* not there, not readable, empty, not JSON, JSON that is not a report (an OTLP trace file, a
  JUnit XML file, a list);
* ``schema_version`` newer than this release reads (:class:`~harness.errors.ReportVersionError`,
  naming it), or older than the first released format; versions between are upgraded one step
  at a time (:data:`UPGRADES`);
* a field of the wrong type, an unknown status;
* the same ``suite::name`` (and trace) twice: a comparison could not tell which is which.

Results of the current run are read the same way (:func:`report_from_views`), from the very
dicts the JSON report would hold, so both sides of a comparison are masked alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from harness.compare.report import Call, Report, ReportScenario
from harness.errors import ReportError, ReportVersionError
from harness.text import plural, shorten

if TYPE_CHECKING:
    from harness.redaction import Redactor
    from harness.report.view import ScenarioView
    from harness.run.results import ScenarioResult

__all__ = [
    "FIRST_VERSION",
    "UPGRADES",
    "load_report",
    "parse_report",
    "report_from_results",
    "report_from_scenarios",
    "report_from_views",
    "scenario_from_view",
    "written_version",
]

FIRST_VERSION = 1
"""The first released JSON report format; anything older is refused."""

UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}
"""``UPGRADES[v]`` turns a version-``v`` report (parsed) into a version ``v + 1`` one. One entry
per version from :data:`FIRST_VERSION` to :func:`written_version` - 1: a test fails when the
writer's ``SCHEMA_VERSION`` is bumped without one. Fields added within a version need none:
what an older writer left out reads as its default."""


def written_version() -> int:
    """The format version this release writes, and reads up to: the JSON report's."""
    # imported here: the reporters may import this package (a run's comparison section), and
    # a module-level import of theirs would then be circular
    from harness.report.json_report import SCHEMA_VERSION

    return SCHEMA_VERSION


_SHOWN_ERRORS = 3
"""Field errors a message lists before saying how many more there were."""


def _present(value: Any) -> bool:
    """Whether a field had content (kept as a flag: an output is not worth its memory here)."""
    return value is not None and value != [] and value != {}


Present = Annotated[bool, BeforeValidator(_present)]


class _Model(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class _CallModel(_Model):
    name: str
    args: dict[str, Any] = {}
    turn: int | None = None
    args_captured: bool = True


class _ScoreModel(_Model):
    name: str
    value: float | None  # NaN is written as null


class _RunModel(_Model):
    passed: bool
    tool_calls: list[_CallModel] = []
    expected_tool_calls: Present = False
    output: Present = False
    scores: list[_ScoreModel] = []

    @property
    def recorded(self) -> bool:
        """Something was captured: calls, expectations or an answer (a lean passing trace of
        ``eval-traces``, or a run that errored before its agent ran, has none of them)."""
        return bool(self.tool_calls) or self.expected_tool_calls or self.output


class _ScenarioModel(_Model):
    suite: str
    name: str
    file: str = ""
    line: int | None = None
    status: Literal["passed", "failed", "error", "xfailed", "xpassed"]
    xfail: str | None = None
    reasons: list[str] = []
    runs: list[_RunModel] = []
    trace_id: str | None = None


class _ReportModel(_Model):
    schema_version: int
    interrupted: bool = False
    not_run: int = 0
    scenarios: list[_ScenarioModel]


class _HeadModel(BaseModel):
    """What tells a report from other JSON: ``schema_version`` (or an OTLP ``resourceSpans``)."""

    model_config = ConfigDict(extra="ignore")
    schema_version: Any = None
    resourceSpans: Any = None  # the OTLP key, as a trace file spells it


# --- reading ---------------------------------------------------------------------------------


def load_report(path: str | Path) -> Report:
    """The report in the JSON file ``path``; :class:`~harness.errors.ReportError` if it is not
    one this release can compare."""
    where = str(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise ReportError(
            f"{where}: no such file — give the JSON report a run wrote with --json FILE",
            path=where,
        ) from None
    except IsADirectoryError:
        raise ReportError(
            f"{where}: a folder, not a file — give the JSON report a run wrote with --json FILE",
            path=where,
        ) from None
    except OSError as exc:
        raise ReportError(f"{where}: cannot read: {exc.strerror or exc}", path=where) from None
    return parse_report(data, where)


def parse_report(data: bytes, source: str) -> Report:
    """The report in ``data`` (the bytes of a JSON report), read from ``source``."""
    if not data.strip():
        raise ReportError(f"{source}: empty file, not a JSON report", path=source)
    if data.lstrip()[:1] == b"<":
        raise ReportError(
            f"{source}: XML (a JUnit report?), not the JSON report — write that with --json FILE",
            path=source,
        )
    try:  # the common case in one pass over the bytes
        model = _ReportModel.model_validate_json(data)
    except ValidationError as exc:
        model = _read_slowly(data, source, exc)
    else:
        _check_version(model.schema_version, source)
        if model.schema_version < written_version():
            model = _upgraded(json.loads(data), source)
    scenarios = [_scenario(item) for item in model.scenarios]
    _refuse_duplicates(scenarios, source)
    return Report(
        source=source,
        scenarios=tuple(scenarios),
        version=model.schema_version,
        interrupted=model.interrupted,
        not_run=model.not_run,
    )


def _read_slowly(data: bytes, source: str, exc: ValidationError) -> _ReportModel:
    """What the one pass refused: say why (the version first), or read it with Python's
    parser, which takes what the writer's fallback encoder may write (a lone surrogate as an
    escape, NaN) and the fast parser does not."""
    if exc.errors(include_input=False)[0]["type"] != "json_invalid":
        head = _HeadModel.model_validate_json(data) if data.lstrip()[:1] == b"{" else None
        if head is None:
            raise _not_a_report(source, f"a JSON {_json_type(data)}")
        _check_head(head, source)
        raise _field_errors(exc, source)
    try:
        document = json.loads(data)
    except UnicodeDecodeError as error:
        message = f"{source}: not JSON: not UTF-8 text ({error.reason})"
        raise ReportError(message, path=source) from None
    except json.JSONDecodeError as error:
        raise _syntax_error(data, error, source) from None
    if not isinstance(document, dict):
        raise _not_a_report(source, f"a JSON {_json_type(data)}")
    _check_head(_HeadModel.model_validate(document), source)
    return _upgraded(document, source)


def _upgraded(document: dict[str, Any], source: str) -> _ReportModel:
    """A parsed report of a version this release reads, brought to the current one."""
    for step in range(document["schema_version"], written_version()):
        document = UPGRADES[step](document)
    try:
        return _ReportModel.model_validate(document)
    except ValidationError as exc:
        raise _field_errors(exc, source) from None


def _syntax_error(data: bytes, exc: json.JSONDecodeError, source: str) -> ReportError:
    first = data.split(b"\n", 1)[0]
    try:
        line_one = json.loads(first)
    except ValueError:
        line_one = None
    if isinstance(line_one, dict) and "resourceSpans" in line_one:
        return _trace_file(source)
    return ReportError(
        f"{source}: not JSON: line {exc.lineno}, column {exc.colno}: {exc.msg}",
        path=source,
        line=exc.lineno,
    )


def _trace_file(source: str) -> ReportError:
    return ReportError(
        f"{source}: an OTLP trace file, not a JSON report — score it first: harness "
        "eval-traces FILE --scenarios PATH --json REPORT.json",
        path=source,
    )


def _not_a_report(source: str, what: str) -> ReportError:
    return ReportError(
        f"{source}: {what}, not a toolcall-harness JSON report (an object with "
        "schema_version and scenarios, as --json writes it)",
        path=source,
    )


_JSON_TYPES = {b"[": "list", b'"': "string", b"n": "null", b"t": "boolean", b"f": "boolean"}


def _json_type(data: bytes) -> str:
    """The kind of JSON value ``data`` holds, by its first character (it parsed)."""
    return _JSON_TYPES.get(data.lstrip()[:1], "number")


def _check_head(head: _HeadModel, source: str) -> None:
    """Refuse a document that is not a report, or one of a version this release cannot read."""
    has_version = "schema_version" in head.model_fields_set
    if head.resourceSpans is not None and not has_version:
        raise _trace_file(source)
    if not has_version:
        raise _not_a_report(source, "JSON without schema_version")
    _check_version(head.schema_version, source)


def _check_version(version: Any, source: str) -> None:
    if isinstance(version, bool) or not isinstance(version, int):
        raise ReportVersionError(
            f"{source}: schema_version must be a whole number, got {shorten(repr(version), 40)}",
            path=source,
            version=version,
        )
    newest = written_version()
    if version > newest:
        raise ReportVersionError(
            f"{source}: report format version {version} is newer than this toolcall-harness "
            f"reads (up to {newest}) — upgrade it (pip install -U toolcall-harness), or "
            "compare with the release that wrote the report",
            path=source,
            version=version,
        )
    if version < FIRST_VERSION:
        raise ReportVersionError(
            f"{source}: report format version {version} predates the first released format "
            f"({FIRST_VERSION}) and cannot be upgraded — run the suite again to write a new "
            "report",
            path=source,
            version=version,
        )


def _field_errors(exc: ValidationError, source: str) -> ReportError:
    """The fields pydantic refused, the first few of them, as one error."""
    fields = [(_field(error["loc"]), _problem(error)) for error in exc.errors()]
    lines = [f"{field}: {problem}" if field else problem for field, problem in fields]
    shown = lines[:_SHOWN_ERRORS]
    if len(lines) > _SHOWN_ERRORS:
        shown.append(f"and {plural(len(lines) - _SHOWN_ERRORS, 'more problem')}")
    return ReportError(
        f"{source}: not a JSON report toolcall-harness can read:\n  " + "\n  ".join(shown),
        path=source,
        field=fields[0][0] or None,
    )


def _field(loc: Sequence[int | str]) -> str:
    """``('scenarios', 3, 'runs', 0, 'passed')`` -> ``scenarios[3].runs[0].passed``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _problem(error: Any) -> str:
    message = str(error["msg"])
    if error["type"] == "missing":
        return "missing"
    if "input" in error and not isinstance(error["input"], (dict, list)):
        return f"{message}, got {shorten(repr(error['input']), 60)}"
    return message


# --- into the comparison's form ---------------------------------------------------------------


def _scenario(model: _ScenarioModel) -> ReportScenario:
    runs = model.runs
    shown = next((run for run in runs if not run.passed), runs[-1] if runs else None)
    calls: tuple[Call, ...] | None = None
    if shown is not None and shown.recorded:
        calls = tuple(
            Call(call.name, call.args, call.turn, call.args_captured) for call in shown.tool_calls
        )
    return ReportScenario(
        suite=model.suite,
        name=model.name,
        file=model.file,
        line=model.line,
        status=model.status,
        runs=len(runs),
        passes=sum(1 for run in runs if run.passed),
        reasons=tuple(model.reasons),
        scores=_mean_scores(runs),
        calls=calls,
        trace_id=model.trace_id,
        xfail=model.xfail,
    )


def _mean_scores(runs: Iterable[_RunModel]) -> tuple[tuple[str, float | None], ...]:
    """Per metric, in first-seen order, the mean of its numeric values over the runs."""
    values: dict[str, list[float]] = {}
    for run in runs:
        for score in run.scores:
            kept = values.setdefault(score.name, [])
            if score.value is not None and score.value == score.value:  # NaN is no value
                kept.append(score.value)
    return tuple((name, sum(v) / len(v) if v else None) for name, v in values.items())


def _refuse_duplicates(scenarios: Sequence[ReportScenario], source: str) -> None:
    seen: dict[str, list[int]] = {}
    for index, scenario in enumerate(scenarios):
        seen.setdefault(scenario.key, []).append(index)
    twice = [(key, places) for key, places in seen.items() if len(places) > 1]
    if not twice:
        return
    lines = [
        f"{key} at "
        + ", ".join(f"scenarios[{i}]" for i in places[:5])
        + (" and more" if len(places) > 5 else "")
        for key, places in twice[:_SHOWN_ERRORS]
    ]
    if len(twice) > _SHOWN_ERRORS:
        lines.append(f"and {plural(len(twice) - _SHOWN_ERRORS, 'more name')}")
    raise ReportError(
        f"{source}: {plural(len(twice), 'scenario')} listed more than once (a comparison "
        "matches scenarios by suite::name, so each must be unique — rename one, or give the "
        "suites different names):\n  " + "\n  ".join(lines),
        path=source,
        field=f"scenarios[{twice[0][1][1]}]",
    )


def scenario_from_view(
    view: ScenarioView, source: str = "this run", index: int = 0
) -> ReportScenario:
    """One result of the current run (its report view: masked as every report is), read
    from the very dict the JSON report writes of it; ``index`` names it in an error."""
    from harness.report.json_report import scenario_data

    return _scenario(_validate_scenario(scenario_data(view), source, index))


def report_from_scenarios(scenarios: Sequence[ReportScenario], source: str = "this run") -> Report:
    """The current run's scenarios as a report (the same name twice refused)."""
    _refuse_duplicates(scenarios, source)
    return Report(source=source, scenarios=tuple(scenarios), version=written_version())


def report_from_views(views: Iterable[ScenarioView], source: str = "this run") -> Report:
    """The current run's results (report views: masked as every report is) as a report."""
    scenarios = [scenario_from_view(view, source, index) for index, view in enumerate(views)]
    return report_from_scenarios(scenarios, source)


def report_from_results(
    results: Iterable[ScenarioResult],
    redactor: Redactor | None = None,
    source: str = "this run",
) -> Report:
    """The current run's results as a report, secrets masked with ``redactor`` (default: the
    default keys), as the JSON report masks them."""
    from harness.redaction import Scrubber
    from harness.report.json_report import scenario_dict

    kept = list(results)
    scrubber = Scrubber.for_runs(redactor, [run for result in kept for run in result.runs])
    scenarios = [
        _scenario(_validate_scenario(scenario_dict(result, scrubber), source, index))
        for index, result in enumerate(kept)
    ]
    _refuse_duplicates(scenarios, source)
    return Report(source=source, scenarios=tuple(scenarios), version=written_version())


def _validate_scenario(data: dict[str, Any], source: str, index: int) -> _ScenarioModel:
    try:
        return _ScenarioModel.model_validate(data)
    except ValidationError as exc:  # a result the JSON report could not write either
        error = exc.errors()[0]
        field = _field(("scenarios", index, *error["loc"]))
        message = f"{source}: {field}: {_problem(error)}"
        raise ReportError(message, path=source, field=field) from None
