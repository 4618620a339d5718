"""expect_tools' rules and ordered expectations on real runs of the orders demo agent.

The agent is the LangGraph orders agent over its SQLite data (harness.demo.orders), the model
the scripted chat model (or the demo model, which reports no token usage), the calls recorded
by the ToolCallRecorder: each rule method passes on a faithful run and fails, with its exact
message, on a run that breaks it.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import pytest

from harness.assertion_rules import RuleWarning
from harness.assertions import expect_tools
from harness.demo import orders
from harness.models import make_model
from harness.models.scripted import ScriptedChatModel
from harness.sample import Sample
from tracing.langchain.recorder import ToolCallRecorder
from tracing.records import ModelCall, ToolCall

Turn = list[tuple[str, dict[str, Any]]]

ADA = "Please cancel my open order, I'm ada@example.com"
FIND = ("find_customer", {"email": "ada@example.com"})
SEARCH = ("search_orders", {"customer_id": "C-001", "status": "open"})
CANCEL = ("cancel_order", {"order_id": "ORD-1050"})


def run(text: str, *turns: Turn, usage: dict[str, int] | None = None) -> ToolCallRecorder:
    """Run the orders agent on ``text``, the model asking for ``turns`` of calls, then done;
    ``usage``: the token figures every model turn reports."""
    script: list[dict[str, Any]] = [
        {"tool_calls": [{"name": name, "args": args} for name, args in turn]} for turn in turns
    ]
    script.append({"content": "Done."})
    if usage is not None:
        script = [{**turn, "usage": usage} for turn in script]
    recorder = ToolCallRecorder()
    agent = orders.build(ScriptedChatModel(script))
    agent.invoke({"messages": [("user", text)]}, recorder.config)
    return recorder


def faithful_cancel() -> ToolCallRecorder:
    """Ada's open order looked up, then cancelled: every id comes from a tool's result."""
    return run(ADA, [FIND], [SEARCH], [CANCEL])


def invented_cancel() -> ToolCallRecorder:
    """The order id made up: ORD-1050 exists, so the cancel even succeeds."""
    return run(
        "Cancel my keyboard order please", [("find_customer", {"name": "Ada Lovelace"})], [CANCEL]
    )


def failure(check: Callable[[], Any]) -> list[str]:
    """Run a check that must fail; return its message's lines."""
    with pytest.raises(AssertionError) as info:
        check()
    return str(info.value).splitlines()


def table(lines: list[str]) -> list[str]:
    """The match table's rows of a message, spaces squeezed."""
    start = next(i for i, line in enumerate(lines) if line.startswith("expected "))
    end = lines.index("the agent's calls, in order:")
    return [re.sub(r" {2,}", "  ", line.strip()) for line in lines[start + 1 : end]]


# --- grounded -------------------------------------------------------------------------------


def test_grounded_passes_when_every_id_came_from_a_tool_result() -> None:
    expect_tools(faithful_cancel(), input=ADA).grounded("cancel_order", "order_id")


def test_grounded_passes_on_an_id_the_user_gave() -> None:
    text = "Cancel ORD-1050 please"
    expect_tools(run(text, [CANCEL]), input=text).grounded("*_order", "order_id")


def test_grounded_fails_on_an_invented_id_naming_the_call() -> None:
    lines = failure(
        lambda: expect_tools(invented_cancel(), input="Cancel my keyboard order please").grounded(
            "cancel_order", "order_id"
        )
    )
    assert lines[:2] == [
        "expect_tools(...).grounded('cancel_order', 'order_id') failed:",
        "  rule:grounded order_id of cancel_order: #2 cancel_order(order_id='ORD-1050'): "
        "order_id 'ORD-1050' not seen in the user's input or any earlier tool result",
    ]
    assert table(lines) == [
        "#  expected  actual  verdict",
        "-  --------------  ----------------------------------  ------------",
        "-  (not expected)  find_customer(name='Ada Lovelace')  not expected",
        "-  (not expected)  cancel_order(order_id='ORD-1050')  not expected",
        "✗ rule:grounded order_id of cancel_order",  # under the offending call's row
    ]
    assert lines[-3:] == [
        "the agent's calls, in order:",
        "    1. find_customer(name='Ada Lovelace')",
        "    2. cancel_order(order_id='ORD-1050')",
    ]


def test_grounded_without_the_users_input_cannot_pass_on_a_guess() -> None:
    # the id is in the user's text, but the recorder does not keep that text
    recorder = run("Cancel ORD-1050 please", [CANCEL])
    lines = failure(lambda: expect_tools(recorder).grounded("cancel_order", "order_id"))
    assert lines[1:3] == [
        "  rule:grounded order_id of cancel_order: cannot be decided: the user's input was not "
        "captured, and #1 cancel_order(order_id='ORD-1050') has a value seen in no earlier tool "
        "result",
        "  the user's input is not known: pass what the agent was asked, "
        "expect_tools(recorder, input=question)",
    ]
    # a value an earlier result holds needs no input
    expect_tools(faithful_cancel()).grounded("cancel_order", "order_id")


def test_grounded_reads_a_samples_input() -> None:
    recorder = invented_cancel()
    sample = Sample.from_recorder(recorder, input="Cancel ORD-1050, my keyboard order")
    expect_tools(sample).grounded("cancel_order", "order_id")
    with pytest.raises(AssertionError, match="not seen in the user's input"):
        expect_tools(sample, input="Cancel my keyboard order").grounded("cancel_order", "order_id")


# --- called_before --------------------------------------------------------------------------


def test_called_before_with_same_passes_on_a_lookup_of_that_order() -> None:
    recorder = run(
        "Refund my headphones, order ORD-1042, they broke",
        [("get_order", {"order_id": "ORD-1042"})],
        [("refund_order", {"order_id": "ORD-1042", "amount": 89.9, "reason": "broken"})],
    )
    expect_tools(recorder).called_before("get_order", "refund_order", same=["order_id"])


def test_called_before_with_same_fails_on_a_lookup_of_another_order() -> None:
    recorder = run(
        "Refund ORD-1042 and tell me about ORD-1043",
        [("get_order", {"order_id": "ORD-1043"})],
        [("refund_order", {"order_id": "ORD-1042", "amount": 10.0, "reason": "late"})],
    )
    expect_tools(recorder).called_before("get_order", "refund_order")  # any lookup will do
    lines = failure(
        lambda: expect_tools(recorder).called_before(
            orders.make_tools(orders.OrderStore())[1], "refund_order", same="order_id"
        )
    )
    assert lines[:2] == [
        "expect_tools(...).called_before('get_order', 'refund_order', same='order_id') failed:",
        "  rule:get_order before refund_order (same order_id): #2 refund_order("
        "order_id='ORD-1042', amount=10.0, reason='late'): "
        "no earlier get_order(order_id='ORD-1042')",
    ]


def test_called_before_same_may_map_differently_named_arguments() -> None:
    recorder = run(
        "Refund ORD-1042",
        [("get_order", {"order_id": "ORD-1042"})],
        [("refund_order", {"order_id": "ORD-1042", "amount": 5.0, "reason": "late"})],
    )
    checks = expect_tools(recorder)
    checks.called_before("get_order", "refund_order", same={"order_id": "order_id"})
    with pytest.raises(AssertionError, match=r"no earlier get_order\(order_id=5.0\)"):
        checks.called_before("get_order", "refund_order", same={"order_id": "amount"})


# --- forbid and allow -----------------------------------------------------------------------


def test_forbid_passes_and_fails_on_a_glob_and_on_arguments() -> None:
    recorder = faithful_cancel()
    checks = (
        expect_tools(recorder)
        .forbid("refund_*")
        .forbid({"name": "cancel_order", "args": {"order_id": "ORD-1042"}})
    )
    lines = failure(lambda: checks.forbid("cancel_*"))
    assert lines[:2] == [
        "expect_tools(...).forbid('cancel_*') failed:",
        "  rule:forbid cancel_*: #3 cancel_order(order_id='ORD-1050'): forbidden by cancel_*",
    ]
    lines = failure(
        lambda: checks.forbid(
            {"name": "cancel_order", "args": {"order_id": {"$regex": "^ORD-10"}}},
            name="no ORD-10xx",
        )
    )
    assert lines[1] == (
        "  rule:no ORD-10xx: #3 cancel_order(order_id='ORD-1050'): forbidden by "
        "cancel_order(order_id=$regex '^ORD-10')"
    )


def test_allow_passes_when_every_call_is_allowed_and_fails_naming_the_first_other() -> None:
    recorder = faithful_cancel()
    find, search, cancel = (orders.make_tools(orders.OrderStore())[i] for i in (0, 2, 4))
    expect_tools(recorder).allow(find, search, cancel).allow("*_customer", "*_order*")
    lines = failure(lambda: expect_tools(recorder).allow("find_*", "get_order"))
    assert lines[1] == (
        "  rule:allow find_*, get_order: #2 search_orders(customer_id='C-001', status='open'): "
        "not in allow [find_*, get_order] (and 1 more call)"
    )


# --- counts ---------------------------------------------------------------------------------


def test_max_calls_in_all_and_of_one_tool() -> None:
    recorder = faithful_cancel()
    expect_tools(recorder).max_calls(3).max_calls(1, "search_*").max_calls(1, tool="cancel_order")
    lines = failure(lambda: expect_tools(recorder).max_calls(2))
    assert lines[:2] == [
        "expect_tools(...).max_calls(2) failed:",
        "  rule:max_calls 2: #3 cancel_order(order_id='ORD-1050'): 3 calls of * (max 2)",
    ]
    lines = failure(lambda: expect_tools(recorder).max_calls(1, "*_order*"))
    assert lines[1] == (
        "  rule:max_calls 1 of *_order*: #3 cancel_order(order_id='ORD-1050'): "
        "2 calls of *_order* (max 1)"
    )


def test_max_repeats_fails_on_the_call_over_the_limit() -> None:
    lookup = ("get_order", {"order_id": "ORD-1042"})
    recorder = run(
        "Where is ORD-1042?", [lookup], [lookup], [("get_order", {"order_id": "ORD-1043"})]
    )
    expect_tools(recorder).max_repeats(2)
    lines = failure(lambda: expect_tools(recorder).max_repeats(1))
    assert lines[:2] == [
        "expect_tools(...).max_repeats(1) failed:",
        "  rule:max_repeats 1: #2 get_order(order_id='ORD-1042'): 2 identical calls (max 1)",
    ]


# --- budgets --------------------------------------------------------------------------------


def test_within_budget_counts_tool_calls_model_calls_and_reported_tokens() -> None:
    usage = {"input_tokens": 1000, "output_tokens": 50}
    recorder = run(ADA, [FIND], [SEARCH], [CANCEL], usage=usage)
    # four model turns (the final answer's included), 1,050 tokens each
    expect_tools(recorder).within_budget(
        tool_calls=3, model_calls=4, input_tokens=4000, output_tokens=200, total_tokens=4200
    )
    lines = failure(lambda: expect_tools(recorder).within_budget(tool_calls=2, total_tokens=4000))
    assert lines[:2] == [
        "expect_tools(...).within_budget(tool_calls=2, total_tokens=4000) failed:",
        "  rule:budget tool_calls 2, total_tokens 4000: over budget: tool_calls 3 > 2; "
        "total_tokens 4,200 > 4,000",
    ]


def test_a_token_budget_when_the_model_reported_no_usage_fails_with_why() -> None:
    # the demo model reports no token usage: the budget cannot be decided, so it never passes
    recorder = ToolCallRecorder()
    agent = orders.build(make_model("demo"))
    agent.invoke({"messages": [("user", "Where is my order ORD-1042?")]}, recorder.config)
    assert [call.name for call in recorder.calls()] == ["get_order"]
    assert [m.total_tokens for m in recorder.model_calls()] == [None, None]
    expect_tools(recorder).within_budget(model_calls=2, tool_calls=1)
    lines = failure(lambda: expect_tools(recorder).within_budget(total_tokens=100_000))
    assert lines[1] == (
        "  rule:budget total_tokens 100000: cannot be decided: total_tokens: no model turn "
        "reported token usage"
    )
    # a figure over its cap fails the rule even when another is unknown
    lines = failure(lambda: expect_tools(recorder).within_budget(total_tokens=9, model_calls=1))
    assert lines[1].endswith(": over budget: model_calls 2 > 1")


def test_a_list_of_calls_has_no_model_turns_and_says_what_to_check_instead() -> None:
    lines = failure(lambda: expect_tools(faithful_cancel().calls()).within_budget(model_calls=9))
    assert lines[1:3] == [
        "  rule:budget model_calls 9: cannot be decided: model_calls: the model turns were not "
        "recorded",
        "  the model turns are not known: check a ToolCallRecorder (it keeps them) rather than "
        "a list of calls",
    ]


def test_seconds_come_from_the_duration_the_test_passes() -> None:
    recorder = faithful_cancel()
    expect_tools(recorder, duration=1.5).within_budget(seconds=2)
    lines = failure(lambda: expect_tools(recorder, duration=2.25).within_budget(seconds=2))
    assert lines[1] == "  rule:budget seconds 2: over budget: seconds 2.25 > 2"
    lines = failure(lambda: expect_tools(recorder).within_budget(seconds=2))
    assert lines[1:3] == [
        "  rule:budget seconds 2: cannot be decided: seconds: the run's duration is not known",
        "  the run's duration is not known: pass it, expect_tools(recorder, duration=s)",
    ]
    sample = Sample(tool_calls=recorder.calls(), metadata={"duration": 3.0})
    with pytest.raises(AssertionError, match=r"seconds 3 > 2"):
        expect_tools(sample).within_budget(seconds=2)


# --- severity, names, scope -----------------------------------------------------------------


def test_a_warn_rule_warns_and_the_chain_goes_on() -> None:
    recorder = faithful_cancel()
    with pytest.warns(RuleWarning) as caught:
        chain = (
            expect_tools(recorder)
            .max_calls(1, severity="warn")
            .within_budget(seconds=1, severity="warn", name="fast enough")
            .no_errors()
        )
    assert [str(w.message) for w in caught] == [
        "expect_tools(...).max_calls(1, severity='warn'): rule:max_calls 1: "
        "#2 search_orders(customer_id='C-001', status='open'): 3 calls of * (max 1) "
        "(and 1 more call)",
        "expect_tools(...).within_budget(seconds=1, name='fast enough', severity='warn'): "
        "rule:fast enough: cannot be decided: seconds: the run's duration is not known; "
        "the run's duration is not known: pass it, expect_tools(recorder, duration=s)",
    ]
    assert caught[0].filename == __file__  # pointing at the test's own line
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chain.max_calls(3, severity="warn")  # a passing warn rule says nothing


def test_a_given_name_is_the_rules_name() -> None:
    lines = failure(
        lambda: expect_tools(faithful_cancel()).forbid("cancel_order", name="no cancels")
    )
    assert lines[1].startswith("  rule:no cancels: #3 cancel_order(")


def test_rules_in_an_agent_see_that_agents_calls_only() -> None:
    calls = [
        ToolCall("search", {"q": "a"}, agent="supervisor/research"),
        ToolCall("search", {"q": "a"}, agent="supervisor/writer"),
    ]
    expect_tools(calls).in_agent("research").max_repeats(1).max_calls(1)
    with pytest.raises(AssertionError, match=r"#2 search\(q='a'\): 2 identical calls"):
        expect_tools(calls).max_repeats(1)


def test_a_samples_uncaptured_calls_make_rules_undecided_not_passed() -> None:
    calls = [ToolCall.of("get_order"), ToolCall.of("cancel_order", order_id="ORD-9")]
    sample = Sample(
        input="cancel it",
        tool_calls=calls,
        metadata={"not_captured": {"calls": [0]}, "model_calls": [ModelCall(total_tokens=5)]},
    )
    lines = failure(lambda: expect_tools(sample).grounded("cancel_order", "order_id"))
    assert lines[1] == (
        "  rule:grounded order_id of cancel_order: cannot be decided: #1 get_order was recorded "
        "without its arguments and result (content not captured)"
    )
    expect_tools(sample).within_budget(total_tokens=5)


def test_a_recorder_turn_budgets_that_turns_model_calls() -> None:
    usage = {"input_tokens": 100, "output_tokens": 10}
    lookup = {"tool_calls": [{"name": "get_order", "args": {"order_id": "ORD-1042"}}]}
    script = [{**lookup, "usage": usage}, {"content": "Delivered.", "usage": usage}]
    recorder = ToolCallRecorder()
    agent = orders.build(ScriptedChatModel(script * 2))
    agent.invoke({"messages": [("user", "Where is ORD-1042?")]}, recorder.config)
    with recorder.turn() as turn:
        agent.invoke({"messages": [("user", "And now?")]}, recorder.config)
    assert len(recorder.model_calls()) == 4
    expect_tools(turn).within_budget(model_calls=2, total_tokens=220)
    lines = failure(lambda: expect_tools(turn).within_budget(total_tokens=219))
    assert lines[1] == "  rule:budget total_tokens 219: over budget: total_tokens 220 > 219"
