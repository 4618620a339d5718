"""A fuzz of the rules loader: mutated rule mappings and mangled YAML files either compile or
give located issues — never a traceback, never a hang (hypothesis's per-example deadline) —
and whatever compiles evaluates without raising.
"""

from __future__ import annotations

import datetime
import os
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.rules import KINDS, Trajectory, compile_rules, evaluate_rules
from harness.scenarios.issues import Collector
from harness.scenarios.yaml_lines import read_yaml
from tests.harness.rules.test_load import GOOD
from tests.harness.scenarios.test_loader_fuzz import MUTATIONS
from tracing.records import ModelCall, ToolCall

EXAMPLES = int(os.environ.get("HARNESS_FUZZ_EXAMPLES", "150"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=timedelta(seconds=5),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=EXAMPLES <= 200,
)
VALID: list[dict[str, Any]] = yaml.safe_load(GOOD)["rules"]
KEYS = [*KINDS, "name", "severity", "first", "then", "tool", "args", "max", "max_rate"]
KEYS += ["$same", "$regex", "$one_of", "$approx", "$literal", "seconds", "total_tokens", "nme"]

leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["*", "[", "a..b", ".", "(", "get_*", "", "x" * 300]),
    st.just(datetime.date(2024, 1, 1)),
    st.binary(max_size=4),
)
values = st.recursive(
    leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), inner, max_size=3)
    ),
    max_leaves=10,
)


def mutate(value: Any, draw: st.DrawFn, depth: int = 0) -> Any:
    """Replace, drop or add one thing somewhere inside ``value``."""
    choice = draw(st.integers(0, 6))
    if isinstance(value, dict) and value and choice < 4:
        key = draw(st.sampled_from(sorted(value, key=repr)))
        copy = dict(value)
        if choice == 0:
            del copy[key]
        elif choice == 1:
            copy[key] = mutate(value[key], draw, depth + 1)
        elif choice == 2:
            copy[key] = None
        else:
            copy[draw(st.sampled_from(KEYS))] = draw(values)
        return copy
    if isinstance(value, list) and value and choice < 3:
        at = draw(st.integers(0, len(value) - 1))
        return [*value[:at], mutate(value[at], draw, depth + 1), *value[at + 1 :]]
    return draw(values)


@st.composite
def rule_lists(draw: st.DrawFn) -> Any:
    items: list[Any] = draw(st.lists(st.sampled_from(VALID), max_size=5))
    for _ in range(draw(st.integers(1, 4))):
        if items and draw(st.booleans()):
            at = draw(st.integers(0, len(items) - 1))
            items[at] = mutate(items[at], draw)
        else:
            items.append(draw(values))
    return items if draw(st.integers(0, 9)) else draw(values)


HOSTILE = Trajectory(
    calls=(
        ToolCall(name="get_order", args={"order_id": "ORD-1", "n": float("nan")}, result="[1, {"),
        ToolCall(name="delete_x", args={"a": [[[]]], "b": {"c": None}}, status="requested"),
        ToolCall.invalid("refund_order", "{", None),
        ToolCall(name="refund_order", args={"order_id": 10**40}, result={"k": [True, 1e308]}),
    ),
    user_inputs=("ORD-1 please", ""),
    model_calls=(ModelCall(10, None, None), ModelCall()),
    duration=1.0,
    not_captured=frozenset({1}),
)


def check(raw: Any, out: Collector, located: bool) -> None:
    before = len(out.issues)  # the YAML reader's own issues are not the loader's
    rules = compile_rules(raw, ("rules",), out)
    issues = out.issues[before:]
    for issue in issues:
        assert issue.path.startswith("rules"), str(issue)
        if located:
            assert issue.line is not None and issue.line >= 1, str(issue)
    if not isinstance(raw, list):
        assert rules == () and (raw is None or issues)
        return
    clean = [
        i for i in range(len(raw)) if not any(re.match(rf"rules\[{i}\]", x.path) for x in issues)
    ]
    assert len(rules) == len(clean)
    for result in evaluate_rules(rules, HOSTILE):
        assert result.passed or result.code is not None
        assert result.code != "rule_error", result.reason


@SETTINGS
@given(rule_lists())
def test_mutated_rule_mappings_compile_or_are_located_issues(raw: Any) -> None:
    check(raw, Collector("rules"), located=False)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("rules-fuzz")


@SETTINGS
@given(st.lists(MUTATIONS, min_size=1, max_size=4))
def test_a_mangled_rules_file_compiles_or_is_located_issues(folder: Path, mutations: Any) -> None:
    data = GOOD.encode()
    for mutation in mutations:
        data = mutation(data)
    path = folder / "rules.yaml"
    path.write_bytes(data)
    out = Collector("rules.yaml")
    document = read_yaml(path, out)
    if not isinstance(document, dict):
        return  # a file that is no mapping: the YAML reader's own (fuzzed) issue
    check(document.get("rules"), out, located=True)
