"""``harness schema``: the JSON Schema of the scenario format, against every shipped suite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.cli import main
from harness.policies import looks_like_policies
from harness.scaffold import SCHEMA_FILE, scaffold
from harness.scenarios.json_schema import (
    DIALECT,
    MATCHER_DESCRIPTIONS,
    policy_schema,
    scenario_schema,
)
from harness.values.compile import MATCHER_KEYS
from tests.support.paths import ROOT

jsonschema = pytest.importorskip("jsonschema")  # a test-only dependency (dev group)

SHIPPED = sorted((ROOT / "scenarios").glob("*.yaml"))


@pytest.fixture(scope="module")
def validator() -> Any:
    schema = scenario_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_it_is_a_2020_12_schema_printed_by_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["$schema"] == DIALECT == "https://json-schema.org/draft/2020-12/schema"
    assert printed == json.loads(json.dumps(scenario_schema()))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_file_validates_against_its_schema(validator: Any, path: Path) -> None:
    # scenarios/ holds suites and one policy file (scenarios/policies.yaml): each kind has its
    # own schema (`harness schema`, `harness schema --policies`)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if looks_like_policies(path):
        validator = jsonschema.Draft202012Validator(policy_schema())
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(data)]
    assert errors == []


def test_there_are_shipped_suites() -> None:
    assert len([p for p in SHIPPED if not looks_like_policies(p)]) >= 3


def _errors(validator: Any, data: Any) -> list[list[Any]]:
    return [list(error.absolute_path) for error in validator.iter_errors(data)]


@pytest.mark.parametrize(
    ("typo", "where"),
    [
        (lambda s: s["scenarios"][0].update(expct={}), ["scenarios", 0]),
        (lambda s: s.update(agnet="x:y"), []),
        (lambda s: s["scenarios"][0].update(metrics={"tool_call_acuracy": 1}), ["scenarios", 0]),
        (
            lambda s: s["scenarios"][0].update(metrics={"tool_call_accuracy": {"treshold": 1}}),
            ["scenarios", 0],
        ),
        (
            lambda s: s["scenarios"][0]["expect"].update(
                tool_calls=[{"name": "get_weather", "args": {"city": {"$regx": "^B"}}}]
            ),
            ["scenarios", 0, "expect"],
        ),
        (lambda s: s["scenarios"][0]["expect"].update(order="strcit"), ["scenarios", 0]),
        (lambda s: s["scenarios"][0].update(tags=["has space"]), ["scenarios", 0]),
        (lambda s: s.update(model={"provider": "demo", "max_concurrency": 0}), ["model"]),
        (
            lambda s: s["scenarios"][0].update(model={"max_concurrency": "2"}),
            ["scenarios", 0, "model"],
        ),
    ],
)
def test_a_typo_is_flagged(validator: Any, typo: Any, where: list[Any]) -> None:
    data = yaml.safe_load((ROOT / "scenarios" / "travel.yaml").read_text(encoding="utf-8"))
    assert _errors(validator, data) == []
    typo(data)
    found = _errors(validator, data)
    assert found, "the typo was not flagged"
    assert all(path[: len(where)] == where for path in found), found


@pytest.mark.parametrize(
    "model",
    [
        "my_models.py:build",
        "acme.llm.local:build",
        {"provider": "acme.llm.local:build", "max_concurrency": 1, "path": "models/q.gguf"},
        {"provider": "openai", "model": "gpt-4o-mini", "max_concurrency": 4, "temperature": 0},
    ],
)
def test_a_factory_model_and_its_limit_validate(validator: Any, model: Any) -> None:
    data = yaml.safe_load((ROOT / "scenarios" / "travel.yaml").read_text(encoding="utf-8"))
    data["model"] = model
    data["scenarios"][0]["model"] = model
    assert _errors(validator, data) == []


def test_every_key_has_a_description_and_every_matcher_is_known() -> None:
    schema = scenario_schema()
    for name, model in schema["$defs"].items():
        for key, prop in model.get("properties", {}).items():
            if name not in ("Matcher", "Metrics"):
                assert prop.get("description"), f"{name}.{key}"
    for key, prop in schema["properties"].items():
        assert prop.get("description"), key
    assert set(MATCHER_KEYS) <= set(MATCHER_DESCRIPTIONS)
    metrics = schema["$defs"]["Metrics"]["anyOf"][0]["properties"]
    assert {"tool_call_accuracy", "tool_call_sequence_accuracy"} <= set(metrics)
    options = metrics["tool_call_sequence_accuracy"]["anyOf"][3]["properties"]
    assert {"threshold", "order", "comparator"} <= set(options)


def test_init_writes_the_schema_the_starter_suite_names(tmp_path: Path, validator: Any) -> None:
    scaffold(tmp_path)
    first = (tmp_path / "starter.yaml").read_text(encoding="utf-8").splitlines()[0]
    assert first == f"# yaml-language-server: $schema={SCHEMA_FILE}"
    written = json.loads((tmp_path / SCHEMA_FILE).read_text(encoding="utf-8"))
    assert written == json.loads(json.dumps(scenario_schema()))
    starter = yaml.safe_load((tmp_path / "starter.yaml").read_text(encoding="utf-8"))
    assert _errors(validator, starter) == []
