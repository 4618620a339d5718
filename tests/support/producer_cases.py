"""The cases every producer runs, and the tools that count what they really executed.

Each case is what a user tried (issue 27): one call, parallel calls, a chain (a call using the
previous call's result), a tool that raises, a tool the agent lacks, arguments that are not
JSON. The model's replies are scripted on the OpenAI stand-in (tests/support/scripted_replies.py);
the tools are plain typed functions with Google-style docstrings (what every framework here
turns into a tool), and each execution is written to :data:`LEDGER` inside the tool itself, so
a test compares the reader against what really ran, never against a list it wrote down.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.support.scripted_replies import Reply, ScriptedCall, call, call_text, reply

LEDGER: list[list[Any]] = []
"""[name, args, result, error] of every tool execution since the last :func:`reset`."""


def reset() -> None:
    """Forget the executions of the previous case."""
    LEDGER.clear()


def _ran(name: str, args: dict[str, Any], body: Callable[[], Any]) -> Any:
    try:
        result = body()
    except Exception as exc:
        LEDGER.append([name, args, None, f"{type(exc).__name__}: {exc}"])
        raise
    LEDGER.append([name, args, result, None])
    return result


ORDERS = {"alpha": "ORD-7", "beta": "ORD-9"}


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return int(_ran("add", {"a": a, "b": b}, lambda: a + b))


def lookup(key: str) -> str:
    """Find the order id filed under a key.

    Args:
        key: The key to look up.
    """
    return str(_ran("lookup", {"key": key}, lambda: ORDERS[key]))


def get_order(order_id: str) -> str:
    """Fetch an order's status.

    Args:
        order_id: The order's id, as lookup returns it.
    """
    return str(_ran("get_order", {"order_id": order_id}, lambda: f"{order_id}: shipped"))


def explode(reason: str) -> str:
    """A tool that always fails.

    Args:
        reason: Why it should fail.
    """

    def fail() -> str:
        raise RuntimeError(f"exploded: {reason}")

    return str(_ran("explode", {"reason": reason}, fail))


TOOLS: dict[str, Callable[..., Any]] = {
    "add": add,
    "lookup": lookup,
    "get_order": get_order,
    "explode": explode,
}


@dataclass(frozen=True)
class Case:
    """One case: the user's prompt and the model's scripted replies, the last one the answer."""

    name: str
    prompt: str
    replies: tuple[Reply, ...]

    @property
    def answer(self) -> str:
        """The text of the last reply: the run's final answer when the framework gets there."""
        return self.replies[-1].text

    def scripted_calls(self) -> list[ScriptedCall]:
        """Every call the model makes, in order."""
        return [c for r in self.replies for c in r.calls]


CASES: dict[str, Case] = {
    case.name: case
    for case in (
        Case("single", "Add 2 and 3.", (reply(calls=[call("add", a=2, b=3)]), reply("5"))),
        Case(
            "parallel",
            "Add 1 and 2, and look up alpha.",
            (
                reply(calls=[call("add", a=1, b=2), call("lookup", key="alpha")]),
                reply("3, and alpha is ORD-7."),
            ),
        ),
        Case(
            "chain",
            "Look up beta, then fetch that order.",
            (
                reply(calls=[call("lookup", key="beta")]),
                reply(calls=[call("get_order", order_id="ORD-9")]),
                reply("ORD-9 has shipped."),
            ),
        ),
        Case(
            "raising",
            "Make it explode.",
            (reply(calls=[call("explode", reason="asked to")]), reply("It failed.")),
        ),
        Case(
            "unknown_tool",
            "Teleport me to Mars.",
            (reply(calls=[call("teleport", to="mars")]), reply("I cannot teleport.")),
        ),
        Case(
            "malformed",
            "Add 4 and 5.",
            (reply(calls=[call_text("add", '{"a": 4, "b": ')]), reply("Sorry, I failed.")),
        ),
    )
}


def arguments_of(scripted: ScriptedCall) -> dict[str, Any] | None:
    """The scripted call's arguments, None when they are not a JSON object."""
    try:
        value = json.loads(scripted.arguments)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
