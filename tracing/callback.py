"""ToolCallRecorder: a LangChain callback handler that records every tool call of a run.

What it records, and how:

* **Requested calls** come from the chat model's end event (``AIMessage.tool_calls``), in the
  model's order. Each model turn bumps the turn counter of its scope.
* **Executions** come from ``on_tool_start`` / ``on_tool_end`` / ``on_tool_error``, keyed by
  ``run_id`` (never by ``tool_call_id``, which can be missing or reused) and joined to the
  requested call with the same ``tool_call_id`` in the same scope (oldest pending first).
* **Errors** have four shapes: ``on_tool_error``; ``on_tool_end`` with a ``ToolMessage`` whose
  ``status`` is ``"error"`` (a handled ``ToolException``, failed argument validation); a call to
  a tool the agent lacks, which never starts and shows only as an error ``ToolMessage`` (status
  stays ``requested``, ``error`` holds that message); and a plain exception that fails the whole
  run, after which the recorder still holds everything it saw up to there.

Scopes. Every top-level run (a graph invoked by the caller, or a tool invoked directly) opens a
scope; so does every tool run, for whatever runs inside it (an agent used as a tool). Requested
calls are joined to executions only within one scope, so concurrent runs through one recorder
never cross, even when providers reuse ids. Turns count per scope: an inner agent's turns start
at 0 again.

Order (``calls()``): top-level runs in the order they started; within a scope by turn, then the
position in the model's request, then executions nobody requested (a tool invoked directly), in
start order, after the requested calls of the same turn. The calls made inside a tool's run
come right after that tool's own call (depth first). Never arrival order, which parallel tool
execution scrambles.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from time import time_ns as _now  # one global lookup per event, not two
from typing import TYPE_CHECKING, Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import LLMResult
from langchain_core.runnables import RunnableConfig

from tracing.events import event_name, is_error_message, reply_message, tool_outcome
from tracing.records import CallStatus, InvalidToolCall, ToolCall, parse_arguments

if TYPE_CHECKING:
    from harness.sample import ExpectationLike, Sample

__all__ = ["ToolCallRecorder"]

_UNREQUESTED = 1  # sorts executions nobody asked for after the requested calls of a turn


class _Entry:
    """One call under construction (mutable; turned into a frozen ToolCall on read)."""

    __slots__ = (
        "args",
        "children",
        "ended_at",
        "error",
        "id",
        "kind",
        "name",
        "node",
        "parent_run_id",
        "position",
        "result",
        "run_id",
        "started_at",
        "status",
        "turn",
    )

    def __init__(
        self,
        name: str,
        args: Mapping[str, Any],
        call_id: str | None,
        status: CallStatus,
        turn: int,
        kind: int,
        position: int,
        node: str | None,
    ) -> None:
        self.name = name
        self.args = args
        self.id = call_id
        self.status: CallStatus = status
        self.turn = turn
        self.kind = kind
        self.position = position
        self.node = node
        self.result: Any = None
        self.error: str | None = None
        self.started_at: int | None = None
        self.ended_at: int | None = None
        self.run_id: str | None = None
        self.parent_run_id: str | None = None
        self.children: _Scope | None = None

    def freeze(self) -> ToolCall:
        """The immutable record."""
        return ToolCall(
            name=self.name,
            args=self.args,
            id=self.id,
            status=self.status,
            result=self.result,
            error=self.error,
            started_at=self.started_at,
            ended_at=self.ended_at,
            run_id=self.run_id,
            parent_run_id=self.parent_run_id,
            node=self.node,
            turn=self.turn,
            source="callback",
        )


class _Scope:
    """The calls of one agent level: a top-level run, or what runs inside one tool run."""

    __slots__ = ("entries", "model_turns", "output", "pending", "root_run_id", "unrequested")

    def __init__(self, root_run_id: UUID | None) -> None:
        self.root_run_id = root_run_id
        self.entries: list[_Entry] = []
        self.pending: dict[str, list[_Entry]] = {}
        self.model_turns = 0
        self.unrequested = 0
        self.output: Any = None

    def current_turn(self) -> int:
        """The turn an unrequested execution belongs to: the last model turn seen, or 0."""
        return self.model_turns - 1 if self.model_turns else 0

    def take_pending(self, call_id: str | None) -> _Entry | None:
        """The oldest requested, not yet executed call with this id, removed from pending."""
        if call_id is None:
            return None
        waiting = self.pending.get(call_id)
        if not waiting:
            return None
        entry = waiting.pop(0)
        if not waiting:
            del self.pending[call_id]
        return entry

    def ordered(self, out: list[ToolCall]) -> None:
        """Append this scope's calls in request order, nested calls right after their parent."""
        for entry in sorted(self.entries, key=_order_key):
            out.append(entry.freeze())
            if entry.children is not None:
                entry.children.ordered(out)


def _order_key(entry: _Entry) -> tuple[int, int, int]:
    return (entry.turn, entry.kind, entry.position)


class _Run:
    """What the recorder keeps about an open LangChain run: its scope and node."""

    __slots__ = ("entry", "node", "scope")

    def __init__(self, scope: _Scope, node: str | None, entry: _Entry | None = None) -> None:
        self.scope = scope
        self.node = node
        self.entry = entry


def _node_of(metadata: Mapping[str, Any] | None) -> str | None:
    if not metadata:
        return None
    node = metadata.get("langgraph_node")
    return node if isinstance(node, str) else None


def _error_text(error: BaseException) -> str:
    message = str(error)
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def _tool_args(inputs: Any, input_str: str, name: str) -> Mapping[str, Any]:
    """Structured ``inputs`` when given; a JSON-object string parsed; any other text as input."""
    if isinstance(inputs, Mapping):
        return dict(inputs)
    try:
        return parse_arguments(input_str, where=f"tool {name!r}")
    except InvalidToolCall:
        return {"input": input_str}


def _final_answer(outputs: Any) -> Any:
    """The last AI message's content of a graph's output state, if it has one."""
    if not isinstance(outputs, Mapping):
        return None
    messages = outputs.get("messages")
    if not isinstance(messages, Sequence) or not messages:
        return None
    last = messages[-1]
    return last.content if isinstance(last, AIMessage) else None


class ToolCallRecorder(BaseCallbackHandler):
    """Records the tool calls of LangChain / LangGraph runs, in request order, thread-safely."""

    run_inline = True  # called on the event's own thread or task: no executor, no new loop
    raise_error = False

    def __init__(self) -> None:
        """An empty recorder; pass ``recorder.config`` (or ``callbacks=[recorder]``) to a run."""
        super().__init__()
        self._lock = threading.Lock()
        self._runs: dict[UUID, _Run] = {}
        self._roots: list[_Scope] = []

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

    def sample(
        self,
        expected: Iterable[ExpectationLike] | None = None,
        *,
        input: Any = None,
        output: Any = None,
        **kwargs: Any,
    ) -> Sample:
        """A Sample of everything recorded; ``output`` defaults to the last run's final answer."""
        from harness.sample import Sample  # harness depends on tracing, never the reverse

        if output is None:
            output = self.last_output()
        return Sample(
            input=input,
            tool_calls=self.calls(),
            expected_tool_calls=expected,
            output=output,
            **kwargs,
        )

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

    # --- scopes ----------------------------------------------------------------------------

    def _scope_for(self, run_id: UUID, parent_run_id: UUID | None) -> _Scope:
        """The scope a new run belongs to (caller holds the lock); opens a root when unknown."""
        if parent_run_id is not None:
            parent = self._runs.get(parent_run_id)
            if parent is not None:
                entry = parent.entry
                if entry is None:
                    return parent.scope
                # A run inside a tool run: the tool's own scope, opened on first use.
                if entry.children is None:
                    entry.children = _Scope(parent.scope.root_run_id)
                return entry.children
        scope = _Scope(run_id)
        self._roots.append(scope)
        return scope

    # --- chains: only to know scopes and each top-level run's answer ---------------------------

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
        with self._lock:
            self._runs[run_id] = _Run(self._scope_for(run_id, parent_run_id), None)

    def on_chain_end(
        self,
        outputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Close the run; a ToolNode's error messages mark calls to tools that never ran."""
        with self._lock:
            run = self._runs.pop(run_id, None)
            if run is None:
                return
            scope = run.scope
            if scope.pending and isinstance(outputs, Mapping):
                self._absorb_tool_messages(scope, outputs.get("messages"))
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
        """Close the chain or model run; what was recorded before the failure stays."""
        with self._lock:
            self._runs.pop(run_id, None)

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
        with self._lock:
            scope = self._scope_for(run_id, parent_run_id)
            self._runs[run_id] = _Run(scope, _node_of(metadata))
            if scope.pending and messages:
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
        with self._lock:
            self._runs[run_id] = _Run(self._scope_for(run_id, parent_run_id), _node_of(metadata))

    def on_llm_end(
        self,
        response: LLMResult,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Record the calls the model requested, as one turn of its scope."""
        reply = reply_message(response)
        requested = reply.tool_calls if reply is not None else ()
        with self._lock:
            run = self._runs.pop(run_id, None)
            if run is None:
                return
            scope = run.scope
            turn = scope.model_turns
            scope.model_turns += 1
            for position, call in enumerate(requested):
                self._add_requested(scope, call, turn, position, run.node)

    on_llm_error = on_chain_error  # a failed model run requested nothing: just close it

    def _add_requested(
        self, scope: _Scope, call: Mapping[str, Any], turn: int, position: int, node: str | None
    ) -> None:
        name = call.get("name") or "<unnamed>"
        call_id = call.get("id")
        raw = call.get("args")
        try:
            args = parse_arguments(raw, where=f"requested tool call {name!r}")
            error = None
        except InvalidToolCall as exc:
            args, error = {}, str(exc)
        entry = _Entry(name, args, call_id, "requested", turn, 0, position, node)
        entry.error = error
        scope.entries.append(entry)
        if call_id is not None:
            scope.pending.setdefault(call_id, []).append(entry)

    def _absorb_tool_messages(self, scope: _Scope, messages: Any) -> None:
        """Attach an error ToolMessage to the requested call it answers, if that never ran."""
        if not isinstance(messages, Iterable):
            return
        for message in messages:
            if not is_error_message(message):
                continue
            waiting = scope.pending.get(message.tool_call_id)
            if waiting and waiting[0].error is None:
                waiting[0].error = str(message.content)

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
        """Open the execution, joined to the requested call with its tool_call_id if any."""
        started = _now()
        name = event_name(serialized, kwargs) or "<unnamed>"
        node = _node_of(metadata)
        with self._lock:
            scope = self._scope_for(run_id, parent_run_id)
            entry = scope.take_pending(tool_call_id)
            if entry is None:
                args = _tool_args(inputs, input_str, name)
                entry = _Entry(
                    name,
                    args,
                    tool_call_id,
                    "ok",
                    scope.current_turn(),
                    _UNREQUESTED,
                    scope.unrequested,
                    node,
                )
                scope.unrequested += 1
                scope.entries.append(entry)
            else:
                entry.status = "ok"
                entry.error = None
                entry.node = node
                if inputs is not None:
                    entry.args = dict(inputs)
            entry.started_at = started
            entry.run_id = str(run_id)
            entry.parent_run_id = str(parent_run_id) if parent_run_id is not None else None
            self._runs[run_id] = _Run(scope, node, entry)

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
        result, error = tool_outcome(output)
        with self._lock:
            entry = self._end_execution(run_id, ended)
            if entry is None:
                return
            entry.result = result
            if error is not None:
                entry.status = "error"
                entry.error = error

    def on_tool_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Close the execution as an error with the exception's text."""
        ended = _now()
        text = _error_text(error)
        with self._lock:
            entry = self._end_execution(run_id, ended)
            if entry is not None:
                entry.status = "error"
                entry.error = text

    def _end_execution(self, run_id: UUID, ended: int) -> _Entry | None:
        """Close a tool run and stamp its end time (caller holds the lock); None if unknown."""
        run = self._runs.pop(run_id, None)
        if run is None or run.entry is None:
            return None
        entry = run.entry
        entry.ended_at = ended
        return entry


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
