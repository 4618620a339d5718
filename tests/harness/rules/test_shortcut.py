"""A rule decided by the run's tool names alone (``passes_by_names``) has the verdict running
it gives.

The rule engine skips a rule whose outcome the names and counts of the called tools already
settle (a ``forbid`` of a tool never called, a ``max_calls`` above the calls made, ...). On
random runs — any statuses, calls recorded without content, results, user input or none, model
turns or none — and random rules of every kind, wherever the shortcut applies, the kind's full
evaluation must be its ``PASSED`` outcome, and :func:`evaluate_rules` and a policy's
:class:`~harness.rules.rule.RuleBook` (which keeps the rules each set of tool names decides)
must give exactly the results of evaluating every rule in full.
"""

from __future__ import annotations

from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st

from harness.rules import Rule, RuleResult, Trajectory, evaluate_rules, load_rules
from harness.rules.kinds import passes_by_names
from harness.rules.rule import RuleBook
from tracing.records import ModelCall, ToolCall

NAMES = ["a", "b", "c"]
GLOBS = [*NAMES, "d", "*", "[ab]", "b*"]
VALUES: list[Any] = ["A", "B", 7, 7.0, "ORD-7", None, True, ["A"], {"x": "A"}]

args = st.dictionaries(st.sampled_from(["id", "n"]), st.sampled_from(VALUES), max_size=2)
results = st.one_of(
    st.none(),
    st.sampled_from(VALUES),
    st.sampled_from(['{"id": "A"}', "order ORD-7 found", '["B", 7]', "nothing"]),
)
one_call = st.one_of(
    st.builds(
        lambda name, a, status, result: ToolCall(name=name, args=a, status=status, result=result),
        st.sampled_from(NAMES),
        args,
        st.sampled_from(["ok", "error", "requested", "interrupted"]),
        results,
    ),
    st.builds(lambda name: ToolCall.invalid(name, '{"id": "A"', None), st.sampled_from(NAMES)),
)
model_calls = st.one_of(
    st.none(),
    st.lists(
        st.builds(
            ModelCall,
            input_tokens=st.one_of(st.none(), st.integers(0, 50)),
            output_tokens=st.one_of(st.none(), st.integers(0, 50)),
        ),
        max_size=3,
    ).map(tuple),
)


@st.composite
def trajectories(draw: st.DrawFn) -> Trajectory:
    calls = draw(st.lists(one_call, max_size=6))
    gaps = draw(st.sets(st.integers(0, max(len(calls) - 1, 0)), max_size=2)) if calls else set()
    return Trajectory(
        calls=tuple(calls),
        user_inputs=draw(
            st.one_of(st.none(), st.lists(st.sampled_from(["refund A", "order 7", ""])).map(tuple))
        ),
        model_calls=draw(model_calls),
        duration=draw(st.one_of(st.none(), st.floats(0, 10))),
        not_captured=frozenset(i for i in gaps if i < len(calls)),
    )


pattern = st.one_of(
    st.sampled_from(GLOBS),
    st.builds(
        lambda name, a: {"name": name, "args": a},
        st.sampled_from(GLOBS),
        st.sampled_from([{"id": "A"}, {"id": {"$regex": "^B"}}, {"n": 7}]),
    ),
)
limits = st.integers(1, 3)
budgets = st.dictionaries(
    st.sampled_from(["tool_calls", "model_calls", "input_tokens", "total_tokens", "seconds"]),
    limits,
    min_size=1,
)
rule_specs = st.one_of(
    pattern.map(lambda p: {"forbid": p}),
    st.lists(pattern, min_size=1, max_size=3).map(lambda ps: {"allow": ps}),
    st.builds(lambda f, t: {"before": {"first": f, "then": t}}, pattern, pattern),
    st.builds(
        lambda f, t: {"before": {"first": {"name": f, "args": {"id": {"$same": "id"}}}, "then": t}},
        st.sampled_from(GLOBS),
        pattern,
    ),
    st.builds(
        lambda tool, paths: {"grounded": {"tool": tool, "args": paths}},
        st.sampled_from(GLOBS),
        st.lists(st.sampled_from(["id", "n", "id.x"]), min_size=1, max_size=2, unique=True),
    ),
    st.builds(lambda p, n: {"max_calls": {"tool": p, "max": n}}, pattern, limits),
    limits.map(lambda n: {"max_calls": {"max": n}}),
    limits.map(lambda n: {"max_repeats": n}),
    budgets.map(lambda b: {"budget": b}),
)


def fresh(trajectory: Trajectory) -> Trajectory:
    """A copy without the index or counts an evaluation kept on it."""
    return Trajectory(
        calls=trajectory.calls,
        user_inputs=trajectory.user_inputs,
        model_calls=trajectory.model_calls,
        duration=trajectory.duration,
        not_captured=trajectory.not_captured,
    )


def full(rule: Rule, trajectory: Trajectory, policy: str | None) -> RuleResult:
    """The rule evaluated in full, without the shortcut (what the engine gave before it)."""
    outcome = rule.kind.evaluate(trajectory)
    return RuleResult(
        rule.name,
        outcome.passed,
        rule.severity,
        outcome.code,
        outcome.reason,
        outcome.calls,
        outcome.error,
        policy,
    )


@settings(max_examples=600, deadline=None)
@given(
    trajectories(),
    st.lists(rule_specs, min_size=1, max_size=4),
    st.lists(trajectories(), max_size=3),
)
def test_a_rule_decided_by_tool_names_has_the_verdict_of_running_it(
    trajectory: Trajectory, specs: list[dict[str, Any]], others: list[Trajectory]
) -> None:
    rules = load_rules([{"name": f"r{i}", **spec} for i, spec in enumerate(specs)])
    for rule in rules:
        # a fresh trajectory each time: no index or count left over from another rule
        alone = fresh(trajectory)
        if passes_by_names(rule.kind, alone):
            event(f"shortcut: {rule.kind.kind}")
            assert rule.kind.evaluate(alone) == rule.kind.PASSED, (rule, alone)
    expected = tuple(full(rule, trajectory, "p") for rule in rules)
    assert evaluate_rules(rules, trajectory, "p") == expected
    book = RuleBook(tuple(rules), "p")
    assert tuple(book.evaluate(trajectory)) == expected
    assert tuple(book.evaluate(fresh(trajectory))) == expected  # the decided set, kept
    for other in others:  # other runs through the same book: their own verdicts
        assert tuple(book.evaluate(other)) == tuple(full(rule, other, "p") for rule in rules)


def test_the_shortcut_skips_rules_on_tools_not_called_and_never_an_absent_first() -> None:
    """The cases the engine skips, and the ``before`` whose ``first`` tool is absent, which
    it must run (every ``then`` call then fails)."""
    run = Trajectory(calls=(ToolCall("refund", {"id": "A"}), ToolCall("get", {"id": "A"})))
    decided = {
        "forbid delete": {"forbid": "delete"},
        "allow both": {"allow": ["refund", "get*"]},
        "before, then absent": {"before": {"first": "get", "then": "cancel"}},
        "grounded, tool absent": {"grounded": {"tool": "cancel", "args": ["id"]}},
        "max_calls within": {"max_calls": {"max": 2}},
        "max_repeats": {"max_repeats": 1},
        "budget tool_calls": {"budget": {"tool_calls": 2}},
    }
    run_anyway = {
        "forbid refund": {"forbid": "refund"},
        "allow with args": {"allow": [{"name": "refund", "args": {"id": "A"}}, "get"]},
        "before, first absent": {"before": {"first": "lookup", "then": "refund"}},
        "grounded refund": {"grounded": {"tool": "refund", "args": ["id"]}},
        "max_calls over": {"max_calls": {"max": 1}},
        "budget tokens": {"budget": {"tool_calls": 5, "total_tokens": 10}},
    }
    for name, spec in {**decided, **run_anyway}.items():
        (rule,) = load_rules([{"name": name, **spec}])
        assert passes_by_names(rule.kind, run) is (name in decided), name
    (absent_first,) = load_rules([{"name": "x", **run_anyway["before, first absent"]}])
    (result,) = evaluate_rules([absent_first], run)
    assert (result.passed, result.code, result.calls) == (False, "missing_before", (0,))
