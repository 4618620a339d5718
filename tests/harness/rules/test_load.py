"""The YAML / JSON form of rules: what compiles, and every bad input as a located issue."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic.json_schema import models_json_schema

from harness.errors import ConfigError
from harness.rules import (
    Allow,
    Before,
    Budget,
    CallPattern,
    Forbid,
    Grounded,
    MaxCalls,
    MaxRepeats,
    PolicyRuleSpec,
    Rule,
    RuleSpec,
    RulesSpec,
    Same,
    compile_rules,
    load_rules,
)
from harness.scenarios.issues import Collector
from harness.scenarios.yaml_lines import read_yaml


def compile_text(tmp_path: Path, text: str, **options: Any) -> tuple[tuple[Rule, ...], list[str]]:
    path = tmp_path / "rules.yaml"
    path.write_text(text, encoding="utf-8")
    out = Collector("rules.yaml")
    data = read_yaml(path, out)
    assert data is not None, out.issues
    rules = compile_rules(data["rules"], ("rules",), out, **options)
    return rules, [str(issue) for issue in out.issues]


GOOD = """\
rules:
  - name: no deletes
    forbid: delete_*
  - name: least privilege
    allow: [get_order, {name: search_*, args: {limit: {$type: integer}}}]
  - name: lookup first
    before:
      first: {name: get_order, args: {order_id: {$same: order_id}}}
      then: refund_order
  - name: grounded ids
    grounded: {tool: "*_order", args: order_id}
    severity: warn
  - name: few searches
    max_calls: {tool: search_*, max: 3}
  - name: every call
    max_calls: {max: 8}
  - name: no loops
    max_repeats: 2
  - name: budget
    budget: {tool_calls: 8, model_calls: 5, total_tokens: 6000, seconds: 2.5}
"""


def test_every_kind_compiles_with_its_line_and_file(tmp_path: Path) -> None:
    rules, issues = compile_text(tmp_path, GOOD)
    assert issues == []
    assert [(r.name, r.severity, r.line, r.file) for r in rules] == [
        ("no deletes", "error", 2, "rules.yaml"),
        ("least privilege", "error", 4, "rules.yaml"),
        ("lookup first", "error", 6, "rules.yaml"),
        ("grounded ids", "warn", 10, "rules.yaml"),
        ("few searches", "error", 13, "rules.yaml"),
        ("every call", "error", 15, "rules.yaml"),
        ("no loops", "error", 17, "rules.yaml"),
        ("budget", "error", 19, "rules.yaml"),
    ]
    kinds = [rule.kind for rule in rules]
    assert kinds[0] == Forbid(CallPattern("delete_*"))
    assert isinstance(kinds[1], Allow) and [p.describe() for p in kinds[1].patterns] == [
        "get_order",
        "search_*(limit=$type integer)",
    ]
    assert kinds[2] == Before(
        CallPattern("get_order", None, (("order_id", Same("order_id")),)),
        CallPattern("refund_order"),
    )
    assert kinds[3] == Grounded(CallPattern("*_order"), ("order_id",))
    assert kinds[4] == MaxCalls(CallPattern("search_*"), 3)
    assert kinds[5] == MaxCalls(CallPattern("*"), 8)
    assert kinds[6] == MaxRepeats(2)
    assert kinds[7] == Budget(tool_calls=8, model_calls=5, total_tokens=6000, seconds=2.5)


BAD = """\
rules:
  - name: ids
    grounded: {tool: cancel_order, args: [order_id, "a..b"]}
  - name: ids
    forbid: delete_*
  - forbidd: x
    name: typo
  - name: two
    forbid: x
    allow: [y]
  - forbid: x
  - name: neg
    max_calls: {tool: x, max: 0}
  - name: rep
    max_repeats: true
  - name: bud
    budget: {total_token: 5, seconds: 0}
  - name: pat
    forbid: 3
  - name: m
    forbid: {name: x, args: {a: {$regexx: "^a"}}}
  - name: same
    before: {first: x, then: {name: y, args: {id: {$same: id}}}}
  - name: nested
    before: {first: {name: x, args: {a: {b: {$same: id}}}}, then: y}
  - name: empty
    budget: {}
  - name: nokind
  - name: nullkind
    forbid: null
  - name: sev
    severity: fatal
    forbid: x
  - 42
  - name: frob
    frobnicate: 1
  - name: okay
    allow: []
  - name: gr
    grounded: {tool: x}
  - name: mc
    max_calls: {tool: {nme: x}, max: 2}
  - name: rx
    forbid: {name: x, args: {a: {$regex: "("}}}
  - name: ""
    max_repeats: 1.5
  - name: rate
    max_repeats: 1
    max_rate: 0.1
"""

BAD_ISSUES = [
    "rules.yaml:3: rules[0].grounded.args[1]: argument path 'a..b' has an empty part: write "
    "names joined by single dots, as in items.0.sku",
    "rules.yaml:4: rules[1].name: duplicate rule name 'ids' (first defined on line 2)",
    "rules.yaml:6: rules[2]: unknown rule kind 'forbidd' — did you mean 'forbid'?",
    "rules.yaml:10: rules[3].allow: a rule has exactly one kind, found forbid and allow: split "
    "it into 2 rules, each with its own name",
    "rules.yaml:11: rules[4]: missing required key 'name'",
    "rules.yaml:13: rules[5].max_calls.max: expected a number >= 1, found the number 0",
    "rules.yaml:15: rules[6].max_repeats: expected an integer, found the boolean true",
    "rules.yaml:17: rules[7].budget.seconds: expected a number > 0, found the number 0",
    "rules.yaml:17: rules[7].budget: unknown key 'total_token' — did you mean 'total_tokens'?",
    "rules.yaml:19: rules[8].forbid: expected a tool name, a glob or {name, args}, found the "
    "number 3",
    "rules.yaml:21: rules[9].forbid.args.a: unknown matcher '$regexx' — did you mean '$regex'?",
    "rules.yaml:23: rules[10].before.then.args.id: $same only goes in before.first.args (it "
    "names an argument of the 'then' call)",
    "rules.yaml:25: rules[11].before.first.args.a.b: $same only goes as the whole value of one "
    "of first's arguments, as in {order_id: {$same: order_id}}",
    "rules.yaml:27: rules[12].budget: a budget needs at least one of tool_calls, model_calls, "
    "input_tokens, output_tokens, total_tokens, seconds",
    "rules.yaml:28: rules[13]: a rule needs one kind: one of forbid, allow, before, grounded, "
    "max_calls, max_repeats, budget",
    "rules.yaml:30: rules[14].forbid: expected the forbid rule's value, found nothing (null)",
    "rules.yaml:32: rules[15].severity: expected one of 'error' or 'warn', found the string "
    "'fatal'",
    "rules.yaml:34: rules[16]: expected a rule mapping (name and one of forbid, allow, before, "
    "grounded, max_calls, max_repeats, budget), found the number 42",
    "rules.yaml:36: rules[17]: unknown rule kind 'frobnicate' (kinds: forbid, allow, before, "
    "grounded, max_calls, max_repeats, budget)",
    "rules.yaml:38: rules[18].allow: expected a non-empty list, found a list",
    "rules.yaml:40: rules[19].grounded: missing required key 'args'",
    "rules.yaml:42: rules[20].max_calls.tool: missing required key 'name'",
    "rules.yaml:42: rules[20].max_calls.tool: unknown key 'nme' — did you mean 'name'?",
    "rules.yaml:44: rules[21].forbid.args.a.$regex: $regex '(' is not a valid regular "
    "expression: missing ), unterminated subpattern at position 0",
    "rules.yaml:45: rules[22].name: expected a non-empty string, found the string ''",
    "rules.yaml:46: rules[22].max_repeats: expected an integer, found the number 1.5",
    "rules.yaml:49: rules[23]: 'max_rate' only goes in a policy file's rules (the share of "
    "traces that may violate it); here a rule fails on any violation",
]


def test_every_problem_is_located_with_the_nearest_name(tmp_path: Path) -> None:
    rules, issues = compile_text(tmp_path, BAD)
    assert rules == ()
    assert issues == BAD_ISSUES


def test_a_policy_rule_takes_max_rate(tmp_path: Path) -> None:
    text = "rules:\n  - {name: rate, max_repeats: 1, max_rate: 0.1}\n  - {name: r2, forbid: x}\n"
    rules, issues = compile_text(tmp_path, text, spec=PolicyRuleSpec)
    assert issues == []
    assert [(r.name, r.max_rate) for r in rules] == [("rate", 0.1), ("r2", 0.0)]
    _, issues = compile_text(
        tmp_path, "rules:\n  - {name: r, forbid: x, max_rate: 2}\n", spec=PolicyRuleSpec
    )
    assert issues == ["rules.yaml:2: rules[0].max_rate: expected a number <= 1, found the number 2"]


def test_good_rules_beside_bad_ones_still_compile(tmp_path: Path) -> None:
    rules, issues = compile_text(
        tmp_path, "rules:\n  - {name: a, forbid: x}\n  - {name: b, forbid: 1}\n"
    )
    assert [r.name for r in rules] == ["a"]
    assert len(issues) == 1


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"name": "x"}, "expected a list of rules, found a mapping"),
        ("forbid: x", "expected a list of rules, found the string 'forbid: x'"),
    ],
)
def test_a_rule_list_that_is_not_a_list(raw: Any, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_rules(raw, file="policy.json")
    assert [str(issue) for issue in caught.value.issues] == [f"policy.json: rules: {message}"]


def test_none_is_no_rules_and_python_data_loads() -> None:
    assert load_rules(None) == ()
    (rule,) = load_rules([{"name": "n", "max_repeats": 3}])
    assert rule == Rule("n", MaxRepeats(3), file="<rules>")


def test_the_specs_make_a_json_schema() -> None:
    _, schema = models_json_schema(
        [(RuleSpec, "validation"), (PolicyRuleSpec, "validation"), (RulesSpec, "validation")]
    )
    rule = schema["$defs"]["RuleSpec"]
    assert set(rule["properties"]) == {
        "name",
        "severity",
        "forbid",
        "allow",
        "before",
        "grounded",
        "max_calls",
        "max_repeats",
        "budget",
    }
    assert rule["additionalProperties"] is False
    assert schema["$defs"]["BudgetSpec"]["additionalProperties"] is False
