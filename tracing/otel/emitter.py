"""SpanEmitter: LangChain callbacks -> OpenTelemetry spans per the GenAI semantic conventions.

Which runs become spans:

* a top-level chain or graph run -> ``invoke_agent {name}`` (the agent of the run);
* a chain run whose nearest emitted ancestor is a tool span (an agent used as a tool) -> another
  ``invoke_agent {name}``, nested under that ``execute_tool`` span;
* a chat model or LLM run -> ``chat {model}``;
* a tool run -> ``execute_tool {tool}``.

Every other chain run (LangGraph nodes, routing, runnable sequences) is skipped: its children
attach to its nearest emitted ancestor; a skipped run that LangGraph pauses (``GraphInterrupt``)
leaves an ``exception`` event on that ancestor, so readers know the run paused there.

Parents come from LangChain's ``run_id`` / ``parent_run_id``, never from the ambient OTel
context, so links stay right when tools run on worker threads or in separate asyncio tasks. Only
a top-level run takes the ambient context as its parent, which is how
:meth:`SpanEmitter.start_scenario` wraps a whole run in one span.

What the spans carry beyond the GenAI conventions, so that
:class:`~tracing.otel.tool_call_exporter.ToolCallSpanExporter` reads back what the recorder records
(docs/capture.md): ``gen_ai.conversation.id`` (the LangGraph thread, joining the runs of one
conversation), ``harness.agent.path`` and ``harness.langgraph.node`` on tool and chat spans,
malformed calls (``invalid_tool_calls``) as ``tool_call`` parts whose ``arguments`` is the raw
text, ``"status": "error"`` on the ``tool_call_response`` part of an error ToolMessage, a tool
paused by ``interrupt()`` as an ``exception`` event of type ``GraphInterrupt`` without an error
status, ``harness.run.origin`` on a top-level run's span (the thread or asyncio task it started
in, to join the separate runs of a hand-written tool loop as the recorder does), and a
``harness.structured_output`` event naming the calls a ``structured_response`` state answered
(``create_agent(response_format=ToolStrategy(...))``: bookkeeping, not tool calls).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import LLMResult
from langchain_core.runnables import RunnableConfig
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider
from opentelemetry.util.types import AttributeValue

from tracing.langchain.events import (
    agent_path,
    answered_call_id,
    event_name,
    execution_origin,
    graph_namespace,
    is_interrupt,
    node_of,
    reply_message,
    run_origin,
    thread_of,
    tool_call_id_of,
    tool_inputs,
    tool_outcome,
    tool_scope_prefix,
)
from tracing.langchain.final_answer import structured_call_ids
from tracing.langchain.model_calls import usage_of
from tracing.otel.conventions import (
    AGENT_PATH,
    CONVERSATION_KEYS,
    ERROR_TYPE,
    GENAI_OPERATION,
    LANGGRAPH_NODE,
    RUN_ORIGIN,
    SCENARIO_NAME,
    STRUCTURED_CALL_IDS,
    STRUCTURED_OUTPUT_EVENT,
)
from tracing.otel.genai_attributes import (
    AGENT_NAME,
    INPUT_MESSAGES,
    INPUT_TOKENS,
    OUTPUT_MESSAGES,
    OUTPUT_TOKENS,
    PROVIDER_NAME,
    REQUEST_MODEL,
    RESPONSE_FINISH_REASONS,
    RESPONSE_MODEL,
    TOOL_ARGUMENTS,
    TOOL_CALL_ID,
    TOOL_DESCRIPTION,
    TOOL_NAME,
    TOOL_RESULT,
    TOOL_TYPE,
    error_type,
    messages_json,
    model_name,
    to_json,
)

__all__ = ["SpanEmitter"]

_TOOL_MESSAGE_ERROR = "tool_error"
"""``error.type`` of a tool that returned an error ToolMessage (no exception reached us)."""

_INSTRUMENTATION = "toolcall-harness"

CONVERSATION_ID = CONVERSATION_KEYS[0]


class _Place:
    """Where a run's calls are made: the agents of its scope, and the namespace it starts at."""

    __slots__ = ("base", "prefix", "thread")

    def __init__(self, prefix: tuple[str, ...], base: tuple[str, ...], thread: str | None) -> None:
        self.prefix = prefix
        self.base = base
        self.thread = thread


class _Run:
    """An open LangChain run: its own span (None when skipped) and where its children attach."""

    __slots__ = (
        "agent",
        "anchor",
        "anchor_is_tool",
        "call_id",
        "name",
        "namespace",
        "place",
        "span",
    )

    def __init__(
        self,
        span: Span | None,
        anchor: Span | None,
        anchor_is_tool: bool,
        place: _Place,
        namespace: tuple[str, ...] = (),
        name: str = "",
        call_id: str | None = None,
    ) -> None:
        self.span = span
        self.anchor = anchor
        self.anchor_is_tool = anchor_is_tool
        self.place = place
        self.namespace = namespace
        self.agent = agent_path(place.prefix, place.base, namespace)
        self.name = name
        self.call_id = call_id

    def inner_place(self) -> _Place:
        """The place of runs started inside this run (a tool run opens a scope of its own)."""
        if not self.anchor_is_tool or self.span is None:
            return self.place
        prefix = tool_scope_prefix(self.agent, self.place.prefix, self.name)
        return _Place(prefix, self.namespace, self.place.thread)


class SpanEmitter(BaseCallbackHandler):
    """Writes ``invoke_agent`` / ``chat`` / ``execute_tool`` spans for LangChain runs."""

    run_inline = True  # on the event's own thread or task, so the ambient context is the caller's
    raise_error = False

    def __init__(
        self,
        tracer_provider: TracerProvider | None = None,
        capture_content: bool = False,
        agent_name: str | None = None,
    ) -> None:
        """Spans go to ``tracer_provider`` (default: the global one); content is opt-in."""
        super().__init__()
        self._tracer = trace.get_tracer(_INSTRUMENTATION, tracer_provider=tracer_provider)
        self.capture_content = capture_content
        self.agent_name = agent_name
        self._lock = threading.Lock()
        self._runs: dict[UUID, _Run] = {}
        self._trace_ids: dict[str, str] = {}

    @property
    def config(self) -> RunnableConfig:
        """A RunnableConfig that attaches this emitter: ``graph.invoke(x, emitter.config)``."""
        return RunnableConfig(callbacks=[self])

    # --- for the runner ----------------------------------------------------------------------

    @contextmanager
    def start_scenario(
        self, name: str, attributes: Mapping[str, AttributeValue] | None = None
    ) -> Iterator[Span]:
        """A ``scenario {name}`` span made current: top-level runs inside it nest under it."""
        attrs: dict[str, AttributeValue] = {SCENARIO_NAME: name}
        if attributes:
            attrs.update(attributes)
        with self._tracer.start_as_current_span(
            f"scenario {name}", kind=SpanKind.INTERNAL, attributes=attrs
        ) as span:
            yield span

    def root_span(self, run_id: UUID | str) -> Span | None:
        """The live ``invoke_agent`` span of an open top-level run (None once it ended)."""
        key = run_id if isinstance(run_id, UUID) else UUID(str(run_id))
        with self._lock:
            run = self._runs.get(key)
        return run.span if run is not None else None

    def trace_id(self, run_id: UUID | str) -> str | None:
        """The trace id (32 hex digits) of a top-level run this emitter saw start."""
        with self._lock:
            return self._trace_ids.get(str(run_id))

    # --- bookkeeping ---------------------------------------------------------------------------

    def _parent(self, parent_run_id: UUID | None) -> _Run | None:
        if parent_run_id is None:
            return None
        with self._lock:
            return self._runs.get(parent_run_id)

    def _open(
        self,
        run_id: UUID,
        parent: _Run | None,
        name: str,
        kind: SpanKind,
        attributes: dict[str, AttributeValue],
        run: _Run,
    ) -> Span:
        if parent is None:
            context = None  # the ambient context: a scenario span, or a fresh trace
            kind_of, number = execution_origin() if run.anchor_is_tool else run_origin()
            attributes[RUN_ORIGIN] = f"{kind_of}:{number:x}"
        else:
            context = trace.set_span_in_context(parent.anchor) if parent.anchor else None
        span = self._tracer.start_span(name, context=context, kind=kind, attributes=attributes)
        run.span = run.anchor = span
        with self._lock:
            self._runs[run_id] = run
            if parent is None:
                self._trace_ids[str(run_id)] = format(span.get_span_context().trace_id, "032x")
        return span

    def _close(self, run_id: UUID) -> Span | None:
        run = self._pop(run_id)
        return run.span if run is not None else None

    def _pop(self, run_id: UUID) -> _Run | None:
        with self._lock:
            return self._runs.pop(run_id, None)

    def _place(self, parent: _Run | None, name: str, metadata: Mapping[str, Any] | None) -> _Place:
        """Where a new run's calls are made: inside its parent, or a new top-level agent."""
        if parent is not None:
            return parent.inner_place()
        return _Place((name,) if name else (), (), thread_of(metadata))

    def _where(self, run: _Run, attributes: dict[str, AttributeValue], node: str | None) -> None:
        """The agent path, node and conversation of a tool or chat span."""
        if run.agent:
            attributes[AGENT_PATH] = run.agent
        if node:
            attributes[LANGGRAPH_NODE] = node
        if run.place.thread:
            attributes[CONVERSATION_ID] = run.place.thread

    @staticmethod
    def _fail(span: Span, error: BaseException) -> None:
        span.set_attribute(ERROR_TYPE, error_type(error))
        span.record_exception(error)
        span.set_status(Status(StatusCode.ERROR, str(error) or type(error).__name__))

    # --- chains --------------------------------------------------------------------------------

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """An agent span for a top-level run or an agent used as a tool; other chains skipped."""
        parent = self._parent(parent_run_id)
        namespace = graph_namespace(metadata)
        if parent is not None and not parent.anchor_is_tool:
            with self._lock:
                self._runs[run_id] = _Run(None, parent.anchor, False, parent.place, namespace)
            return
        name = (self.agent_name if parent is None else None) or event_name(serialized, kwargs)
        name = name or "agent"
        attributes: dict[str, AttributeValue] = {
            GENAI_OPERATION: "invoke_agent",
            AGENT_NAME: name,
        }
        place = self._place(parent, name, metadata)
        if parent is None and place.thread:
            attributes[CONVERSATION_ID] = place.thread
        run = _Run(None, None, False, place, namespace)
        self._open(run_id, parent, f"invoke_agent {name}", SpanKind.INTERNAL, attributes, run)

    def on_chain_end(
        self,
        outputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """End the agent span, if this run had one; note structured-output calls on it."""
        run = self._pop(run_id)
        if run is None:
            return
        ids = structured_call_ids(outputs)
        target = run.span or run.anchor
        if ids and target is not None:
            target.add_event(STRUCTURED_OUTPUT_EVENT, {STRUCTURED_CALL_IDS: sorted(ids)})
        if run.span is not None:
            run.span.end()

    def on_chain_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """End the run's span as failed (agent, model and tool runs alike); a pause is no failure.

        A LangGraph pause (``GraphInterrupt``) is recorded as an exception event only: on the
        run's own span, or, for a skipped run (a node), on the span its children attach to.
        """
        run = self._pop(run_id)
        if run is None:
            return
        if is_interrupt(error):
            target = run.span or run.anchor
            if target is not None:
                target.record_exception(error)
            if run.span is not None:
                run.span.end()
            return
        if run.span is not None:
            self._fail(run.span, error)
            run.span.end()

    # --- models --------------------------------------------------------------------------------

    def on_chat_model_start(
        self,
        serialized: dict[str, Any] | None,
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        invocation_params: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """A ``chat {model}`` span."""
        attributes = self._model_attributes("chat", metadata, invocation_params)
        if self.capture_content and messages:
            attributes[INPUT_MESSAGES] = messages_json(messages[0])
        self._open_model(run_id, parent_run_id, "chat", attributes, metadata)

    def on_llm_start(
        self,
        serialized: dict[str, Any] | None,
        prompts: list[str],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        invocation_params: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """A ``text_completion {model}`` span for a completion (non-chat) model."""
        attributes = self._model_attributes("text_completion", metadata, invocation_params)
        self._open_model(run_id, parent_run_id, "text_completion", attributes, metadata)

    def _open_model(
        self,
        run_id: UUID,
        parent_run_id: UUID | None,
        operation: str,
        attributes: dict[str, AttributeValue],
        metadata: Mapping[str, Any] | None,
    ) -> None:
        """Open a model span named ``{operation} {model}`` (just the operation if no model)."""
        model = attributes.get(REQUEST_MODEL)
        name = f"{operation} {model}" if model else operation
        parent = self._parent(parent_run_id)
        run = _Run(None, None, False, self._place(parent, "", metadata), graph_namespace(metadata))
        self._where(run, attributes, node_of(metadata))
        self._open(run_id, parent, name, SpanKind.CLIENT, attributes, run)

    @staticmethod
    def _model_attributes(
        operation: str, metadata: Mapping[str, Any] | None, params: Mapping[str, Any] | None
    ) -> dict[str, AttributeValue]:
        attributes: dict[str, AttributeValue] = {GENAI_OPERATION: operation}
        model = model_name(metadata, params)
        if model:
            attributes[REQUEST_MODEL] = model
        provider = metadata.get("ls_provider") if metadata else None
        if isinstance(provider, str) and provider:
            attributes[PROVIDER_NAME] = provider
        return attributes

    def on_llm_end(
        self,
        response: LLMResult,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Usage, finish reason, response model, and (opt-in) the reply with its tool calls."""
        span = self._close(run_id)
        if span is None:
            return
        reply = reply_message(response)
        # the figures the recorder keeps (tracing.langchain.model_calls), so both capture paths
        # agree
        input_tokens, output_tokens, _ = usage_of(response, reply)
        if input_tokens is not None:
            span.set_attribute(INPUT_TOKENS, input_tokens)
        if output_tokens is not None:
            span.set_attribute(OUTPUT_TOKENS, output_tokens)
        if reply is not None:
            self._describe_reply(span, reply)
        span.end()

    def _describe_reply(self, span: Span, reply: AIMessage) -> None:
        metadata = reply.response_metadata or {}
        finish = metadata.get("finish_reason")
        if isinstance(finish, str):
            span.set_attribute(RESPONSE_FINISH_REASONS, [finish])
        model = metadata.get("model_name") or metadata.get("model")
        if isinstance(model, str):
            span.set_attribute(RESPONSE_MODEL, model)
        if self.capture_content:
            finish_reason = "tool_call" if reply.tool_calls else (finish or "stop")
            span.set_attribute(OUTPUT_MESSAGES, messages_json([reply], finish=finish_reason))

    on_llm_error = on_chain_error

    # --- tools ---------------------------------------------------------------------------------

    def on_tool_start(
        self,
        serialized: dict[str, Any] | None,
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        inputs: dict[str, Any] | None = None,
        tool_call_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        """An ``execute_tool {tool}`` span with the call id and (opt-in) the arguments."""
        info = serialized or {}
        name = event_name(info, kwargs) or "tool"
        call_id = tool_call_id_of(tool_call_id, inputs)
        attributes: dict[str, AttributeValue] = {
            GENAI_OPERATION: "execute_tool",
            TOOL_NAME: name,
            TOOL_TYPE: "function",
        }
        if call_id:
            attributes[TOOL_CALL_ID] = call_id
        description = info.get("description")
        if isinstance(description, str) and description:
            attributes[TOOL_DESCRIPTION] = description
        if self.capture_content:
            given = tool_inputs(inputs)
            attributes[TOOL_ARGUMENTS] = to_json(given if given is not None else input_str)
        parent = self._parent(parent_run_id)
        place = self._place(parent, "", metadata)
        run = _Run(None, None, True, place, graph_namespace(metadata), name, call_id)
        self._where(run, attributes, node_of(metadata))
        self._open(run_id, parent, f"execute_tool {name}", SpanKind.INTERNAL, attributes, run)

    def on_tool_end(
        self,
        output: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """End the tool span; an error ToolMessage (also inside a Command) marks it failed."""
        run = self._pop(run_id)
        span = run.span if run is not None else None
        if run is None or span is None:
            return
        answered = answered_call_id(output)
        if run.call_id is None and answered:
            # The tool ran without an id (langchain-core < 1.0); its answer still names it.
            run.call_id = answered
            span.set_attribute(TOOL_CALL_ID, answered)
        content, error = tool_outcome(output, run.call_id)
        if self.capture_content:
            span.set_attribute(TOOL_RESULT, to_json(content))
        if error is not None:
            span.set_attribute(ERROR_TYPE, _TOOL_MESSAGE_ERROR)
            span.set_status(Status(StatusCode.ERROR, error))
        span.end()

    on_tool_error = on_chain_error
