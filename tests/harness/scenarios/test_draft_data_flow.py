"""``harness draft`` writes ``id:`` labels and ``$ref``s where an argument is a value an earlier
call returned (harness.scenarios.draft.data_flow), so a drafted scenario survives its fixtures
changing.

A real recorded run of the orders demo (SQLite, demo model) -> draft -> validate -> replay; then
the same draft against changed fixture data passes, and the literal the $ref replaced fails.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.scenarios.draft import Draft, data_flow, render
from tests.support.paths import SCENARIOS

CHANGED_FIXTURES = """
from harness.demo import orders


def build(model):
    store = orders.OrderStore()
    with store.transaction() as db:  # the fixture data changed: another price was paid
        db.execute("UPDATE orders SET amount_paid = 99.5 WHERE order_id = 'ORD-1042'")
    return orders.build(model, store=store)
"""


def _statuses(report: Path) -> list[str]:
    return [s["status"] for s in json.loads(report.read_text(encoding="utf-8"))["scenarios"]]


def test_a_recorded_refund_drafts_a_ref_that_survives_a_fixture_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    suite = str(SCENARIOS / "orders.yaml")
    assert main(["run", suite, "-k", "full and refund", "--record", "tapes", "-q"]) == 0
    cassette = tmp_path / "tapes" / "orders" / "full-refund-looks-the-amount-up-first.yaml"
    assert main(["draft", str(cassette), "-o", "drafted.yaml"]) == 0
    text = (tmp_path / "drafted.yaml").read_text(encoding="utf-8")
    # the amount was nowhere in the user's words: it is what get_order returned
    assert "        - name: get_order\n          id: get_order\n" in text
    assert "amount: {$ref: get_order.result.amount_paid}   # was 89.9" in text
    assert "reason: it arrived broken" in text  # the user's words stay literal
    assert main(["validate", "drafted.yaml"]) == 0
    assert main(["run", "drafted.yaml", "--replay", "tapes", "--json", "replay.json"]) == 0
    assert _statuses(tmp_path / "replay.json") == ["passed"]

    (tmp_path / "changed.py").write_text(CHANGED_FIXTURES, encoding="utf-8")
    moved = text.replace("agent: 'harness.demo.orders:build'", "agent: 'changed.py:build'")
    assert moved != text
    (tmp_path / "moved.yaml").write_text(moved, encoding="utf-8")
    assert main(["run", "moved.yaml", "--json", "moved.json", "-q"]) == 0
    assert _statuses(tmp_path / "moved.json") == ["passed"]
    literal = moved.replace("{$ref: get_order.result.amount_paid}", "89.9")
    (tmp_path / "literal.yaml").write_text(literal, encoding="utf-8")
    assert main(["run", "literal.yaml", "--json", "literal.json", "-q"]) == 1
    assert _statuses(tmp_path / "literal.json") == ["failed"]


def _draft(calls: list[tuple[str, dict[str, object]]], results: list[object], said: str) -> Draft:
    return Draft(
        source="test",
        suite="s",
        name="n",
        agent="harness.demo.orders:build",
        model=None,
        input=said,
        calls=tuple(calls),
        results=tuple(results),
    )


def test_values_the_user_gave_stay_literal_and_only_whole_values_flow() -> None:
    draft = _draft(
        [
            ("search_orders", {"customer_id": "C-001"}),
            ("get_order", {"order_id": "ORD-1042"}),  # the user said it
            ("cancel_order", {"order_id": "ORD-105", "force": True}),  # ORD-105 is no whole value
            ("get_order", {"order_id": "ORD-1050"}),
            ("refund_order", {"order_id": "ORD-1050", "amount": 129}),
        ],
        [
            '[{"order_id": "ORD-1050", "amount_paid": 129.0}, {"order_id": "ORD-1042"}]',
            '{"order_id": "ORD-1042", "ok": true}',
            "order ORD-105 not found",
            {"order_id": "ORD-1050", "amount_paid": 129.0},
            None,
        ],
        "Refund ORD-1042 for customer C-001",
    )
    flow = data_flow(draft)
    # the latest call that returned the value is the source; labels number repeated tools
    assert flow.refs == {
        (3, "order_id"): "search_orders.result.0.order_id",
        (4, "order_id"): "get_order_2.result.order_id",
        (4, "amount"): "get_order_2.result.amount_paid",
    }
    assert flow.labels == {0: "search_orders", 3: "get_order_2"}
    text = render(draft)
    assert "        - name: get_order\n          id: get_order_2\n" in text
    assert "customer_id: {$regex: '^C-\\d+$'}   # was 'C-001' (an id)" in text
    assert "force: true\n" in text


def test_no_results_no_refs() -> None:
    draft = _draft(
        [("get_order", {"order_id": "X-1"}), ("cancel_order", {"order_id": "X-1"})], [], ""
    )
    assert data_flow(draft).refs == {} and "$ref" not in render(draft)
