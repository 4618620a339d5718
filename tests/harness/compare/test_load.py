"""Reading JSON reports: real ones load; every kind of bad input is one clear ReportError.

The bad reports are real ones edited (a field retyped, the version bumped, a scenario listed
twice), or other real files a user could pass by mistake (the OTLP trace file and the JUnit
XML the same run wrote).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.compare.load import FIRST_VERSION, UPGRADES, load_report, parse_report
from harness.errors import HarnessError, ReportError, ReportVersionError
from harness.report.json_report import SCHEMA_VERSION
from tests.harness.compare.conftest import TravelPair


def _data(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def _write(tmp_path: Path, data: Any, name: str = "edited.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def test_a_real_report_loads_with_what_a_comparison_needs(travel_pair: TravelPair) -> None:
    report = load_report(travel_pair.base)
    data = _data(travel_pair.base)
    assert [s.name for s in report.scenarios] == [s["name"] for s in data["scenarios"]]
    assert report.version == SCHEMA_VERSION and not report.interrupted
    by_name = {s.name: s for s in report.scenarios}
    weather = by_name["weather in Berlin tomorrow"]
    assert (weather.status, weather.runs, weather.passes, weather.line) == ("passed", 1, 1, 22)
    assert weather.key == "travel::weather in Berlin tomorrow"
    assert [c.text() for c in weather.calls or ()] == ["get_weather(city='Berlin', day='tomorrow')"]
    assert weather.score_map == {"tool_argument_correctness": 1.0}
    repeated = by_name["repeated weather lookup"]
    assert (repeated.runs, repeated.passes) == (5, 5)
    failing = by_name["rain this week implies a forecast"]
    assert failing.failing and failing.calls == () and failing.reasons


def test_missing_file_folder_and_empty_file(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="no such file — give the JSON report") as missing:
        load_report(tmp_path / "nope.json")
    assert missing.value.path == str(tmp_path / "nope.json")
    with pytest.raises(ReportError, match="a folder, not a file"):
        load_report(tmp_path)
    (tmp_path / "empty.json").write_text("  \n")
    with pytest.raises(ReportError, match="empty file, not a JSON report"):
        load_report(tmp_path / "empty.json")


def test_not_json_names_line_and_column(tmp_path: Path, travel_pair: TravelPair) -> None:
    text = travel_pair.base.read_text(encoding="utf-8")
    broken = tmp_path / "cut.json"
    broken.write_text(text[: len(text) // 2], encoding="utf-8")  # a file cut off mid-write
    with pytest.raises(ReportError, match=r"not JSON: line \d+, column \d+") as cut:
        load_report(broken)
    assert cut.value.line is not None and cut.value.line > 10
    (tmp_path / "latin1.json").write_bytes(b'{"schema_version": 1, "x": "\xe9"}')
    with pytest.raises(ReportError, match="not UTF-8"):
        load_report(tmp_path / "latin1.json")


def test_other_files_of_the_same_run_are_named(tmp_path: Path, travel_pair: TravelPair) -> None:
    with pytest.raises(ReportError, match="an OTLP trace file, not a JSON report — score it"):
        load_report(travel_pair.traces)
    junit = tmp_path / "junit.xml"
    assert main(["run", str(travel_pair.base_suite), "-q", "--junit-xml", str(junit)]) == 1
    with pytest.raises(ReportError, match=r"XML \(a JUnit report\?\)"):
        load_report(junit)


@pytest.mark.parametrize(
    ("value", "what"),
    [([1, 2], "a JSON list"), ("report", "a JSON string"), (3, "a JSON number"), (None, "null")],
)
def test_json_that_is_not_an_object(tmp_path: Path, value: Any, what: str) -> None:
    with pytest.raises(ReportError, match=f"{what}, not a toolcall-harness JSON report"):
        load_report(_write(tmp_path, value))


def test_an_object_without_schema_version(tmp_path: Path, travel_pair: TravelPair) -> None:
    data = _data(travel_pair.base)
    del data["schema_version"]
    with pytest.raises(ReportError, match="JSON without schema_version"):
        load_report(_write(tmp_path, data))


def test_a_newer_version_is_named_even_when_its_layout_changed(
    tmp_path: Path, travel_pair: TravelPair
) -> None:
    data = _data(travel_pair.base)
    data["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(ReportVersionError, match=f"version {SCHEMA_VERSION + 1} is newer") as new:
        load_report(_write(tmp_path, data))
    assert new.value.version == SCHEMA_VERSION + 1 and "pip install -U" in str(new.value)
    data["scenarios"] = {"moved": "somewhere"}  # what a future layout could look like
    with pytest.raises(ReportVersionError, match="is newer than this toolcall-harness reads"):
        load_report(_write(tmp_path, data))


def test_older_than_the_first_format_and_a_version_that_is_no_number(
    tmp_path: Path, travel_pair: TravelPair
) -> None:
    data = _data(travel_pair.base)
    data["schema_version"] = FIRST_VERSION - 1
    with pytest.raises(ReportVersionError, match="predates the first released format"):
        load_report(_write(tmp_path, data))
    data["schema_version"] = "1"
    with pytest.raises(ReportVersionError, match="must be a whole number, got '1'"):
        load_report(_write(tmp_path, data))


def test_every_older_version_has_an_upgrade() -> None:
    # bumping the writer's SCHEMA_VERSION without an upgrade from the previous one fails here
    assert set(UPGRADES) == set(range(FIRST_VERSION, SCHEMA_VERSION))


def test_a_field_of_the_wrong_type_is_named_by_its_path(
    tmp_path: Path, travel_pair: TravelPair
) -> None:
    data = _data(travel_pair.base)
    data["scenarios"][3]["runs"][0]["passed"] = "yes"
    data["scenarios"][5]["status"] = "green"
    with pytest.raises(ReportError) as bad:
        load_report(_write(tmp_path, data))
    message = str(bad.value)
    assert "scenarios[3].runs[0].passed: Input should be a valid boolean, got 'yes'" in message
    assert "scenarios[5].status: Input should be 'passed', 'failed'" in message
    assert bad.value.field == "scenarios[3].runs[0].passed"
    del data["scenarios"]
    with pytest.raises(ReportError, match="scenarios: missing"):
        load_report(_write(tmp_path, data))


def test_the_same_scenario_twice_is_refused(tmp_path: Path, travel_pair: TravelPair) -> None:
    data = _data(travel_pair.base)
    data["scenarios"].append(data["scenarios"][0])
    data["scenarios"].append(data["scenarios"][1])
    with pytest.raises(ReportError, match="2 scenarios listed more than once") as twice:
        load_report(_write(tmp_path, data))
    message = str(twice.value)
    assert "travel::weather in Berlin tomorrow at scenarios[0], scenarios[16]" in message
    assert twice.value.field == "scenarios[16]"


def test_what_only_the_writers_fallback_encoder_writes_still_loads(
    tmp_path: Path, travel_pair: TravelPair
) -> None:
    # The JSON report falls back to the standard encoder for what orjson refuses: a lone
    # surrogate becomes an escape, NaN a bare NaN. Python's parser reads both.
    data = _data(travel_pair.base)
    data["scenarios"][0]["runs"][0]["output"] = "half a pair: \ud800"
    data["scenarios"][0]["runs"][0]["scores"][0]["value"] = float("nan")
    path = tmp_path / "fallback.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert "\\ud800" in path.read_text() and "NaN" in path.read_text()
    first = load_report(path).scenarios[0]
    assert first.score_map == {"tool_argument_correctness": None}  # NaN is no value


def test_a_json_null_score_reads_as_no_value(tmp_path: Path, travel_pair: TravelPair) -> None:
    data = _data(travel_pair.base)
    data["scenarios"][0]["runs"][0]["scores"][0]["value"] = None  # orjson writes NaN as null
    assert load_report(_write(tmp_path, data)).scenarios[0].score_map == {
        "tool_argument_correctness": None
    }


def _json_values() -> st.SearchStrategy[Any]:
    leaves = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
    return st.recursive(
        leaves,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
        ),
        max_leaves=8,
    )


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(data, dict):
        for key, value in data.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(data, list):
        for index, value in enumerate(data[:3]):
            out += _paths(value, (*prefix, index))
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_mutated_real_report_loads_or_says_why(
    travel_pair: TravelPair, data: st.DataObject
) -> None:
    """Fuzz: any field of a real report replaced, dropped or garbled gives a Report or a
    ReportError, never another exception."""
    report = _data(travel_pair.base)
    report["scenarios"] = report["scenarios"][:3]
    paths = [p for p in _paths(report) if p]
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths))
        parent: Any = report
        try:
            for step in path[:-1]:
                parent = parent[step]
            if data.draw(st.booleans()) and isinstance(parent, dict):
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = data.draw(_json_values())
        except (KeyError, IndexError, TypeError):
            continue
    raw = json.dumps(report).encode()
    if data.draw(st.booleans()):
        cut = data.draw(st.integers(0, len(raw)))
        raw = raw[:cut] + data.draw(st.binary(max_size=4)) + raw[cut:]
    try:
        parse_report(raw, "fuzzed.json")
    except ReportError as exc:
        assert str(exc).startswith("fuzzed.json: ")
        assert isinstance(exc, HarnessError)


def test_errors_keep_their_context_across_processes(tmp_path: Path) -> None:
    import pickle

    with pytest.raises(ReportVersionError) as newer:
        parse_report(b'{"schema_version": 7, "scenarios": []}', "x.json")
    copy = pickle.loads(pickle.dumps(newer.value))
    assert str(copy) == str(newer.value)
    assert (copy.path, copy.field, copy.version) == ("x.json", "schema_version", 7)
