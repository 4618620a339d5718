"""The fluent rule methods give the verdict and reason the same rule written in YAML gives.

For random runs (a few tools, ids in arguments and results, a user's text) each method's
outcome — passed, failed naming ``rule:<name>: <reason>``, or a RuleWarning for ``warn`` — is
compared with :func:`harness.rules.load_rules` of the rule mapping a scenario file would hold,
evaluated on the same trajectory: one engine, the fluent API only translating.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.assertion_rules import RuleWarning
from harness.assertions import ToolExpectations, expect_tools
from harness.rules import Trajectory, evaluate_rules, load_rules
from tracing.records import ToolCall

NAMES = ["get_order", "cancel_order", "refund_order"]
IDS = ["ORD-1", "ORD-12", "ORD-2"]


@st.composite
def runs(draw: st.DrawFn) -> tuple[list[ToolCall], str]:
    """Calls with an ``order_id`` (sometimes), an ``ok`` result naming ids, and the user's text."""
    calls = []
    for _ in range(draw(st.integers(0, 5))):
        name = draw(st.sampled_from(NAMES))
        args = {"order_id": draw(st.sampled_from(IDS))} if draw(st.booleans()) else {}
        found = draw(st.lists(st.sampled_from(IDS), max_size=2))
        calls.append(ToolCall(name, args, result=json.dumps({"ids": found})))
    text = "order " + draw(st.sampled_from([*IDS, "none"]))
    return calls, text


Fluent = Callable[[ToolExpectations], Any]

# (the fluent call, the same rule as a scenario file writes it)
CASES: list[tuple[Fluent, dict[str, Any]]] = [
    (lambda c: c.forbid("cancel_*", name="r"), {"forbid": "cancel_*"}),
    (
        lambda c: c.forbid({"name": "refund_order", "args": {"order_id": "ORD-1"}}, name="r"),
        {"forbid": {"name": "refund_order", "args": {"order_id": "ORD-1"}}},
    ),
    (lambda c: c.allow("get_*", "cancel_order", name="r"), {"allow": ["get_*", "cancel_order"]}),
    (
        lambda c: c.called_before("get_order", "*_order", same=["order_id"], name="r"),
        {
            "before": {
                "first": {"name": "get_order", "args": {"order_id": {"$same": "order_id"}}},
                "then": "*_order",
            }
        },
    ),
    (
        lambda c: c.grounded("cancel_order", "order_id", name="r"),
        {"grounded": {"tool": "cancel_order", "args": ["order_id"]}},
    ),
    (lambda c: c.max_calls(2, "*_order", name="r"), {"max_calls": {"tool": "*_order", "max": 2}}),
    (lambda c: c.max_calls(3, name="r"), {"max_calls": {"max": 3}}),
    (lambda c: c.max_repeats(1, name="r"), {"max_repeats": 1}),
    (lambda c: c.within_budget(tool_calls=3, name="r"), {"budget": {"tool_calls": 3}}),
]


def fluent_outcome(check: Fluent, calls: list[ToolCall], text: str) -> tuple[bool, str | None]:
    """(passed, the reason line) of the fluent check, with warnings as errors."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuleWarning)
        try:
            check(expect_tools(calls, input=text))
        except AssertionError as exc:
            return False, str(exc).splitlines()[1].strip()
    return True, None


@pytest.mark.parametrize(("check", "kind"), CASES, ids=[str(kind)[:40] for _, kind in CASES])
@settings(max_examples=60, deadline=None)
@given(run=runs())
def test_a_fluent_rule_is_the_yaml_rule(
    check: Fluent, kind: dict[str, Any], run: tuple[list[ToolCall], str]
) -> None:
    calls, text = run
    (rule,) = load_rules([{"name": "r", **kind}])
    (result,) = evaluate_rules([rule], Trajectory(tuple(calls), user_inputs=(text,)))
    passed, reason = fluent_outcome(check, calls, text)
    assert passed == result.passed
    if not passed:
        assert reason == f"rule:r: {result.reason}"


@settings(max_examples=40, deadline=None)
@given(run=runs())
def test_a_warn_rule_never_fails_and_warns_exactly_when_the_rule_fails(
    run: tuple[list[ToolCall], str],
) -> None:
    calls, text = run
    (rule,) = load_rules([{"name": "r", "grounded": {"tool": "*", "args": ["order_id"]}}])
    (result,) = evaluate_rules([rule], Trajectory(tuple(calls), user_inputs=(text,)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        expect_tools(calls, input=text).grounded("*", "order_id", name="r", severity="warn")
    shown = [str(w.message) for w in caught if issubclass(w.category, RuleWarning)]
    if result.passed:
        assert shown == []
    else:
        assert shown == [
            f"expect_tools(...).grounded('*', 'order_id', name='r', severity='warn'): "
            f"rule:r: {result.reason}"
        ]
