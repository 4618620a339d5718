"""ToolCallRecorder: a LangChain callback handler that records every tool call of a run.

What it records, and how (the rules are docs/capture.md, "What it records"):

* **Requested calls** come from the chat model's end event (``AIMessage.tool_calls``), in the
  model's order, then the calls LangChain could not parse (``invalid_tool_calls``: status
  ``invalid``, the raw argument text under ``args["__raw__"]``, the parse error in ``error``).
  Each model turn bumps the turn counter of its scope.
* **Executions** come from ``on_tool_start`` / ``on_tool_end`` / ``on_tool_error``, keyed by
  ``run_id``, and joined to a waiting request: by ``tool_call_id`` (the keyword, or the id of a
  whole ToolCall given as input), else, for an id-less execution (a hand-written tool node
  calling ``tool.invoke(args)``, langchain-core before 1.0), by name and equal arguments. An
  execution whose result names a requested id (its ``ToolMessage``) still joins that request.
* **Attempts.** An execution of a call whose last attempt failed (same id, or same name and
  arguments) is a retry: one call, one more entry in ``attempts``; the status is the last one's.
* **Errors** have five shapes: ``on_tool_error``; ``on_tool_end`` with a ``ToolMessage`` whose
  ``status`` is ``"error"`` (a handled ``ToolException``, failed argument validation), also
  inside a ``Command(update={"messages": [...]})``; a call to a tool the agent lacks (or one a
  reviewer rejected), which never starts and shows only as an error ``ToolMessage`` (status
  stays ``requested``, ``error`` holds that message); and a plain exception that fails the whole
  run, after which the recorder still holds everything it saw up to there.
* **Pauses.** A ``GraphInterrupt`` is LangGraph pausing, not a failure: the tool that raised it
  is ``interrupted``, and so is every call of the latest model turn still waiting when a node
  raises it. A later run of the same thread (``thread_id``) resumes them: its executions join
  the requests of the earlier runs, so a paused-then-resumed call is one call.
* **Model calls.** Every chat or completion model run that ended is one
  :class:`~tracing.records.ModelCall` (its token usage, times and model, the final answer's
  included; a run that raised is none), in start order: :meth:`ToolCallRecorder.model_calls`
  (usage read as :mod:`tracing.langchain.model_calls` says).
* **Where.** ``node`` is the LangGraph node, ``agent`` the path of graphs the call ran in: the
  top-level graph's name, each subgraph node of the checkpoint namespace, and, for an agent
  used as a tool, that tool's name (``supervisor/research_agent``).

Scopes. Every top-level run (a graph, a model or a tool invoked by the caller) opens a scope;
so does every tool run, for whatever runs inside it (an agent used as a tool). Turns count per
scope: an inner agent's turns start at 0 again. An execution joins a request:

1. in its own scope, then in the earlier top-level runs of its LangGraph thread, by the rules
   above (a paused call resumed by a later run);
2. else, when it carries a call id and runs in a top-level scope, in another top-level run:
   LangChain's tool-calling guide calls the model, then each tool with the model's call, each
   an ``invoke`` of its own, so each a top-level run. It joins the request waiting with that id
   when exactly one does; of several (providers reuse ids: ``call_1`` in every conversation),
   the one made in a run that started where its own run started (the same asyncio task, or OS
   thread outside one, :func:`~tracing.langchain.events.run_origin`), when exactly one was; else
   none, and both stay apart. Concurrent runs never share a task or thread, so concurrent runs
   through one recorder never cross, even when they reuse ids; two conversations interleaved
   by hand in one thread with reused ids are left apart.

Order (``calls()``): top-level runs in the order they started; within a scope by turn, then the
position in the model's request, then executions nobody requested (a tool invoked directly), in
start order, after the requested calls of the same turn. The calls made inside a tool's run
come right after that tool's own call (depth first). A call joined across top-level runs stays
where it was requested (``calls_by_run()`` lists it under the requesting run). Never arrival
order, which parallel tool execution scrambles.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from time import time_ns as _now  # one global lookup per event, not two
from typing import TYPE_CHECKING, Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import LLMResult
from langchain_core.runnables import RunnableConfig

from tracing.langchain.call_tree import (
    UNREQUESTED,
    CallEntry,
    CallScope,
    find_elsewhere,
    find_request,
    find_retry,
)
from tracing.langchain.events import (
    Origin,
    agent_path,
    answered_call_id,
    content_text,
    event_name,
    execution_origin,
    graph_namespace,
    invalid_requests,
    is_error_message,
    is_interrupt,
    node_of,
    plain_result,
    reply_message,
    run_origin,
    thread_of,
    tool_call_id_of,
    tool_inputs,
    tool_outcome,
    tool_scope_prefix,
)
from tracing.langchain.final_answer import (
    STRUCTURED_RESPONSE_KEY,
    plain_structure,
    structured_call_ids,
)
from tracing.langchain.model_calls import ModelCallLog
from tracing.otel.genai_attributes import model_name
from tracing.records import RAW_ARGUMENTS_KEY, InvalidToolCall, ModelCall, ToolCall, parse_arguments

if TYPE_CHECKING:
    from tracing.langchain.capture import RecorderTurn

__all__ = ["ToolCallRecorder"]


class _Run:
    """What the recorder keeps about an open LangChain run: its scope, node and place."""

    __slots__ = ("agent", "entry", "namespace", "node", "owner", "scope")

    def __init__(
        self,
        scope: CallScope,
        node: str | None,
        namespace: tuple[str, ...],
        entry: CallEntry | None = None,
        owner: CallScope | None = None,
    ) -> None:
        self.scope = scope
        self.node = node
        self.namespace = namespace
        self.agent = agent_path(scope.prefix, scope.base, namespace)
        self.entry = entry
        self.owner = owner or scope
        """The scope holding ``entry`` (an earlier run's, for a call resumed across runs)."""


def _error_text(error: BaseException) -> str:
    message = str(error)
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def _tool_args(inputs: Any, input_str: str, name: str) -> Mapping[str, Any]:
    """Structured ``inputs`` when given; a JSON-object string parsed; any other text as input."""
    if type(inputs) is dict or isinstance(inputs, Mapping):
        return dict(inputs)
    try:
        return parse_arguments(input_str, where=f"tool {name!r}")
    except InvalidToolCall:
        return {"input": input_str}


def _drop_structured_calls(scope: CallScope, outputs: Mapping[str, Any]) -> None:
    """Forget the structured-output calls a node answered itself (``create_agent`` with a
    ``response_format``): bookkeeping, not tool calls (tracing/langchain/final_answer.py)."""
    ids = structured_call_ids(outputs)
    if not ids:
        return
    for entry in [e for e in scope.pending if e.id in ids and e.status == "requested"]:
        scope.pending.remove(entry)
        scope.entries.remove(entry)


def _final_answer(outputs: Any) -> Any:
    """The last AI message's content (as text, for content blocks) of a graph's output state;
    a ``structured_response`` (``create_agent(response_format=...)``) comes first."""
    if not isinstance(outputs, Mapping):
        return None
    if outputs.get(STRUCTURED_RESPONSE_KEY) is not None:
        return plain_structure(outputs[STRUCTURED_RESPONSE_KEY])
    messages = outputs.get("messages")
    if not isinstance(messages, Sequence) or not messages:
        return None
    last = messages[-1]
    return content_text(last.content) if isinstance(last, AIMessage) else None


class ToolCallRecorder(BaseCallbackHandler):
    """Records the tool calls of LangChain / LangGraph runs, in request order, thread-safely."""

    run_inline = True  # called on the event's own thread or task: no executor, no new loop
    raise_error = False

    def __init__(self) -> None:
        """An empty recorder; pass ``recorder.config`` (or ``callbacks=[recorder]``) to a run."""
        super().__init__()
        self._lock = threading.Lock()
        self._runs: dict[UUID, _Run] = {}
        self._roots: list[CallScope] = []
        self._threads: dict[str, list[CallScope]] = {}
        self._asked: dict[str, list[CallScope]] = {}
        """Call id -> the top-level runs that requested it (pruned when looked up)."""
        self._models = ModelCallLog()

    # --- reading ---------------------------------------------------------------------------

    @property
    def config(self) -> RunnableConfig:
        """A RunnableConfig that attaches this recorder: ``graph.invoke(x, recorder.config)``."""
        return RunnableConfig(callbacks=[self])

    def calls(self, run_id: UUID | str | None = None) -> list[ToolCall]:
        """Every call seen, in request order; with ``run_id``, only that top-level run's."""
        out: list[ToolCall] = []
        with self._lock:
            for scope in self._roots:
                if run_id is not None and str(scope.root_run_id) != str(run_id):
                    continue
                scope.ordered(out)
        return out

    def calls_by_run(self) -> dict[str, list[ToolCall]]:
        """The calls of each top-level run, keyed by its run id, runs in start order."""
        grouped: dict[str, list[ToolCall]] = {}
        with self._lock:
            for scope in self._roots:
                calls: list[ToolCall] = []
                scope.ordered(calls)
                grouped[str(scope.root_run_id)] = calls
        return grouped

    def model_calls(self, run_id: UUID | str | None = None) -> list[ModelCall]:
        """One ModelCall per model call that ended (its token usage, times, model), in start
        order, the final answer's included; with ``run_id``, only that top-level run's."""
        with self._lock:
            return self._models.calls(None if run_id is None else (str(run_id),))

    def last_output(self) -> Any:
        """The final AI message content of the most recent top-level graph run that finished."""
        with self._lock:
            for scope in reversed(self._roots):
                if scope.output is not None:
                    return scope.output
        return None

    def reset(self) -> None:
        """Forget everything recorded (runs still open keep reporting into fresh state)."""
        with self._lock:
            self._runs.clear()
            self._roots.clear()
            self._threads.clear()
            self._asked.clear()
            self._models.clear()

    def turn(self) -> RecorderTurn:
        """``with recorder.turn() as turn:`` — the calls of the runs started in the block."""
        from tracing.langchain.capture import RecorderTurn

        return RecorderTurn(self)

    # --- scopes ----------------------------------------------------------------------------

    def _scope_for(
        self,
        run_id: UUID,
        parent_run_id: UUID | None,
        metadata: Mapping[str, Any] | None,
        graph: str | None = None,
        origin: Callable[[], Origin] | None = run_origin,
    ) -> CallScope:
        """The scope a new run belongs to (caller holds the lock); opens a root when unknown.

        ``graph`` is the run's name when it is a chain: a top-level chain names the root agent;
        ``origin`` tells where a new root started: None for a tool, whose scope holds no
        request, so its origin is asked only when its execution looks for one (``_elsewhere``).
        """
        if parent_run_id is not None:
            parent = self._runs.get(parent_run_id)
            if parent is not None:
                entry = parent.entry
                if entry is None:
                    return parent.scope
                # A run inside a tool run: the tool's own scope, opened on first use; the
                # tool is the agent its inner calls run in.
                if entry.children is None:
                    prefix = tool_scope_prefix(entry.agent, parent.scope.prefix, entry.name)
                    entry.children = CallScope(parent.scope.root_run_id, prefix, parent.namespace)
                return entry.children
        thread = thread_of(metadata)
        scope = CallScope(run_id, (graph,) if graph else (), (), thread, origin and origin())
        if thread is not None:
            earlier = self._threads.setdefault(thread, [])
            for previous in earlier:
                previous.resume()
            earlier.append(scope)
        self._roots.append(scope)
        return scope

    def _candidates(self, scope: CallScope) -> list[CallScope]:
        """Where an execution or answer in ``scope`` may find its request: here, then the
        earlier top-level runs of the same thread, latest first (caller holds the lock)."""
        if scope.thread is None:
            return [scope]
        return [scope, *(s for s in reversed(self._threads[scope.thread]) if s is not scope)]

    # --- chains: scopes, pauses, answers to calls that never ran, each run's final answer ----

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
        """Register the run under its scope."""
        name = event_name(serialized, kwargs)
        with self._lock:
            scope = self._scope_for(
                run_id, parent_run_id, metadata, name if isinstance(name, str) else None
            )
            self._runs[run_id] = _Run(scope, None, graph_namespace(metadata))

    def on_chain_end(
        self,
        outputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Close the run; error ToolMessages in its output answer calls that never ran."""
        with self._lock:
            run = self._runs.pop(run_id, None)
            if run is None:
                return
            scope = run.scope
            if isinstance(outputs, Mapping):
                self._absorb_tool_messages(scope, outputs.get("messages"))
                _drop_structured_calls(scope, outputs)
            if scope.root_run_id == run_id:
                scope.output = _final_answer(outputs)

    def on_chain_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Close the run; a GraphInterrupt pauses the calls still waiting in its scope."""
        with self._lock:
            run = self._runs.pop(run_id, None)
            if run is not None and is_interrupt(error):
                for scope in self._candidates(run.scope):
                    scope.pause()

    # --- models: requested calls ---------------------------------------------------------------

    def on_chat_model_start(
        self,
        serialized: dict[str, Any] | None,
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Register the model run; the tool results in its input can reveal unknown-tool errors."""
        model = model_name(metadata, kwargs.get("invocation_params"))
        with self._lock:
            scope = self._open_model_run(run_id, parent_run_id, metadata, model)
            if messages:
                self._absorb_tool_messages(scope, _trailing_tool_messages(messages[0]))

    def on_llm_start(
        self,
        serialized: dict[str, Any] | None,
        prompts: list[str],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Register a completion-model run (it can request no tools, but it is a turn)."""
        model = model_name(metadata, kwargs.get("invocation_params"))
        with self._lock:
            self._open_model_run(run_id, parent_run_id, metadata, model)

    def _open_model_run(
        self,
        run_id: UUID,
        parent_run_id: UUID | None,
        metadata: Mapping[str, Any] | None,
        model: str | None,
    ) -> CallScope:
        """Register a chat or completion model run in its scope (caller holds the lock)."""
        scope = self._scope_for(run_id, parent_run_id, metadata)
        self._runs[run_id] = _Run(scope, node_of(metadata), graph_namespace(metadata))
        self._models.start(run_id, str(scope.root_run_id), model)
        return scope

    def on_llm_end(
        self,
        response: LLMResult,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Record the calls the model requested (then the malformed ones), as one turn, and
        the model call with its token usage."""
        reply = reply_message(response)
        requested = reply.tool_calls if reply is not None else ()
        invalid = invalid_requests(reply) if reply is not None else []
        with self._lock:
            run = self._runs.pop(run_id, None)
            if run is None:
                return
            scope = run.scope
            turn = scope.model_turns
            scope.model_turns += 1
            self._models.end(run_id, response, reply, turn)
            for position, call in enumerate(requested):
                self._add_requested(scope, call, turn, position, run)
            for position, bad in enumerate(invalid, len(requested)):
                self._add_invalid(scope, bad, turn, position, run)

    def on_llm_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """A failed model run requested nothing and made no turn: just close it."""
        with self._lock:
            self._runs.pop(run_id, None)
            self._models.drop(run_id)

    def _add_requested(
        self, scope: CallScope, call: Mapping[str, Any], turn: int, position: int, run: _Run
    ) -> None:
        name = call.get("name") or "<unnamed>"
        call_id = call.get("id") or None
        raw = call.get("args")
        try:
            args = parse_arguments(raw, where=f"requested tool call {name!r}")
            error = None
        except InvalidToolCall as exc:
            args, error = {}, str(exc)
        entry = CallEntry(name, args, call_id, "requested", turn, 0, position, run.node, run.agent)
        entry.error = error
        scope.entries.append(entry)
        scope.pending.append(entry)
        if call_id is not None and scope.origin is not None:
            # a top-level run's request: an execution in another top-level run may answer it
            asked = self._asked.setdefault(call_id, [])
            if not asked or asked[-1] is not scope:
                asked.append(scope)

    def _add_invalid(
        self, scope: CallScope, call: Mapping[str, Any], turn: int, position: int, run: _Run
    ) -> None:
        """A call whose arguments LangChain could not parse: never executable, kept as text."""
        name = call.get("name") or "<unnamed>"
        raw = call.get("args")
        text = raw if isinstance(raw, str) else ("" if raw is None else str(raw))
        entry = CallEntry(
            name,
            {RAW_ARGUMENTS_KEY: text},
            call.get("id") or None,
            "invalid",
            turn,
            0,
            position,
            run.node,
            run.agent,
        )
        error = call.get("error")
        entry.error = str(error) if error else "arguments are not valid JSON"
        scope.entries.append(entry)

    def _absorb_tool_messages(self, scope: CallScope, messages: Any) -> None:
        """Attach an error ToolMessage to the waiting request it answers (which never ran)."""
        if not isinstance(messages, Iterable) or isinstance(messages, (str, bytes)):
            return
        candidates = self._candidates(scope)
        if not any(candidate.pending for candidate in candidates):
            return
        for message in messages:
            if not is_error_message(message):
                continue
            for candidate in candidates:
                entry = next((e for e in candidate.pending if e.id == message.tool_call_id), None)
                if entry is not None:
                    if entry.error is None:
                        entry.error = str(content_text(message.content))
                    break

    # --- tools: executions ---------------------------------------------------------------------

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
        """Open the execution, joined to its request (by id, else name and arguments)."""
        started = _now()
        name = event_name(serialized, kwargs) or "<unnamed>"
        node = node_of(metadata)
        call_id = tool_call_id_of(tool_call_id, inputs)
        given = tool_inputs(inputs)
        args = _tool_args(given, input_str, name)
        with self._lock:
            scope = self._scope_for(run_id, parent_run_id, metadata, None, None)
            run = _Run(scope, node, graph_namespace(metadata))
            # A new scope with no thread (a tool invoked directly) holds no request to join and
            # no failed call to retry: both searches would find nothing.
            joinable = bool(scope.pending or scope.entries) or scope.thread is not None
            candidates = self._candidates(scope) if joinable else [scope]
            found = find_request(candidates, name, args, call_id) if joinable else None
            if call_id is not None and (found is None or found[1].id != call_id):
                found = self._elsewhere(scope, run_id, call_id) or found
            if found is not None:
                owner, entry = found
                owner.take(entry)
                entry.name = name  # a reviewer may have redirected the call to another tool
                entry.id = entry.id or call_id
                if isinstance(given, Mapping):
                    entry.args = dict(given)
            else:
                retried = find_retry(candidates, name, args, call_id) if joinable else None
                owner = scope
                if retried is not None:
                    entry = retried
                    owner = next(c for c in candidates if entry in c.entries)
                else:
                    entry = CallEntry(
                        name,
                        args,
                        call_id,
                        "ok",
                        scope.current_turn(),
                        UNREQUESTED,
                        scope.unrequested,
                        node,
                    )
                    scope.unrequested += 1
                    scope.entries.append(entry)
            entry.status = "ok"
            entry.error = None
            entry.running = True
            entry.node = node
            entry.agent = run.agent
            entry.started_at = started
            entry.ended_at = None
            entry.run_id = str(run_id)
            entry.parent_run_id = str(parent_run_id) if parent_run_id is not None else None
            run.entry = entry
            run.owner = owner
            self._runs[run_id] = run

    def on_tool_end(
        self,
        output: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Close the execution: ok, or error when the tool returned an error ToolMessage."""
        ended = _now()
        answered = answered_call_id(output)
        with self._lock:
            closed = self._close_execution(run_id)
            if closed is None:
                return
            run, entry = closed
            if entry.id is None and answered:
                entry = self._adopt_request(run, entry, answered)
            if plain_result(output):
                result, error = output, None  # tool_outcome's answer, without its steps
            else:
                result, error = tool_outcome(output, entry.id)
            entry.result = result
            entry.finish("error" if error is not None else "ok", error, ended)

    def on_tool_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Close the execution as an error, or as paused when LangGraph interrupted it."""
        ended = _now()
        with self._lock:
            closed = self._close_execution(run_id)
            if closed is None:
                return
            run, entry = closed
            if is_interrupt(error):
                # Not an attempt: a resumed run executes the tool again from its start.
                entry.finish("interrupted", None, ended)
                run.owner.pending.append(entry)
                return
            entry.finish("error", _error_text(error), ended)

    def _elsewhere(
        self, scope: CallScope, run_id: UUID, call_id: str
    ) -> tuple[CallScope, CallEntry] | None:
        """The request ``call_id`` names in another top-level run, for the execution ``run_id``
        in ``scope``, a top-level one (rules in :func:`find_elsewhere`; caller holds the lock)."""
        asked = self._asked.get(call_id)
        if asked is None:
            return None
        origin = scope.origin or (execution_origin() if scope.root_run_id == run_id else None)
        if origin is None:  # inside a tool's run: its requests are in its own scope
            return None
        # forget the runs whose request with this id was answered since
        asked[:] = [s for s in asked if any(e.id == call_id for e in s.pending)]
        if not asked:
            del self._asked[call_id]
            return None
        return find_elsewhere(asked, scope, origin, call_id)

    def _close_execution(self, run_id: UUID) -> tuple[_Run, CallEntry] | None:
        """Forget a tool run and give its execution; None for a run the recorder never opened
        (it started before a ``reset()``) or one that was no execution (caller holds the lock)."""
        run = self._runs.pop(run_id, None)
        if run is None or run.entry is None:
            return None
        return run, run.entry

    def _adopt_request(self, run: _Run, entry: CallEntry, answered: str) -> CallEntry:
        """An id-less execution whose ToolMessage answers a waiting request becomes that call."""
        if entry.kind != UNREQUESTED or not answered:
            return entry
        found = find_request(self._candidates(run.scope), entry.name, {}, answered)
        if found is None or found[1].id != answered:
            return entry
        owner, request = found
        owner.take(request)
        run.owner.entries.remove(entry)
        for field in ("args", "node", "agent", "started_at", "run_id", "parent_run_id"):
            setattr(request, field, getattr(entry, field))
        request.children = entry.children
        request.running = True
        run.owner = owner
        return request


def _trailing_tool_messages(messages: Sequence[BaseMessage]) -> list[ToolMessage]:
    """The tool results after the last AI message: the answers to the latest turn."""
    out: list[ToolMessage] = []
    for message in reversed(messages):
        if isinstance(message, ToolMessage):
            out.append(message)
            continue
        break
    out.reverse()
    return out
