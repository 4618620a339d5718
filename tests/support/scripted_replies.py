"""Scripted model replies for the OpenAI stand-in, and its Responses API wire format.

A test that runs a framework other than LangChain (the OpenAI Agents SDK, Pydantic AI,
smolagents, LlamaIndex, Google ADK, a raw client loop) gives the stand-in the model's replies in
order: ``standin.script("case-model", [reply(calls=[call("add", a=2, b=3)]), reply("5")])``.
Requests naming that model get the replies one by one (then :data:`DONE`), whatever API they
use: Chat Completions (JSON or streamed) or the Responses API (``POST /v1/responses``, what the
OpenAI Agents SDK uses by default). A call's arguments are raw text, so a test can script a
malformed call (``call_text("add", '{"a": 1,')``).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

DONE = "done."
"""The text reply once a model's script is used up (a framework that keeps asking stops)."""


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    """One tool call the scripted model makes: the tool's name and the argument text."""

    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted model reply: text, tool calls, or both."""

    text: str = ""
    calls: tuple[ScriptedCall, ...] = field(default_factory=tuple)


def call(name: str, /, **args: Any) -> ScriptedCall:
    """A call with these arguments, as JSON."""
    return ScriptedCall(name, json.dumps(args))


def call_text(name: str, arguments: str) -> ScriptedCall:
    """A call with this exact argument text (not JSON, for a malformed call)."""
    return ScriptedCall(name, arguments)


def reply(text: str = "", calls: Sequence[ScriptedCall] = ()) -> Reply:
    """A reply of text and/or calls."""
    return Reply(text, tuple(calls))


def new_call_id() -> str:
    """A fresh tool-call id, as the real service makes one per call."""
    return f"call_{uuid.uuid4().hex[:20]}"


def chat_calls(answer: Reply) -> list[dict[str, Any]]:
    """The reply's calls as Chat Completions ``tool_calls`` entries (fresh ids)."""
    return [
        {
            "id": new_call_id(),
            "type": "function",
            "function": {"name": c.name, "arguments": c.arguments},
        }
        for c in answer.calls
    ]


def _input_tokens(body: Mapping[str, Any]) -> int:
    return len(json.dumps(body.get("input") or body.get("instructions") or "")) // 4 + 1


def responses_body(body: Mapping[str, Any], answer: Reply) -> dict[str, Any]:
    """A Responses API ``Response`` object (non-streamed) carrying ``answer``."""
    output: list[dict[str, Any]] = []
    if answer.text:
        output.append(
            {
                "type": "message",
                "id": f"msg_{uuid.uuid4().hex[:16]}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": answer.text, "annotations": []}],
            }
        )
    for scripted in answer.calls:
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{uuid.uuid4().hex[:16]}",
                "call_id": new_call_id(),
                "name": scripted.name,
                "arguments": scripted.arguments,
                "status": "completed",
            }
        )
    prompt = _input_tokens(body)
    completion = (len(answer.text) + sum(len(c.arguments) for c in answer.calls)) // 4 + 1
    return {
        "id": f"resp_{uuid.uuid4().hex[:16]}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": body.get("model"),
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": body.get("tool_choice") or "auto",
        "tools": body.get("tools") or [],
        "usage": {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + completion,
        },
    }


def responses_events(body: Mapping[str, Any], answer: Reply) -> list[dict[str, Any]]:
    """The server-sent events of a streamed Responses API reply (created, items, completed)."""
    final = responses_body(body, answer)
    started = {**final, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": started}]
    for index, item in enumerate(final["output"]):
        events.append({"type": "response.output_item.added", "output_index": index, "item": item})
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed", "response": final})
    return [{**event, "sequence_number": n} for n, event in enumerate(events)]
