"""What a run answered: the one final-answer rule, and the structured-output bookkeeping calls.

``harness run``, the recorder's ``last_output()`` and the ``harness.output`` attribute of a
run's root span (read back by ``harness eval-traces``) all take the final answer from here, so
an offline score sees what the live run saw (docs/architecture.md, "Data flow"):

* a ``structured_response`` in the returned state (``create_agent(response_format=...)``) is the
  answer, as plain data (a pydantic model or dataclass becomes a dict, so ``$subset`` works);
* else the content of the last message of a ``{"messages": [...]}`` state, whoever wrote it (a
  model, a finishing node, a ``return_direct`` tool);
* else an ``output`` key, else the returned value itself.

``ToolStrategy`` structured output makes the model call a tool named after the schema, which the
agent answers itself without running any tool. That call is bookkeeping, not one of the agent's
tool calls: :func:`structured_call_ids` names those calls in a returned state so they can be
left out of what is scored.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage

from tracing.otel.conventions import STRUCTURED_RESPONSE_KEY
from tracing.records import ToolCall

__all__ = [
    "STRUCTURED_RESPONSE_KEY",
    "final_answer",
    "message_text",
    "plain_structure",
    "structured_call_ids",
    "without_structured_calls",
]


def final_answer(result: Any) -> Any:
    """The run's final answer by the one rule above (structured response, last message, ...)."""
    if isinstance(result, Mapping):
        structured = result.get(STRUCTURED_RESPONSE_KEY)
        if structured is not None:
            return plain_structure(structured)
        messages = result.get("messages")
        if isinstance(messages, Sequence) and messages and not isinstance(messages, str):
            return message_text(messages[-1])
        if "output" in result:
            return result["output"]
        return result
    if hasattr(result, "content"):
        return message_text(result)
    return result


def plain_structure(value: Any) -> Any:
    """A structured response as plain data: pydantic models and dataclasses become dicts."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


def message_text(message: Any) -> Any:
    """A message's content; content blocks are reduced to their text parts."""
    content = (
        message.get("content")
        if isinstance(message, Mapping)
        else getattr(message, "content", message)
    )
    if isinstance(content, list):
        texts = [
            block if isinstance(block, str) else block.get("text", "")
            for block in content
            if isinstance(block, str) or (isinstance(block, Mapping) and "text" in block)
        ]
        return "".join(texts)
    return content


def structured_call_ids(result: Any) -> frozenset[str]:
    """Ids of the structured-output tool calls in a returned state (empty if it has none).

    A state with a ``structured_response`` key came from an agent with a ``response_format``;
    its structured-output calls are the requested calls answered by a ``ToolMessage`` that no
    tool run produced. Which calls ran is the recorder's knowledge, so this only names the
    candidates (every answered call); :func:`without_structured_calls` keeps the ones that ran.
    """
    if not isinstance(result, Mapping) or STRUCTURED_RESPONSE_KEY not in result:
        return frozenset()
    messages = result.get("messages")
    if not isinstance(messages, Iterable) or isinstance(messages, (str, bytes)):
        return frozenset()
    requested: set[str] = set()
    answered: set[str] = set()
    for message in messages:
        if isinstance(message, AIMessage):
            requested.update(call["id"] or "" for call in message.tool_calls)
        elif isinstance(message, ToolMessage) and message.status != "error":
            answered.add(message.tool_call_id)
    return frozenset(requested & answered)


def without_structured_calls(calls: Iterable[ToolCall], ids: frozenset[str]) -> list[ToolCall]:
    """The calls minus structured-output bookkeeping: answered (``ids``) but never executed."""
    if not ids:
        return list(calls)
    return [
        call
        for call in calls
        if not (call.id in ids and call.status == "requested" and call.error is None)
    ]
