"""Scenario files with labels, ``after``, ``optional``, ``result`` and ``$ref``: what loads, the
exact form of every error, the JSON Schema, and ``harness validate`` against real tools."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml

from harness.cli import main
from harness.metrics import ToolCallPartialOrder
from harness.scenarios import ConfigError, check_tools, load_paths
from harness.scenarios.json_schema import scenario_schema
from harness.values import Ref
from tests.support.paths import FIXTURES

AGENT = f"{FIXTURES / 'fixture_agent.py'}:build"

jsonschema = pytest.importorskip("jsonschema")


def write(tmp_path: Path, scenarios: str) -> Path:
    path = tmp_path / "suite.yaml"
    head = f"agent: {AGENT}\nmodel: {{provider: scripted}}\nscenarios:\n"
    body = textwrap.indent(textwrap.dedent(scenarios).lstrip("\n"), "  ")
    path.write_text(head + body, encoding="utf-8")
    return path


def issues(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_paths([path])
    return [str(issue).replace(f"{path.parent}/", "") for issue in caught.value.issues]


SCRIPT = "script: [{content: done}]"

GOOD = f"""
- name: flow
  input: x
  {SCRIPT}
  expect:
    tool_calls:
      - {{id: look, name: lookup, args: {{key: alpha}}}}
      - id: sum
        name: add
        args: {{a: {{$ref: look.args.key}}, b: 2}}
        after: look
        result: {{$type: integer}}
      - {{name: add, args: {{a: {{$ref: sum.result}}}}, after: [look, sum], optional: true}}
"""


def test_labels_order_refs_results_and_optional_calls_load(tmp_path: Path) -> None:
    (scenario,) = load_paths([write(tmp_path, GOOD)])[0].scenarios
    look, total, again = scenario.expected
    assert (look.label, total.label, total.after, again.after) == (
        "look",
        "sum",
        ("look",),
        ("look", "sum"),
    )
    assert isinstance(total.args["a"], Ref) and total.args["a"].target == "look.args.key"
    assert again.optional and not total.optional
    assert total.result.describe() == "$type integer"
    # any after: adds the partial order metric at 1.0, next to the default accuracy
    assert [m.name for m in scenario.metrics] == ["tool_call_accuracy", "tool_call_partial_order"]
    assert (
        isinstance(scenario.metrics[1], ToolCallPartialOrder)
        and scenario.metrics[1].threshold == 1.0
    )


def test_a_configured_partial_order_keeps_its_threshold(tmp_path: Path) -> None:
    text = GOOD.replace("  expect:", "  metrics: {tool_call_partial_order: 0.5}\n  expect:", 1)
    (scenario,) = load_paths([write(tmp_path, text)])[0].scenarios
    assert [(m.name, m.threshold) for m in scenario.metrics] == [("tool_call_partial_order", 0.5)]


def test_label_problems_are_each_reported_with_line_and_field(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        f"""
        - name: bad
          input: x
          {SCRIPT}
          expect:
            tool_calls:
              - {{id: stock, name: lookup}}
              - {{id: stock, name: lookup}}
              - {{name: add, after: [stok]}}
              - name: add
                args: {{a: {{$ref: stok.result.x}}}}
              - {{id: has.dot, name: add}}
              - {{name: add, args: {{a: {{$ref: sum}}}}}}
              - {{name: add, result: {{$regx: x}}}}
              - {{name: add, after: [3]}}
              - {{id: x, name: add, after: y}}
              - {{id: y, name: add, after: x}}
            output: {{$ref: stock.result}}
        """,
    )
    assert issues(path) == [
        "suite.yaml:14: scenarios[0].expect.tool_calls[4].id: a label is a letter or _, then "
        "letters, digits, _ or - (no dots); found the string 'has.dot'",
        "suite.yaml:15: scenarios[0].expect.tool_calls[5].args.a.$ref: $ref 'sum' must start with "
        "an expected call's label (a letter or _, then letters, digits, _ or - (no dots)), then "
        "name its args or result: label.args.<argument path> or label.result[.<path>] (as in "
        "find.result.order_id)",
        "suite.yaml:16: scenarios[0].expect.tool_calls[6].result: unknown matcher '$regx' — did "
        "you mean '$regex'?",
        "suite.yaml:17: scenarios[0].expect.tool_calls[7].after[0]: after names labels (a letter "
        "or _, then letters, digits, _ or - (no dots)); found the number 3",
        "suite.yaml:10: scenarios[0].expect.tool_calls[1].id: duplicate label 'stock' (first "
        "given to tool_calls[0])",
        "suite.yaml:11: scenarios[0].expect.tool_calls[2].after: unknown label 'stok' — did you "
        "mean 'stock'?",
        "suite.yaml:13: scenarios[0].expect.tool_calls[3].args.a: $ref stok.result.x: unknown "
        "label 'stok' — did you mean 'stock'?",
        "suite.yaml:18: scenarios[0].expect.tool_calls[8].after: cycle 'x' → 'y' → 'x': no order "
        "of the calls can keep it",
        "suite.yaml:20: scenarios[0].expect.output: $ref only goes in an expected call's args or "
        "result (it names another expected call's value)",
    ]


def test_a_ref_cycle_is_a_load_error(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        f"""
        - name: cycle
          input: x
          {SCRIPT}
          expect:
            tool_calls:
              - {{id: a, name: add, args: {{a: {{$ref: b.result}}}}}}
              - {{id: b, name: add, args: {{a: {{$ref: a.result}}}}}}
        """,
    )
    assert issues(path) == [
        "suite.yaml:9: scenarios[0].expect.tool_calls[0].args.a: $ref b.result: cycle 'a' → 'b' "
        "→ 'a': each value needs the other call first"
    ]


def test_labels_are_per_list_in_agent_blocks_and_turns(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        f"""
        - name: turns
          {SCRIPT}
          turns:
            - input: one
              expect: {{tool_calls: [{{id: look, name: lookup}}]}}
            - input: two
              expect: {{tool_calls: [{{name: add, after: look}}]}}
        """,
    )
    assert issues(path) == [
        "suite.yaml:10: scenarios[0].turns[1].expect.tool_calls[0].after: unknown label 'look' (no "
        "expected call here has a label)"
    ]


def test_the_schema_takes_the_new_keys_and_flags_a_bad_label(tmp_path: Path) -> None:
    validator = jsonschema.Draft202012Validator(scenario_schema())
    data = yaml.safe_load(write(tmp_path, GOOD).read_text(encoding="utf-8"))
    assert [e.message for e in validator.iter_errors(data)] == []
    call = data["scenarios"][0]["expect"]["tool_calls"][0]
    for bad in (
        {"id": "has.dot"},
        {"after": ["a b"]},
        {"optional": "yes"},
        {"args": {"key": {"$ref": "look"}}},
    ):
        broken = {**call, **bad}
        data["scenarios"][0]["expect"]["tool_calls"][0] = broken
        assert list(validator.iter_errors(data)), bad
    data["scenarios"][0]["expect"]["tool_calls"][0] = call


def test_validate_takes_a_ref_argument_for_any_type_and_checks_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `lookup(key: str)`, `add(a: int, b: int)`: a $ref is no literal of the wrong type
    good = write(tmp_path, GOOD)
    assert check_tools(load_paths([good])) == []
    assert main(["validate", str(good)]) == 0
    bad = write(tmp_path, GOOD.replace("$ref: look.args.key", "$ref: lok.args.key"))
    assert main(["validate", str(bad)]) == 2
    err = capsys.readouterr()
    assert "unknown label 'lok' — did you mean 'look'?" in err.out + err.err
