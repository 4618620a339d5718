"""A fuzz of the loader: any mutation of a shipped suite loads, or is a located ConfigError.

Mutations of the files in scenarios/: byte flips, inserted control characters, deleted spans,
duplicated or dropped lines, indentation moved; and ``model:`` values of every form (factories
right and wrong, ``max_concurrency`` of any type). Never another exception, never a slow load
(hypothesis's per-example deadline). ``HARNESS_FUZZ_EXAMPLES=4000`` runs the big fuzz by hand.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.rules import Trajectory, evaluate_rules
from harness.rules.budget import BUDGET_KEYS
from harness.rules.schema import KINDS
from harness.scenarios import ConfigError, load_paths
from tests.support.paths import FIXTURES, ROOT

SHIPPED = sorted((ROOT / "scenarios").glob("*.yaml"))
SOURCES = [*SHIPPED, FIXTURES / "suites" / "rules.yaml"]
"""What the byte-level fuzz mutates: the shipped suites, and one with rules in every place."""
CONTROL = ["\x00", "\x07", "\x08", "\x1b", "\x7f", "\ufeff", "\uffff", "\r", "\t", "\x85"]
EXAMPLES = int(os.environ.get("HARNESS_FUZZ_EXAMPLES", "120"))

Mutation = Callable[[bytes], bytes]


@st.composite
def flip(draw: st.DrawFn) -> Mutation:
    where, byte = draw(st.floats(0, 1)), draw(st.integers(0, 255))

    def apply(data: bytes) -> bytes:
        at = int(where * (len(data) - 1))
        return data[:at] + bytes([byte]) + data[at + 1 :]

    return apply


@st.composite
def insert_control(draw: st.DrawFn) -> Mutation:
    where, char = draw(st.floats(0, 1)), draw(st.sampled_from(CONTROL))

    def apply(data: bytes) -> bytes:
        at = int(where * len(data))
        return data[:at] + char.encode("utf-8") + data[at:]

    return apply


@st.composite
def delete_span(draw: st.DrawFn) -> Mutation:
    where, length = draw(st.floats(0, 1)), draw(st.integers(1, 40))

    def apply(data: bytes) -> bytes:
        at = int(where * len(data))
        return data[:at] + data[at + length :]

    return apply


@st.composite
def line_edit(draw: st.DrawFn) -> Mutation:
    where = draw(st.floats(0, 1))
    kind = draw(st.sampled_from(["duplicate", "drop", "indent", "dedent"]))
    width = draw(st.integers(1, 6))

    def apply(data: bytes) -> bytes:
        lines = data.splitlines(keepends=True)
        if not lines:
            return data
        at = int(where * (len(lines) - 1))
        line = lines[at]
        if kind == "duplicate":
            lines.insert(at, line)
        elif kind == "drop":
            del lines[at]
        elif kind == "indent":
            lines[at] = b" " * width + line
        else:
            lines[at] = line[min(width, len(line) - len(line.lstrip(b" "))) :]
        return b"".join(lines)

    return apply


MUTATIONS = st.one_of(flip(), insert_control(), delete_span(), line_edit())


@st.composite
def mutants(draw: st.DrawFn) -> tuple[Path, bytes]:
    """A shipped suite with one to four mutations applied."""
    source = draw(st.sampled_from(SOURCES))
    data = source.read_bytes()
    for mutation in draw(st.lists(MUTATIONS, min_size=1, max_size=4)):
        data = mutation(data)
    return source, data


def outcome(source: Path, data: bytes, folder: Path) -> str:
    """Load the mutant; 'loaded' or 'config error', after checking every issue is located."""
    path = folder / source.name
    path.write_bytes(data)
    try:
        load_paths([path])
    except ConfigError as exc:
        for issue in exc.issues:
            assert issue.line is not None and issue.line >= 1, str(issue)
            assert re.match(rf".*{re.escape(source.name)}:\d+: ", str(issue)), str(issue)
        return "config error"
    return "loaded"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # a suite's agent is a module path (harness.demo...), so the mutant may sit anywhere
    for source in SOURCES:  # the first load imports the agents: not part of any deadline
        with contextlib.suppress(ConfigError):
            load_paths([source])
    return tmp_path_factory.mktemp("fuzz")


def test_shipped_suites_are_there() -> None:
    assert len(SHIPPED) >= 3


def test_the_rules_suite_loads_as_it_is() -> None:
    """Unmutated, the suite with rules loads: the fuzz starts from rules that compile."""
    [suite] = load_paths([SOURCES[-1]])
    refund, turns = suite.scenarios
    assert [rule.name for rule in refund.rules] == [
        "grounded ids",
        "lookup first",
        "read and refund only",
        "one refund",
        "no loops",
        "no cancels",
    ]
    assert [rule.name for rule in turns.turns[0].rules] == ["lookups only"]


@settings(
    max_examples=EXAMPLES,
    deadline=timedelta(seconds=5),  # a load takes milliseconds; 5 s leaves room for busy CI
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=EXAMPLES <= 200,  # the committed run is the same every time; the big one is not
)
@given(mutants())
def test_a_mutated_suite_loads_or_is_a_located_config_error(
    folder: Path, mutant: tuple[Path, bytes]
) -> None:
    source, data = mutant
    assert outcome(source, data, folder) in ("loaded", "config error")


# --- `model:` (a factory of the user's own, max_concurrency) --------------------------------

MODELS_FILE = """
from harness.models.scripted import ScriptedChatModel


def build(**options):
    return ScriptedChatModel([{"content": "ok"}])


NOT_CALLABLE = 3
"""

# module parts and attributes a user might write, right or wrong; never a random module name
# (an import runs the module's code)
HEADS = ["my_models.py", "./my_models.py", "missing.py", "sub/x.py", "acme.models", "my_models"]
HEADS += ["harness.models.scripted", "openai", "demo", "scripted", "", ".py", "a..b"]
TAILS = ["build", "buld", "NOT_CALLABLE", "", "build.x", "ScriptedChatModel", ":", "gpt-4o"]
JSONISH = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 10)
    | st.floats(allow_nan=True)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def model_specs(draw: st.DrawFn) -> Any:
    target = f"{draw(st.sampled_from(HEADS))}:{draw(st.sampled_from(TAILS))}"
    text = draw(st.sampled_from([target, target.rstrip(":"), "demo", "scripted", "openai:gpt"]))
    if draw(st.booleans()):
        return text
    spec: dict[str, Any] = {}
    if draw(st.booleans()):
        spec["provider"] = draw(st.sampled_from([text, *HEADS]) | JSONISH)
    if draw(st.booleans()):
        spec["max_concurrency"] = draw(st.integers(-2, 4) | JSONISH)
    spec.update(
        draw(st.dictionaries(st.sampled_from(["model", "latency", "temperature"]), JSONISH))
    )
    return spec


@pytest.fixture(scope="module")
def model_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fuzz-models")
    (folder / "my_models.py").write_text(MODELS_FILE, encoding="utf-8")
    return folder


@settings(
    max_examples=EXAMPLES,
    deadline=timedelta(seconds=5),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=EXAMPLES <= 200,
)
@given(suite_model=model_specs(), scenario_model=st.none() | model_specs())
def test_any_model_spec_loads_or_is_a_located_config_error(
    model_folder: Path, suite_model: Any, scenario_model: Any
) -> None:
    scenario: dict[str, Any] = {"name": "s", "input": "hi"}
    if scenario_model is not None:
        scenario["model"] = scenario_model
    data = {"agent": "harness.demo.travel:build", "model": suite_model, "scenarios": [scenario]}
    path = model_folder / "models.yaml"
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")  # JSON is YAML
    try:
        load_paths([path])
    except ConfigError as exc:
        for issue in exc.issues:
            assert issue.line is not None and issue.line >= 1, str(issue)
            assert re.match(r".*models\.yaml:\d+: ", str(issue)), str(issue)


# --- rules: in defaults, in a scenario's and a turn's expect, disable_rules -------------------

TOOLS = ["get_order", "*_order", "refund_order", "search_*", "?et_order", "[gs]et_order"]


def mostly(valid: st.SearchStrategy[Any], junk: st.SearchStrategy[Any] = JSONISH) -> Any:
    """``valid`` four times in five, else ``junk``."""
    return st.integers(0, 4).flatmap(lambda k: junk if k == 0 else valid)


ARGS = st.dictionaries(
    st.sampled_from(["order_id", "amount", "x.y"]),
    mostly(st.sampled_from(["ORD-1", 5, {"$type": "number"}, {"$regex": "^ORD"}])),
    max_size=2,
)
PATTERN = mostly(
    st.sampled_from(TOOLS)
    | st.fixed_dictionaries({"name": st.sampled_from(TOOLS)}, optional={"args": ARGS}),
    JSONISH | st.sampled_from(["", "x[", {"name": "a", "agrs": {}}, {"args": {}}]),
)
FIRST = mostly(
    st.fixed_dictionaries(
        {"name": st.sampled_from(TOOLS)},
        optional={"args": st.fixed_dictionaries({"order_id": st.just({"$same": "order_id"})})},
    ),
    PATTERN | st.just({"name": "a", "args": {"k": {"$same": "", "x": 1}}}),
)
RULE_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "name": st.sampled_from(["a", "b", "budget", ""]) | JSONISH,
    "severity": mostly(st.sampled_from(["warn", "error"]), st.just("warning") | JSONISH),
    "forbid": PATTERN,
    "allow": mostly(st.lists(PATTERN, min_size=1, max_size=3)),
    "before": mostly(st.fixed_dictionaries({"first": FIRST, "then": PATTERN})),
    "grounded": mostly(
        st.fixed_dictionaries(
            {
                "tool": PATTERN,
                "args": st.lists(mostly(st.sampled_from(["order_id", "a.0.b"]), st.just("a..b"))),
            }
        )
    ),
    "max_calls": mostly(
        st.fixed_dictionaries({"max": mostly(st.integers(1, 3))}, optional={"tool": PATTERN})
    ),
    "max_repeats": mostly(st.integers(1, 3), st.integers(-1, 0) | JSONISH),
    "budget": mostly(
        st.dictionaries(
            st.sampled_from(BUDGET_KEYS),
            mostly(st.integers(1, 10_000), st.floats(allow_nan=True) | JSONISH),
            min_size=1,
            max_size=3,
        ),
        st.dictionaries(st.just("total_token"), JSONISH) | JSONISH,
    ),
}


@st.composite
def rule_mappings(draw: st.DrawFn) -> Any:
    """A rule as a user might write it: mostly one kind and a name, sometimes two kinds, a
    misspelt or misplaced key, no name, or no mapping at all."""
    if draw(st.integers(0, 9)) == 0:
        return draw(JSONISH)
    kinds = [draw(st.sampled_from(KINDS))]
    if draw(st.integers(0, 5)) == 0:
        kinds.append(draw(st.sampled_from(KINDS)))
    rule = {kind: draw(RULE_VALUES[kind]) for kind in kinds}
    if draw(st.integers(0, 7)):
        rule["name"] = draw(st.sampled_from(["a", "b", "budget"]))
    elif draw(st.booleans()):
        rule["name"] = draw(RULE_VALUES["name"])
    if draw(st.booleans()):
        rule["severity"] = draw(RULE_VALUES["severity"])
    if draw(st.integers(0, 9)) == 0:
        rule[draw(st.sampled_from(["forbidd", "max_rate", "nmae"]))] = draw(JSONISH)
    return rule


RULE = rule_mappings()


RULES = st.lists(RULE, max_size=3) | JSONISH
# --- expected calls with labels, `after`, `optional`, `result` and `$ref` --------------------

LABELS = ["look", "sum", "lok", "_a", "a-b", "has.dot", "", "x y", "1st"]
REF_TARGETS = ["look.result", "look.args.key", "sum.result.0.id", "lok.result", "look"]
REF_TARGETS += ["look.output.x", "look.result..x", "look.args", "sum.result", "a-b.args.k"]
REF = st.builds(lambda target: {"$ref": target}, st.sampled_from(REF_TARGETS) | JSONISH)
PATTERN = REF | JSONISH | st.builds(lambda inner: {"$one_of": [inner, "x"]}, REF)


@st.composite
def labelled_calls(draw: st.DrawFn) -> list[dict[str, Any]]:
    """One to four expected calls, each key among id / after / optional / result / args drawn
    right or wrong: labels that exist or not, cycles, refs well or badly formed, any JSON."""
    calls = []
    for _ in range(draw(st.integers(1, 4))):
        call: dict[str, Any] = {"name": draw(st.sampled_from(["add", "lookup"]))}
        if draw(st.booleans()):
            call["id"] = draw(st.sampled_from(LABELS) | JSONISH)
        if draw(st.booleans()):
            label = st.sampled_from(LABELS)
            call["after"] = draw(label | st.lists(label, max_size=3) | JSONISH)
        if draw(st.booleans()):
            call["optional"] = draw(st.booleans() | JSONISH)
        if draw(st.booleans()):
            call["result"] = draw(PATTERN)
        if draw(st.booleans()):
            call["args"] = draw(st.dictionaries(st.sampled_from(["a", "b", "key"]), PATTERN))
        calls.append(call)
    return calls


@settings(
    max_examples=EXAMPLES,
    deadline=timedelta(seconds=5),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=EXAMPLES <= 200,
)
@given(
    suite_rules=RULES,
    own=RULES,
    turn=RULES,
    disabled=st.lists(st.sampled_from(["a", "b", "budget", "c"]) | JSONISH, max_size=2) | JSONISH,
)
def test_any_rules_load_or_are_a_located_config_error(
    model_folder: Path, suite_rules: Any, own: Any, turn: Any, disabled: Any
) -> None:
    data = {
        "agent": "harness.demo.orders:build",
        "defaults": {"rules": suite_rules},
        "scenarios": [
            {"name": "s", "input": "hi", "expect": {"rules": own, "disable_rules": disabled}},
            {"name": "t", "turns": [{"input": "hi", "expect": {"rules": turn}}]},
        ],
    }
    path = model_folder / "rules.yaml"
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")  # JSON is YAML
    try:
        [suite] = load_paths([path])
    except ConfigError as exc:
        for issue in exc.issues:
            assert issue.line is not None and issue.line >= 1, str(issue)
            assert re.match(r".*rules\.yaml:\d+: ", str(issue)), str(issue)
        return
    for scenario in suite.scenarios:  # what loaded evaluates, and never raises
        for rules in (scenario.rules, *(t.rules for t in scenario.turns)):
            evaluate_rules(rules, Trajectory(calls=()))


@given(calls=labelled_calls(), output=st.none() | PATTERN)
def test_any_labelled_expected_calls_load_or_are_a_located_config_error(
    model_folder: Path, calls: list[dict[str, Any]], output: Any
) -> None:
    expect: dict[str, Any] = {"tool_calls": calls}
    if output is not None:
        expect["output"] = output
    scenario = {"name": "s", "input": "hi", "script": [{"content": "ok"}], "expect": expect}
    data = {"agent": "harness.demo.travel:build", "model": "scripted", "scenarios": [scenario]}
    path = model_folder / "labels.yaml"
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")  # JSON is YAML
    try:
        load_paths([path])
    except ConfigError as exc:
        for issue in exc.issues:
            assert issue.line is not None and issue.line >= 1, str(issue)
            assert re.match(r".*labels\.yaml:\d+: ", str(issue)), str(issue)
