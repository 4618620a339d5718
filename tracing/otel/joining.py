"""Joining spans: requested calls to executed calls, in request order (docs/capture.md).

The input is the spans of one trace, or of the traces of one conversation (one LangGraph
thread: a run, and the runs resuming it after a pause), or of groups of such traces that
separate runs link by call ids (:func:`join_traces`). The calls come out in request order:
the chat spans that carry the model's requested calls, sorted by end time (a request is known
when the model's turn ends), then by position in the request. Tool spans, in start order, join
a request by the same rules as :class:`~tracing.langchain.recorder.ToolCallRecorder`:

* a waiting request (never executed, or last paused) with the tool span's call id; else one
  of the same name (and, where the convention keeps them, equal arguments) that has no id, or
  any, when the tool span has none; one made before the tool started first;
* else the call, requested or not, whose last attempt failed, with the same id (else the same
  name and arguments): a retry, one more attempt of the same call;
* else, for a top-level tool span with a call id, the request of another group waiting with
  that id (:func:`join_traces`: a tool-calling loop written by hand, each call a trace);
* else no request: a tool invoked directly (or content capture off), at its start time.

A request a ``structured_response`` state answered and no tool ran is bookkeeping, left out
(tracing/langchain/final_answer.py; the span naming it:
:func:`~tracing.otel.span_reading.structured_output_ids`).

Joining recovers what a convention loses on the tool span (OpenInference: the id and the
parameter name of a single string argument). A request no tool span joins stays a call with
status ``requested``, ``invalid`` when its arguments were not JSON, or ``interrupted`` when the
conversation ends paused (a LangGraph interrupt after it, before the model's next turn, and no
run after it). A tool span paused by ``interrupt()`` is no attempt: the resumed run executes
the tool again. The agent path is the one the span carries (SpanEmitter), else the root
span's agent name (none for a model or tool invoked directly), the tool names of the scopes
above, and the namespace the convention keeps.

Requests and executions join only within one scope (the nearest tool span above them), so an
agent used as a tool keeps its own calls, which come right after that tool's call, depth first.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from tracing.otel.calls import answered_call, invalid_call, not_offered, traced_answers
from tracing.otel.conventions import ERROR_TYPE, RUN_ORIGIN, CallSpanKind, Convention, classify
from tracing.otel.producers import MERGED_TOOLS, UNNAMED_TOOL, UNNAMED_TOOL_REASON
from tracing.otel.span_agent_paths import MAX_DEPTH, Agents, top_agent
from tracing.otel.span_reading import (
    RAW_ARGUMENTS_KEY,
    ExecutedCall,
    RequestedCall,
    executed_call,
    interrupt_time,
    requested_calls,
    root_agent_name,
    structured_output_ids,
    tool_responses,
)
from tracing.otel.span_view import SpanView
from tracing.records import Attempt, CallStatus, ToolCall

__all__ = [
    "Joined",
    "calls_by_trace",
    "calls_from_classified",
    "calls_from_spans",
    "join_traces",
    "read_calls",
]

Key = tuple[int, int, int, int]


@dataclass(slots=True)
class _Slot:
    """One call being assembled: its request (if any) and its executions, in start order."""

    request: RequestedCall | None
    scope: str | None
    key: Key
    trace_id: str
    executions: list[ExecutedCall] = field(default_factory=list)

    def waiting(self) -> bool:
        """Requested and never executed, or last paused (a resumed run executes it again)."""
        if self.request is None or self.request.invalid:
            return False
        return not self.executions or self.executions[-1].status == "interrupted"

    def failed(self) -> bool:
        """Executed, and the last attempt failed: the next execution may retry it."""
        return bool(self.executions) and self.executions[-1].status == "error"

    def call_id(self) -> str | None:
        """The id the request or any execution carries."""
        if self.request is not None and self.request.id is not None:
            return self.request.id
        return next((e.id for e in self.executions if e.id is not None), None)


def calls_from_spans(
    spans: Iterable[SpanView], parents: Mapping[str, str | None] | None = None
) -> list[ToolCall]:
    """Turn the finished spans of ONE trace (or one conversation's traces) into its calls.

    ``parents`` maps span id -> parent span id for spans that are not in ``spans`` (the
    graph's chain spans between a tool and the agent it runs); with it, the calls made inside a
    tool's run (an agent used as a tool) come right after that tool's call, depth first.
    """
    items = [(span, classify(span.attributes)) for span in spans]
    return [call for _, call in _convert(items, parents or {})]


def calls_from_classified(
    spans: Sequence[SpanView],
    kinds: Sequence[CallSpanKind | None],
    parents: Mapping[str, str | None],
) -> list[ToolCall]:
    """:func:`calls_from_spans` of spans already classified (``kinds[i]`` is
    ``classify(spans[i].attributes)``), as the OTLP JSON reader hands them out."""
    return [call for _, call in _convert(zip(spans, kinds, strict=True), parents)]


def read_calls(
    spans: Sequence[SpanView],
    kinds: Sequence[CallSpanKind | None],
    parents: Mapping[str, str | None],
) -> tuple[list[ToolCall], dict[str, int]]:
    """:func:`calls_from_classified`, and how many parts of the spans could not be read, per
    reason (a tool span without a name, a requested call without one, ...)."""
    gathered = _gather(zip(spans, kinds, strict=True), parents)
    calls = [call for _, call in _join(*gathered)]
    return calls, gathered[3].unread


def calls_by_trace(
    spans: Iterable[SpanView], parents: Mapping[str, str | None] | None = None
) -> dict[str, list[ToolCall]]:
    """The calls of one conversation's traces, keyed by the trace that requested each.

    A call requested in one run and executed in the next (a pause, then a resume) belongs to
    the run that requested it; an unrequested execution to the run that executed it.
    """
    return join_traces(spans, parents).calls


@dataclass(frozen=True, slots=True)
class Joined:
    """The calls of a set of traces, keyed by trace, and the top-level ids left open: what
    :class:`~tracing.otel.tool_call_exporter.ToolCallSpanExporter` needs to join traces of separate
    runs."""

    calls: dict[str, list[ToolCall]]
    waiting: frozenset[str]
    """Ids of top-level requests no execution took."""
    unrequested: frozenset[str]
    """Ids of top-level executions that joined no request."""


def join_traces(
    spans: Iterable[SpanView],
    parents: Mapping[str, str | None] | None = None,
    groups: Mapping[str, str] | None = None,
) -> Joined:
    """:func:`calls_by_trace`, with the ids left open; ``groups`` maps trace id -> group.

    Without ``groups`` the traces are one conversation, joined as one. With it, traces of one
    group are joined as a conversation, and an execution at the top level of one group joins a
    request of another only by its call id: the only request waiting with that id, made before
    it started; else, of several, the only one made in a run of the same
    ``harness.run.origin`` (the recorder's rule,
    :func:`tracing.langchain.call_tree.find_elsewhere`); else none.
    """
    items = [(span, classify(span.attributes)) for span in spans]
    chats, executions, links, info = _gather(items, parents or {})
    info.groups = groups
    info.ends = ([], [])
    grouped: dict[str, list[ToolCall]] = {}
    for trace_id, call in _join(chats, executions, links, info):
        grouped.setdefault(trace_id, []).append(call)
    waiting, unrequested = info.ends
    return Joined(grouped, frozenset(waiting), frozenset(unrequested))


_start_order = operator.attrgetter("span.start_ns", "span.end_ns")
"""Sort key of executions: (start, end) of their tool span, read in C."""


@dataclass(slots=True)
class _Trace:
    """What a conversation's traces say beyond their calls: roots, run starts, pauses."""

    root_names: dict[str, str | None] = field(default_factory=dict)
    starts: list[int] = field(default_factory=list)
    pauses: list[int] = field(default_factory=list)
    answers: dict[str, str] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)
    """Trace id -> the ``harness.run.origin`` of its root (SpanEmitter)."""
    structured: list[tuple[SpanView, set[str]]] = field(default_factory=list)
    """Spans naming the calls a ``structured_response`` state answered, with those ids."""
    groups: Mapping[str, str] | None = None
    """Trace id -> group, when the traces are not all one conversation (:func:`join_traces`)."""
    ends: tuple[list[str], list[str]] | None = None
    """Filled, when set, with the ids of top-level requests left waiting and of top-level
    executions that joined no request (:class:`Joined`)."""
    messages: Mapping[str, str] | None = None
    """Call id -> the tool message a later model call received, when no tool span ran any call
    (a tool loop written on a raw client): what the calls' results and errors are read from."""
    unread: dict[str, int] = field(default_factory=dict)
    """Parts of the spans that could not be read, counted per reason."""
    chats: Sequence[SpanView] = ()
    """The chat spans, for :meth:`answer`."""
    _answers: Mapping[str, str] | None = None

    def answer(self, call_id: str) -> str | None:
        """The tool message a model call received for ``call_id`` (read on first use)."""
        if self._answers is None:
            self._answers = traced_answers(self.chats) or {}
        return self._answers.get(call_id)


_Gathered = tuple[
    list[tuple[SpanView, Convention]], list[ExecutedCall], dict[str, str | None], _Trace
]
"""What :func:`_gather` reads out of a trace's spans: the arguments of :func:`_join`."""


def _convert(
    spans: Iterable[tuple[SpanView, CallSpanKind | None]], parents: Mapping[str, str | None]
) -> list[tuple[str, ToolCall]]:
    return _join(*_gather(spans, parents))


def _gather(
    spans: Iterable[tuple[SpanView, CallSpanKind | None]], parents: Mapping[str, str | None]
) -> _Gathered:
    """The chat spans, the executed calls, every parent link, and the trace's roots and
    pauses."""
    chats: list[tuple[SpanView, Convention]] = []
    executions: list[ExecutedCall] = []
    info = _Trace()
    links: dict[str, str | None] = dict(parents)
    for span, kind in spans:
        parent_id = links[span.span_id] = span.parent_id
        if parent_id is None:
            # a tool or model invoked directly is its own root: it runs in no agent (as the
            # recorder says)
            info.root_names[span.trace_id] = None if kind is not None else root_agent_name(span)
            info.starts.append(span.start_ns)
            origin = span.attributes.get(RUN_ORIGIN)
            if isinstance(origin, str):
                info.origins[span.trace_id] = origin
        if span.events or ERROR_TYPE in span.attributes:  # else no pause: skip the reading
            paused = interrupt_time(span)
            if paused is not None:
                info.pauses.append(paused)
        if kind is None:  # a root, a pause, or a graph's span: maybe structured output
            structured = structured_output_ids(span)
            if structured:
                info.structured.append((span, structured))
            continue
        role, convention = kind
        if role == "chat":
            chats.append((span, convention))
            info.answers.update(tool_responses(span))
        else:
            execution = executed_call(span, convention)
            if execution.name == MERGED_TOOLS:
                continue  # Google ADK's span over parallel calls, each with a span of its own
            if execution.name == UNNAMED_TOOL:
                info.unread[UNNAMED_TOOL_REASON] = info.unread.get(UNNAMED_TOOL_REASON, 0) + 1
            executions.append(execution)
    return chats, executions, links, info


def _scope(
    parent_id: str | None, tool_ids: Mapping[str, ExecutedCall], links: Mapping[str, str | None]
) -> str | None:
    """The nearest tool span at or above ``parent_id`` (a span's scope), or None at the top."""
    current = parent_id
    for _ in range(MAX_DEPTH):
        if current is None or current in tool_ids:
            return current
        current = links.get(current)
    return None


def _scope_finder(
    tool_ids: Mapping[str, ExecutedCall], links: Mapping[str, str | None]
) -> Callable[[SpanView], str | None]:
    """A function giving the nearest tool span above a span (its scope), or None at the top."""

    def scope_of(span: SpanView) -> str | None:
        """The nearest tool span above this span, or None at the top."""
        return _scope(span.parent_id, tool_ids, links)

    return scope_of


def _before(slots: list[_Slot], started: int) -> _Slot | None:
    """The first slot whose request was made before ``started``, else the first at all."""
    for slot in slots:
        if slot.request is not None and slot.request.order[0] <= started:
            return slot
    return slots[0] if slots else None


def _find_waiting(slots: Sequence[_Slot], execution: ExecutedCall) -> _Slot | None:
    """The waiting request this execution runs (rules in the module docstring)."""
    waiting = [slot for slot in slots if slot.waiting()]
    started = execution.span.start_ns
    if execution.id is not None:
        by_id = [s for s in waiting if s.request is not None and s.request.id == execution.id]
        if by_id:
            return _before(by_id, started)
    named = [
        s
        for s in waiting
        if s.request is not None
        and s.request.name == execution.name
        and (execution.id is None or s.request.id is None)
    ]
    if execution.args is not None and not execution.convention.lossy_arguments:
        # Arguments can differ in type on the span (a convention's encoding): fall back to
        # the name rather than lose the join.
        named = [s for s in named if s.request and s.request.args == execution.args] or named
    return _before(named, started) or _malformed(slots, execution)


def _malformed(slots: Sequence[_Slot], execution: ExecutedCall) -> _Slot | None:
    """The call with arguments that are not JSON that this failed execution answers: the
    framework tried it and failed on the text (the OpenAI Agents SDK, Pydantic AI, LlamaIndex
    give the model an error); by call id, else by name, the same text first."""
    if execution.status != "error":
        return None
    found = [
        s
        for s in slots
        if s.request is not None
        and s.request.invalid
        and not s.executions
        and (
            s.request.id == execution.id
            if execution.id is not None
            else s.request.name == execution.name
        )
    ]
    same = [
        s
        for s in found
        if s.request and s.request.args.get(RAW_ARGUMENTS_KEY) == execution.raw_args
    ]
    chosen = same or found
    return chosen[0] if chosen else None


def _find_elsewhere(slots: Sequence[_Slot], execution: ExecutedCall, info: _Trace) -> _Slot | None:
    """The request of another group this top-level execution runs, by its call id (rule in
    :func:`join_traces`)."""
    groups = info.groups or {}
    group = groups.get(execution.span.trace_id)
    started = execution.span.start_ns
    waiting = [
        slot
        for slot in slots
        if slot.request is not None
        and slot.request.id == execution.id
        and groups.get(slot.trace_id) != group
        and slot.request.order[0] <= started
        and slot.waiting()
    ]
    if len(waiting) > 1:
        origin = info.origins.get(execution.span.trace_id)
        waiting = [s for s in waiting if origin and info.origins.get(s.trace_id) == origin]
    return waiting[0] if len(waiting) == 1 else None


def _structured(slot: _Slot, trace_id: str, ids: set[str]) -> bool:
    """Is this a structured-output call of the run ``trace_id`` (its state answered it, no
    tool ran it)? Bookkeeping, left out as the recorder leaves it out (final_answer.py)."""
    request = slot.request
    return (
        request is not None
        and request.id in ids
        and not slot.executions
        and not request.invalid
        and slot.trace_id == trace_id
    )


def _open_ends(slots: Iterable[_Slot], ends: tuple[list[str], list[str]]) -> None:
    """The ids of the top-level requests left waiting, and of the executions nobody requested."""
    waiting, unrequested = ends
    for slot in slots:
        if slot.request is None:
            unrequested.extend(e.id for e in slot.executions if e.id is not None)
        elif slot.request.id is not None and slot.waiting():
            waiting.append(slot.request.id)


def _same_arguments(a: ExecutedCall, b: ExecutedCall) -> bool:
    return a.args == b.args and a.raw_args == b.raw_args


def _find_retry(slots: Sequence[_Slot], execution: ExecutedCall) -> _Slot | None:
    """The call whose last attempt failed that this execution tries again, if any."""
    for slot in reversed(slots):
        if not slot.failed():
            continue
        if execution.id is not None:
            if slot.call_id() == execution.id:
                return slot
        elif slot.executions[-1].name == execution.name and _same_arguments(
            slot.executions[-1], execution
        ):
            return slot
    return None


def _join(
    chats: Sequence[tuple[SpanView, Convention]],
    executions: list[ExecutedCall],
    links: Mapping[str, str | None],
    info: _Trace,
) -> list[tuple[str, ToolCall]]:
    """The calls in request order: most traces have no chat span and tool spans that all
    succeeded at the top level, and :func:`_unrequested` joins those in a single pass."""
    if not chats and _all_top_level_successes(executions, links):
        if info.ends is not None:
            info.ends[1].extend(e.id for e in executions if e.id is not None)
        return _unrequested(executions, info.root_names)
    return _join_requests(chats, executions, links, info)


def _all_top_level_successes(
    executions: Sequence[ExecutedCall], links: Mapping[str, str | None]
) -> bool:
    """Whether every execution succeeded and runs in no tool's scope (what :func:`_unrequested`
    needs), asked of nearly every trace: no scope finder is built for it."""
    tools = {e.span.span_id: e for e in executions}
    for execution in executions:  # a loop, not all(...): no generator for two or three items
        if (
            execution.status != "ok"
            or execution.answer
            or _scope(execution.span.parent_id, tools, links) is not None
        ):
            return False
    return True


def _join_requests(
    chats: Sequence[tuple[SpanView, Convention]],
    executions: list[ExecutedCall],
    links: Mapping[str, str | None],
    info: _Trace,
) -> list[tuple[str, ToolCall]]:
    """The calls in request order, by the rules in the module docstring."""
    tools = {e.span.span_id: e for e in executions}
    scope_of = _scope_finder(tools, links)
    agents = Agents(tools, scope_of, info.root_names)
    chats = sorted(chats, key=lambda item: (item[0].end_ns, item[0].start_ns))
    slots: dict[str | None, list[_Slot]] = {}
    # Turns count per scope and run, as the recorder counts them per top-level run.
    chat_times: dict[tuple[str | None, str], list[tuple[int, int]]] = {}
    requested = False
    for span, convention in chats:
        scope = scope_of(span)
        times = chat_times.setdefault((scope, span.trace_id), [])
        for request in requested_calls(span, convention, len(times), info.unread):
            slot = _Slot(request, scope, (*request.order, 0), span.trace_id)
            slots.setdefault(scope, []).append(slot)
            requested = True
        times.append((span.start_ns, span.end_ns))

    if requested and not executions:  # no tool span: calls are read from the messages
        info.messages = traced_answers(span for span, _ in chats)
    info.chats = [span for span, _ in chats]
    executions.sort(key=_start_order)
    groups = info.groups
    for execution in executions:
        scope = scope_of(execution.span)
        scoped = slots.setdefault(scope, [])
        own = scoped
        if groups is not None and scope is None:
            group = groups.get(execution.span.trace_id)
            own = [slot for slot in scoped if groups.get(slot.trace_id) == group]
        # without a request in the trace, no execution can be waited for (most traces)
        found = _find_waiting(own, execution) if requested else None
        if (
            own is not scoped
            and execution.id is not None
            and (found is None or found.call_id() != execution.id)
        ):
            found = _find_elsewhere(scoped, execution, info) or found
        if found is None and own:
            found = _find_retry(own, execution)
        if found is None:
            started = execution.span.start_ns
            found = _Slot(None, scope, (started, started, 0, 1), execution.span.trace_id)
            scoped.append(found)
        found.executions.append(execution)
    for scoped in slots.values():  # smolagents' final answer: the run's answer, not a call
        scoped[:] = [slot for slot in scoped if not any(e.answer for e in slot.executions)]
    for span, ids in info.structured:
        scoped = slots.get(scope_of(span), [])
        scoped[:] = [slot for slot in scoped if not _structured(slot, span.trace_id, ids)]
    if info.ends is not None:
        _open_ends(slots.get(None, ()), info.ends)

    keyed: dict[str | None, list[tuple[Key, tuple[str, ...], str, ToolCall]]] = {}
    for scope, scoped in slots.items():
        entries = keyed[scope] = []
        for slot in scoped:
            call = _call(slot, agents, chat_times, info)
            span_ids = tuple([e.span.span_id for e in slot.executions])
            entries.append((slot.key, span_ids, slot.trace_id, call))

    out: list[tuple[str, ToolCall]] = []
    _emit(None, keyed, out, set())
    # A scope whose tool span never arrived (cut trace) still comes out, at the end.
    for scope in list(keyed):
        _emit(scope, keyed, out, set())
    return out


def _call(
    slot: _Slot,
    agents: Agents,
    chat_times: Mapping[tuple[str | None, str], list[tuple[int, int]]],
    info: _Trace,
) -> ToolCall:
    request = slot.request
    if not slot.executions:
        assert request is not None  # a slot has a request or an execution
        status: CallStatus = "requested"
        error = request.error or (info.answers.get(request.id) if request.id else None)
        if request.invalid:
            status = "invalid"
        elif error is None and _paused_awaiting(request, slot, chat_times, info):
            status = "interrupted"
        span = request.span
        where = request.where
        if info.messages is not None and status == "requested":
            agent = agents.path(span, slot.scope, where) if span is not None else None
            answered = answered_call(request, info.messages, agent)
            if answered is not None:
                return answered
        return ToolCall(
            name=request.name,
            args=request.args,
            id=request.id,
            status=status,
            error=error,
            node=where.node if where is not None else None,
            turn=request.turn,
            source="otel",
            agent=agents.path(span, slot.scope, where) if span is not None else None,
        )
    last = slot.executions[-1]
    if request is not None and request.invalid:
        return invalid_call(request, last, agents.path(last.span, slot.scope, last.where))
    attempts = tuple([a for a in map(_attempt, slot.executions) if a is not None])
    status = last.status
    if status == "error" and request is not None and not_offered(request):
        status, attempts = "requested", ()  # the framework refused a tool it does not have
    if last.interrupted_at is not None and any(s > last.interrupted_at for s in info.starts):
        status = "requested"  # a later run of the conversation resumed it, without running it
    turn = _turn(slot, last, chat_times)
    agent = agents.path(last.span, slot.scope, last.where)
    call = _joined_call(last, request, turn, status, attempts, agent)
    if call.result is None and status == "ok" and request is not None and request.id:
        # the tool span kept no output (content off the spans, as events): the model's
        # next call received it as the tool message
        answer = info.answer(request.id)
        if answer is not None:
            return replace(call, result=answer)
    return call


def _unrequested(
    executions: list[ExecutedCall], root_names: Mapping[str, str | None]
) -> list[tuple[str, ToolCall]]:
    """The calls of the most common trace: no chat span, and tool spans that all succeeded
    and run in no other tool's scope, so each is a call of its own, in start order.

    :func:`_join_requests` gives the same calls for such a trace (compared in
    tests/tracing/otel/test_joining_single_pass.py): no request to wait for, no failed call to
    retry, one scope, turn 0.
    """
    executions.sort(key=_start_order)
    out: list[tuple[str, ToolCall]] = []
    for execution in executions:
        span = execution.span
        attempt = Attempt("ok", None, span.start_ns or None, span.end_ns or None)
        agent = top_agent(execution.where, root_names.get(span.trace_id))
        call = _joined_call(execution, None, 0, "ok", (attempt,), agent)
        out.append((span.trace_id, call))
    return out


def _attempt(execution: ExecutedCall) -> Attempt | None:
    """The attempt an execution was (None for one LangGraph paused: it runs again on resume)."""
    span = execution.span
    if execution.status == "ok":
        return Attempt("ok", None, span.start_ns or None, span.end_ns or None)
    if execution.status == "error":
        return Attempt("error", execution.error, span.start_ns or None, span.end_ns or None)
    return None


def _paused_awaiting(
    request: RequestedCall,
    slot: _Slot,
    chat_times: Mapping[tuple[str | None, str], list[tuple[int, int]]],
    info: _Trace,
) -> bool:
    """Did the conversation end paused with this request waiting for its turn to run?

    A pause after the request, before the model's next turn in the same run and scope, and
    no run of the conversation started after the last such pause.
    """
    made = request.order[0]
    pauses = [p for p in info.pauses if p >= made]
    if not pauses:
        return False
    pause = max(pauses)
    if any(start > pause for start in info.starts):
        return False
    later_turns = chat_times.get((slot.scope, slot.trace_id), ())
    return not any(made < start < pause for start, _ in later_turns)


def _turn(
    slot: _Slot,
    execution: ExecutedCall,
    chat_times: Mapping[tuple[str | None, str], list[tuple[int, int]]],
) -> int:
    if slot.request is not None:
        return slot.request.turn
    times = chat_times.get((slot.scope, execution.span.trace_id))
    if not times:
        return 0
    started = execution.span.start_ns
    return sum(1 for _, end in times if end <= started)


def _joined_call(
    execution: ExecutedCall,
    request: RequestedCall | None,
    turn: int,
    status: CallStatus,
    attempts: tuple[Attempt, ...],
    agent: str | None,
) -> ToolCall:
    span = execution.span
    error = execution.error
    args = execution.args
    if request is not None and args is None:
        args = request.args  # the span lost them (a bare string value, or no content capture)
    if args is None:
        if execution.raw_args is not None:
            args = {RAW_ARGUMENTS_KEY: execution.raw_args}
            error = f"{execution.args_problem}; {error}" if error else execution.args_problem
        else:
            args = {}
    # Every field, in ToolCall's order, positionally: the reader builds one per tool span.
    return ToolCall(
        execution.name,  # name
        args,
        execution.id or (request.id if request is not None else None),  # id
        status,
        execution.result,  # result
        error,
        span.start_ns or None,  # started_at
        span.end_ns or None,  # ended_at
        span.span_id,  # run_id
        span.parent_id,  # parent_run_id
        execution.node,  # node
        turn,
        "otel",  # source
        attempts,
        agent,
    )


def _emit(
    scope: str | None,
    keyed: dict[str | None, list[tuple[Key, tuple[str, ...], str, ToolCall]]],
    out: list[tuple[str, ToolCall]],
    seen: set[str | None],
) -> None:
    """Depth first: each call, then the calls made inside its tool's runs."""
    items = keyed.pop(scope, None)
    if items is None or scope in seen:
        return
    seen.add(scope)
    items.sort(key=lambda item: item[0])
    for _, span_ids, trace_id, call in items:
        out.append((trace_id, call))
        for span_id in span_ids:
            if span_id in keyed:  # the calls made inside this tool's run, if any
                _emit(span_id, keyed, out, seen)
