"""Message content written as events, read as the attributes a chat span would carry.

Some instrumentations keep a model call's messages off its span and write them as events (OTel
log records joined to their span, tracing/otlp/logs.py; or span events):

* the GenAI ``gen_ai.client.inference.operation.details`` event (``opentelemetry-util-genai``
  with ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=EVENT_ONLY``): the very
  ``gen_ai.input.messages`` / ``gen_ai.output.messages`` / ``gen_ai.system_instructions`` /
  ``gen_ai.tool.definitions`` attributes the span would have had;
* one event per message (OpenLLMetry without its legacy attributes, the older GenAI events):
  ``gen_ai.system.message`` / ``gen_ai.user.message`` / ``gen_ai.assistant.message`` /
  ``gen_ai.tool.message`` for the input, ``gen_ai.choice`` for each output choice, the message
  in the event's body (``content``, ``tool_calls`` of ``{"id", "function": {"name",
  "arguments"}}``, a tool message's ``id``).

:func:`content_attributes` turns them into the GenAI message attributes (``{"role", "parts"}``
lists), so the span readers (tracing/otel/messages.py, span_reading.py) read a chat span the
same whichever way its content came (as JSON text, as a span carries them). A tool message
without an ``id`` (OpenLLMetry writes none) answers the earliest call of the assistant messages
before it that no message answered yet.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from tracing.otel.span_view import SpanEvent

__all__ = ["CONTENT_KEYS", "DETAILS_EVENT", "content_attributes"]

DETAILS_EVENT = "gen_ai.client.inference.operation.details"
INPUT, OUTPUT = "gen_ai.input.messages", "gen_ai.output.messages"
CONTENT_KEYS = (INPUT, OUTPUT, "gen_ai.system_instructions", "gen_ai.tool.definitions")
"""The span attributes a details event carries, and this module writes."""

_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
_CHOICE = "gen_ai.choice"
_BODY = "body"  # tracing.otlp.logs.LOG_BODY: where a log event's body is kept


def content_attributes(
    events: Iterable[SpanEvent], attributes: Mapping[str, Any]
) -> dict[str, Any]:
    """The message attributes ``events`` stand for that ``attributes`` lack (empty: none)."""
    found: dict[str, Any] = {}
    inputs: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    for event in events:
        if event.name == DETAILS_EVENT:
            for key in CONTENT_KEYS:
                if key in event.attributes and key not in attributes:
                    found.setdefault(key, _json(event.attributes[key]))
        elif event.name in _ROLES:
            inputs.append(_message(_ROLES[event.name], _body(event)))
        elif event.name == _CHOICE:
            outputs.append(_choice(_body(event)))
    if inputs and INPUT not in attributes:
        found.setdefault(INPUT, _json(_answered_in_order(inputs)))
    if outputs and OUTPUT not in attributes:
        found.setdefault(OUTPUT, _json(outputs))
    return found


def _json(value: Any) -> str:
    """``value`` as a span carries it: JSON text (a log attribute may be structured)."""
    return value if isinstance(value, str) else json.dumps(_plain(value), default=str)


def _plain(value: Any) -> Any:
    """A log attribute's value as JSON has it: an OTLP array is read as a tuple, a list here."""
    if isinstance(value, (tuple, list)):
        return [_plain(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    return value


def _body(event: SpanEvent) -> Mapping[str, Any]:
    body = _plain(event.attributes.get(_BODY))
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:
            return {"content": body}
    return body if isinstance(body, Mapping) else {}


def _message(role: str, body: Mapping[str, Any]) -> dict[str, Any]:
    given = body.get("role")
    role = given if isinstance(given, str) else role
    if role == "tool":
        response = {"type": "tool_call_response", "id": body.get("id"), "response": _text(body)}
        return {"role": "tool", "parts": [response]}
    return {"role": role, "parts": _parts(body.get("content"), body.get("tool_calls"))}


def _choice(body: Mapping[str, Any]) -> dict[str, Any]:
    message = body.get("message")
    message = message if isinstance(message, Mapping) else {}
    # the conventions put the calls in the message; OpenLLMetry beside it
    calls = message.get("tool_calls") or body.get("tool_calls")
    out: dict[str, Any] = {"role": "assistant", "parts": _parts(message.get("content"), calls)}
    if isinstance(body.get("finish_reason"), str):
        out["finish_reason"] = body["finish_reason"]
    return out


def _parts(content: Any, calls: Any) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    text = _content_text(content)
    if text:
        parts.append({"type": "text", "content": text})
    for call in calls if isinstance(calls, list) else ():
        if not isinstance(call, Mapping):
            continue
        function = call.get("function")
        function = function if isinstance(function, Mapping) else {}
        name = function.get("name") or function.get("function_name")
        part = {"type": "tool_call", "id": call.get("id"), "name": name}
        if "arguments" in function:
            part["arguments"] = function["arguments"]
        parts.append(part)
    return parts


def _text(body: Mapping[str, Any]) -> str:
    text = _content_text(body.get("content"))
    return text if text is not None else ""


def _content_text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks
        texts = [b.get("text") for b in content if isinstance(b, Mapping)]
        if texts and len(texts) == len(content):
            strings = [t for t in texts if isinstance(t, str)]
            if len(strings) == len(texts):
                return "".join(strings)
    return json.dumps(content, default=str)


def _answered_in_order(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with each id-less tool answer given the id of the call it answers."""
    waiting: list[Any] = []
    for message in messages:
        for part in message["parts"]:
            if part.get("type") == "tool_call" and part.get("id") is not None:
                waiting.append(part["id"])
            elif part.get("type") == "tool_call_response":
                if part.get("id") is None and waiting:
                    part["id"] = waiting.pop(0)
                elif part.get("id") in waiting:
                    waiting.remove(part["id"])
    return messages
