"""What a chat span says beyond the calls it requested: its input messages, usage and answer.

Per convention (tracing/otel/conventions.py), a chat span's input messages are:

* GenAI (and OpenLLMetry 0.4x+, Pydantic AI, Google ADK): ``gen_ai.input.messages``, a JSON
  list of ``{"role", "parts"}``; a tool's answer is a ``tool_call_response`` part
  (``{"id", "response"}``; Pydantic AI: ``"result"``), user text a ``text`` part of a
  ``user`` message;
* OpenInference: flattened ``llm.input_messages.N.message.role`` / ``.content`` /
  ``.tool_call_id`` (and ``.contents.M.message_content.text`` for content blocks);
* older OpenLLMetry: flattened ``gen_ai.prompt.N.role`` / ``.content`` / ``.tool_call_id``.

Tools offered to the model: GenAI ``gen_ai.tool.definitions``, OpenInference
``llm.tools.N.tool.json_schema``, OpenLLMetry ``llm.request.functions.N.name``. Usage:
``gen_ai.usage.input_tokens`` / ``output_tokens`` (older OpenLLMetry ``prompt_tokens`` /
``completion_tokens``), OpenInference ``llm.token_count.prompt`` / ``completion`` / ``total``.

A tool message reads as an error when its text starts with ``Error`` (LangGraph's ToolNode and
most hand-written loops), with the OpenAI Agents SDK's ``An error occurred while running the
tool``, or is a JSON object with a non-null ``error`` key: the wire format itself carries no
status (docs/capture.md, "Calls from messages").
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from tracing.otel.conventions import GENAI_OUTPUT_MESSAGES, OPENINFERENCE, Convention
from tracing.otel.span_view import SpanView
from tracing.records import ModelCall, content_text

__all__ = [
    "answers",
    "called_model",
    "final_text",
    "is_error_answer",
    "model_call",
    "offered_tools",
    "user_texts",
]

GENAI_INPUT_MESSAGES = "gen_ai.input.messages"
_FLAT_INPUT = re.compile(
    r"^(?:llm\.input_messages\.(\d+)\.message|gen_ai\.prompt\.(\d+))\."
    r"(role|content|tool_call_id|contents\.\d+\.message_content\.text)$"
)
_OFFERED = re.compile(r"^llm\.request\.functions\.\d+\.name$")
_OPENINFERENCE_TOOLS = re.compile(r"^llm\.tools\.\d+\.tool\.json_schema$")
_ERROR_TEXT = re.compile(r"^\s*(?:error\b|an error occurred)", re.IGNORECASE)

_USAGE_KEYS = (
    ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.usage.total_tokens"),
    ("gen_ai.usage.prompt_tokens", "gen_ai.usage.completion_tokens", "llm.usage.total_tokens"),
    ("llm.token_count.prompt", "llm.token_count.completion", "llm.token_count.total"),
)
_MODEL_KEYS = ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name")


def _loads(text: Any) -> Any:
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _text(value: Any) -> str:
    value = content_text(value)
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _flat_messages(attributes: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Flattened input messages (OpenInference, older OpenLLMetry), in their order."""
    slots: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not (key.startswith("llm.input_messages.") or key.startswith("gen_ai.prompt.")):
            continue
        match = _FLAT_INPUT.match(key)
        if match is None:
            continue
        index = int(match[1] if match[1] is not None else match[2])
        field = match[3]
        slot = slots.setdefault(index, {})
        if field.startswith("contents."):
            slot["content"] = str(slot.get("content") or "") + str(value)
        else:
            slot[field] = value
    return [slots[index] for index in sorted(slots)]


def _genai_messages(attributes: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    messages = _loads(attributes.get(key))
    if not isinstance(messages, list):
        return []
    return [m for m in messages if isinstance(m, Mapping)]


def _parts(message: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    parts = message.get("parts")
    for part in parts if isinstance(parts, list) else ():
        if isinstance(part, Mapping):
            yield part


def answers(span: SpanView) -> dict[str, str]:
    """The tool messages a chat span's model call received: call id -> text."""
    out: dict[str, str] = {}
    attributes = span.attributes
    for message in _genai_messages(attributes, GENAI_INPUT_MESSAGES):
        for part in _parts(message):
            call_id = part.get("id")
            if part.get("type") == "tool_call_response" and isinstance(call_id, str):
                # the semantic conventions say "response"; Pydantic AI writes "result"
                out[call_id] = _text(part.get("response", part.get("result")))
    for message in _flat_messages(attributes):
        call_id = message.get("tool_call_id")
        if message.get("role") == "tool" and isinstance(call_id, str) and call_id:
            out[call_id] = _text(message.get("content", ""))
    return out


def user_texts(span: SpanView) -> list[str]:
    """The user messages a chat span's model call received, as text, in order."""
    out: list[str] = []
    attributes = span.attributes
    for message in _genai_messages(attributes, GENAI_INPUT_MESSAGES):
        if message.get("role") not in ("user", "human"):
            continue
        texts = [p.get("content") for p in _parts(message) if p.get("type") == "text"]
        if texts:
            out.append("".join(str(text) for text in texts))
    for message in _flat_messages(attributes):
        if message.get("role") in ("user", "human") and message.get("content") is not None:
            out.append(_text(message["content"]))
    return out


def offered_tools(span: SpanView) -> frozenset[str] | None:
    """The names of the tools the model was offered in this call (None: not recorded)."""
    attributes = span.attributes
    names: set[str] = set()
    found = False  # the span records the offered tools at all
    definitions = _loads(attributes.get("gen_ai.tool.definitions"))
    if isinstance(definitions, list):
        found = True
        names.update(_definition_name(d) for d in definitions)
    for key, value in attributes.items():
        if key.startswith("llm.tools.") and _OPENINFERENCE_TOOLS.match(key):
            found = True
            names.add(_definition_name(_loads(value)))
        elif key.startswith("llm.request.functions.") and _OFFERED.match(key):
            found = True
            names.add(str(value))
    names.discard("")
    # definitions in a shape not read here say nothing: never "not offered" for want of names
    return frozenset(names) if found and names else None


def _definition_name(definition: Any) -> str:
    if not isinstance(definition, Mapping):
        return ""
    function = definition.get("function")
    holder = function if isinstance(function, Mapping) else definition
    name = holder.get("name")
    return name if isinstance(name, str) else ""


def is_error_answer(text: str) -> bool:
    """Does a tool message's text say the call failed (module docstring)?"""
    if _ERROR_TEXT.match(text):
        return True
    if text.startswith("{") and '"error"' in text:
        decoded = _loads(text)
        return isinstance(decoded, Mapping) and decoded.get("error") is not None
    return False


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.isascii() and value.isdigit():  # '¹'.isdigit() too
        return int(value)
    return None


def called_model(span: SpanView, convention: Convention) -> bool:
    """Did this chat span call the model? OpenInference marks LlamaIndex's preparation of a
    call (``_prepare_chat_with_tools``) as an LLM span too: one with no output, usage or finish
    reason, that did not fail, called nothing."""
    if convention is not OPENINFERENCE or span.status == "ERROR":
        return True
    return any(
        key.startswith(("llm.output_messages.", "llm.token_count.", "llm.finish_reason"))
        for key in span.attributes
    )


def model_call(span: SpanView, turn: int = 0) -> ModelCall:
    """One model call: its usage as the span reports it, its times and model."""
    attributes = span.attributes
    figures: tuple[int | None, int | None, int | None] = (None, None, None)
    for keys in _USAGE_KEYS:
        found = tuple(_int(attributes.get(key)) for key in keys)
        if any(value is not None for value in found):
            figures = (found[0], found[1], found[2])
            break
    given, taken, total = figures
    if total is None and given is not None and taken is not None:
        total = given + taken
    model = next((v for k in _MODEL_KEYS if isinstance(v := attributes.get(k), str) and v), None)
    return ModelCall(given, taken, total, span.start_ns or None, span.end_ns or None, model, turn)


def final_text(span: SpanView, convention: Convention) -> str | None:
    """The text a chat span's model answered with, when it requested no tool (else None)."""
    attributes = span.attributes
    messages = _genai_messages(attributes, GENAI_OUTPUT_MESSAGES)
    if messages:
        parts = list(_parts(messages[-1]))
        if any(part.get("type") == "tool_call" for part in parts):
            return None
        texts = [str(p.get("content", "")) for p in parts if p.get("type") == "text"]
        return "".join(texts) if texts else None
    if convention is not OPENINFERENCE:
        return None
    prefix = "llm.output_messages.0.message."
    if any(key.startswith(prefix + "tool_calls.") for key in attributes):
        return None
    content = attributes.get(prefix + "content")
    return content if isinstance(content, str) and content else None
