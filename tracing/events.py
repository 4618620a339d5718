"""What a LangChain callback event means: pure readings shared by the recorder and the emitter.

No state and no side effects: each function takes an event's payload and says what it holds, so
:class:`~tracing.callback.ToolCallRecorder` and :class:`~tracing.spans.SpanEmitter` read events
the same way and cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.outputs import LLMResult

__all__ = ["event_name", "is_error_message", "reply_message", "tool_outcome"]


def event_name(serialized: Mapping[str, Any] | None, kwargs: Mapping[str, Any]) -> Any:
    """The run's name: the ``name`` keyword LangChain passes, else the serialized one (or None)."""
    return kwargs.get("name") or (serialized or {}).get("name")


def reply_message(response: LLMResult) -> AIMessage | None:
    """The model's reply: the first generation's message, if it is an AI message."""
    for generations in response.generations:
        for generation in generations:
            message = getattr(generation, "message", None)
            return message if isinstance(message, AIMessage) else None
    return None


def is_error_message(message: Any) -> TypeGuard[ToolMessage]:
    """Is this an error ToolMessage (a handled ToolException, failed validation, unknown tool)?"""
    return isinstance(message, ToolMessage) and message.status == "error"


def tool_outcome(output: Any) -> tuple[Any, str | None]:
    """A tool end event's result (a ToolMessage's content, else the output) and error text.

    The error text is set only for an error ToolMessage: the tool failed, yet no exception
    reached the callbacks.
    """
    if not isinstance(output, ToolMessage):
        return output, None
    content = output.content
    return content, (str(content) if output.status == "error" else None)
