"""``rules:`` in scenario files: suite rules first, replaced or switched off by name; located
errors for every misuse; ``harness validate`` against the agent's tools; the JSON Schema."""

from __future__ import annotations

import json
import re
import textwrap
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.rules import MaxRepeats
from harness.scenarios import ConfigError, check_tools, load_paths
from harness.scenarios.json_schema import scenario_schema
from harness.scenarios.rules import merge_rules


def write(tmp_path: Path, body: str, name: str = "suite.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    return path


def issues_of(path: Path) -> list[str]:
    """The load's issues, the file shown by its name."""
    with pytest.raises(ConfigError) as caught:
        load_paths([path])
    return [str(issue).replace(f"{path.parent}/", "") for issue in caught.value.issues]


HEAD = """
suite: s
agent: harness.demo.orders:build
defaults:
  rules:
    - {name: no cancels, forbid: cancel_order}
    - {name: budget, budget: {tool_calls: 5}}
scenarios:
"""


def test_every_misuse_is_a_located_error_with_the_nearest_name(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        HEAD
        + """  - name: a
    input: hi
    expect:
      disable_rules: [budgett, no cancels]
      rules:
        - {name: no cancels, forbid: refund_order}
        - {name: twice, max_repeats: 2}
        - {name: twice, max_repeats: 3}
        - {name: odd, forbidd: x}
  - name: b
    turns:
      - input: hi
        expect:
          disable_rules: [budget]
          rules: [{name: turn budget, budget: {tool_calls: 2}}]
  - name: c
    input: hi
    expect: {rules: {name: not a list, forbid: x}}
""",
    )
    found = issues_of(path)
    assert found == [
        "suite.yaml:15: scenarios[0].expect.rules[2].name: duplicate rule name 'twice' "
        "(first defined on line 14)",
        "suite.yaml:16: scenarios[0].expect.rules[3]: unknown rule kind 'forbidd' — did you "
        "mean 'forbid'?",
        "suite.yaml:11: scenarios[0].expect.disable_rules[0]: unknown suite rule 'budgett' — "
        "did you mean 'budget'?",
        "suite.yaml:11: scenarios[0].expect.disable_rules[1]: 'no cancels' is both disabled and "
        "defined in this scenario's rules: a scenario rule with a suite rule's name already "
        "replaces it; remove one of the two",
        "suite.yaml:21: scenarios[1].turns[0].expect.disable_rules: disable_rules goes in the "
        "scenario's expect: suite rules apply to the whole conversation, and a turn's rules are "
        "only its own",
        "suite.yaml:25: scenarios[2].expect.rules: expected a list, found a mapping",
    ]


def test_a_bad_suite_rule_is_reported_once_not_per_scenario(tmp_path: Path) -> None:
    body = HEAD.replace("{name: budget, budget: {tool_calls: 5}}", "{name: budget, budget: {}}")
    path = write(tmp_path, body + "  - {name: a, input: hi}\n  - {name: b, input: hi}\n")
    assert issues_of(path) == [
        "suite.yaml:6: defaults.rules[1].budget: a budget needs at least one of tool_calls, "
        "model_calls, input_tokens, output_tokens, total_tokens, seconds"
    ]


def test_a_suite_without_rules_says_so_when_one_is_disabled(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        suite: s
        agent: harness.demo.orders:build
        scenarios:
          - {name: a, input: hi, expect: {disable_rules: [budget]}}
        """,
    )
    assert issues_of(path) == [
        "suite.yaml:4: scenarios[0].expect.disable_rules[0]: unknown suite rule 'budget': the "
        "suite defines no rules (defaults.rules)"
    ]


# --- merging: suite first, replaced in place by name, switched off by name ------------------

NAMES = st.sampled_from([f"r{i}" for i in range(8)])


def reference(suite: list[str], own: list[str], disabled: set[str]) -> list[tuple[str, str]]:
    """(origin, name) of each rule in order, by position: a suite rule keeps its index (its
    replacement too), the scenario's other rules follow in their order."""
    placed: list[tuple[float, str, str]] = []
    for index, name in enumerate(suite):
        if name in own:
            placed.append((index, "own", name))
        elif name not in disabled:
            placed.append((index, "suite", name))
    for index, name in enumerate(own):
        if name not in suite:
            placed.append((len(suite) + index, "own", name))
    return [(origin, name) for _, origin, name in sorted(placed)]


@st.composite
def setups(draw: st.DrawFn) -> tuple[list[str], list[str], list[str]]:
    suite = draw(st.lists(NAMES, unique=True, max_size=6))
    own = draw(st.lists(NAMES, unique=True, max_size=6))
    disabled = draw(st.lists(NAMES, unique=True, max_size=4))
    return suite, own, disabled


def rules_yaml(names: list[str], repeats: int) -> str:
    # the origin is read back from max_repeats: 1 for the suite's rules, 2 for the scenario's
    return json.dumps([{"name": name, "max_repeats": repeats} for name in names])


@settings(
    max_examples=60,
    deadline=timedelta(seconds=5),
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    derandomize=True,
)
@given(setup=setups())
def test_merged_rules_match_a_naive_reference(
    tmp_path: Path, setup: tuple[list[str], list[str], list[str]]
) -> None:
    suite, own, disabled = setup
    body = f"""
suite: s
agent: harness.demo.orders:build
defaults: {{rules: {rules_yaml(suite, 1)}}}
scenarios:
  - name: a
    input: hi
    expect: {{rules: {rules_yaml(own, 2)}, disable_rules: {json.dumps(disabled)}}}
"""
    path = write(tmp_path, body)
    wrong = [name for name in disabled if name not in suite or name in own]
    if wrong:
        found = issues_of(path)
        assert len(found) == len(wrong)
        for issue, name in zip(found, wrong, strict=True):
            where = r"suite\.yaml:7: scenarios\[0\]\.expect\.disable_rules\[\d\]: "
            assert re.match(rf"{where}.*'{name}'", issue), issue
        return
    [loaded] = load_paths([path])
    rules = loaded.scenarios[0].rules
    got = []
    for rule in rules:
        assert isinstance(rule.kind, MaxRepeats)
        got.append(("suite" if rule.kind.max == 1 else "own", rule.name))
    assert got == reference(suite, own, set(disabled))
    # the function the loader merges with, on its own (what pytest's API will call)
    mine = [_Named(name) for name in own]
    merged = merge_rules([_Named(name) for name in suite], mine, set(disabled))
    origins = [("own" if any(r is m for m in mine) else "suite", r.name) for r in merged]
    assert origins == reference(suite, own, set(disabled))


class _Named:
    def __init__(self, name: str) -> None:
        self.name = name


# --- harness validate, harness schema ---------------------------------------------------------

VALIDATED = """
suite: v
agent: harness.demo.orders:build
defaults:
  rules:
    - {name: no deletes, forbid: "delete_*"}
    - name: lookup
      before:
        first: {name: get_order, args: {order_id: {$same: order_id}}}
        then: refund_ordr
scenarios:
  - name: a
    input: hi
    expect:
      rules:
        - name: ids
          grounded: {tool: "*_order", args: [order_idd]}
        - name: reads
          allow: [get_order, {name: "search_*", args: {customer: C-1}}]
        - name: one cancel
          max_calls: {tool: {name: cancel_order, args: {order_id: 5}}, max: 1}
  - name: b
    input: hi
    expect:
      disable_rules: [lookup]
"""


def test_validate_checks_rule_patterns_against_the_agents_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, VALIDATED)
    found = check_tools(load_paths([path]))
    warnings = [str(issue).replace(f"{tmp_path}/", "") for issue in found if issue.warning]
    errors = [str(issue).replace(f"{tmp_path}/", "") for issue in found if not issue.warning]
    tools = "cancel_order, find_customer, get_order, refund_order, search_orders"
    assert warnings == [
        "suite.yaml:5: defaults.rules[0].forbid: 'delete_*' matches no tool of the agent "
        f"(tools: {tools})"
    ]
    assert errors == [
        "suite.yaml:9: defaults.rules[1].before.then: unknown tool 'refund_ordr' — did you mean "
        "'refund_order'?",
        "suite.yaml:16: scenarios[0].expect.rules[0].grounded.args[0]: unknown argument "
        "'order_idd' for the tools '*_order' matches — did you mean 'order_id'?",
        "suite.yaml:18: scenarios[0].expect.rules[1].allow[1].args.customer: unknown argument "
        "'customer' for the tools 'search_*' matches — did you mean 'customer_id'?",
        "suite.yaml:20: scenarios[0].expect.rules[2].max_calls.tool.args.order_id: wrong type "
        "for argument 'order_id' of tool 'cancel_order': expected string, found the number 5",
    ]
    # scenario b switched the bad rule off: only scenario a's copy of it is reported (once)
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "warning: " in err and "4 configuration errors" in err


REFS = """
suite: v
agent: harness.demo.orders:build
scenarios:
  - name: refs
    input: "Cancel order ORD-1050"
    expect:
      tool_calls:
        - {id: look, name: get_order, args: {order_id: ORD-1050}}
        - {name: cancel_order, args: {order_id: {$ref: look.args.order_idd}}, after: look}
        - name: refund_order
          args: {order_id: {$ref: look.result.anything}, amount: {$ref: look.args.order_id}}
      rules:
        - name: lookup first
          before:
            first: {name: get_order, args: {order_id: {$same: order_idd}}}
            then: "refund_*"
        - name: lookup first, right
          before:
            first: {name: get_order, args: {order_id: {$same: order_id}}}
            then: refund_order
  - name: turns
    turns:
      - input: "Find ORD-1050"
        expect:
          tool_calls:
            - {id: find, name: search_orders, args: {customer_id: C-001}}
            - {name: get_order, args: {order_id: {$ref: find.args.customer}}}
"""


def test_validate_checks_ref_and_same_arguments_against_the_agents_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, REFS)
    found = [str(issue).replace(f"{tmp_path}/", "") for issue in check_tools(load_paths([path]))]
    # a result has no schema ($ref look.result...), and the right $same and $ref pass
    assert found == [
        "suite.yaml:9: scenarios[0].expect.tool_calls[1].args.order_id: $ref "
        "look.args.order_idd: unknown argument 'order_idd' for tool 'get_order' (labelled "
        "'look') — did you mean 'order_id'?",
        "suite.yaml:15: scenarios[0].expect.rules[0].before.first.args.order_id: $same "
        "order_idd: unknown argument 'order_idd' for the `then` tool 'refund_*' — did you mean "
        "'order_id'?",
        "suite.yaml:27: scenarios[1].turns[0].expect.tool_calls[1].args.order_id: $ref "
        "find.args.customer: unknown argument 'customer' for tool 'search_orders' (labelled "
        "'find') — did you mean 'customer_id'?",
    ]
    assert main(["validate", str(path)]) == 2
    assert "3 configuration errors" in capsys.readouterr().err


def test_a_glob_matching_no_tool_is_only_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        """
        suite: v
        agent: harness.demo.orders:build
        defaults: {rules: [{name: no deletes, forbid: "delete_*"}]}
        scenarios: [{name: a, input: hi}]
        """,
    )
    assert main(["validate", str(path)]) == 0
    captured = capsys.readouterr()
    assert "warning: suite.yaml:3: defaults.rules[0].forbid: 'delete_*' matches no tool" in (
        " ".join(captured.err.split()).replace(f"{tmp_path}/", "")
    )
    assert "1 file(s), 1 scenario(s): OK" in captured.out


def test_the_schema_takes_every_rule_form_and_rejects_bad_ones() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(scenario_schema())
    good: list[dict[str, Any]] = [
        {"name": "a", "forbid": "delete_*"},
        {
            "name": "b",
            "allow": ["get_order", {"name": "search_*", "args": {"x": {"$regex": "^C"}}}],
        },
        {
            "name": "c",
            "before": {
                "first": {"name": "get_order", "args": {"order_id": {"$same": "order_id"}}},
                "then": "refund_order",
            },
        },
        {"name": "d", "grounded": {"tool": "*_order", "args": "order_id"}},
        {"name": "e", "grounded": {"tool": {"name": "x"}, "args": ["a", "items.0.sku"]}},
        {"name": "f", "max_calls": {"max": 8}},
        {"name": "g", "max_repeats": 2, "severity": "warn"},
        {"name": "h", "budget": {"total_tokens": 6000, "seconds": 2.5}},
    ]
    bad: list[dict[str, Any]] = [
        {"name": "x", "forbid": "a", "allow": ["b"]},
        {"name": "x", "forbidd": "a"},
        {"forbid": "a"},
        {"name": "x", "forbid": None},
        {"name": "x", "budget": {"total_token": 3}},
        {"name": "x", "budget": {}},
        {"name": "x", "max_repeats": 0},
        {"name": "x", "max_calls": {"max": True}},
        {"name": "x", "severity": "warning", "forbid": "a"},
        {
            "name": "x",
            "before": {"first": "a", "then": {"name": "b", "args": {"k": {"$same": "k"}}}},
        },
        {"name": "x", "max_rate": 0.1, "forbid": "a"},
    ]

    def suite(rules: list[dict[str, Any]], disabled: Any = ()) -> dict[str, Any]:
        expect = {"rules": rules, "disable_rules": list(disabled)}
        return {
            "agent": "a:b",
            "defaults": {"rules": rules},
            "scenarios": [{"name": "s", "input": "hi", "expect": expect}],
        }

    assert list(validator.iter_errors(suite(good, ["a"]))) == []
    for rule in bad:
        assert list(validator.iter_errors(suite([rule]))), rule
    assert list(validator.iter_errors(suite(good, [3])))
