"""The demo agents run for real under the demo model: real tools, real data, real SQLite rows."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage

from harness.demo import calculator, orders, travel
from harness.models import DemoChatModel, make_model


def run(agent: Any, text: str) -> tuple[list[tuple[str, dict[str, Any]]], list[ToolMessage], str]:
    """Invoke an agent; return the tool calls requested, the tool messages and the answer."""
    messages = agent.invoke({"messages": [("user", text)]})["messages"]
    calls = [
        (c["name"], c["args"]) for m in messages if isinstance(m, AIMessage) for c in m.tool_calls
    ]
    results = [m for m in messages if isinstance(m, ToolMessage)]
    return calls, results, str(messages[-1].content)


# --------------------------------------------------------------------------- travel


def test_travel_weather_comes_from_the_bundled_table() -> None:
    calls, results, answer = run(travel.build(DemoChatModel()), "Weather in Berlin tomorrow?")
    assert calls == [("get_weather", {"city": "Berlin", "day": "tomorrow"})]
    # today is pinned to Monday 2025-06-02; Berlin's Tuesday is 23 °C, partly cloudy.
    assert answer == "Berlin on Tuesday 2025-06-03: 23 °C, partly cloudy."
    assert results[0].status == "success"


def test_travel_booking_chain_writes_a_booking() -> None:
    desk = travel.TravelDesk()
    agent = travel.build(model=DemoChatModel(), desk=desk)
    calls, _, answer = run(
        agent, "Book the best rated hotel in Lisbon for Ada Lovelace, 2 nights from 2025-07-01"
    )
    assert [name for name, _ in calls] == ["search_hotels", "book_hotel"]
    assert desk.bookings[0]["hotel_id"] == "LIS-01"
    assert desk.bookings[0]["total_eur"] == 280.0
    assert "booking BK-0001" in answer


def test_travel_currency_uses_the_rate_table() -> None:
    _, _, answer = run(travel.build(DemoChatModel()), "Convert 100 EUR to JPY")
    assert answer == "100.00 EUR = 16900.00 JPY."


def test_travel_unknown_city_is_an_error_message_not_a_crash() -> None:
    calls, results, answer = run(travel.build(DemoChatModel()), "Weather in Atlantis today?")
    assert calls == [("get_weather", {"city": "Atlantis", "day": "today"})]
    assert results[0].status == "error"
    assert "no data for city 'Atlantis'" in answer


def test_travel_bulk_cancel_empties_this_desk_only() -> None:
    first, second = travel.TravelDesk(), travel.TravelDesk()
    for desk in (first, second):
        run(
            travel.build(DemoChatModel(), desk=desk),
            "Book hotel LIS-02 for Alan Turing, 1 night from today",
        )
    _, _, answer = run(travel.build(DemoChatModel(), desk=first), "Cancel all my bookings")
    assert answer == "Cancelled 1 booking(s)."
    assert first.bookings == [] and len(second.bookings) == 1


# --------------------------------------------------------------------------- orders


def status_of(store: orders.OrderStore, order_id: str) -> str:
    """The order's status column, read straight from the database."""
    return str(store.query("SELECT status FROM orders WHERE order_id = ?", order_id)[0]["status"])


def test_orders_refund_writes_rows() -> None:
    store = orders.OrderStore()
    agent = orders.build(DemoChatModel(), store=store)
    calls, _, answer = run(agent, "Refund order ORD-1042 in full because it arrived broken")
    assert [name for name, _ in calls] == ["get_order", "refund_order"]
    assert store.query("SELECT order_id, amount, reason FROM refunds") == [
        {"order_id": "ORD-1042", "amount": 89.9, "reason": "it arrived broken"}
    ]
    assert status_of(store, "ORD-1042") == "refunded"
    assert "full refund" in answer


def test_orders_refund_above_what_was_paid_is_rejected() -> None:
    store = orders.OrderStore()
    _, results, answer = run(
        orders.build(DemoChatModel(), store=store), "Refund 500 EUR on ORD-1042 because it is late"
    )
    assert results[-1].status == "error"
    assert "exceeds the 89.90 EUR still refundable" in answer
    assert store.query("SELECT * FROM refunds") == []


def test_orders_cancel_chain_changes_the_status() -> None:
    store = orders.OrderStore()
    calls, _, _ = run(
        orders.build(DemoChatModel(), store=store),
        "Cancel my most recent order, my email is ada@example.com",
    )
    assert calls == [
        ("find_customer", {"email": "ada@example.com"}),
        ("search_orders", {"customer_id": "C-001"}),
        ("cancel_order", {"order_id": "ORD-1050"}),
    ]
    assert status_of(store, "ORD-1050") == "cancelled"


def test_orders_unknown_order_is_an_error() -> None:
    _, results, answer = run(orders.build(DemoChatModel()), "Where is my order ORD-9999?")
    assert results[0].status == "error"
    assert "no order with id 'ORD-9999'" in answer


def test_each_build_gets_its_own_database() -> None:
    first, second = orders.OrderStore(), orders.OrderStore()
    run(orders.build(DemoChatModel(), store=first), "Cancel order ORD-2001")
    assert status_of(first, "ORD-2001") == "cancelled"
    assert status_of(second, "ORD-2001") == "open"
    # build() without a store makes a fresh one each time: the same cancel succeeds twice.
    for _ in range(2):
        _, results, _ = run(orders.build(DemoChatModel()), "Cancel order ORD-2001")
        assert results[0].status == "success"


def test_file_database_is_seeded_once_and_persists(tmp_path: Path) -> None:
    path = tmp_path / "orders.sqlite"
    store = orders.OrderStore(path)
    run(orders.build(DemoChatModel(), store=store), "Cancel order ORD-2001")
    store.close()
    reopened = orders.OrderStore(path)
    assert status_of(reopened, "ORD-2001") == "cancelled"
    reopened.close()


def test_parallel_orders_agents_do_not_interfere() -> None:
    stores = [orders.OrderStore() for _ in range(8)]

    def work(index: int) -> tuple[str, list[dict[str, Any]]]:
        agent = orders.build(DemoChatModel(), store=stores[index])
        # Half refund, half cancel: both write; every store must see only its own writes.
        text = (
            f"Refund {10 + index} EUR on ORD-1042 because of scratches"
            if index % 2 == 0
            else "Cancel order ORD-2001"
        )
        _, _, answer = run(agent, text)
        return answer, stores[index].query("SELECT amount FROM refunds")

    with ThreadPoolExecutor(max_workers=8) as pool:
        outcomes = list(pool.map(work, range(8)))
    for index, (answer, refunds) in enumerate(outcomes):
        if index % 2 == 0:
            assert refunds == [{"amount": float(10 + index)}], answer
            assert status_of(stores[index], "ORD-2001") == "open"
        else:
            assert refunds == []
            assert status_of(stores[index], "ORD-2001") == "cancelled"


async def test_agents_run_under_ainvoke_concurrently() -> None:
    stores = [orders.OrderStore() for _ in range(4)]
    agents = [orders.build(DemoChatModel(), store=s) for s in stores]
    texts = [f"Refund {n} EUR on ORD-1043 since it was late" for n in (1, 2, 3, 4)]
    await asyncio.gather(
        *(a.ainvoke({"messages": [("user", t)]}) for a, t in zip(agents, texts, strict=True))
    )
    amounts = [s.query("SELECT amount FROM refunds")[0]["amount"] for s in stores]
    assert amounts == [1.0, 2.0, 3.0, 4.0]


# --------------------------------------------------------------------------- calculator


def test_calculator_under_demo_and_scripted_models() -> None:
    _, _, answer = run(calculator.build(DemoChatModel()), "What is 2.5 times 4?")
    assert answer == "10.0"
    scripted = make_model(
        "scripted",
        script=[{"tool_calls": [{"name": "divide", "args": {"a": 1, "b": 0}}]}, {"content": "x"}],
    )
    _, results, _ = run(calculator.build(model=scripted), "1 / 0")
    assert results[0].status == "error"
    assert "cannot divide by zero" in str(results[0].content)


@pytest.mark.parametrize(
    ("value", "source", "target", "expected"),
    [(10, "km", "mile", 6.2137), (100, "celsius", "fahrenheit", 212.0), (1, "kg", "pound", 2.2046)],
)
def test_unit_conversion(value: float, source: str, target: str, expected: float) -> None:
    convert = {t.name: t for t in calculator.make_tools()}["convert_units"]
    result = convert.invoke({"value": value, "from_unit": source, "to_unit": target})
    assert result["converted"] == pytest.approx(expected, abs=1e-4)
