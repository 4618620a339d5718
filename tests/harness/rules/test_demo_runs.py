"""Rules on real captured runs: the orders demo agent over its SQLite data, driven by the
scripted model, recorded by the ToolCallRecorder, evaluated by the same code every user runs."""

from __future__ import annotations

from typing import Any

from harness import Sample
from harness.demo import orders
from harness.models.scripted import ScriptedChatModel
from harness.rules import RuleResult, Trajectory, evaluate_rules, load_rules
from tracing.langchain.recorder import ToolCallRecorder

RULES = load_rules(
    [
        {"name": "grounded ids", "grounded": {"tool": "*_order", "args": ["order_id", "amount"]}},
        {
            "name": "lookup before refund",
            "before": {
                "first": {"name": "get_order", "args": {"order_id": {"$same": "order_id"}}},
                "then": "refund_order",
            },
        },
        {"name": "no loops", "max_repeats": 1},
    ]
)


def run(text: str, *turns: list[tuple[str, dict[str, Any]]]) -> Trajectory:
    """Run the orders agent on ``text`` with the model asking for ``turns`` of calls."""
    script: list[Any] = [
        {"tool_calls": [{"name": name, "args": args} for name, args in turn]} for turn in turns
    ]
    model = ScriptedChatModel([*script, {"content": "Done."}])
    recorder = ToolCallRecorder()
    store = orders.OrderStore()
    orders.build(model, store=store).invoke({"messages": [("user", text)]}, recorder.config)
    return Trajectory.from_sample(Sample.from_recorder(recorder, input=text))


def verdicts(trajectory: Trajectory) -> dict[str, RuleResult]:
    return {result.rule: result for result in evaluate_rules(RULES, trajectory)}


def test_a_cancel_of_an_order_a_search_returned_is_grounded() -> None:
    trajectory = run(
        "Please cancel my open order, I'm ada@example.com",
        [("find_customer", {"email": "ada@example.com"})],
        [("search_orders", {"customer_id": "C-001", "status": "open"})],
        [("cancel_order", {"order_id": "ORD-1050"})],
    )
    assert [(c.name, c.status) for c in trajectory.calls] == [
        ("find_customer", "ok"),
        ("search_orders", "ok"),
        ("cancel_order", "ok"),
    ]
    assert all(result.passed for result in verdicts(trajectory).values())


def test_an_invented_order_id_fails_grounded_even_when_the_tool_accepted_it() -> None:
    # ORD-1050 exists in the database, so the cancel succeeds: only the rule sees the invention
    trajectory = run(
        "Cancel my keyboard order please",
        [("find_customer", {"name": "Ada Lovelace"})],
        [("cancel_order", {"order_id": "ORD-1050"})],
    )
    assert trajectory.calls[1].status == "ok"
    grounded = verdicts(trajectory)["grounded ids"]
    assert (grounded.passed, grounded.code, grounded.calls) == (False, "ungrounded_arg", (1,))
    assert grounded.reason == (
        "#2 cancel_order(order_id='ORD-1050'): order_id 'ORD-1050' not seen in the user's "
        "input or any earlier tool result"
    )


def test_a_failed_lookup_does_not_ground_the_id_it_complains_about() -> None:
    trajectory = run(
        "Cancel order ORD-105 please",  # the user gave a prefix of ORD-1050
        [("get_order", {"order_id": "ORD-9999"})],
        [("cancel_order", {"order_id": "ORD-9999"})],
    )
    assert trajectory.calls[0].status == "error"
    assert "ORD-9999" in str(trajectory.calls[0].result)
    grounded = verdicts(trajectory)["grounded ids"]
    assert (grounded.code, grounded.calls) == ("ungrounded_arg", (0, 1))


def test_a_refund_after_its_own_lookup_passes_before_and_grounds_the_amount() -> None:
    trajectory = run(
        "Refund my headphones, order ORD-1042, they broke",
        [("get_order", {"order_id": "ORD-1042"})],
        [("refund_order", {"order_id": "ORD-1042", "amount": 89.9, "reason": "broken"})],
    )
    assert [c.status for c in trajectory.calls] == ["ok", "ok"]
    results = verdicts(trajectory)
    assert results["lookup before refund"].passed
    assert results["grounded ids"].passed  # 89.9 is the order's amount_paid


def test_a_refund_after_looking_up_another_order_fails_before() -> None:
    trajectory = run(
        "Refund ORD-1042 and tell me about ORD-1043",
        [("get_order", {"order_id": "ORD-1043"})],
        [("refund_order", {"order_id": "ORD-1042", "amount": 10.0, "reason": "late"})],
    )
    before = verdicts(trajectory)["lookup before refund"]
    assert (before.passed, before.code, before.calls) == (False, "missing_before", (1,))
    assert before.reason == (
        "#2 refund_order(order_id='ORD-1042', amount=10.0, reason='late'): "
        "no earlier get_order(order_id='ORD-1042')"
    )
    grounded = verdicts(trajectory)["grounded ids"]
    assert (
        grounded.reason.startswith("#2 refund_order(") and "amount 10.0 not seen" in grounded.reason
    )


def test_parallel_calls_count_in_request_order() -> None:
    # both lookups in one model turn; the refund in the next one refers to the second
    trajectory = run(
        "What about ORD-1042 and ORD-1043?",
        [("get_order", {"order_id": "ORD-1042"}), ("get_order", {"order_id": "ORD-1043"})],
        [("refund_order", {"order_id": "ORD-1043", "amount": 12.5, "reason": "late"})],
        [("get_order", {"order_id": "ORD-1043"})],
    )
    results = verdicts(trajectory)
    assert results["lookup before refund"].passed
    assert results["grounded ids"].passed  # 12.5 came back from the second lookup
    loops = results["no loops"]
    assert (loops.code, loops.calls) == ("repeated_call", (3,))
