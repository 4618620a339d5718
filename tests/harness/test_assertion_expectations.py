"""expect_tools(...).called(..., label=, after=, optional=, result=) on real runs of the orders
demo agent: partial order, optional calls, $ref data flow and results; the keyword clash rule;
and misuse of the rule methods, each a clear error naming the method."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.tools import tool

from harness.assertions import expect_tools
from tests.harness.test_assertion_rules import (
    ADA,
    CANCEL,
    FIND,
    SEARCH,
    failure,
    faithful_cancel,
    run,
    table,
)
from tracing.records import ToolCall

LOOKUP = ("get_order", {"order_id": "ORD-1050"})


def ordered(checks: Any) -> Any:
    """Find the customer, then look the order up two ways (in any order), then cancel it."""
    return (
        checks.called("find_customer", label="find")
        .called("search_orders", label="search", after="find")
        .called("get_order", label="look", after=["find"])
        .called("cancel_order", after=["search", "look"])
    )


# --- partial order ------------------------------------------------------------------------


@pytest.mark.parametrize("middle", [[SEARCH, LOOKUP], [LOOKUP, SEARCH]], ids=["search", "look"])
def test_after_lets_unordered_steps_come_in_any_order(middle: list[Any]) -> None:
    recorder = run(ADA, [FIND], [middle[0]], [middle[1]], [CANCEL])
    ordered(expect_tools(recorder)).in_order().accuracy_at_least(1.0)


def test_after_fails_when_a_step_comes_before_what_it_must_follow() -> None:
    recorder = run(ADA, [FIND], [SEARCH], [CANCEL], [LOOKUP])
    checks = ordered(expect_tools(recorder)).accuracy_at_least(1.0)
    lines = failure(checks.in_order)
    assert lines[:2] == [
        "expect_tools(...).in_order() failed:",
        "  tool_call_partial_order 0.75 < 1.00: 3/4 order constraints kept; broken: 'look' "
        "(call #4) ran after cancel_order (call #3)",
    ]
    assert table(lines)[2:] == [
        "1  find: find_customer()  find_customer(email='ada@example.com')  ok",
        "2  search: search_orders()  search_orders(customer_id='C-001', status='open')  ok",
        "3  look: get_order()  get_order(order_id='ORD-1050')  ok",
        "4  cancel_order()  cancel_order(order_id='ORD-1050')  ok",
    ]


def test_in_order_without_after_is_the_declared_sequence() -> None:
    recorder = run(ADA, [FIND], [LOOKUP], [SEARCH], [CANCEL])
    checks = expect_tools(recorder).called("find_customer").called("search_orders")
    checks.called("get_order").called("cancel_order")
    lines = failure(checks.in_order)
    assert lines[1].startswith("  tool_call_order 0.75 < 1.00: 3/4 expected calls in order")


def test_an_unknown_label_in_after_is_an_error_with_the_nearest_label() -> None:
    checks = expect_tools(faithful_cancel()).called("find_customer", label="find")
    checks.called("search_orders", after="fnd")
    with pytest.raises(ValueError) as info:
        checks.in_order()
    assert str(info.value) == (
        "expect_tools(...).in_order(): expected call 2 (search_orders): after: unknown label "
        "'fnd' — did you mean 'find'?"
    )


def test_a_cycle_of_after_is_an_error() -> None:
    checks = expect_tools(faithful_cancel())
    checks.called("find_customer", label="a", after="b").called(
        "search_orders", label="b", after="a"
    )
    with pytest.raises(ValueError, match=r"accuracy_at_least\(1.0\): expected call 1 .*cycle"):
        checks.accuracy_at_least(1.0)


# --- optional, $ref, result ---------------------------------------------------------------


def test_an_optional_call_costs_nothing_when_absent_and_its_order_counts_when_present() -> None:
    def checks(recorder: Any) -> Any:
        return (
            expect_tools(recorder)
            .called("find_customer", label="find")
            .called("get_order", label="look", after="find", optional=True)
            .called("cancel_order", after="look")
        )

    checks(run(ADA, [FIND], [CANCEL])).accuracy_at_least(1.0).in_order()
    checks(run(ADA, [FIND], [LOOKUP], [CANCEL])).accuracy_at_least(1.0).in_order()
    late = checks(run(ADA, [FIND], [CANCEL], [LOOKUP])).accuracy_at_least(1.0)
    with pytest.raises(AssertionError, match=r"1/2 order constraints kept"):
        late.in_order()


def test_a_ref_takes_the_value_an_earlier_call_returned() -> None:
    def checks(recorder: Any) -> Any:
        return (
            expect_tools(recorder)
            .called("search_orders", label="search")
            .called("cancel_order", order_id={"$ref": "search.result.0.order_id"})
        )

    checks(faithful_cancel()).accuracy_at_least(1.0)
    wrong = run(ADA, [FIND], [SEARCH], [("cancel_order", {"order_id": "ORD-1043"})])
    lines = failure(lambda: checks(wrong).accuracy_at_least(1.0))
    assert lines[1] == (
        "  tool_call_accuracy 0.50 < 1.00: 1/2 expected calls matched; missing: "
        "cancel_order(order_id=$ref search.result.0.order_id)"
    )
    assert (
        "/order_id: order_id='ORD-1043', expected 'ORD-1050' ($ref search.result.0.order_id)"
        in ([line.strip() for line in lines])
    )


def test_a_ref_into_a_result_that_is_not_json_fails_with_why() -> None:
    calls = [ToolCall("lookup", {}, result="plain text"), ToolCall.of("use", key="x")]
    checks = expect_tools(calls).called("lookup", label="look")
    checks.called("use", key={"$ref": "look.result.key"})
    lines = failure(lambda: checks.accuracy_at_least(1.0))
    assert lines[:2] == [
        "expect_tools(...).accuracy_at_least(1.0) failed:",
        "  $ref look.result.key: the result of call #1 lookup (paired with 'look') is not a JSON "
        "object or array, so it has no key: 'plain text'",
    ]


def test_result_constrains_what_the_tool_returned() -> None:
    recorder = faithful_cancel()
    cancelled = {"order_id": "ORD-1050", "status": "cancelled", "summary": {"$any": True}}
    expect_tools(recorder).called("cancel_order", result=cancelled).accuracy_at_least(1.0)
    refunded = {**cancelled, "status": "refunded"}
    lines = failure(
        lambda: expect_tools(recorder).called("cancel_order", result=refunded).accuracy_at_least(1)
    )
    assert lines[1].startswith("  tool_call_accuracy 0.00 < 1.00: 0/1 expected calls matched")
    assert table(lines)[2].endswith("  cancel_order(order_id='ORD-1050')  wrong result")
    assert "result/status: result.status='cancelled', expected 'refunded'" in table(lines)[3]


# --- the keyword clash rule ---------------------------------------------------------------


@tool
def tag_issue(issue: str, label: str) -> str:
    """Put a label on an issue."""
    return f"{issue} tagged {label}"


def test_a_tool_argument_named_like_a_keyword_goes_in_the_mapping() -> None:
    calls = [ToolCall.of("tag_issue", issue="#7", label="bug")]
    expect_tools(calls).called("tag_issue", {"label": "bug"}, issue="#7").accuracy_at_least(1.0)
    with pytest.raises(AssertionError, match=r"label='bug', expected 'feature'"):
        expect_tools(calls).called("tag_issue", {"label": "feature"}).accuracy_at_least(1.0)
    # both: the mapping's label is the argument, the keyword labels the expected call
    checks = expect_tools(calls).called(tag_issue, {"label": "bug"}, label="tag")
    assert [(e.label, dict(e.args)) for e in checks.expected] == [("tag", {"label": "bug"})]


def test_a_keyword_that_shadows_an_argument_of_the_tool_object_is_refused() -> None:
    with pytest.raises(TypeError) as info:
        expect_tools([]).called(tag_issue, label="bug")
    assert str(info.value) == (
        "called('tag_issue', label='bug'): tag_issue has an argument named 'label', but the "
        "keyword label= belongs to the expected call; to expect the argument, give it in the "
        "mapping: called('tag_issue', {'label': 'bug'})"
    )


def test_an_argument_given_twice_or_a_mapping_that_is_none_is_an_error() -> None:
    with pytest.raises(TypeError, match=r"argument 'issue' is given twice"):
        expect_tools([]).called("tag_issue", {"issue": "#7"}, issue="#8")
    with pytest.raises(TypeError, match=r"must be a mapping, got str"):
        expect_tools([]).called("tag_issue", '{"issue": "#7"}')  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"label must be a letter or _"):
        expect_tools([]).called("tag_issue", label="no dots.here")


# --- misuse of the rule methods -----------------------------------------------------------


@pytest.mark.parametrize(
    ("check", "error", "message"),
    [
        (
            lambda c: c.grounded("cancel_order"),
            ValueError,
            "grounded('cancel_order'): name the arguments to check, e.g. "
            "grounded('cancel_order', 'order_id')",
        ),
        (
            lambda c: c.grounded("cancel_order", "items..sku"),
            ValueError,
            "grounded('cancel_order', 'items..sku'): grounded.args[0]: argument path "
            "'items..sku' has an empty part: write names joined by single dots, as in items.0.sku",
        ),
        (
            lambda c: c.max_calls(0),
            ValueError,
            "max_calls(0): max_calls.max: expected a number >= 1, found the number 0",
        ),
        (
            lambda c: c.max_repeats(True),
            ValueError,
            "max_repeats(True): max_repeats: expected an integer, found the boolean true",
        ),
        (
            lambda c: c.forbid("get_order", severity="loud"),
            ValueError,
            "forbid('get_order', severity='loud'): severity: expected one of 'error' or 'warn', "
            "found the string 'loud'",
        ),
        (
            lambda c: c.allow(),
            ValueError,
            "allow(): name the allowed tools, e.g. allow('get_order', 'search_*')",
        ),
        (
            lambda c: c.within_budget(),
            ValueError,
            "within_budget(): give at least one cap, e.g. within_budget(tool_calls=8, "
            "total_tokens=6000)",
        ),
        (
            lambda c: c.forbid({"name": "get_order", "arg": {}}),
            ValueError,
            "forbid({'name': 'get_order', 'arg': {}}): a call pattern mapping has 'name' and "
            "optionally 'args', found unknown key 'arg' in {'name': 'get_order', 'arg': {}}; "
            "e.g. {'name': 'refund_order', 'args': {'amount': {'$gt': 100}}}",
        ),
        (
            lambda c: c.forbid({"name": "get_order", "args": {"id": {"$same": "id"}}}),
            ValueError,
            "forbid({'name': 'get_order', 'args': {'id': {'$same': 'id'}}}): forbid.args.id: "
            "$same only goes in before.first.args (it names an argument of the 'then' call)",
        ),
        (
            lambda c: c.called_before("get_order", "refund_order", same=3),
            TypeError,
            "called_before('get_order', 'refund_order', same=3): same takes argument names "
            "(['order_id']) or a mapping of the first call's argument to the then call's "
            "({'id': 'order_id'}), got 3",
        ),
        (
            lambda c: c.forbid(42),
            TypeError,
            "forbid(42) takes a tool name (str), a LangChain BaseTool or an @tool function, "
            "got int 42",
        ),
        (
            lambda c: c.forbid("get_order", name=""),
            TypeError,
            "forbid('get_order', name=''): name must be a non-empty string, got ''",
        ),
    ],
)
def test_a_bad_rule_is_an_error_naming_the_method(
    check: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as info:
        check(expect_tools(faithful_cancel()))
    assert str(info.value) == message
