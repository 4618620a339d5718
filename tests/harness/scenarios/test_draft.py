"""``harness draft``: tolerant matchers for volatile values, and the round trip back to a pass.

record (real client, stand-in) -> draft -> validate -> run against the replay: passes. Drafts
from a JSON report and from an OTLP trace file load and validate too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.cli import main
from harness.scenarios import load_paths
from harness.scenarios.draft import Draft, render, tolerant
from harness.values import compile_pattern, match_value
from tests.support.openai_server import ROOT, StandIn, record, serving, write_project


@pytest.fixture(scope="module")
def standin() -> Iterator[StandIn]:
    """The stand-in server for this module."""
    yield from serving()


@pytest.mark.parametrize(
    ("value", "what"),
    [
        ("1b4e28ba-2fa1-11d2-883f-0016d3cca427", "a uuid"),
        ("2025-06-02T10:15:00Z", "a time"),
        ("2025-06-02", "a date"),
        ("ORD-1042", "an id"),
        ("cust_42", "an id"),
        ("please refund the keyboard, it arrived broken and I need it back", "free text"),
    ],
)
def test_volatile_values_become_matchers_that_still_match(value: str, what: str) -> None:
    made = tolerant(value)
    assert made.was is not None and made.was.endswith(f"({what})") and repr(value)[:20] in made.was
    assert made.value != value
    assert match_value(compile_pattern(made.value), value)  # tolerant, not wrong


@pytest.mark.parametrize("value", ["Berlin", "EUR", 3, 2.5, True, None, "no digits here"])
def test_stable_values_are_kept(value: Any) -> None:
    assert tolerant(value).value == value and tolerant(value).was is None


def test_an_id_keeps_its_letters() -> None:
    assert tolerant("ORD-1042").value == {"$regex": r"^ORD-\d+$"}
    assert tolerant("v1.2-beta").value == {"$regex": r"^v\d+\.\d+-beta$"}


def test_nested_values_are_made_tolerant_in_place() -> None:
    made = tolerant({"order": "ORD-7", "items": ["x", "2025-01-01"], "n": 2})
    assert made.value == {
        "order": {"$regex": r"^ORD-\d+$"},
        "items": ["x", {"$regex": r"^\d{4}-\d{2}-\d{2}$"}],
        "n": 2,
    }
    assert made.was is not None and "order: 'ORD-7' (an id)" in made.was


def test_the_rendering_reads_back_as_written(tmp_path: Path) -> None:
    tricky = ["a: b", "it's", "x, y", "[x]", "yes", "#no", "line\nbreak", "ä", " padded "]
    draft = Draft(
        source="s",
        suite="suite: odd",
        name="name, with 'quotes'",
        agent="harness.demo.travel:build",
        model={"provider": "demo"},
        input="What's it: like?",
        calls=tuple(("get_weather", {"city": text}) for text in tricky),
        answer="done",
    )
    data = yaml.safe_load(render(draft))
    scenario = data["scenarios"][0]
    assert (data["suite"], scenario["name"], scenario["input"]) == (
        "suite: odd",
        "name, with 'quotes'",
        "What's it: like?",
    )
    assert [c["args"]["city"] for c in scenario["expect"]["tool_calls"]] == tricky
    path = tmp_path / "odd.yaml"
    path.write_text(render(draft), encoding="utf-8")
    assert load_paths([path])[0].scenarios[0].name == "name, with 'quotes'"


def test_record_draft_validate_replay(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    pytest.importorskip("langchain_openai")
    suite = write_project(tmp_path, standin.url)
    assert record(tmp_path, str(suite), "--record").returncode == 0
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    cassette = tmp_path / "cassettes" / "weather" / "weather-in-berlin.yaml"
    assert main(["draft", str(cassette), "-o", "drafted.yaml"]) == 0
    text = (tmp_path / "drafted.yaml").read_text()
    assert "agent: 'agent.py:build'" in text and "model: 'openai:gpt-4o-mini'" in text
    assert "        - name: get_weather\n          args:\n            city: Berlin\n" in text
    assert main(["validate", "drafted.yaml"]) == 0
    capsys.readouterr()
    assert main(["run", "drafted.yaml", "--replay", "--json", "r.json"]) == 0
    report = json.loads((tmp_path / "r.json").read_text())
    assert [s["status"] for s in report["scenarios"]] == ["passed"]


def test_record_with_a_trace_file_draft_from_it_validate_replay(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    pytest.importorskip("langchain_openai")
    suite = write_project(tmp_path, standin.url)
    flags = ["--record", "--capture-content", "--trace-file", "traces.json"]
    assert record(tmp_path, str(suite), *flags).returncode == 0
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    args = ["draft", "traces.json", "--scenario", "weather in Oslo", "-o", "drafted.yaml"]
    assert main(args) == 0
    assert "does not name the agent" not in capsys.readouterr().err
    text = (tmp_path / "drafted.yaml").read_text()
    # the user's message from the chat span, the model it asked, the agent from the root span
    assert "input: 'What is the weather in Oslo today?'" in text
    assert "model: 'openai:gpt-4o-mini'" in text and "agent: 'agent.py:build'" in text
    assert "        - name: get_weather\n          args:\n            city: Oslo\n" in text
    assert main(["validate", "drafted.yaml"]) == 0
    # same suite::name, so the same cassette; same provider, model, tools and messages, so
    # every turn's key is found: no request reaches the server
    asked = standin.count()
    assert main(["run", "drafted.yaml", "--replay", "--json", "r.json"]) == 0
    report = json.loads((tmp_path / "r.json").read_text())
    assert [s["status"] for s in report["scenarios"]] == ["passed"]
    assert standin.count() == asked


def test_draft_from_a_json_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the report names its suite file relative to where it ran
    results = tmp_path / "results.json"
    main(["run", "scenarios/orders.yaml", "-k", "recent", "--json", str(results)])
    out = tmp_path / "drafted.yaml"
    assert (
        main(["draft", str(results), "--scenario", "cancel my most recent order", "-o", str(out)])
        == 0
    )
    text = out.read_text()
    # the ids came from earlier results: $refs to the labelled calls that returned them
    assert "        - name: search_orders\n          id: search_orders\n" in text
    assert "customer_id: {$ref: find_customer.result.customer_id}   # was 'C-001'" in text
    assert "order_id: {$ref: search_orders.result.0.order_id}   # was 'ORD-1050'" in text
    assert "input: 'Cancel my most recent order, my email is ada@example.com'" in text
    assert main(["validate", str(out)]) == 0
    assert main(["run", str(out)]) == 0  # the demo model does it again: the draft passes


def test_draft_from_a_trace_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.chdir(ROOT)
    traces = tmp_path / "traces.json"
    main(
        [
            "run",
            "scenarios/travel.yaml",
            "-k",
            "berlin",
            "--capture-content",
            "--trace-file",
            str(traces),
        ]
    )
    out = tmp_path / "drafted.yaml"
    args = ["draft", str(traces), "--agent", "harness.demo.travel:build", "-o", str(out)]
    assert main(args) == 0
    text = out.read_text()
    assert "suite: travel" in text and "- name: get_weather" in text
    # the demo model as `model:` names it, and the message it was asked
    assert "model: {provider: demo}" in text
    assert "input: 'What''s the weather in Berlin tomorrow?'" in text
    assert main(["validate", str(out)]) == 0
    assert main(["run", str(out)]) == 0  # the demo model does it again: the draft passes


def test_an_unknown_input_is_a_clear_error(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("just: yaml\n")
    assert main(["draft", str(path)]) == 2
    assert "neither a cassette" in capsys.readouterr().err
    assert main(["draft", str(tmp_path / "missing.yaml")]) == 2
