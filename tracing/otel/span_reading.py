"""Reading spans into calls: what one chat or tool span says, per convention.

A chat span carries the calls the model requested (:class:`RequestedCall`); a tool span carries
one executed call (:class:`ExecutedCall`). Each of the three conventions (GenAI, OpenInference,
Traceloop; see :mod:`tracing.otel.conventions`) puts names, arguments, ids and results under its own
keys and shapes, and some lose information on the tool span; reading records what is there and
why something is missing, and :mod:`tracing.otel.joining` recovers the rest from the requests.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from tracing.agent_paths import namespace_nodes
from tracing.otel.conventions import (
    AGENT_NAME,
    AGENT_PATH,
    CONVERSATION_KEYS,
    ERROR_TYPE,
    EXCEPTION_EVENT,
    EXCEPTION_MESSAGE,
    EXCEPTION_TYPE,
    GENAI,
    GENAI_OPERATION,
    GENAI_OUTPUT_MESSAGES,
    INTERRUPT_TYPES,
    OPENINFERENCE,
    OPENINFERENCE_METADATA,
    STRUCTURED_CALL_IDS,
    STRUCTURED_OUTPUT_EVENT,
    STRUCTURED_RESPONSE_KEY,
    TRACELOOP,
    Convention,
    SpanRole,
    classify,
)
from tracing.otel.producers import (
    NO_ID,
    NO_RESULT,
    UNNAMED_TOOL,
    invalid_langchain_calls,
    is_answer_tool,
    raw_marker,
    unwrap_arguments,
    unwrap_result,
)
from tracing.otel.span_view import SpanView
from tracing.records import RAW_ARGUMENTS_KEY, CallStatus, InvalidToolCall, parse_arguments

__all__ = [
    "RAW_ARGUMENTS_KEY",
    "ExecutedCall",
    "RequestedCall",
    "Where",
    "conversation_of",
    "executed_call",
    "holds_structure",
    "interrupt_time",
    "json_value",
    "keeps",
    "place_of",
    "relevant_role",
    "requested_calls",
    "root_agent_name",
    "structured_output_ids",
    "tool_responses",
]

GENAI_INPUT_MESSAGES = "gen_ai.input.messages"


def relevant_role(attributes: Mapping[str, Any]) -> SpanRole | None:
    """``tool`` / ``chat`` when a span with these attributes can carry tool calls, else None."""
    kind = classify(attributes)
    return None if kind is None else kind[0]


def _is_interrupt_type(value: Any) -> bool:
    return isinstance(value, str) and value.rsplit(".", 1)[-1] in INTERRUPT_TYPES


def keeps(
    attributes: Mapping[str, Any],
    parent_id: str | None,
    events: Iterable[tuple[str, Mapping[str, Any]]],
) -> bool:
    """Does the tool-call conversion need this span: a tool or chat span, a trace's root (the
    agent's name, when a run started), a span where LangGraph paused the run, or one naming
    structured-output calls?"""
    if parent_id is None or relevant_role(attributes) is not None:
        return True
    if _is_interrupt_type(attributes.get(ERROR_TYPE)) or holds_structure(attributes):
        return True
    return any(
        (name == EXCEPTION_EVENT and _is_interrupt_type(attrs.get(EXCEPTION_TYPE)))
        or name == STRUCTURED_OUTPUT_EVENT
        for name, attrs in events
    )


_TRACELOOP_KIND = "traceloop.span.kind"
_TRACELOOP_OUTPUT = "traceloop.entity.output"
_STATE_OUTPUTS = (OPENINFERENCE.result, _TRACELOOP_OUTPUT)
"""Where OpenInference (a graph's chain span, ``output.value``) and Traceloop (its workflow
span) write the state a graph returned."""
_STRUCTURED_KEY = f'"{STRUCTURED_RESPONSE_KEY}"'


def holds_structure(attributes: Mapping[str, Any]) -> bool:
    """Is this a Traceloop workflow span whose returned state has a ``structured_response``
    (one span a graph run, kept for it; OpenInference writes the state on the root, kept)?"""
    return attributes.get(_TRACELOOP_KIND) == "workflow" and _has_structure(
        attributes.get(_TRACELOOP_OUTPUT)
    )


def _has_structure(text: Any) -> bool:
    """Does this JSON text hold a ``structured_response`` that is not null? Read without
    decoding: ``create_agent`` writes the key, null, in every state it returns."""
    if not isinstance(text, str):
        return False
    start = text.find(_STRUCTURED_KEY)
    while start != -1:
        end = start + len(_STRUCTURED_KEY)
        if not text[end : end + 16].lstrip(" :").startswith("null"):
            return True
        start = text.find(_STRUCTURED_KEY, end)
    return False


def interrupt_time(span: SpanView) -> int | None:
    """When LangGraph paused the run in this span (its interrupt event, else its end), or None."""
    if not span.events and ERROR_TYPE not in span.attributes:
        return None  # most spans: neither an event nor an error type to look at
    for event in span.events:
        if event.name == EXCEPTION_EVENT and _is_interrupt_type(
            event.attributes.get(EXCEPTION_TYPE)
        ):
            return event.time_ns or span.end_ns
    if _is_interrupt_type(span.attributes.get(ERROR_TYPE)):
        return span.end_ns
    return None


def structured_output_ids(span: SpanView) -> set[str]:
    """The calls a ``structured_response`` state answered (tracing/langchain/final_answer.py): named
    by SpanEmitter's ``harness.structured_output`` events, or read from the state OpenInference or
    Traceloop wrote on a graph's span. Empty for any other span."""
    ids: set[str] = set()
    for event in span.events:
        if event.name == STRUCTURED_OUTPUT_EVENT:
            value = event.attributes.get(STRUCTURED_CALL_IDS)
            if isinstance(value, str):  # an array as JSON text: how Jaeger and Zipkin carry one
                value = _loads(value)
            if isinstance(value, (list, tuple)):
                ids.update(item for item in value if isinstance(item, str))
    for key in _STATE_OUTPUTS:
        text = span.attributes.get(key)
        if _has_structure(text):
            ids.update(_state_structured_ids(_loads(text)))
    return ids


def _state_structured_ids(decoded: Any) -> frozenset[str]:
    """:func:`~tracing.langchain.final_answer.structured_call_ids` of a state a tracer wrote."""
    state = decoded.get("outputs", decoded) if isinstance(decoded, Mapping) else None
    if not isinstance(state, Mapping) or state.get(STRUCTURED_RESPONSE_KEY) is None:
        return frozenset()
    # LangChain is imported only here, for a state that holds a structured answer: the span
    # path (harness eval-traces) otherwise runs without it (tests/e2e/test_startup_imports.py).
    from langchain_core.messages import messages_from_dict

    from tracing.langchain.final_answer import structured_call_ids

    messages = state.get("messages")
    serialised = [_message_dict(m) for m in messages] if isinstance(messages, list) else []
    try:
        revived = messages_from_dict([m for m in serialised if m is not None])
    except (ValueError, TypeError, KeyError):  # not messages after all: nothing to leave out
        return frozenset()
    return structured_call_ids({STRUCTURED_RESPONSE_KEY: True, "messages": revived})


def _message_dict(obj: Any) -> dict[str, Any] | None:
    """An AI or tool message as ``messages_from_dict`` reads it, from OpenInference's
    ``{"type", "data"}`` or LangChain's ``{"lc": 1, "kwargs"}`` serialisation (else None)."""
    if not isinstance(obj, Mapping):
        return None
    fields = obj.get("kwargs") if obj.get("lc") == 1 else obj.get("data")
    if not isinstance(fields, Mapping) or fields.get("type") not in ("ai", "tool"):
        return None
    return {"type": fields["type"], "data": dict(fields)}


def conversation_of(span: SpanView) -> str | None:
    """The LangGraph thread a span's run belongs to, in whichever convention wrote it."""
    for key in CONVERSATION_KEYS:
        value = span.attributes.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
            return str(value)
    metadata = _loads(span.attributes.get(OPENINFERENCE_METADATA))
    if isinstance(metadata, Mapping):
        thread = metadata.get("thread_id")
        if isinstance(thread, (str, int)) and not isinstance(thread, bool) and str(thread):
            return str(thread)
    return None


def root_agent_name(span: SpanView) -> str | None:
    """The top-level agent's name, from a trace's root span (None for a scenario span)."""
    if "harness.scenario" in span.attributes:
        return None
    for key in (AGENT_NAME, "gen_ai.workflow.name", "traceloop.entity.name"):
        value = span.attributes.get(key)
        if isinstance(value, str) and value:
            return value
    name = span.name
    operation = span.attributes.get(GENAI_OPERATION)
    if isinstance(operation, str) and name.startswith(operation + " "):
        name = name[len(operation) + 1 :]  # "invoke_workflow supervisor"
    return name.removesuffix(".workflow").strip() or None


def tool_responses(span: SpanView) -> dict[str, str]:
    """The error answers to calls in a chat span's input: call id -> text (SpanEmitter only).

    SpanEmitter marks the ``tool_call_response`` part of an error ToolMessage with
    ``"status": "error"``; the other conventions do not say which answers were errors.
    """
    messages = _loads(span.attributes.get(GENAI_INPUT_MESSAGES))
    out: dict[str, str] = {}
    for message in messages if isinstance(messages, list) else ():
        parts = message.get("parts") if isinstance(message, Mapping) else None
        for part in parts if isinstance(parts, list) else ():
            if (
                isinstance(part, Mapping)
                and part.get("type") == "tool_call_response"
                and part.get("status") == "error"
                and isinstance(part.get("id"), str)
            ):
                out[part["id"]] = _text(part.get("response"))
    return out


@dataclass(frozen=True, slots=True)
class Where:
    """Where a span's run was: its agent path if written, else its LangGraph namespace; node."""

    agent: str | None
    namespace: tuple[str, ...]
    node: str | None


def place_of(span: SpanView, convention: Convention) -> Where:
    """The agent path (SpanEmitter writes it), namespace and node of a tool or chat span."""
    agent = span.attributes.get(AGENT_PATH)
    namespace: tuple[str, ...] = ()
    if convention.namespace is not None:
        namespace = namespace_nodes(span.attributes.get(convention.namespace))
    elif convention is OPENINFERENCE:
        metadata = _loads(span.attributes.get(OPENINFERENCE_METADATA))
        if isinstance(metadata, Mapping):
            namespace = namespace_nodes(
                metadata.get("langgraph_checkpoint_ns") or metadata.get("checkpoint_ns")
            )
    agent = agent if isinstance(agent, str) and agent else None
    node = _node(span, convention)
    if agent is None and node is None and not namespace:
        return _NOWHERE  # frozen: one shared value for the spans that say nothing of it
    return Where(agent, namespace, node)


_NOWHERE = Where(None, (), None)


@dataclass(slots=True)
class RequestedCall:
    """A call the model asked for on a chat span (``invalid``: its arguments were not JSON)."""

    name: str
    args: dict[str, Any]
    id: str | None
    order: tuple[int, int, int]
    turn: int
    error: str | None = None
    invalid: bool = False
    span: SpanView | None = None
    where: Where | None = None


@dataclass(slots=True)
class ExecutedCall:
    """What a tool span says about one executed call."""

    span: SpanView
    convention: Convention
    name: str
    args: dict[str, Any] | None
    """None when the span does not carry arguments that can be trusted as named arguments."""
    raw_args: str | None
    args_problem: str | None
    id: str | None
    status: CallStatus
    result: Any
    error: str | None
    node: str | None
    where: Where | None = None
    interrupted_at: int | None = None
    """When LangGraph paused the call inside the tool (status ``interrupted``), else None."""
    answer: bool = False
    """The framework's final-answer tool (smolagents), not a call of the agent's tools."""


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


_LONG_NUMBER = re.compile(r"\d{19}")
"""19 digits in a row: maybe an integer past 64 bits, which orjson reads as a float."""
_DEEP = 500
"""Brackets from which a text may nest deep enough for the two parsers to differ."""


def json_value(text: str) -> Any:
    """``json.loads(text)``, the same value and errors, through orjson where that is certain.

    orjson (C, several times faster) decides texts without a 19-digit run (so every integer
    fits 64 bits, which it reads exactly) and with few brackets (so both nest alike); whatever
    it refuses (NaN, Infinity, 1e999, lone surrogates, bad JSON) the standard parser decides,
    giving its own value or error.
    """
    size = len(text)
    # shorter than 19 characters: no room for a 19-digit run, no need to search for one
    if (size < 19 or _LONG_NUMBER.search(text) is None) and (
        size < _DEEP or text.count("[") + text.count("{") < _DEEP
    ):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)


def _loads(text: Any) -> Any:
    """JSON-decode a string attribute; anything else (or bad JSON) comes back as None."""
    if not isinstance(text, str):
        return None
    try:
        return json_value(text)
    except ValueError:
        return None


def _arguments(raw: Any, where: Callable[[], str]) -> dict[str, Any]:
    """``parse_arguments(raw, where=where())``: a JSON object string decoded fast, the rest
    (and every error, with its message) by parse_arguments itself."""
    if type(raw) is str and raw:
        try:
            parsed = json_value(raw)
        except ValueError:
            parsed = None
        if type(parsed) is dict:
            return parsed
    return parse_arguments(raw, where=where())


def _tool_message(obj: Any) -> dict[str, Any] | None:
    """The fields of a serialised LangChain ToolMessage, in any of the shapes tracers write."""
    if not isinstance(obj, Mapping):
        return None
    if obj.get("lc") == 1 and isinstance(obj.get("kwargs"), Mapping):
        kwargs = obj["kwargs"]
        ids = obj.get("id")
        if kwargs.get("type") == "tool" or (isinstance(ids, list) and "ToolMessage" in ids):
            return dict(kwargs)
        return None
    if obj.get("type") == "tool" and isinstance(obj.get("data"), Mapping):
        return dict(obj["data"])
    if obj.get("type") == "tool" and "tool_call_id" in obj:
        return dict(obj)
    return None


def _exception_message(span: SpanView) -> str | None:
    for event in span.events:
        if event.name == EXCEPTION_EVENT:
            message = event.attributes.get(EXCEPTION_MESSAGE)
            if message:
                return str(message)
    return None


def _tool_name(span: SpanView, convention: Convention) -> str:
    for key in convention.tool_name:
        value = span.attributes.get(key)
        if isinstance(value, str) and value:
            return value
    # Every convention names the span after the tool as a last resort.
    return span.name.removeprefix("execute_tool ").strip() or UNNAMED_TOOL


def _parse_python_dict(text: str) -> dict[str, Any] | None:
    """LangChain's ``input_str`` is ``str(dict)``: read it back without evaluating code."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _read_arguments(
    span: SpanView, convention: Convention
) -> tuple[dict[str, Any] | None, str | None, str | None, str | None]:
    """(args, raw text, problem, call id found in the arguments) of a tool span."""
    key = convention.arguments
    raw = span.attributes.get(key)
    if raw is None:
        key, raw = _other_key(span.attributes, convention.more_arguments)
        if raw is None:
            return None, None, None, None
    elif convention is TRACELOOP:
        return _read_traceloop_arguments(raw)
    try:
        args = _arguments(raw, lambda: f"span {span.span_id} ({key})")
    except InvalidToolCall as exc:
        text = _text(raw)
        if convention is OPENINFERENCE:
            problem = (
                "OpenInference writes a single string argument as its bare value, so the "
                "parameter name is unknown (no requested call in the trace to recover it from)"
            )
            return None, text, problem, None
        return None, text, str(exc), None
    marked = raw_marker(args)
    if marked is not None:  # a producer's own marker of text that is not JSON
        return None, marked, f"{key}: arguments are not valid JSON", None
    if convention is OPENINFERENCE and args:  # smolagents', LlamaIndex's call signature
        unwrapped, trouble = unwrap_arguments(args, span.attributes)
        return unwrapped, None if unwrapped is not None else _text(raw), trouble, None
    return args, None, None, None


def _other_key(attributes: Mapping[str, Any], keys: tuple[str, ...]) -> tuple[str, Any]:
    """(key, value) of the first of ``keys`` present, else ("", None)."""
    for key in keys:
        value = attributes.get(key)
        if value is not None:
            return key, value
    return "", None


def _read_traceloop_arguments(
    raw: Any,
) -> tuple[dict[str, Any] | None, str | None, str | None, str | None]:
    envelope = _loads(raw) if isinstance(raw, str) else raw
    if not isinstance(envelope, Mapping):
        return None, _text(raw), f"traceloop.entity.input is not a JSON object: {raw!r:.80}", None
    kwargs = envelope.get("kwargs")
    call_id = kwargs.get("tool_call_id") if isinstance(kwargs, Mapping) else None
    call_id = call_id if isinstance(call_id, str) and call_id else None
    inputs = envelope.get("inputs")
    if isinstance(inputs, Mapping):
        return dict(inputs), None, None, call_id
    input_str = envelope.get("input_str")
    if isinstance(input_str, str):
        parsed = _loads(input_str)
        if not isinstance(parsed, dict):
            parsed = _parse_python_dict(input_str)
        if isinstance(parsed, dict):
            return parsed, None, None, call_id
        problem = f"traceloop.entity.input has no structured inputs; input_str {input_str!r:.80}"
        return None, input_str, problem, call_id
    return None, _text(raw), "traceloop.entity.input carries neither inputs nor input_str", call_id


def _command_message(decoded: Any, call_id: str | None) -> dict[str, Any] | None:
    """The ToolMessage in a serialised LangGraph ``Command(update={"messages": [...]})``."""
    if not isinstance(decoded, Mapping) or not isinstance(decoded.get("update"), Mapping):
        return None
    messages = decoded["update"].get("messages")
    found = [m for m in map(_tool_message, messages if isinstance(messages, list) else ()) if m]
    answer = next((m for m in found if call_id and m.get("tool_call_id") == call_id), None)
    return answer or (found[0] if found else None)


def _plain_result(raw: Any) -> bool:
    """A result text that cannot decode to a ToolMessage or a Command carrying one.

    Both need the string ``tool`` or ``ToolMessage`` in the JSON, so a text with neither word
    (and no escape that could spell one) holds none; a text that may nest deep enough to fail
    decoding is decoded all the same, so it fails as it always did.
    """
    return (
        type(raw) is str
        and "ool" not in raw
        and "\\" not in raw
        and (len(raw) < _DEEP or raw.count("[") + raw.count("{") < _DEEP)
    )


def _read_output(
    span: SpanView, convention: Convention, call_id: str | None
) -> tuple[Any, str | None, bool]:
    """(result, call id from a returned ToolMessage, whether that ToolMessage is an error).

    A tool may return a ToolMessage or a ``Command`` whose state update carries it; every
    convention serialises both (each in its own shape).
    """
    raw = span.attributes.get(convention.result)
    envelope = convention is TRACELOOP
    if raw is None:
        envelope = False  # the other keys hold the result itself
        raw = _other_key(span.attributes, convention.more_results)[1]
        if raw is None:
            return None, None, False
    if raw == NO_RESULT:  # Google ADK's placeholder for a tool that raised
        return None, None, False
    if convention is GENAI and _plain_result(raw):
        return raw, None, False  # what decoding would come to: no ToolMessage in it
    decoded = _loads(raw)
    if envelope and isinstance(decoded, Mapping):
        decoded = decoded.get("output")
    message = _tool_message(decoded) or _command_message(decoded, call_id)
    if message is None:
        if convention is GENAI:
            return raw, None, False
        if convention is OPENINFERENCE:
            output = unwrap_result(decoded)  # LlamaIndex's ToolOutput
            if output is not None:
                return output[0], None, output[1]
        return decoded if decoded is not None else raw, None, False
    found_id = message.get("tool_call_id")
    return (
        message.get("content"),
        found_id if isinstance(found_id, str) and found_id else None,
        message.get("status") == "error",
    )


def _node(span: SpanView, convention: Convention) -> str | None:
    if convention.node is not None:
        value = span.attributes.get(convention.node)
        return value if isinstance(value, str) else None
    if convention is OPENINFERENCE:
        metadata = _loads(span.attributes.get(OPENINFERENCE_METADATA))
        if isinstance(metadata, Mapping):
            value = metadata.get("langgraph_node")
            return value if isinstance(value, str) else None
    return None


def executed_call(span: SpanView, convention: Convention) -> ExecutedCall:
    """What a tool span of this convention says about the call it ran."""
    args, raw_args, problem, args_id = _read_arguments(span, convention)
    span_id_attr = span.attributes.get(convention.call_id) if convention.call_id else None
    call_id = span_id_attr if isinstance(span_id_attr, str) and span_id_attr else None
    if call_id == NO_ID:  # Google ADK's placeholder for a tool that raised
        call_id = None
    result, output_id, output_error = _read_output(span, convention, call_id or args_id)
    marked = ERROR_TYPE in span.attributes
    # interrupt_time's own first test, asked here: most tool spans have no event to look at
    paused = interrupt_time(span) if span.events or marked else None
    failed = paused is None and (span.status == "ERROR" or marked or output_error)
    error: str | None = None
    if failed:
        error = (
            span.status_message
            or _exception_message(span)
            or (str(result) if output_error and result is not None else None)
            or str(span.attributes.get(ERROR_TYPE) or "error")
        )
    where = place_of(span, convention)
    name = _tool_name(span, convention)
    # positional, in ExecutedCall's order: 13 keywords to a class cost a third of building it
    return ExecutedCall(
        span,
        convention,
        name,
        args,
        raw_args,
        problem,  # args_problem
        call_id or args_id or output_id,  # id
        "interrupted" if paused is not None else "error" if failed else "ok",  # status
        result,
        error,
        where.node,  # node (place_of read it: _node(span, convention))
        where,
        paused,  # interrupted_at
        convention is OPENINFERENCE and is_answer_tool(name, span.name),  # answer
    )


def _request_from(
    fields: Mapping[str, Any], *, order: tuple[int, int, int], turn: int, where: str
) -> RequestedCall | None:
    name = fields.get("name")
    if not isinstance(name, str) or not name:
        return None
    call_id = fields.get("id")
    call_id = call_id if isinstance(call_id, str) and call_id else None
    raw = fields.get("arguments")
    try:
        args = _arguments(raw, lambda: f"{where}: requested call {name!r}")
        problem = None
    except InvalidToolCall as exc:
        args, problem = {RAW_ARGUMENTS_KEY: _text(raw)}, str(exc)
    else:
        marked = raw_marker(args)
        if marked is not None:  # OpenLLMetry's {"_raw": text}: the model's text, not JSON
            args = {RAW_ARGUMENTS_KEY: marked}
            problem = f"{where}: requested call {name!r}: arguments are not valid JSON"
    return RequestedCall(
        name=name,
        args=args,
        id=call_id,
        order=order,
        turn=turn,
        error=problem,
        invalid=problem is not None,
    )


def requested_calls(
    span: SpanView, convention: Convention, turn: int, unread: dict[str, int] | None = None
) -> list[RequestedCall]:
    """The tool calls a chat span says the model asked for, in the model's order; what cannot
    be read is counted per reason in ``unread``."""
    where_text = f"span {span.span_id}"
    found: list[Mapping[str, Any]] = []
    output = span.attributes.get(GENAI_OUTPUT_MESSAGES)
    messages = _loads(output)
    if output is not None and not isinstance(messages, list) and unread is not None:
        unread[_BAD_OUTPUT] = unread.get(_BAD_OUTPUT, 0) + 1
    if isinstance(messages, list):
        for message in messages:
            parts = message.get("parts") if isinstance(message, Mapping) else None
            for part in parts if isinstance(parts, list) else ():
                if isinstance(part, Mapping) and part.get("type") == "tool_call":
                    found.append(part)
    pattern = convention.requested_pattern
    if not found and pattern is not None:
        flat: dict[tuple[int, int], dict[str, Any]] = {}
        for key, value in span.attributes.items():
            match = pattern.match(key)
            if match is not None:
                slot = flat.setdefault((int(match[1]), int(match[2])), {})
                slot[convention.requested_fields[match[3]]] = value
        found = [flat[slot] for slot in sorted(flat)]
    if convention is OPENINFERENCE:  # LangChain's calls it could not parse, after the others
        invalid = invalid_langchain_calls(span.attributes.get(OPENINFERENCE.result))
        if invalid:  # (listed already when the reply's raw calls were: additional_kwargs)
            listed = {(f.get("id"), f.get("name"), f.get("arguments")) for f in found}
            found.extend(f for f in invalid if (f["id"], f["name"], f["arguments"]) not in listed)
    requests = []
    place = place_of(span, convention)
    for position, fields in enumerate(found):
        request = _request_from(
            fields, order=(span.end_ns, span.start_ns, position), turn=turn, where=where_text
        )
        if request is not None:
            request.span = span
            request.where = place
            requests.append(request)
        elif unread is not None:
            unread[_NO_NAME] = unread.get(_NO_NAME, 0) + 1
    return requests


_BAD_OUTPUT = f"chat span whose {GENAI_OUTPUT_MESSAGES} is not a JSON list"
_NO_NAME = "requested call without a tool name"
