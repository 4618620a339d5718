"""Agent paths from LangGraph checkpoint namespaces: plain strings, shared by both capture paths.

The recorder reads them from callback metadata, the span path from span attributes; the span
path (``harness eval-traces``) imports no LangChain, so these live apart from
:mod:`tracing.langchain.events`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["agent_path", "namespace_nodes"]


def namespace_nodes(ns: Any) -> tuple[str, ...]:
    """``a:1|b:2`` -> ``("a", "b")`` (task ids dropped; anything not a string -> ``()``)."""
    if not isinstance(ns, str) or not ns:
        return ()
    return tuple(part.split(":", 1)[0] for part in ns.split("|") if part)


def agent_path(prefix: Sequence[str], base: Sequence[str], namespace: Sequence[str]) -> str | None:
    """The agent path of a run: its scope's agents, then the subgraphs below the scope's base.

    ``prefix`` names the scope's agents (the top-level graph, then each agent used as a tool
    inside it), ``base`` is the namespace the scope starts at, ``namespace`` the run's own; its
    last entry is a node, not an agent, so it is left out (docs/architecture.md "Capture").
    """
    if not namespace:  # a run outside any subgraph (a tool invoked directly): the scope's agents
        return "/".join(prefix) if prefix else None
    inner = list(namespace[len(base) :] if tuple(namespace[: len(base)]) == tuple(base) else ())
    parts = [*prefix, *inner[:-1]]
    return "/".join(parts) if parts else None
