"""ToolCallSpanExporter: finished OpenTelemetry spans of any of three conventions -> ToolCalls.

The conversion works on :class:`SpanView`, a small neutral view of a finished span, so the
exporter (SDK ``ReadableSpan``) and the OTLP JSON reader (``tracing.otlp_json``) share it.

Per trace, the calls come out in request order: the chat spans that carry the model's requested
calls, sorted by end time (a request is known when the model's turn ends), then by position in
the request. Each tool span is joined to its request by call id, or, where the convention puts
no id on the tool span, to the first unjoined request of the same name that was made before the
tool started. Joining recovers what a convention loses on the tool span (OpenInference: the id
and the parameter name of a single string argument), and a request no tool span joins stays a
call with status ``requested``. A tool span no request joins (a tool invoked directly, or
content capture off) comes out at its start time.
"""

from __future__ import annotations

import ast
import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import StatusCode

from tracing.conventions import (
    ERROR_TYPE,
    EXCEPTION_EVENT,
    EXCEPTION_MESSAGE,
    GENAI,
    GENAI_OUTPUT_MESSAGES,
    OPENINFERENCE,
    OPENINFERENCE_METADATA,
    TRACELOOP,
    Convention,
    SpanRole,
    classify,
)
from tracing.records import CallStatus, InvalidToolCall, ToolCall, parse_arguments

if TYPE_CHECKING:
    from opentelemetry.context import Context

    from harness.sample import ExpectationLike, Sample

SpanStatus = Literal["UNSET", "OK", "ERROR"]
RAW_ARGUMENTS_KEY = "__raw__"
"""Key under which arguments that could not be read as a JSON object are kept, as text."""


@dataclass(frozen=True, slots=True)
class SpanEvent:
    """One span event: its name and attributes."""

    name: str
    attributes: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SpanView:
    """The parts of a finished span the tool-call conversion reads; ids are lowercase hex."""

    trace_id: str
    span_id: str
    name: str
    attributes: Mapping[str, Any]
    start_ns: int = 0
    end_ns: int = 0
    parent_id: str | None = None
    status: SpanStatus = "UNSET"
    status_message: str | None = None
    events: tuple[SpanEvent, ...] = ()

    @classmethod
    def from_readable(cls, span: ReadableSpan) -> SpanView:
        """View an SDK span (as handed to exporters and processors)."""
        context = span.context
        if context is None:
            raise ValueError(f"span {span.name!r} has no span context; cannot tell its trace")
        parent = span.parent
        code = span.status.status_code
        return cls(
            trace_id=format(context.trace_id, "032x"),
            span_id=format(context.span_id, "016x"),
            name=span.name,
            attributes=dict(span.attributes or {}),
            start_ns=span.start_time or 0,
            end_ns=span.end_time or 0,
            parent_id=format(parent.span_id, "016x") if parent is not None else None,
            status="ERROR"
            if code is StatusCode.ERROR
            else "OK"
            if code is StatusCode.OK
            else "UNSET",
            status_message=span.status.description,
            events=tuple(SpanEvent(e.name, dict(e.attributes or {})) for e in span.events),
        )


# --- reading one span ----------------------------------------------------------------------


@dataclass(slots=True)
class _Request:
    """A call the model asked for on a chat span."""

    name: str
    args: dict[str, Any]
    id: str | None
    order: tuple[int, int, int]
    turn: int
    error: str | None = None
    joined: bool = False


@dataclass(slots=True)
class _Execution:
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


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _loads(text: Any) -> Any:
    """JSON-decode a string attribute; anything else (or bad JSON) comes back as None."""
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


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
    return span.name.removeprefix("execute_tool ").strip() or "<unnamed tool>"


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
    raw = span.attributes.get(convention.arguments)
    if raw is None:
        return None, None, None, None
    if convention is TRACELOOP:
        return _read_traceloop_arguments(raw)
    where = f"span {span.span_id} ({convention.arguments})"
    try:
        return parse_arguments(raw, where=where), None, None, None
    except InvalidToolCall as exc:
        text = _text(raw)
        if convention is OPENINFERENCE:
            problem = (
                "OpenInference writes a single string argument as its bare value, so the "
                "parameter name is unknown (no requested call in the trace to recover it from)"
            )
            return None, text, problem, None
        return None, text, str(exc), None


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


def _read_output(span: SpanView, convention: Convention) -> tuple[Any, str | None, bool]:
    """(result, call id from a returned ToolMessage, whether that ToolMessage is an error)."""
    raw = span.attributes.get(convention.result)
    if raw is None:
        return None, None, False
    decoded = _loads(raw)
    if convention is TRACELOOP and isinstance(decoded, Mapping):
        decoded = decoded.get("output")
    message = _tool_message(decoded)
    if message is None:
        if convention is GENAI:
            return raw, None, False
        return decoded if decoded is not None else raw, None, False
    call_id = message.get("tool_call_id")
    return (
        message.get("content"),
        call_id if isinstance(call_id, str) and call_id else None,
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


def _execution(span: SpanView, convention: Convention) -> _Execution:
    args, raw_args, problem, args_id = _read_arguments(span, convention)
    result, output_id, output_error = _read_output(span, convention)
    span_id_attr = span.attributes.get(convention.call_id) if convention.call_id else None
    call_id = span_id_attr if isinstance(span_id_attr, str) and span_id_attr else None
    failed = span.status == "ERROR" or ERROR_TYPE in span.attributes or output_error
    error: str | None = None
    if failed:
        error = (
            span.status_message
            or _exception_message(span)
            or (str(result) if output_error and result is not None else None)
            or str(span.attributes.get(ERROR_TYPE) or "error")
        )
    return _Execution(
        span=span,
        convention=convention,
        name=_tool_name(span, convention),
        args=args,
        raw_args=raw_args,
        args_problem=problem,
        id=call_id or args_id or output_id,
        status="error" if failed else "ok",
        result=result,
        error=error,
        node=_node(span, convention),
    )


def _request_from(
    fields: Mapping[str, Any], *, order: tuple[int, int, int], turn: int, where: str
) -> _Request | None:
    name = fields.get("name")
    if not isinstance(name, str) or not name:
        return None
    call_id = fields.get("id")
    call_id = call_id if isinstance(call_id, str) and call_id else None
    raw = fields.get("arguments")
    try:
        args = parse_arguments(raw, where=f"{where}: requested call {name!r}")
        problem = None
    except InvalidToolCall as exc:
        args, problem = {RAW_ARGUMENTS_KEY: _text(raw)}, str(exc)
    return _Request(name=name, args=args, id=call_id, order=order, turn=turn, error=problem)


def _requests(span: SpanView, convention: Convention, turn: int) -> list[_Request]:
    """The tool calls a chat span says the model asked for, in the model's order."""
    where = f"span {span.span_id}"
    found: list[Mapping[str, Any]] = []
    messages = _loads(span.attributes.get(GENAI_OUTPUT_MESSAGES))
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
    requests = []
    for position, fields in enumerate(found):
        request = _request_from(
            fields, order=(span.end_ns, span.start_ns, position), turn=turn, where=where
        )
        if request is not None:
            requests.append(request)
    return requests


# --- joining one trace --------------------------------------------------------------------


def _pick_request(execution: _Execution, candidates: Sequence[_Request]) -> _Request | None:
    """The request this execution ran: same id, else same name; made before it started."""
    candidates = [r for r in candidates if not r.joined and r.name == execution.name]
    if not candidates:
        return None
    if execution.id is not None:
        # When the model never asked for this id, only an id-less request can be this call.
        with_id = [r for r in candidates if r.id == execution.id]
        candidates = with_id or [r for r in candidates if r.id is None]
    if execution.args is not None and not execution.convention.lossy_arguments:
        candidates = [r for r in candidates if r.args == execution.args] or candidates
    started = execution.span.start_ns
    before = [r for r in candidates if r.order[0] <= started]
    chosen = before or candidates
    return chosen[0] if chosen else None


def _joined_call(execution: _Execution, request: _Request | None, turn: int) -> ToolCall:
    span = execution.span
    error = execution.error
    args = execution.args
    if request is not None and (args is None or execution.convention.lossy_arguments):
        args = request.args
    if args is None:
        if execution.raw_args is not None:
            args = {RAW_ARGUMENTS_KEY: execution.raw_args}
            error = f"{execution.args_problem}; {error}" if error else execution.args_problem
        else:
            args = {}
    return ToolCall(
        name=execution.name,
        args=args,
        id=execution.id or (request.id if request is not None else None),
        status=execution.status,
        result=execution.result,
        error=error,
        started_at=span.start_ns or None,
        ended_at=span.end_ns or None,
        run_id=span.span_id,
        parent_run_id=span.parent_id,
        node=execution.node,
        turn=request.turn if request is not None else turn,
        source="otel",
    )


def calls_from_spans(
    spans: Iterable[SpanView], parents: Mapping[str, str | None] | None = None
) -> list[ToolCall]:
    """Turn the finished spans of ONE trace into its tool calls, in request order.

    ``parents`` maps span id -> parent span id for spans that are not in ``spans`` (the
    graph's chain spans between a tool and the agent it runs); with it, the calls made inside a
    tool's run (an agent used as a tool) come right after that tool's call, depth first.
    """
    chats: list[tuple[SpanView, Convention]] = []
    executions: list[_Execution] = []
    for span in spans:
        kind = classify(span.attributes)
        if kind is None:
            continue
        role, convention = kind
        if role == "chat":
            chats.append((span, convention))
        else:
            executions.append(_execution(span, convention))
    return _join(chats, executions, parents or {})


_MAX_DEPTH = 10_000


def _scope_finder(
    executions: Sequence[_Execution],
    chats: Sequence[tuple[SpanView, Convention]],
    parents: Mapping[str, str | None],
) -> Callable[[SpanView], str | None]:
    """A function giving the nearest tool span above a span (its scope), or None at the top."""
    tool_ids = {e.span.span_id for e in executions}
    links: dict[str, str | None] = dict(parents)
    for execution in executions:
        links[execution.span.span_id] = execution.span.parent_id
    for span, _ in chats:
        links[span.span_id] = span.parent_id

    def scope_of(span: SpanView) -> str | None:
        """The nearest tool span above this span, or None at the top."""
        current = span.parent_id
        for _ in range(_MAX_DEPTH):
            if current is None or current in tool_ids:
                return current
            current = links.get(current)
        return None

    return scope_of


def _join(
    chats: Sequence[tuple[SpanView, Convention]],
    executions: list[_Execution],
    parents: Mapping[str, str | None],
) -> list[ToolCall]:
    scope_of = _scope_finder(executions, chats, parents)
    chats = sorted(chats, key=lambda item: (item[0].end_ns, item[0].start_ns))
    requests: dict[str | None, list[_Request]] = {}
    chat_ends: dict[str | None, list[int]] = {}
    for span, convention in chats:
        scope = scope_of(span)
        ends = chat_ends.setdefault(scope, [])
        requests.setdefault(scope, []).extend(_requests(span, convention, len(ends)))
        ends.append(span.end_ns)

    keyed: dict[str | None, list[tuple[tuple[int, int, int, int], ToolCall]]] = {}
    executions.sort(key=lambda e: (e.span.start_ns, e.span.end_ns))
    for execution in executions:
        scope = scope_of(execution.span)
        request = _pick_request(execution, requests.get(scope, ()))
        started = execution.span.start_ns
        if request is not None:
            request.joined = True
            key = (*request.order, 0)
        else:
            key = (started, started, 0, 1)
        turn = sum(1 for end in chat_ends.get(scope, ()) if end <= started)
        keyed.setdefault(scope, []).append((key, _joined_call(execution, request, turn)))
    for scope, scoped in requests.items():
        for request in scoped:
            if request.joined:
                continue
            call = ToolCall(
                name=request.name,
                args=request.args,
                id=request.id,
                status="requested",
                error=request.error,
                turn=request.turn,
                source="otel",
            )
            keyed.setdefault(scope, []).append(((*request.order, 0), call))

    out: list[ToolCall] = []
    _emit(None, keyed, out, set())
    # A scope whose tool span never arrived (cut trace) still comes out, at the end.
    for scope in list(keyed):
        _emit(scope, keyed, out, set())
    return out


def _emit(
    scope: str | None,
    keyed: dict[str | None, list[tuple[tuple[int, int, int, int], ToolCall]]],
    out: list[ToolCall],
    seen: set[str | None],
) -> None:
    """Depth first: each call, then the calls made inside its tool's run."""
    items = keyed.pop(scope, None)
    if items is None or scope in seen:
        return
    seen.add(scope)
    items.sort(key=lambda item: item[0])
    for _, call in items:
        out.append(call)
        if call.run_id is not None and call.status != "requested":
            _emit(call.run_id, keyed, out, seen)


# --- the exporter -------------------------------------------------------------------------


@dataclass(slots=True)
class _Trace:
    """What one trace needs for tool calls: its tool and chat spans, and every span's parent."""

    spans: list[SpanView] = field(default_factory=list)
    parents: dict[str, str | None] = field(default_factory=dict)
    calls: list[ToolCall] | None = None
    """Cached conversion; reset when a span arrives."""


def relevant_role(attributes: Mapping[str, Any]) -> SpanRole | None:
    """``tool`` / ``chat`` when a span with these attributes can carry tool calls, else None."""
    kind = classify(attributes)
    return None if kind is None else kind[0]


class ToolCallSpanExporter(SpanExporter, SpanProcessor):
    """Collect tool calls from finished spans, grouped by trace: an exporter and a processor.

    Use it behind ``SimpleSpanProcessor`` / ``BatchSpanProcessor``
    (``provider.add_span_processor(SimpleSpanProcessor(exporter))``) or directly as a processor
    (``provider.add_span_processor(exporter)``). Thread-safe.
    """

    def __init__(self) -> None:
        """Start empty."""
        self._lock = threading.Lock()
        self._traces: dict[str, _Trace] = {}
        self._shut_down = False

    # SpanExporter
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Keep the tool and chat spans of a batch, and the parent links of every span."""
        if self._shut_down:
            return SpanExportResult.FAILURE
        views: list[SpanView] = []
        links: list[tuple[str, str, str | None]] = []
        for span in spans:
            context = span.context
            if context is None:
                continue
            if span.attributes and relevant_role(span.attributes) is not None:
                views.append(SpanView.from_readable(span))
                continue
            parent = span.parent
            links.append(
                (
                    format(context.trace_id, "032x"),
                    format(context.span_id, "016x"),
                    format(parent.span_id, "016x") if parent is not None else None,
                )
            )
        self.add(views, links)
        return SpanExportResult.SUCCESS

    def add(
        self,
        views: Iterable[SpanView],
        links: Iterable[tuple[str, str, str | None]] = (),
    ) -> None:
        """Add span views, and (trace id, span id, parent id) links of other spans."""
        with self._lock:
            for trace_id, span_id, parent_id in links:
                trace = self._traces.get(trace_id)
                if trace is None:
                    trace = self._traces[trace_id] = _Trace()
                trace.parents[span_id] = parent_id
                trace.calls = None
            for view in views:
                trace = self._traces.get(view.trace_id)
                if trace is None:
                    trace = self._traces[view.trace_id] = _Trace()
                trace.spans.append(view)
                trace.calls = None

    # SpanProcessor
    def on_start(self, span: Any, parent_context: Context | None = None) -> None:
        """Nothing to do when a span starts."""

    def on_end(self, span: ReadableSpan) -> None:
        """Take a span as it ends (when used as a SpanProcessor)."""
        self.export((span,))

    def shutdown(self) -> None:
        """Stop accepting spans; what was collected stays readable."""
        self._shut_down = True

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing is buffered: always flushed."""
        return True

    # Reading
    def trace_ids(self) -> list[str]:
        """Trace ids (hex) in the order their first relevant span arrived."""
        with self._lock:
            return [trace_id for trace_id, trace in self._traces.items() if trace.spans]

    def calls(self, trace_id: str | None = None) -> list[ToolCall]:
        """The calls of one trace in request order (all traces, one after the other, if None)."""
        if trace_id is None:
            return [call for tid in self.trace_ids() for call in self.calls(tid)]
        with self._lock:
            trace = self._traces.get(trace_id.lower())
            if trace is None or not trace.spans:
                return []
            if trace.calls is None:
                trace.calls = calls_from_spans(trace.spans, trace.parents)
            return list(trace.calls)

    def sample(
        self,
        trace_id: str,
        *,
        expected: Iterable[ExpectationLike] | None = None,
        input: Any = None,
    ) -> Sample:
        """A Sample of one trace's calls (``tool_calls`` is None when the trace is unknown)."""
        from harness.sample import Sample  # harness depends on tracing, never the reverse

        known = trace_id.lower() in self.trace_ids()
        return Sample(
            input=input,
            tool_calls=self.calls(trace_id) if known else None,
            expected_tool_calls=expected,
            trace_id=trace_id.lower(),
        )

    def samples(self) -> dict[str, Sample]:
        """One Sample per trace, keyed by trace id, in arrival order."""
        return {trace_id: self.sample(trace_id) for trace_id in self.trace_ids()}

    def clear(self) -> None:
        """Forget every collected span."""
        with self._lock:
            self._traces.clear()
