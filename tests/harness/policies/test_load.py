"""Policy files: both forms load; bad input is every problem as ``file:line: field: message``."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import jsonschema
import pytest
import yaml

from harness.cli import main
from harness.errors import ConfigError
from harness.policies import Policy, Selector, load_policies
from harness.rules import Before, Forbid

GOOD = """\
policies:
  - name: shop
    select:
      service: shop-*
      agent: orders
      root: "scenario *"
      attributes: {deployment.environment: {$one_of: [prod, staging]}, tier: 2}
      uses_tool: refund_*
    rules:
      - name: lookup first
        before: {first: {name: get_order, args: {order_id: {$same: order_id}}}, then: refund_order}
        max_rate: 0.01
      - {name: no deletes, forbid: "delete_*", severity: warn}
  - name: everything
    rules:
      - {name: ids, grounded: {tool: "*", args: [order_id]}}
      - {name: calls, max_calls: {max: 12}}
      - {name: loops, max_repeats: 2}
      - {name: spend, budget: {total_tokens: 6000, seconds: 30}}
      - {name: tools, allow: [get_order, refund_order]}
"""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # files are shown relative to the working directory


def _write(tmp_path: Path, text: str, name: str = "p.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _issues(paths: list[Path]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_policies(paths)
    return [str(issue) for issue in caught.value.issues]


def test_a_list_of_policies_loads_every_rule_form(tmp_path: Path) -> None:
    shop, everything = load_policies([_write(tmp_path, GOOD)])
    assert isinstance(shop, Policy) and shop.line == 2 and shop.path is not None
    assert shop.select.service == "shop-*" and shop.select.uses_tool == ("refund_*",)
    assert [key for key, _ in shop.select.attributes] == ["deployment.environment", "tier"]
    assert isinstance(shop.rules[0].kind, Before) and shop.rules[0].max_rate == 0.01
    assert isinstance(shop.rules[1].kind, Forbid) and shop.rules[1].severity == "warn"
    assert shop.rules[0].line == 10
    assert everything.select == Selector() and everything.select.every_trace
    assert [rule.name for rule in everything.rules] == ["ids", "calls", "loops", "spend", "tools"]


def test_a_named_policy_with_top_level_select_and_rules(tmp_path: Path) -> None:
    text = "policies: one\nselect: {uses_tool: [a, b*]}\nrules: [{name: r, forbid: x}]\n"
    (policy,) = load_policies([_write(tmp_path, text)])
    assert (policy.name, policy.line, policy.select.uses_tool) == ("one", 1, ("a", "b*"))


def test_every_problem_is_listed_with_file_line_field_and_nearest_name(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """\
        policies: orders
        selct: {agent: orders}
        scenarios: []
        select:
          servce: x
          attributes: {env: {$regx: prod}, id: {$ref: a.args.b}}
          uses_tool: 3
        rules:
          - name: a
            forbid: x
            max_rat: 0.1
          - name: a
            befor: {first: x, then: y}
          - name: c
            max_calls: {tool: x, max: 0}
            max_rate: 3
          - {name: d, severity: warning, max_repeats: 2}
        """,
    )
    assert _issues([path]) == [
        "p.yaml:2: unknown key 'selct' — did you mean 'select'?",
        "p.yaml:3: scenarios: a policy file holds no scenarios: scenarios go in a suite file "
        "(`harness eval-traces --scenarios`); a policy holds only select and rules",
        "p.yaml:7: select.uses_tool: expected a list, found the number 3",
        "p.yaml:5: select: unknown key 'servce' — did you mean 'service'?",
        "p.yaml:6: select.attributes.env: unknown matcher '$regx' — did you mean '$regex'?",
        "p.yaml:6: select.attributes.id: $ref has no meaning here: a selector looks at one "
        "trace's attributes, not at a call's arguments",
        "p.yaml:11: rules[0]: unknown key 'max_rat' — did you mean 'max_rate'?",
        "p.yaml:13: rules[1]: unknown rule kind 'befor' — did you mean 'before'?",
        "p.yaml:12: rules[1].name: duplicate rule name 'a' (first defined on line 9)",
        "p.yaml:15: rules[2].max_calls.max: expected a number >= 1, found the number 0",
        "p.yaml:16: rules[2].max_rate: expected a number <= 1, found the number 3",
        "p.yaml:17: rules[3].severity: expected one of 'error' or 'warn', found the string "
        "'warning' — did you mean 'warn'?",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "p.yaml: the file is empty: expected 'policies: <name>', 'select' and 'rules'"),
        (
            "- a\n",
            "p.yaml:1: expected a mapping at the top level (keys: policies, select, "
            "rules), found a list",
        ),
        (
            "rules: [{name: r, forbid: x}]\n",
            "p.yaml:1: missing required key 'policies' (the "
            "policy's name, or a list of {name, select, rules})",
        ),
        ("policies: p\n", "p.yaml:1: missing required key 'rules' (the policy's rules)"),
        ("policies: p\nrules: []\n", "p.yaml:2: rules: a policy needs at least one rule"),
        (
            "policies: 7\nrules: []\n",
            "p.yaml:1: policies: expected the policy's name or a list "
            "of {name, select, rules}, found the number 7",
        ),
        (
            "policies: [{name: p, rule: []}]\n",
            "p.yaml:1: policies[0]: unknown key 'rule' — did you mean 'rules'?",
        ),
        (
            "policies: [{rules: [{name: r, forbid: x}]}]\n",
            "p.yaml:1: policies[0]: missing required key 'name'",
        ),
        (
            "policies: [{name: p, rules: [{name: r, forbid: x}]}]\nselect: {}\n",
            "p.yaml:2: select: with a list of policies, each policy holds its own select: move it "
            "into the list's items",
        ),
        (
            "policies: p\nselect: [a]\nrules: [{name: r, forbid: x}]\n",
            "p.yaml:2: select: "
            "expected a mapping of service, agent, root, attributes, uses_tool, found a list",
        ),
        (
            "policies: p\nrules: [{name: r, forbid: x}]\nrules: []\n",
            "p.yaml:3: duplicate key 'rules' (first written on line 2)",
        ),
        ("policies: p\nrules: [{name: r, forbid: [}\n", "p.yaml:2: invalid YAML: "),
    ],
)
def test_one_bad_thing_one_located_message(tmp_path: Path, text: str, expected: str) -> None:
    issues = _issues([_write(tmp_path, text)])
    assert any(issue.startswith(expected) for issue in issues), issues


def test_names_are_unique_across_files_and_good_files_are_not_lost(tmp_path: Path) -> None:
    first = _write(tmp_path, "policies: p\nrules: [{name: r, forbid: x}]\n", "a.yaml")
    again = _write(tmp_path, "\n\npolicies: p\nrules: [{name: r, forbid: y}]\n", "b.yaml")
    broken = _write(tmp_path, "policies: q\nrules: [{name: r, forbd: y}]\n", "c.yaml")
    assert _issues([first, again, broken, Path("missing.yaml")]) == [
        "missing.yaml: no such file or directory",
        "b.yaml:3: policies: duplicate policy name 'p' (first defined at a.yaml:1)",
        "c.yaml:2: rules[0]: unknown rule kind 'forbd' — did you mean 'forbid'?",
    ]


def test_a_folder_gives_its_policy_files_only(tmp_path: Path) -> None:
    _write(tmp_path, GOOD, "policies.yaml")
    _write(tmp_path, "suite: s\nscenarios: []\n", "suite.yaml")
    assert [p.name for p in load_policies([tmp_path])] == ["shop", "everything"]
    (tmp_path / "none").mkdir()
    assert _issues([Path("none")]) == ["none: no policy files here (none has 'policies:')"]


def test_validate_and_schema_cover_policy_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _write(tmp_path, GOOD)
    assert main(["validate", str(good)]) == 0
    assert "1 policy file, 2 policies, 7 rules: OK" in capsys.readouterr().out
    bad = _write(tmp_path, "policies: p\nrules: [{name: r, forbid: x, max_rate: -1}]\n", "b.yaml")
    assert main(["validate", str(bad)]) == 2
    assert "b.yaml:2: rules[0].max_rate: expected a number >= 0" in capsys.readouterr().err
    assert main(["schema", "--policies"]) == 0
    schema = json.loads(capsys.readouterr().out)
    validator = jsonschema.Draft202012Validator(schema)
    assert not list(validator.iter_errors(yaml.safe_load(GOOD)))
    for wrong in (
        {"policies": "p", "rules": [{"name": "r", "forbid": "x", "max_rate": 2}]},
        {"policies": "p", "select": {"servce": "x"}, "rules": [{"name": "r", "forbid": "x"}]},
        {"policies": "p", "rules": [{"name": "r"}]},
        {"policies": "p", "scenarios": [], "rules": [{"name": "r", "forbid": "x"}]},
    ):
        assert list(validator.iter_errors(wrong)), wrong
