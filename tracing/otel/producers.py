"""What frameworks write inside the span conventions, read back as a tool's own arguments.

Checked against the frameworks and instrumentations of the ``dev`` group (each kept exact by
tests/tracing/otel/test_producers.py):

* OpenInference on smolagents writes a tool span's ``input.value`` as the call's Python
  signature, ``{"args": [...], "sanitize_inputs_outputs": true, "kwargs": {...}}``; on LlamaIndex
  as ``{"kwargs": {...}}`` (``"args"`` when called positionally). The tool's arguments are the
  ``kwargs``, plus the positional ``args`` named by the span's ``tool.parameters`` (smolagents:
  ``{name: schema}``; LlamaIndex: a JSON schema with ``properties``), in order.
* LlamaIndex's ``output.value`` is its ``ToolOutput``: ``{"blocks", "tool_name", "raw_input",
  "raw_output", "is_error"}``; the result is ``raw_output``, an error when ``is_error``.
* Arguments the model wrote that are not JSON: OpenLLMetry (OpenAI Agents SDK) writes them in
  its output messages as ``{"_raw": text}``, Pydantic AI on its tool span as
  ``{"INVALID_JSON": text}``; both are the raw text of an ``invalid`` call.
* smolagents ends every run with its ``final_answer`` tool (span ``FinalAnswerTool``): the
  run's answer, not a call of the agent's tools, so it is left out of the calls (as LangChain's
  structured-output bookkeeping is: tracing/langchain/final_answer.py) and its result is the answer.
* Google ADK writes ``<not specified>`` as the call id (and ``{"result": "<not specified>"}`` as
  the result) of a tool that raised, and an ``execute_tool`` span named ``(merged tools)`` over
  parallel calls, each of which has its own span: the placeholders are no id and no result, and
  the merged span is no call.
* OpenInference on LangChain writes a chat model's valid tool calls as
  ``llm.output_messages.*.tool_calls``, and leaves out the ones whose arguments were not JSON
  (LangChain's ``AIMessage.invalid_tool_calls``); those are only in ``output.value``, the JSON of
  the ``LLMResult``, each generation's ``message.kwargs.invalid_tool_calls``: ``{"name", "args"
  (the raw text), "id", "error"}``.
* The agent a span ran in: ``gen_ai.agent.name`` (GenAI: Pydantic AI, Google ADK, OpenLLMetry),
  ``agent.name`` (OpenInference on the OpenAI Agents SDK).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "AGENT_KEYS",
    "ANSWER_TOOL_SPAN",
    "MERGED_TOOLS",
    "NO_ID",
    "NO_RESULT",
    "UNNAMED_TOOL",
    "UNNAMED_TOOL_REASON",
    "agent_name_of",
    "invalid_langchain_calls",
    "is_answer_tool",
    "raw_marker",
    "unwrap_arguments",
    "unwrap_result",
]

UNNAMED_TOOL = "<unnamed tool>"
"""The name of a call whose tool span names no tool (counted as unread: UNNAMED_TOOL_REASON)."""
UNNAMED_TOOL_REASON = "tool span without a tool name"

MERGED_TOOLS = "(merged tools)"
"""Google ADK's tool name of the span over parallel calls (no call of its own)."""
NO_ID = "<not specified>"
"""Google ADK's call id of a tool that raised (read as no id)."""
NO_RESULT = '{"result": "<not specified>"}'
"""Google ADK's result of a tool that raised (read as no result)."""

AGENT_KEYS = ("gen_ai.agent.name", "agent.name")
"""Attributes naming the agent whose run a span is (GenAI, OpenInference)."""

ANSWER_TOOL_SPAN = "FinalAnswerTool"
"""The span name of smolagents' final-answer tool (``tool.name`` ``final_answer``)."""

_INVALID_CALLS = re.compile(r'"invalid_tool_calls":\s*\[\s*\{')
"""A LangChain ``LLMResult`` whose messages hold a call the model wrote wrong (most spans hold
``"invalid_tool_calls": []``, and are not decoded for it)."""

_ENVELOPE_KEYS = frozenset(("args", "kwargs", "sanitize_inputs_outputs"))
_RAW_KEYS = ("_raw", "INVALID_JSON")
_TOOL_PARAMETERS = "tool.parameters"


def agent_name_of(attributes: Mapping[str, Any]) -> str | None:
    """The agent a span names (None for most spans)."""
    for key in AGENT_KEYS:
        value = attributes.get(key)
        if type(value) is str and value:
            return value
    return None


def is_answer_tool(name: str, span_name: str) -> bool:
    """Is this smolagents' final-answer tool (the run's answer, not one of its calls)?"""
    return name == "final_answer" and span_name == ANSWER_TOOL_SPAN


def raw_marker(args: Mapping[str, Any]) -> str | None:
    """The raw text of arguments a producer marked as not JSON (``{"_raw": text}``), else None."""
    if len(args) != 1:
        return None
    for key in _RAW_KEYS:
        value = args.get(key)
        if isinstance(value, str):
            return value
    return None


def unwrap_arguments(
    args: dict[str, Any], attributes: Mapping[str, Any]
) -> tuple[dict[str, Any] | None, str | None]:
    """(the tool's arguments, a problem) of an OpenInference tool span's decoded input: the
    call signature smolagents and LlamaIndex write unwrapped, anything else as it is."""
    if not args or not args.keys() <= _ENVELOPE_KEYS:
        return args, None
    kwargs = args.get("kwargs")
    positional = args.get("args", [])
    if not isinstance(kwargs, dict) or not isinstance(positional, list):
        return args, None
    names = _parameter_names(attributes.get(_TOOL_PARAMETERS))
    if names is not None and names & _ENVELOPE_KEYS:
        return args, None  # the tool's own parameters are called args / kwargs: no envelope
    if not positional:
        return dict(kwargs), None
    ordered = _ordered_names(attributes.get(_TOOL_PARAMETERS))
    if ordered is None or len(ordered) < len(positional):
        return None, "positional arguments without the tool's parameter names (tool.parameters)"
    out = dict(zip(ordered, positional, strict=False))
    out.update(kwargs)
    return out, None


def _schema(raw: Any) -> Mapping[str, Any] | None:
    if not isinstance(raw, str):
        return None
    try:
        decoded = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(decoded, Mapping):
        return None
    properties = decoded.get("properties")
    # LlamaIndex: a JSON schema; smolagents: {name: {"type", "description"}}
    return properties if isinstance(properties, Mapping) else decoded


def _parameter_names(raw: Any) -> set[str] | None:
    schema = _schema(raw)
    return None if schema is None else set(schema)


def _ordered_names(raw: Any) -> list[str] | None:
    schema = _schema(raw)
    return None if schema is None else list(schema)


def unwrap_result(decoded: Any) -> tuple[Any, bool] | None:
    """(result, whether it is an error) of LlamaIndex's serialised ``ToolOutput``, else None."""
    if (
        type(decoded) is dict
        and "raw_output" in decoded
        and "tool_name" in decoded
        and "is_error" in decoded
    ):
        return decoded["raw_output"], decoded["is_error"] is True
    return None


def invalid_langchain_calls(output: Any) -> list[dict[str, Any]]:
    """The calls with arguments that were not JSON in an OpenInference LangChain chat span's
    ``output.value`` (``{"name", "id", "arguments"}`` each, in the generations' order)."""
    if not isinstance(output, str) or _INVALID_CALLS.search(output) is None:
        return []
    try:
        decoded = json.loads(output)
    except ValueError:
        return []
    generations = decoded.get("generations") if isinstance(decoded, dict) else None
    found = []
    for batch in generations if isinstance(generations, list) else ():
        for generation in batch if isinstance(batch, list) else ():
            message = generation.get("message") if isinstance(generation, dict) else None
            kwargs = message.get("kwargs") if isinstance(message, dict) else None
            calls = kwargs.get("invalid_tool_calls") if isinstance(kwargs, dict) else None
            for call in calls if isinstance(calls, list) else ():
                if isinstance(call, dict):
                    found.append(
                        {
                            "name": call.get("name"),
                            "id": call.get("id"),
                            "arguments": call.get("args"),
                        }
                    )
    return found
