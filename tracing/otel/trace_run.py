"""TraceRun: one read trace as the rules see a run (docs/metrics.md "Rules"; issue 27).

:func:`trace_run` turns a trace the OTLP reader handed out (:class:`~tracing.otlp.reader.
OtlpTrace`), and :func:`read_run` any trace's :class:`~tracing.otel.span_view.SpanView` s (the SDK
exporter's, an in-app span processor's), into the same record:

* ``calls``: the tool calls in request order (tracing/otel/joining.py); each call's result is its
  tool span's output or, without tool spans, the tool message the next model call received;
* ``user_inputs``: the user messages the model calls received (each text once, in order);
  None when no chat span recorded its input messages (content not captured);
* ``model_calls``: one :class:`~tracing.records.ModelCall` per chat span, with its usage and
  times, in start order; None when the trace has no chat span;
* ``output``: the final answer: the root's ``harness.output`` (what ``harness run`` scored),
  else smolagents' final-answer tool, else the last model reply that requested no tool, else an
  agent span's ``gen_ai.output.messages`` (Google ADK's ``invoke_agent``); worked out when
  first asked for (no rule or selector reads it);
* ``duration`` (the root span's, in seconds), ``service`` (resource ``service.name``),
  ``agent`` (the outermost span naming an agent, else the root's agent name), ``root_name``,
  ``root_attributes``, ``resource``; ``not_captured`` (indices of calls recorded without their
  arguments); ``unread`` (parts of spans the reader could not interpret, per reason);
* ``conversation`` (``gen_ai.conversation.id``, ``session.id``, ...), read from the kept
  ``spans`` only when asked for.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tracing.otel.conventions import (
    GENAI,
    GENAI_OUTPUT_MESSAGES,
    CallSpanKind,
    Convention,
    classify,
)
from tracing.otel.joining import read_calls
from tracing.otel.messages import answers, called_model, final_text, model_call, user_texts
from tracing.otel.producers import agent_name_of, is_answer_tool
from tracing.otel.span_reading import conversation_of, root_agent_name
from tracing.otel.span_view import SpanView
from tracing.records import ModelCall, ToolCall

if TYPE_CHECKING:
    from tracing.otlp.reader import OtlpTrace

__all__ = [
    "AgentMark",
    "TraceRun",
    "chat_spans",
    "model_calls_of",
    "read_run",
    "trace_run",
]

OUTPUT_ATTRIBUTE = "harness.output"
"""The root-span attribute ``harness run`` writes its answer to (harness.run.output_attribute)."""
SERVICE_NAME = "service.name"

AgentMark = tuple[int, str]
"""(start time in ns, agent name) of a span naming an agent, kept by the readers."""

_EMPTY: Mapping[str, Any] = {}


@dataclass(frozen=True, slots=True)
class TraceRun:
    """One trace as a run: what rules and policy selection look at (module docstring)."""

    trace_id: str
    calls: tuple[ToolCall, ...]
    user_inputs: tuple[str, ...] | None = None
    model_calls: tuple[ModelCall, ...] | None = None
    duration: float | None = None
    started_at: int | None = None
    ended_at: int | None = None
    service: str | None = None
    agent: str | None = None
    root_name: str | None = None
    root_attributes: Mapping[str, Any] = field(default_factory=dict)
    resource: Mapping[str, Any] = field(default_factory=dict)
    not_captured: frozenset[int] = frozenset()
    unread: Mapping[str, int] = field(default_factory=dict)
    spans: Sequence[SpanView] = field(default=(), repr=False, compare=False)
    """The spans it was read from (root included), for what is read on demand."""
    root: SpanView | None = field(default=None, repr=False, compare=False)
    """Its root span (the last of ``spans``), None when it was read without its root."""
    kinds: Sequence[CallSpanKind | None] | None = field(default=None, repr=False, compare=False)
    """:func:`~tracing.otel.conventions.classify` of each of ``spans`` (None: not known)."""
    chats: Sequence[tuple[SpanView, Convention]] | None = field(
        default=None, repr=False, compare=False
    )
    """Its chat spans (:func:`chat_spans`), None: not worked out."""
    _answer: tuple[Any, bool] | None = field(default=None, init=False, repr=False, compare=False)
    _tool_names: frozenset[str] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def output(self) -> Any:
        """The final answer (module docstring), read on demand: no rule and no selector looks
        at it, and looking for it cost a tenth of reading a run (:func:`read_run`)."""
        return self._read_answer()[0]

    @property
    def output_captured(self) -> bool:
        """Whether the trace carries a final answer (read on demand, as :attr:`output`)."""
        return self._read_answer()[1]

    def _read_answer(self) -> tuple[Any, bool]:
        answer = self._answer
        if answer is None:
            kinds = self._kinds()
            chats = self.chats if self.chats is not None else chat_spans(self.spans, kinds)
            answer = _output(self.root, self.spans, kinds, chats)
            object.__setattr__(self, "_answer", answer)
        return answer

    def _kinds(self) -> Sequence[CallSpanKind | None]:
        if self.kinds is not None:
            return self.kinds
        return [classify(span.attributes) for span in self.spans]

    @property
    def tool_names(self) -> frozenset[str]:
        """The names of the tools its calls named (worked out once)."""
        names = self._tool_names
        if names is None:
            names = frozenset(call.name for call in self.calls)
            object.__setattr__(self, "_tool_names", names)
        return names

    @property
    def conversation(self) -> str | None:
        """The conversation (thread, session) a span of it names, read on demand: no rule or
        selector looks at it, and looking through every span of every trace cost a tenth of
        reading a run."""
        return next(filter(None, map(conversation_of, self.spans)), None)

    def earlier_results(self) -> tuple[str, ...]:
        """The tool results of earlier requests of its conversation, as its first model call
        received them: the history the app sent (tool messages answering calls of no span of
        this trace). Read on demand: only ``grounded`` asks."""
        chats = self.chats if self.chats is not None else chat_spans(self.spans, self._kinds())
        if not chats:
            return ()
        own = {call.id for call in self.calls if call.id}
        return tuple(text for call_id, text in answers(chats[0][0]).items() if call_id not in own)


def trace_run(trace: OtlpTrace) -> TraceRun:
    """The run of a trace the OTLP JSON reader handed out."""
    return read_run(
        trace.trace_id,
        trace.spans,
        trace.parents,
        trace.root,
        kinds=trace.span_kinds,
        resource=trace.resource,
        agents=trace.agents,
    )


def read_run(
    trace_id: str,
    spans: Sequence[SpanView],
    parents: Mapping[str, str | None],
    root: SpanView | None,
    *,
    kinds: Sequence[CallSpanKind | None] | None = None,
    resource: Mapping[str, Any] | None = None,
    agents: Iterable[AgentMark] = (),
    calls: Sequence[ToolCall] | None = None,
) -> TraceRun:
    """The run of one trace: ``spans`` its tool, chat and other kept spans (not its root),
    ``parents`` the parent links of the rest; ``calls`` when already joined (a conversation's,
    by :class:`~tracing.otel.tool_call_exporter.ToolCallSpanExporter`)."""
    if kinds is None:
        kinds = [classify(span.attributes) for span in spans]
    every = list(spans)
    every_kinds = list(kinds)
    if root is not None:
        every.append(root)
        every_kinds.append(classify(root.attributes))
    read, unread = read_calls(every, every_kinds, parents)
    found = tuple(read if calls is None else calls)
    chats = chat_spans(every, every_kinds)
    resource = resource or _EMPTY
    service = resource.get(SERVICE_NAME)
    return TraceRun(
        trace_id=trace_id,
        calls=found,
        user_inputs=_user_inputs(chats),
        model_calls=model_calls_of(chats),
        duration=(root.end_ns - root.start_ns) / 1e9
        if root is not None and root.end_ns and root.start_ns
        else None,
        started_at=(root.start_ns or None) if root is not None else None,
        ended_at=(root.end_ns or None) if root is not None else None,
        service=service if isinstance(service, str) else None,
        agent=_agent(agents, every, root),
        root_name=root.name if root is not None else None,
        root_attributes=root.attributes if root is not None else _EMPTY,
        resource=resource,
        spans=every,
        root=root,
        kinds=every_kinds,
        chats=chats,
        not_captured=_not_captured(found, every, every_kinds),
        unread=unread,
    )


def chat_spans(
    spans: Sequence[SpanView], kinds: Sequence[CallSpanKind | None]
) -> list[tuple[SpanView, Convention]]:
    """The spans that called a model (``kinds[i]`` is ``classify`` of ``spans[i]``), with
    their convention, in start order."""
    return sorted(
        (
            (span, kind[1])
            for span, kind in zip(spans, kinds, strict=True)
            if kind is not None and kind[0] == "chat" and called_model(span, kind[1])
        ),
        key=lambda item: (item[0].start_ns, item[0].end_ns),
    )


def model_calls_of(chats: Sequence[tuple[SpanView, Any]]) -> tuple[ModelCall, ...] | None:
    """One :class:`~tracing.records.ModelCall` per chat span of :func:`chat_spans`, its turn
    its place; None when there is none (the model turns were not recorded)."""
    if not chats:
        return None
    return tuple(model_call(span, turn) for turn, (span, _) in enumerate(chats))


def _user_inputs(chats: Sequence[tuple[SpanView, Any]]) -> tuple[str, ...] | None:
    seen: dict[str, None] = {}
    for span, _ in chats:
        for text in user_texts(span):
            seen.setdefault(text, None)
    if not seen and not any(_has_input(span) for span, _ in chats):
        return None
    return tuple(seen)


def _has_input(span: SpanView) -> bool:
    return "gen_ai.input.messages" in span.attributes or any(
        key.startswith(("llm.input_messages.", "gen_ai.prompt.")) for key in span.attributes
    )


def _output(
    root: SpanView | None,
    spans: Sequence[SpanView],
    kinds: Sequence[CallSpanKind | None],
    chats: Sequence[tuple[SpanView, Any]],
) -> tuple[Any, bool]:
    """(the final answer, whether the trace carries one): see the module docstring."""
    if root is not None and isinstance(raw := root.attributes.get(OUTPUT_ATTRIBUTE), str):
        try:
            return json.loads(raw), True
        except ValueError:
            return raw, True
    for span, kind in zip(spans, kinds, strict=True):
        if kind is not None and kind[0] == "tool":
            name = span.attributes.get("tool.name")
            if isinstance(name, str) and is_answer_tool(name, span.name):
                return span.attributes.get("output.value"), True
    for span, convention in reversed(chats):
        text = final_text(span, convention)
        if text is not None:
            return text, True
        if GENAI_OUTPUT_MESSAGES in span.attributes or "llm.output_messages.0.message.role" in (
            span.attributes
        ):
            return None, True  # the last turn still asked for tools: no answer yet
    # the few agent spans that carry output messages, latest first (sorting every span of
    # every trace for them cost a quarter of reading a run)
    agents = [
        span
        for span in spans
        if GENAI_OUTPUT_MESSAGES in span.attributes and agent_name_of(span.attributes)
    ]
    for span in sorted(agents, key=lambda s: s.end_ns, reverse=True):
        text = final_text(span, GENAI)
        if text is not None:
            return text, True
    return None, False


def _agent(
    agents: Iterable[AgentMark], spans: Sequence[SpanView], root: SpanView | None
) -> str | None:
    marks = list(agents)
    marks.extend(
        (span.start_ns, name) for span in spans if (name := agent_name_of(span.attributes))
    )
    if marks:
        return min(marks)[1]
    return root_agent_name(root) if root is not None else None


def _not_captured(
    calls: Sequence[ToolCall], spans: Sequence[SpanView], kinds: Sequence[CallSpanKind | None]
) -> frozenset[int]:
    """The calls without arguments whose tool span carries none of its convention's argument
    keys: recorded without content, so ``{}`` is not what the model sent."""
    lacking: list[int] = []
    views: dict[str, tuple[SpanView, CallSpanKind]] | None = None
    for index, call in enumerate(calls):
        if call.args or call.run_id is None or call.source != "otel":
            continue
        if views is None:
            views = {
                s.span_id: (s, k)
                for s, k in zip(spans, kinds, strict=True)
                if k is not None and k[0] == "tool"
            }
        found = views.get(call.run_id)
        if found is None:
            continue
        convention = found[1][1]
        keys = (convention.arguments, *convention.more_arguments)
        if not any(key in found[0].attributes for key in keys):
            lacking.append(index)
    return frozenset(lacking)
