"""What SpanEmitter writes: GenAI attribute names, and LangChain values encoded for them.

:mod:`tracing.otel.conventions` holds the names the tool-call conversion reads; this module adds the
names only the emitter writes (usage, models, agent, tool description) from the OTel GenAI
semantic conventions (gen-ai-spans, gen-ai-agent-spans), and the encodings of opt-in content:
compact JSON, and LangChain messages as GenAI ``{"role", "parts"}`` messages.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from tracing.otel.conventions import GENAI, GENAI_OUTPUT_MESSAGES

__all__ = [
    "AGENT_NAME",
    "INPUT_MESSAGES",
    "INPUT_TOKENS",
    "OUTPUT_MESSAGES",
    "OUTPUT_TOKENS",
    "PROVIDER_NAME",
    "REQUEST_MODEL",
    "RESPONSE_FINISH_REASONS",
    "RESPONSE_MODEL",
    "TOOL_ARGUMENTS",
    "TOOL_CALL_ID",
    "TOOL_DESCRIPTION",
    "TOOL_NAME",
    "TOOL_RESULT",
    "TOOL_TYPE",
    "error_type",
    "messages_json",
    "model_name",
    "to_json",
]

TOOL_NAME = GENAI.tool_name[0]
TOOL_CALL_ID = GENAI.call_id or "gen_ai.tool.call.id"
TOOL_ARGUMENTS = GENAI.arguments
TOOL_RESULT = GENAI.result
TOOL_TYPE = "gen_ai.tool.type"
TOOL_DESCRIPTION = "gen_ai.tool.description"
AGENT_NAME = "gen_ai.agent.name"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
PROVIDER_NAME = "gen_ai.provider.name"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = GENAI_OUTPUT_MESSAGES


def to_json(value: Any) -> str:
    """Compact JSON for opt-in content attributes; anything non-JSON becomes its str()."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def error_type(error: BaseException) -> str:
    """The exception's qualified class name (builtins without a module prefix)."""
    cls = type(error)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def model_name(metadata: Mapping[str, Any] | None, params: Mapping[str, Any] | None) -> str | None:
    """The requested model's name from LangChain's run metadata or invocation params, if any."""
    for source, key in (
        (metadata, "ls_model_name"),
        (params, "model"),
        (params, "model_name"),
    ):
        if source:
            value = source.get(key)
            if isinstance(value, str) and value:
                return value
    return None


def _message_parts(message: BaseMessage) -> list[dict[str, Any]]:
    """GenAI message parts: text, then the requested tool calls, then a tool result.

    Malformed calls (``invalid_tool_calls``) follow the valid ones as ``tool_call`` parts with
    the raw argument text, and an error tool result says ``"status": "error"``, so that span
    readers see what the recorder sees (docs/capture.md "What it records").
    """
    parts: list[dict[str, Any]] = []
    if isinstance(message, ToolMessage):
        part: dict[str, Any] = {
            "type": "tool_call_response",
            "id": message.tool_call_id,
            "response": message.content,
        }
        if message.status == "error":
            part["status"] = "error"
        return [part]
    if message.content:
        parts.append({"type": "text", "content": message.content})
    if isinstance(message, AIMessage):
        parts.extend(
            {"type": "tool_call", "id": call["id"], "name": call["name"], "arguments": call["args"]}
            for call in message.tool_calls
        )
        parts.extend(
            {
                "type": "tool_call",
                "id": call.get("id"),
                "name": call.get("name"),
                "arguments": call.get("args") or "",
            }
            for call in message.invalid_tool_calls
        )
    return parts


_ROLES = {"human": "user", "ai": "assistant", "AIMessageChunk": "assistant", "tool": "tool"}


def messages_json(messages: Sequence[BaseMessage], *, finish: str | None = None) -> str:
    """LangChain messages as the JSON of GenAI messages (``finish`` sets each finish_reason)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        entry: dict[str, Any] = {
            "role": _ROLES.get(message.type, message.type),
            "parts": _message_parts(message),
        }
        if finish is not None:
            entry["finish_reason"] = finish
        out.append(entry)
    return to_json(out)
