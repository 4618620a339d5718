"""Each rule kind on real ToolCall records: pass, fail with the exact reason, and the edges."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from harness.rules import (
    Rule,
    RuleResult,
    Trajectory,
    evaluate_rules,
    load_rules,
)
from harness.rules.kinds import RuleOutcome
from tracing.records import ModelCall, ToolCall


def call(name: str, status: str = "ok", result: Any = None, **args: Any) -> ToolCall:
    return ToolCall(name=name, args=args, status=status, result=result)  # type: ignore[arg-type]


def rule(spec: dict[str, Any]) -> Rule:
    (compiled,) = load_rules([{"name": "r", **spec}])
    return compiled


def check(
    spec: dict[str, Any], trajectory: Trajectory | list[ToolCall], **extra: Any
) -> RuleResult:
    if isinstance(trajectory, list):
        trajectory = Trajectory(calls=tuple(trajectory), **extra)
    return rule(spec).evaluate(trajectory)


def failed(result: RuleResult, code: str, reason: str, calls: tuple[int, ...]) -> None:
    assert (result.passed, result.error, result.code, result.reason, result.calls) == (
        False,
        False,
        code,
        reason,
        calls,
    )


def unevaluable(result: RuleResult, reason: str) -> None:
    assert (result.passed, result.error, result.code) == (False, True, "unevaluable")
    assert result.reason == reason


UNCAPTURED_2 = (
    "cannot be decided: #2 get_order was recorded without its arguments and result "
    "(content not captured)"
)


# --- forbid -----------------------------------------------------------------------------------


def test_forbid_passes_without_a_matching_call() -> None:
    result = check({"forbid": "delete_*"}, [call("get_user", id=1)])
    assert result == RuleResult("r", True, "error", None, "no forbidden call")


def test_forbid_fails_on_every_match_and_names_the_first() -> None:
    calls = [call("get_user", id=1), call("delete_user", id=3), call("delete_all")]
    failed(
        check({"forbid": "delete_*"}, calls),
        "forbidden_call",
        "#2 delete_user(id=3): forbidden by delete_* (and 1 more call)",
        (1, 2),
    )


@pytest.mark.parametrize("status", ["ok", "error", "requested", "interrupted", "invalid"])
def test_forbid_counts_every_status(status: str) -> None:
    result = check({"forbid": "drop"}, [call("drop", status=status)])
    assert result.code == "forbidden_call"


def test_forbid_with_args_matches_only_those_arguments_and_never_an_invalid_call() -> None:
    spec = {"forbid": {"name": "refund", "args": {"amount": {"$type": "number"}}}}
    calls = [call("refund", amount="all"), ToolCall.invalid("refund", "{amount: 5", None)]
    assert check(spec, calls).passed
    failed(
        check(spec, [*calls, call("refund", amount=5)]),
        "forbidden_call",
        "#3 refund(amount=5): forbidden by refund(amount=$type number)",
        (2,),
    )


def test_forbid_on_an_uncaptured_call_is_unevaluable_unless_a_captured_one_violates() -> None:
    spec = {"forbid": {"name": "get_order", "args": {"order_id": "ORD-1"}}}
    calls = [call("find"), call("get_order"), call("get_order", order_id="ORD-2")]
    unevaluable(check(spec, calls, not_captured=frozenset({1})), UNCAPTURED_2)
    # a name-only pattern needs no arguments
    assert check({"forbid": "drop"}, calls, not_captured=frozenset({1})).passed
    violating = [*calls, call("get_order", order_id="ORD-1")]
    assert check(spec, violating, not_captured=frozenset({1})).code == "forbidden_call"


# --- allow ------------------------------------------------------------------------------------


def test_allow_passes_when_every_call_matches_a_pattern() -> None:
    calls = [call("get_order", order_id="A"), call("search_orders"), call("search_users")]
    result = check({"allow": ["get_order", "search_*"]}, calls)
    assert result == RuleResult("r", True, "error", None, "every call allowed")


def test_allow_fails_on_each_call_no_pattern_matches() -> None:
    calls = [call("get_order"), call("send_email", to="x"), call("delete", status="requested")]
    failed(
        check({"allow": ["get_order", "search_*"]}, calls),
        "not_allowed",
        "#2 send_email(to='x'): not in allow [get_order, search_*] (and 1 more call)",
        (1, 2),
    )


def test_allow_with_args_and_an_uncaptured_call() -> None:
    spec = {"allow": [{"name": "get_order", "args": {"order_id": {"$regex": "^ORD-"}}}]}
    assert check(spec, [call("get_order", order_id="ORD-1")]).passed
    failed(
        check(spec, [call("get_order", order_id="X-1")]),
        "not_allowed",
        "#1 get_order(order_id='X-1'): not in allow [get_order(order_id=$regex '^ORD-')]",
        (0,),
    )
    calls = [call("get_order", order_id="ORD-1"), call("get_order")]
    unevaluable(check(spec, calls, not_captured=frozenset({1})), UNCAPTURED_2)
    # a call of another tool fails whatever its arguments were
    calls = [call("get_order", order_id="ORD-1"), call("send")]
    assert check(spec, calls, not_captured=frozenset({1})).code == "not_allowed"


# --- before -----------------------------------------------------------------------------------

SAME = {
    "before": {
        "first": {"name": "get_order", "args": {"order_id": {"$same": "order_id"}}},
        "then": "refund_order",
    }
}


def test_before_passes_when_each_then_call_has_an_earlier_first_call() -> None:
    calls = [
        call("get_order", order_id="A"),
        call("refund_order", order_id="A", amount=5),
        call("get_order", order_id="B"),
        call("refund_order", order_id="B", amount=1),
    ]
    result = check(SAME, calls)
    assert result == RuleResult("r", True, "error", None, "every call had its earlier call")


def test_before_with_same_fails_when_the_earlier_call_had_another_value() -> None:
    calls = [
        call("get_order", order_id="A"),
        call("refund_order", order_id="B", amount=5),
        call("refund_order", order_id="A", amount=1),
        call("refund_order", amount=2),
    ]
    failed(
        check(SAME, calls),
        "missing_before",
        "#2 refund_order(order_id='B', amount=5): no earlier get_order(order_id='B') "
        "(and 1 more call)",
        (1, 3),
    )


def test_before_needs_a_strictly_earlier_call_and_request_order_decides() -> None:
    spec = {"before": {"first": "lookup", "then": "lookup"}}
    failed(
        check(spec, [call("lookup", k=1), call("lookup", k=2)]),
        "missing_before",
        "#1 lookup(k=1): no earlier lookup",
        (0,),
    )
    # equal start times: the order of the calls (request order) decides, never the timestamps
    same_time = [
        ToolCall(name="get_order", args={"order_id": "A"}, started_at=5),
        ToolCall(name="refund_order", args={"order_id": "A"}, started_at=5),
    ]
    assert check(SAME, same_time).passed
    assert not check(SAME, same_time[::-1]).passed


def test_before_same_on_a_number_compares_by_value() -> None:
    spec = {
        "before": {
            "first": {"name": "get", "args": {"id": {"$same": "ref.id"}}},
            "then": "put",
        }
    }
    assert check(spec, [call("get", id=3), call("put", ref={"id": 3.0})]).passed
    assert not check(spec, [call("get", id=True), call("put", ref={"id": 1})]).passed


def test_before_ignores_invalid_calls_on_both_sides() -> None:
    spec = {"before": {"first": "get_order", "then": "refund_order"}}
    calls = [ToolCall.invalid("get_order", "{", None), call("refund_order", order_id="A")]
    assert check(spec, calls).code == "missing_before"
    assert check(spec, [ToolCall.invalid("refund_order", "{", None)]).passed


def test_before_on_uncaptured_calls() -> None:
    # the only earlier get_order was not captured: it may have had the same order_id
    calls = [call("find"), call("get_order"), call("refund_order", order_id="A")]
    unevaluable(check(SAME, calls, not_captured=frozenset({1})), UNCAPTURED_2)
    # the refund itself was not captured: its order_id is unknown
    calls = [call("get_order", order_id="A"), call("refund_order")]
    result = check(SAME, calls, not_captured=frozenset({1}))
    assert result.code == "unevaluable" and result.calls == (1,)
    # without $same and with a name-only first, nothing needs arguments
    spec = {"before": {"first": "get_order", "then": "refund_order"}}
    assert check(spec, calls, not_captured=frozenset({1})).passed
    # a captured violation fails whatever else is unknown
    calls = [call("refund_order", order_id="A"), call("get_order")]
    assert check(SAME, calls, not_captured=frozenset({1})).code == "missing_before"
    # an uncaptured refund with no get_order at all before it fails whatever its arguments
    failed(
        check(SAME, [call("find"), call("refund_order")], not_captured=frozenset({1})),
        "missing_before",
        "#2 refund_order(): no earlier get_order(order_id=$same order_id)",
        (1,),
    )


# --- grounded ---------------------------------------------------------------------------------

GROUNDED = {"grounded": {"tool": "cancel_order", "args": ["order_id"]}}


def test_grounded_passes_on_an_id_an_earlier_result_returned() -> None:
    calls = [
        call("search_orders", result='[{"order_id": "ORD-1050", "status": "open"}]'),
        call("cancel_order", order_id="ORD-1050"),
    ]
    result = check(GROUNDED, calls, user_inputs=("cancel my open order",))
    assert result == RuleResult("r", True, "error", None, "every checked argument grounded")


def test_grounded_fails_on_an_invented_id_with_the_exact_reason() -> None:
    calls = [
        call("search_orders", result='[{"order_id": "ORD-10500"}]'),
        call("cancel_order", order_id="ORD-1050"),
    ]
    failed(
        check(GROUNDED, calls, user_inputs=("cancel ORD-105",)),
        "ungrounded_arg",
        "#2 cancel_order(order_id='ORD-1050'): order_id 'ORD-1050' not seen in the user's "
        "input or any earlier tool result",
        (1,),
    )


def test_grounded_takes_the_user_input_and_only_earlier_ok_results() -> None:
    assert check(GROUNDED, [call("cancel_order", order_id="ORD-7")], user_inputs=("ORD-7?",)).passed
    later = [call("cancel_order", order_id="ORD-7"), call("get_order", result="ORD-7")]
    assert check(GROUNDED, later).code == "ungrounded_arg"
    failed_lookup = [
        call("get_order", status="error", result="no order with id 'ORD-7'"),
        call("cancel_order", order_id="ORD-7"),
    ]
    assert check(GROUNDED, failed_lookup).code == "ungrounded_arg"


def test_grounded_checks_every_leaf_of_listed_paths_only() -> None:
    spec = {"grounded": {"tool": "ship", "args": ["items", "address.city"]}}
    source = call("cart", result={"items": [{"sku": "SKU-1", "qty": 2}], "city": "Lisbon"})
    ok = call("ship", items=[{"sku": "SKU-1", "qty": 2}], address={"city": "Lisbon"}, note="x")
    assert check(spec, [source, ok]).passed
    bad = call("ship", items=[{"sku": "SKU-1", "qty": 3, "gift": True}], note="free text")
    failed(
        check(spec, [source, bad]),
        "ungrounded_arg",
        "#2 ship(items=[{'sku': 'SKU-1', 'qty': 3, 'gift': True}], note='free text'): "
        "items.0.qty 3 not seen in the user's input or any earlier tool result",
        (1,),
    )


def test_grounded_numbers_by_their_written_forms() -> None:
    spec = {"grounded": {"tool": "refund", "args": ["amount"]}}
    source = call("get_order", result="Order ORD-1042: paid 89.90 EUR, 1,050 points")
    assert check(spec, [source, call("refund", amount=89.9)]).passed
    assert check(spec, [source, call("refund", amount=1050)]).passed
    assert not check(spec, [source, call("refund", amount=1042)]).passed
    assert not check(spec, [source, call("refund", amount=90)]).passed


def test_grounded_with_an_uncaptured_earlier_call_or_input() -> None:
    calls = [call("find"), call("get_order"), call("cancel_order", order_id="ORD-7")]
    unevaluable(check(GROUNDED, calls, not_captured=frozenset({1})), UNCAPTURED_2)
    # a value that is seen needs nothing else
    seen = [call("find", result="ORD-7"), call("get_order"), call("cancel_order", order_id="ORD-7")]
    assert check(GROUNDED, seen, not_captured=frozenset({1})).passed
    unevaluable(
        check(GROUNDED, [call("cancel_order", order_id="ORD-7")], user_inputs=None),
        "cannot be decided: the user's input was not captured, and #1 "
        "cancel_order(order_id='ORD-7') has a value seen in no earlier tool result",
    )


def test_grounded_skips_invalid_calls_and_absent_paths() -> None:
    calls = [ToolCall.invalid("cancel_order", '{"order_id": "X"', None), call("cancel_order")]
    assert check(GROUNDED, calls).passed


# --- max_calls / max_repeats ------------------------------------------------------------------


def test_max_calls_names_the_first_call_over_the_limit() -> None:
    calls = [call("search_a", q=1), call("other"), call("search_b", q=2), call("search_a", q=3)]
    assert check({"max_calls": {"tool": "search_*", "max": 3}}, calls).passed
    failed(
        check({"max_calls": {"tool": "search_*", "max": 2}}, calls),
        "too_many_calls",
        "#4 search_a(q=3): 3 calls of search_* (max 2)",
        (3,),
    )
    failed(
        check({"max_calls": {"max": 2}}, calls),
        "too_many_calls",
        "#3 search_b(q=2): 4 calls of * (max 2) (and 1 more call)",
        (2, 3),
    )


def test_max_calls_with_uncaptured_calls() -> None:
    spec = {"max_calls": {"tool": {"name": "get", "args": {"id": 1}}, "max": 1}}
    calls = [call("get", id=1), call("get")]
    unevaluable(
        check(spec, calls, not_captured=frozenset({1})), UNCAPTURED_2.replace("get_order", "get")
    )
    assert check(spec, [*calls, call("get", id=1)], not_captured=frozenset({1})).code == (
        "too_many_calls"
    )


def test_max_repeats_counts_equal_arguments_by_value() -> None:
    calls = [
        call("get_order", order_id="ORD-1", n=3),
        call("get_order", order_id="ORD-1", n=3.0),
        call("get_order", order_id="ORD-2", n=3),
        call("get_order", n=3, order_id="ORD-1"),
    ]
    assert check({"max_repeats": 3}, calls).passed
    failed(
        check({"max_repeats": 2}, calls),
        "repeated_call",
        "#4 get_order(n=3, order_id='ORD-1'): 3 identical calls (max 2)",
        (3,),
    )


def test_max_repeats_never_groups_nan_and_skips_invalid_calls() -> None:
    nan = float("nan")
    calls = [call("f", x=nan), call("f", x=nan), ToolCall.invalid("f", "{", None)] * 2
    assert check({"max_repeats": 1}, calls).passed
    nested = [call("f", x={"a": [1]}), call("f", x={"a": [1]})]
    assert check({"max_repeats": 1}, nested).code == "repeated_call"


def test_max_repeats_with_uncaptured_calls() -> None:
    calls = [call("get_order", id=1), call("get_order"), call("other")]
    assert check({"max_repeats": 2}, calls, not_captured=frozenset({1})).passed
    unevaluable(check({"max_repeats": 1}, calls, not_captured=frozenset({1})), UNCAPTURED_2)
    # nothing can equal a NaN call, so the two unknown ones can only repeat each other
    nan = [call("b", x=float("nan")), call("b"), call("b")]
    assert check({"max_repeats": 2}, nan, not_captured=frozenset({1, 2})).passed
    assert check({"max_repeats": 1}, nan, not_captured=frozenset({1, 2})).error


# --- budget -----------------------------------------------------------------------------------

USAGE = (ModelCall(100, 20, 120), ModelCall(3000, 300, None), ModelCall(3000, 1000, 4000))


def test_budget_within_and_over_with_every_figure_listed() -> None:
    calls = [call("a")] * 9
    spec = {"budget": {"tool_calls": 9, "model_calls": 3, "total_tokens": 7420, "seconds": 2.5}}
    result = check(spec, calls, model_calls=USAGE, duration=2.5)
    assert result == RuleResult("r", True, "error", None, "within budget")
    tight = {"budget": {"tool_calls": 8, "model_calls": 3, "total_tokens": 5000, "seconds": 2}}
    failed(
        check(tight, calls, model_calls=USAGE, duration=2.345),
        "over_budget",
        "over budget: tool_calls 9 > 8; total_tokens 7,420 > 5,000; seconds 2.35 > 2",
        (),
    )


def test_budget_tokens_without_usage_are_unevaluable_never_a_pass() -> None:
    spec = {"budget": {"total_tokens": 6000}}
    unevaluable(
        check(spec, [], model_calls=None),
        "cannot be decided: total_tokens: the model turns were not recorded",
    )
    unevaluable(
        check(spec, [], model_calls=(ModelCall(), ModelCall())),
        "cannot be decided: total_tokens: no model turn reported token usage",
    )
    unevaluable(
        check(spec, [], model_calls=()),
        "cannot be decided: total_tokens: no model turn reported token usage",
    )
    unevaluable(
        check({"budget": {"input_tokens": 10_000}}, [], model_calls=(*USAGE, ModelCall())),
        "cannot be decided: input_tokens: 1 of 4 model turns reported none",
    )
    # a known lower bound over the cap fails
    over = check({"budget": {"input_tokens": 5000}}, [], model_calls=(*USAGE, ModelCall()))
    assert over.reason == "over budget: input_tokens 6,100 > 5,000"
    unevaluable(
        check({"budget": {"seconds": 1}}, []),
        "cannot be decided: seconds: the run's duration is not known",
    )


def test_budget_counts_every_call_and_every_model_call() -> None:
    calls = [call("a", status="requested"), ToolCall.invalid("b", "{", None)]
    assert check({"budget": {"tool_calls": 1}}, calls).reason == "over budget: tool_calls 2 > 1"
    assert check({"budget": {"model_calls": 2}}, [], model_calls=USAGE).reason == (
        "over budget: model_calls 3 > 2"
    )


# --- every kind together ----------------------------------------------------------------------


EVERY_KIND: list[dict[str, Any]] = [
    {"name": "forbid", "forbid": "x"},
    {"name": "allow", "allow": ["x"]},
    {"name": "before", "before": {"first": "x", "then": "y"}},
    {"name": "grounded", "grounded": {"tool": "x", "args": ["a"]}},
    {"name": "max_calls", "max_calls": {"max": 1}},
    {"name": "max_repeats", "max_repeats": 1},
    {"name": "budget", "budget": {"tool_calls": 1}, "severity": "warn"},
]


def test_an_empty_run_passes_every_kind_but_unknown_figures() -> None:
    results = evaluate_rules(load_rules(EVERY_KIND), Trajectory(calls=()))
    assert [(r.rule, r.passed, r.severity) for r in results] == [
        (spec["name"], True, spec.get("severity", "error")) for spec in EVERY_KIND
    ]


class Exploding:
    """A kind whose evaluation raises, as a bug would."""

    PASSED = RuleOutcome(True, None, "never")

    def passes_by_names(self, counts: Mapping[str, int]) -> bool:
        return False

    def evaluate(self, trajectory: Trajectory) -> RuleOutcome:
        raise ValueError("boom\nsecond line")


class ExplodingShortcut(Exploding):
    """A kind whose name-only shortcut raises: the same rule_error, never a pass."""

    def passes_by_names(self, counts: Mapping[str, int]) -> bool:
        raise ValueError("boom\nsecond line")


def test_an_exception_inside_one_rule_is_that_rules_error_result() -> None:
    rules = [
        load_rules(EVERY_KIND[:1])[0],
        Rule("bad", Exploding()),
        load_rules(EVERY_KIND[5:6])[0],
    ]  # type: ignore[arg-type]
    results = evaluate_rules(rules, Trajectory(calls=(call("x"),)))
    assert [(r.rule, r.passed, r.error, r.code) for r in results] == [
        ("forbid", False, False, "forbidden_call"),
        ("bad", False, True, "rule_error"),
        ("max_repeats", True, False, None),
    ]
    assert results[1].reason == "the rule raised ValueError: boom second line"
    (shortcut,) = evaluate_rules([Rule("bad", ExplodingShortcut())], Trajectory(calls=()))  # type: ignore[arg-type]
    assert (shortcut.passed, shortcut.error, shortcut.reason) == (
        False,
        True,
        "the rule raised ValueError: boom second line",
    )


def test_warn_severity_is_carried_on_a_failure() -> None:
    (warn,) = load_rules([{"name": "w", "forbid": "x", "severity": "warn"}])
    result = warn.evaluate(Trajectory(calls=(call("x"),)))
    assert (result.passed, result.severity, result.code) == (False, "warn", "forbidden_call")


def test_long_calls_are_cut_in_reasons() -> None:
    result = check({"forbid": "x"}, [call("x", text="y" * 500)])
    head = result.reason.split(": forbidden by")[0]
    assert len(head) == len("#1 ") + 120 and head.endswith("…")


def test_kinds_built_in_python_check_their_values() -> None:
    from harness.rules import Budget, CallPattern, Grounded, MaxCalls, MaxRepeats

    with pytest.raises(ValueError, match="max_calls max must be a positive integer, got 0"):
        MaxCalls(CallPattern("x"), 0)
    with pytest.raises(ValueError, match="max_repeats max must be a positive integer, got True"):
        MaxRepeats(True)
    with pytest.raises(ValueError, match="a budget needs at least one of tool_calls"):
        Budget()
    with pytest.raises(ValueError, match="budget seconds must be a finite number > 0"):
        Budget(seconds=float("inf"))
    with pytest.raises(ValueError, match="budget total_tokens must be a positive integer"):
        Budget(total_tokens=-1)
    with pytest.raises(ValueError, match="non-empty tuple of argument paths"):
        Grounded(CallPattern("x"), "order_id")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="has an empty part"):
        Grounded(CallPattern("x"), ("items..sku",))
    grounded = Grounded(CallPattern("x"), ("items.0.sku",))
    assert grounded.paths == (("items", "0", "sku"),)
