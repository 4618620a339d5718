"""SpanEmitter: LangChain callbacks -> OpenTelemetry spans per the GenAI semantic conventions.

Which runs become spans:

* a top-level chain or graph run -> ``invoke_agent {name}`` (the agent of the run);
* a chain run whose nearest emitted ancestor is a tool span (an agent used as a tool) -> another
  ``invoke_agent {name}``, nested under that ``execute_tool`` span;
* a chat model or LLM run -> ``chat {model}``;
* a tool run -> ``execute_tool {tool}``.

Every other chain run (LangGraph nodes, routing, runnable sequences) is skipped: its children
attach to its nearest emitted ancestor. Parents come from LangChain's ``run_id`` /
``parent_run_id``, never from the ambient OTel context, so links stay right when tools run on
worker threads or in separate asyncio tasks. Only a top-level run takes the ambient context as
its parent, which is how :meth:`SpanEmitter.start_scenario` wraps a whole run in one span.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import LLMResult
from langchain_core.runnables import RunnableConfig
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider
from opentelemetry.util.types import AttributeValue

from tracing.conventions import ERROR_TYPE, GENAI, GENAI_OPERATION, GENAI_OUTPUT_MESSAGES
from tracing.events import event_name, reply_message, tool_outcome

__all__ = ["SpanEmitter"]

# Names from the OTel GenAI semantic conventions (gen-ai-spans, gen-ai-agent-spans).
_TOOL_NAME = GENAI.tool_name[0]
_TOOL_CALL_ID = GENAI.call_id or "gen_ai.tool.call.id"
_TOOL_ARGUMENTS = GENAI.arguments
_TOOL_RESULT = GENAI.result
_TOOL_TYPE = "gen_ai.tool.type"
_TOOL_DESCRIPTION = "gen_ai.tool.description"
_AGENT_NAME = "gen_ai.agent.name"
_REQUEST_MODEL = "gen_ai.request.model"
_RESPONSE_MODEL = "gen_ai.response.model"
_RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
_PROVIDER_NAME = "gen_ai.provider.name"
_INPUT_TOKENS = "gen_ai.usage.input_tokens"
_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
_INPUT_MESSAGES = "gen_ai.input.messages"
_OUTPUT_MESSAGES = GENAI_OUTPUT_MESSAGES

_TOOL_MESSAGE_ERROR = "tool_error"
"""``error.type`` of a tool that returned an error ToolMessage (no exception reached us)."""

SCENARIO_NAME = "harness.scenario"
"""Attribute carrying the scenario name on the span made by ``start_scenario``."""

_INSTRUMENTATION = "toolcall-harness"


class _Run:
    """An open LangChain run: its own span (None when skipped) and where its children attach."""

    __slots__ = ("anchor", "anchor_is_tool", "span")

    def __init__(self, span: Span | None, anchor: Span | None, anchor_is_tool: bool) -> None:
        self.span = span
        self.anchor = anchor
        self.anchor_is_tool = anchor_is_tool


def _json(value: Any) -> str:
    """Compact JSON for opt-in content attributes; anything non-JSON becomes its str()."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _error_type(error: BaseException) -> str:
    """The exception's qualified class name (builtins without a module prefix)."""
    cls = type(error)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def _model_name(metadata: Mapping[str, Any] | None, params: Mapping[str, Any] | None) -> str | None:
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
    """GenAI message parts: text, then the requested tool calls, then a tool result."""
    parts: list[dict[str, Any]] = []
    if isinstance(message, ToolMessage):
        return [
            {"type": "tool_call_response", "id": message.tool_call_id, "response": message.content}
        ]
    if message.content:
        parts.append({"type": "text", "content": message.content})
    if isinstance(message, AIMessage):
        parts.extend(
            {"type": "tool_call", "id": call["id"], "name": call["name"], "arguments": call["args"]}
            for call in message.tool_calls
        )
    return parts


_ROLES = {"human": "user", "ai": "assistant", "AIMessageChunk": "assistant", "tool": "tool"}


def _messages_json(messages: Sequence[BaseMessage], *, finish: str | None = None) -> str:
    out: list[dict[str, Any]] = []
    for message in messages:
        entry: dict[str, Any] = {
            "role": _ROLES.get(message.type, message.type),
            "parts": _message_parts(message),
        }
        if finish is not None:
            entry["finish_reason"] = finish
        out.append(entry)
    return _json(out)


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
        *,
        is_tool: bool = False,
    ) -> Span:
        if parent is None:
            context = None  # the ambient context: a scenario span, or a fresh trace
        else:
            context = trace.set_span_in_context(parent.anchor) if parent.anchor else None
        span = self._tracer.start_span(name, context=context, kind=kind, attributes=attributes)
        with self._lock:
            self._runs[run_id] = _Run(span, span, is_tool)
            if parent is None:
                self._trace_ids[str(run_id)] = format(span.get_span_context().trace_id, "032x")
        return span

    def _close(self, run_id: UUID) -> Span | None:
        with self._lock:
            run = self._runs.pop(run_id, None)
        return run.span if run is not None else None

    @staticmethod
    def _fail(span: Span, error: BaseException) -> None:
        span.set_attribute(ERROR_TYPE, _error_type(error))
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
        if parent is not None and not parent.anchor_is_tool:
            with self._lock:
                self._runs[run_id] = _Run(None, parent.anchor, False)
            return
        name = (self.agent_name if parent is None else None) or event_name(serialized, kwargs)
        name = name or "agent"
        attributes: dict[str, AttributeValue] = {
            GENAI_OPERATION: "invoke_agent",
            _AGENT_NAME: name,
        }
        self._open(run_id, parent, f"invoke_agent {name}", SpanKind.INTERNAL, attributes)

    def on_chain_end(
        self,
        outputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """End the agent span, if this run had one."""
        span = self._close(run_id)
        if span is not None:
            span.end()

    def on_chain_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """End the run's span as failed, if it has one (agent, model and tool runs alike)."""
        span = self._close(run_id)
        if span is not None:
            self._fail(span, error)
            span.end()

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
            attributes[_INPUT_MESSAGES] = _messages_json(messages[0])
        self._open_model(run_id, parent_run_id, "chat", attributes)

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
        self._open_model(run_id, parent_run_id, "text_completion", attributes)

    def _open_model(
        self,
        run_id: UUID,
        parent_run_id: UUID | None,
        operation: str,
        attributes: dict[str, AttributeValue],
    ) -> None:
        """Open a model span named ``{operation} {model}`` (just the operation if no model)."""
        model = attributes.get(_REQUEST_MODEL)
        name = f"{operation} {model}" if model else operation
        self._open(run_id, self._parent(parent_run_id), name, SpanKind.CLIENT, attributes)

    @staticmethod
    def _model_attributes(
        operation: str, metadata: Mapping[str, Any] | None, params: Mapping[str, Any] | None
    ) -> dict[str, AttributeValue]:
        attributes: dict[str, AttributeValue] = {GENAI_OPERATION: operation}
        model = _model_name(metadata, params)
        if model:
            attributes[_REQUEST_MODEL] = model
        provider = metadata.get("ls_provider") if metadata else None
        if isinstance(provider, str) and provider:
            attributes[_PROVIDER_NAME] = provider
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
        if reply is not None:
            self._describe_reply(span, reply)
        span.end()

    def _describe_reply(self, span: Span, reply: AIMessage) -> None:
        usage = reply.usage_metadata
        if usage:
            span.set_attribute(_INPUT_TOKENS, usage["input_tokens"])
            span.set_attribute(_OUTPUT_TOKENS, usage["output_tokens"])
        metadata = reply.response_metadata or {}
        finish = metadata.get("finish_reason")
        if isinstance(finish, str):
            span.set_attribute(_RESPONSE_FINISH_REASONS, [finish])
        model = metadata.get("model_name") or metadata.get("model")
        if isinstance(model, str):
            span.set_attribute(_RESPONSE_MODEL, model)
        if self.capture_content:
            finish_reason = "tool_call" if reply.tool_calls else (finish or "stop")
            span.set_attribute(_OUTPUT_MESSAGES, _messages_json([reply], finish=finish_reason))

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
        attributes: dict[str, AttributeValue] = {
            GENAI_OPERATION: "execute_tool",
            _TOOL_NAME: name,
            _TOOL_TYPE: "function",
        }
        if tool_call_id:
            attributes[_TOOL_CALL_ID] = tool_call_id
        description = info.get("description")
        if isinstance(description, str) and description:
            attributes[_TOOL_DESCRIPTION] = description
        if self.capture_content:
            attributes[_TOOL_ARGUMENTS] = _json(inputs if inputs is not None else input_str)
        parent = self._parent(parent_run_id)
        self._open(
            run_id, parent, f"execute_tool {name}", SpanKind.INTERNAL, attributes, is_tool=True
        )

    def on_tool_end(
        self,
        output: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """End the tool span; an error ToolMessage marks it failed."""
        span = self._close(run_id)
        if span is None:
            return
        content, error = tool_outcome(output)
        if self.capture_content:
            span.set_attribute(_TOOL_RESULT, _json(content))
        if error is not None:
            span.set_attribute(ERROR_TYPE, _TOOL_MESSAGE_ERROR)
            span.set_status(Status(StatusCode.ERROR, error))
        span.end()

    on_tool_error = on_chain_error
