"""Order-support agent over a real SQLite database: customers, orders, refunds, cancellations.

Each ``build()`` creates its own database on first use, seeded from ``data/orders.sql`` (in
memory by default, so it costs a millisecond and concurrent scenarios — which refund and cancel,
that is, write — never share rows). Pass ``store=OrderStore(path)`` to keep it in a file, or to
look at the rows after a run.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool, ToolException, tool
from langgraph.graph.state import CompiledStateGraph

from harness.demo import build_tool_agent

__all__ = ["OrderStore", "build", "make_tools"]

# Package data (pyproject: package-data "demo/data/*"), read through importlib.resources.
SEED_SQL = files("harness.demo") / "data" / "orders.sql"
SYSTEM_PROMPT = (
    "You are a customer-support agent for an online shop. Look customers and orders up before "
    "changing anything; refund only what was paid; cancel only open orders."
)
Status = Literal["open", "shipped", "delivered", "cancelled", "refunded"]


class OrderStore:
    """One SQLite database (thread-safe: ToolNode may run tool calls in parallel threads)."""

    def __init__(self, path: str | Path = ":memory:") -> None:
        """Open (and, when new, seed) the database at ``path``; default: a private in-memory one."""
        self.path = str(path)
        self._lock = threading.Lock()
        fresh = self.path == ":memory:" or not Path(self.path).exists()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        if fresh:
            self._db.executescript(SEED_SQL.read_text(encoding="utf-8"))

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Serialised access; commits on success, rolls back on any exception."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def query(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        """Rows as dicts (read-only helper, also handy in tests)."""
        with self._lock:
            return [dict(row) for row in self._db.execute(sql, params)]

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()


def _order(db: sqlite3.Connection, order_id: str) -> dict[str, Any]:
    row = db.execute("SELECT * FROM orders WHERE order_id = ?", (order_id.strip().upper(),))
    found = row.fetchone()
    if found is None:
        raise ToolException(f"no order with id {order_id!r}; order ids look like ORD-1042")
    order = dict(found)
    refunded = db.execute(
        "SELECT COALESCE(SUM(amount), 0) FROM refunds WHERE order_id = ?", (order["order_id"],)
    ).fetchone()[0]
    order["refunded"] = round(float(refunded), 2)
    return order


def _order_summary(order: dict[str, Any]) -> str:
    return (
        f"Order {order['order_id']} ({order['item']}, placed {order['placed_on']}): "
        f"{order['status']}, paid {order['amount_paid']:.2f} EUR"
        + (f", refunded {order['refunded']:.2f} EUR" if order.get("refunded") else "")
        + "."
    )


def make_tools(store: OrderStore) -> list[BaseTool]:
    """The support tools, bound to one store."""

    @tool(parse_docstring=True)
    def find_customer(email: str | None = None, name: str | None = None) -> dict[str, Any]:
        """Find a customer by email address or full name; returns their customer_id.

        Args:
            email: The customer's email address.
            name: The customer's full name.
        """
        if not email and not name:
            raise ToolException("give an email or a name to find a customer")
        column, value = ("email", email) if email else ("name", name)
        rows = store.query(
            f"SELECT * FROM customers WHERE lower({column}) = lower(?)", (value or "").strip()
        )
        if not rows:
            raise ToolException(f"no customer with {column} {value!r}")
        customer = rows[0]
        customer["summary"] = f"{customer['name']} is customer {customer['customer_id']}."
        return customer

    @tool(parse_docstring=True)
    def get_order(order_id: str) -> dict[str, Any]:
        """Look up one order by its id: status, item, date and amount paid.

        Args:
            order_id: The order id, e.g. ORD-1042.
        """
        with store.transaction() as db:
            order = _order(db, order_id)
        return {**order, "summary": _order_summary(order)}

    @tool(parse_docstring=True)
    def search_orders(customer_id: str, status: Status | None = None) -> list[dict[str, Any]]:
        """List a customer's orders, newest first, optionally only those with one status.

        Each result carries its order_id.

        Args:
            customer_id: The customer id, e.g. C-001.
            status: Only orders with this status.
        """
        sql = "SELECT * FROM orders WHERE customer_id = ?"
        params: list[Any] = [customer_id.strip().upper()]
        if status:
            sql += " AND status = ?"
            params.append(status)
        rows = store.query(sql + " ORDER BY placed_on DESC", *params)
        return [{**row, "summary": _order_summary(row)} for row in rows]

    @tool(parse_docstring=True)
    def refund_order(order_id: str, amount: float, reason: str) -> dict[str, Any]:
        """Refund money on an order, in part or in full, with a reason.

        Args:
            order_id: The order id, e.g. ORD-1042.
            amount: Amount to refund in EUR.
            reason: Why the customer gets the money back.
        """
        if amount <= 0:
            raise ToolException(f"refund amount must be positive, got {amount}")
        with store.transaction() as db:
            order = _order(db, order_id)
            if order["status"] not in ("delivered", "shipped"):
                raise ToolException(
                    f"order {order['order_id']} is {order['status']}: only shipped or delivered "
                    "orders can be refunded"
                )
            left = round(order["amount_paid"] - order["refunded"], 2)
            if amount > left + 1e-9:
                raise ToolException(
                    f"refund of {amount:.2f} exceeds the {left:.2f} EUR still refundable on "
                    f"{order['order_id']} (paid {order['amount_paid']:.2f})"
                )
            db.execute(
                "INSERT INTO refunds (order_id, amount, reason) VALUES (?, ?, ?)",
                (order["order_id"], amount, reason),
            )
            full = abs(amount - left) < 1e-9
            if full:
                db.execute(
                    "UPDATE orders SET status = 'refunded' WHERE order_id = ?", (order["order_id"],)
                )
        kind = "full" if full else "partial"
        return {
            "order_id": order["order_id"],
            "refunded": amount,
            "summary": f"Refunded {amount:.2f} EUR on {order['order_id']} ({kind} refund).",
        }

    @tool(parse_docstring=True)
    def cancel_order(order_id: str) -> dict[str, Any]:
        """Cancel an order that is still open.

        Args:
            order_id: The order id, e.g. ORD-1050.
        """
        with store.transaction() as db:
            order = _order(db, order_id)
            if order["status"] != "open":
                raise ToolException(
                    f"order {order['order_id']} is {order['status']} and cannot be cancelled; "
                    "refund it instead"
                )
            db.execute(
                "UPDATE orders SET status = 'cancelled' WHERE order_id = ?", (order["order_id"],)
            )
        return {
            "order_id": order["order_id"],
            "status": "cancelled",
            "summary": f"Cancelled order {order['order_id']} ({order['item']}).",
        }

    tools: list[BaseTool] = [find_customer, get_order, search_orders, refund_order, cancel_order]
    for t in tools:
        # Validation failures become error ToolMessages the model reads, as in production.
        t.handle_tool_error = True
    return tools


def build(
    model: BaseChatModel, *, store: OrderStore | None = None
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """An order-support agent driven by ``model``, over its own fresh database."""
    return build_tool_agent(
        model, make_tools(store or OrderStore()), system_prompt=SYSTEM_PROMPT, name="orders"
    )
