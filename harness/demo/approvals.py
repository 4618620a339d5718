"""Payments agent with a human in the loop: a risky tool pauses the graph for approval.

``send_payment`` calls LangGraph's ``interrupt()`` with what it is about to do; the graph (a
LangChain v1 ``create_agent`` on an in-memory checkpointer) pauses, and the next turn resumes it
with ``Command(resume="approve")`` or ``"reject"``. A rejected payment is a tool error the model
sees. ``get_balance`` is safe and never asks. Each ``build`` has its own accounts and its own
checkpointer, so concurrent scenarios never share money or threads.
"""

from __future__ import annotations

import threading
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool, ToolException, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import interrupt

__all__ = ["Ledger", "build", "make_tools"]

SYSTEM_PROMPT = "You are a payments assistant. Payments need a reviewer's approval."


class Ledger:
    """The accounts one agent build moves money between (thread-safe)."""

    def __init__(self, balance: float = 1000.0) -> None:
        """One account with ``balance`` EUR; ``payments`` lists what was really sent."""
        self.balance = balance
        self.payments: list[tuple[str, float]] = []
        self._lock = threading.Lock()

    def pay(self, recipient: str, amount: float) -> float:
        """Send ``amount`` to ``recipient``; the new balance."""
        with self._lock:
            if amount <= 0:
                raise ToolException(f"amount must be positive, got {amount:g}")
            if amount > self.balance:
                raise ToolException(f"insufficient funds: {self.balance:.2f} EUR available")
            self.balance -= amount
            self.payments.append((recipient, amount))
            return self.balance


def make_tools(ledger: Ledger) -> list[BaseTool]:
    """The payments tools over one ledger."""

    @tool
    def get_balance() -> str:
        """The account's balance in EUR."""
        return f"{ledger.balance:.2f} EUR"

    @tool
    def send_payment(payee_name: str, amount: float) -> str:
        """Send a payment of `amount` EUR to `payee_name` (a reviewer must approve it)."""
        decision: Any = interrupt(
            {"action": "send_payment", "payee_name": payee_name, "amount": amount}
        )
        if str(decision).strip().lower() not in ("approve", "approved", "yes"):
            raise ToolException(f"the reviewer rejected the payment to {payee_name}")
        left = ledger.pay(payee_name, amount)
        return f"sent {amount:.2f} EUR to {payee_name}; balance {left:.2f} EUR"

    for risky in (get_balance, send_payment):
        risky.handle_tool_error = True  # a rejection is an error message the model reads
    return [get_balance, send_payment]


def build(model: BaseChatModel, ledger: Ledger | None = None) -> Any:
    """A ``create_agent`` payments agent on its own in-memory checkpointer."""
    return create_agent(
        model,
        make_tools(ledger or Ledger()),
        system_prompt=SYSTEM_PROMPT,
        checkpointer=InMemorySaver(),
        name="payments",
    )
