"""Calls the joining builds when no tool span ran them as requested (tracing/otel/joining.py).

* A call whose arguments were not JSON stays ``invalid`` whatever the framework did with it:
  the OpenAI Agents SDK, Pydantic AI and LlamaIndex start a tool span for it that fails on the
  text (the tool itself never runs); its error is the span's.
* A failed tool span of a call to a tool the model was not offered (Google ADK answers an
  unknown tool through a tool span) is the framework refusing it: the call stays
  ``requested``, with that error.
* A trace with no tool span at all (a tool loop written on a raw client, instrumented by
  OpenInference's or OpenLLMetry's OpenAI instrumentation): a requested call answered by a tool
  message in a later model call's input ran, with that message as its result, ``error`` when
  it reads as one (:func:`tracing.otel.messages.is_error_answer`), ``source="messages"``. A call
  to a tool the model was not offered in that call never ran: it stays ``requested``, with the
  answer as its error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from tracing.otel.conventions import AGENT_PATH, LANGGRAPH_NODE
from tracing.otel.messages import answers, is_error_answer, offered_tools
from tracing.records import RAW_ARGUMENTS_KEY, Attempt, ToolCall

if TYPE_CHECKING:
    from tracing.otel.span_reading import ExecutedCall, RequestedCall
    from tracing.otel.span_view import SpanView

__all__ = ["answered_call", "invalid_call", "not_offered", "traced_answers"]


def traced_answers(chats: Iterable[SpanView]) -> dict[str, str] | None:
    """Call id -> the tool message the model calls of these chat spans received; None for
    SpanEmitter's spans (``harness.agent.path`` / ``harness.langgraph.node``): it writes a tool
    span for every call a tool ran, so a call without one never ran."""
    out: dict[str, str] = {}
    for span in chats:
        if AGENT_PATH in span.attributes or LANGGRAPH_NODE in span.attributes:
            return None
        out.update(answers(span))
    return out


def invalid_call(request: RequestedCall, execution: ExecutedCall, agent: str | None) -> ToolCall:
    """The malformed call ``request``, which ``execution`` tried and failed on."""
    span = execution.span
    where = request.where
    return ToolCall(
        name=request.name,
        args={RAW_ARGUMENTS_KEY: request.args.get(RAW_ARGUMENTS_KEY, "")},
        id=request.id or execution.id,
        status="invalid",
        result=execution.result,
        error=execution.error or request.error,
        started_at=span.start_ns or None,
        ended_at=span.end_ns or None,
        run_id=span.span_id,
        parent_run_id=span.parent_id,
        node=where.node if where is not None else None,
        turn=request.turn,
        source="otel",
        agent=agent,
    )


def not_offered(request: RequestedCall) -> bool:
    """Does the chat span that requested this call list the tools offered, without it?"""
    offered = offered_tools(request.span) if request.span is not None else None
    return offered is not None and request.name not in offered


def answered_call(
    request: RequestedCall, messages: Mapping[str, str], agent: str | None
) -> ToolCall | None:
    """The call ``request`` as its answer in the messages tells it (None: no answer)."""
    answer = messages.get(request.id) if request.id is not None else None
    if answer is None:
        return None
    where = request.where
    node = where.node if where is not None else None
    if not_offered(request):
        return ToolCall(
            name=request.name,
            args=request.args,
            id=request.id,
            status="requested",
            error=answer,
            node=node,
            turn=request.turn,
            source="messages",
            agent=agent,
        )
    failed = is_error_answer(answer)
    return ToolCall(
        name=request.name,
        args=request.args,
        id=request.id,
        status="error" if failed else "ok",
        result=None if failed else answer,
        error=answer if failed else None,
        node=node,
        turn=request.turn,
        source="messages",
        attempts=(Attempt("error" if failed else "ok", answer if failed else None),),
        agent=agent,
    )
