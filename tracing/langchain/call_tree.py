"""The call tree a ToolCallRecorder builds: calls under construction, grouped by scope.

A :class:`CallScope` is one agent level (a top-level run, or whatever runs inside one tool run);
its :class:`CallEntry` items are mutable while events arrive and freeze into ``ToolCall``
records on read. Reading a scope yields its calls in request order (turn, then kind, then
position), each tool's nested scope right after that tool's own call. Which events open scopes
and fill entries is :class:`~tracing.langchain.recorder.ToolCallRecorder`'s business; which
execution joins which request is decided here (:func:`find_request`), by the rules docs/capture.md
states ("What it records") and :mod:`tracing.otel.joining` applies to spans.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from uuid import UUID

from tracing.langchain.events import Origin
from tracing.records import Attempt, CallStatus, ToolCall

__all__ = [
    "UNREQUESTED",
    "CallEntry",
    "CallScope",
    "find_elsewhere",
    "find_request",
    "find_retry",
]

UNREQUESTED = 1  # sorts executions nobody asked for after the requested calls of a turn


class CallEntry:
    """One call under construction (mutable; turned into a frozen ToolCall on read)."""

    __slots__ = (
        "agent",
        "args",
        "attempts",
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
        "running",
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
        agent: str | None = None,
    ) -> None:
        self.name = name
        self.args = args
        self.id = call_id
        self.status: CallStatus = status
        self.turn = turn
        self.kind = kind
        self.position = position
        self.node = node
        self.agent = agent
        self.result: Any = None
        self.error: str | None = None
        self.started_at: int | None = None
        self.ended_at: int | None = None
        self.run_id: str | None = None
        self.parent_run_id: str | None = None
        self.children: CallScope | None = None
        self.attempts: list[Attempt] = []
        self.running = False

    def finish(self, status: CallStatus, error: str | None, ended: int) -> None:
        """Close one execution: it becomes an attempt, and the call takes its status."""
        self.running = False
        self.ended_at = ended
        self.status = status
        self.error = error
        if status == "ok" or status == "error":
            self.attempts.append(Attempt(status, error, self.started_at, ended))

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
            attempts=tuple(self.attempts),
            agent=self.agent,
        )


class CallScope:
    """The calls of one agent level: a top-level run, or what runs inside one tool run."""

    __slots__ = (
        "base",
        "entries",
        "model_turns",
        "origin",
        "output",
        "pending",
        "prefix",
        "root_run_id",
        "thread",
        "unrequested",
    )

    def __init__(
        self,
        root_run_id: UUID | None,
        prefix: tuple[str, ...] = (),
        base: tuple[str, ...] = (),
        thread: str | None = None,
        origin: Origin | None = None,
    ) -> None:
        self.root_run_id = root_run_id
        self.prefix = prefix
        """The agents this scope runs in: the top-level graph, then each agent-tool inside it."""
        self.base = base
        """The LangGraph namespace this scope starts at (the tool run's, for a nested scope)."""
        self.thread = thread
        """The LangGraph thread of a top-level run (None inside a tool, or without one)."""
        self.origin = origin
        """Where a top-level model or graph run started (None inside a tool, or for a tool
        invoked on its own, whose scope holds no request): see :func:`find_elsewhere`."""
        self.entries: list[CallEntry] = []
        self.pending: list[CallEntry] = []
        """Requested (or interrupted) calls not yet executed, in request order."""
        self.model_turns = 0
        self.unrequested = 0
        self.output: Any = None

    def current_turn(self) -> int:
        """The turn an unrequested execution belongs to: the last model turn seen, or 0."""
        return self.model_turns - 1 if self.model_turns else 0

    def take(self, entry: CallEntry) -> None:
        """Remove a call from pending (it is executing now)."""
        self.pending.remove(entry)

    def pause(self) -> None:
        """The run paused: calls the latest model turn asked for and nobody answered wait."""
        latest = self.model_turns - 1
        for entry in self.pending:
            if entry.status == "requested" and entry.turn == latest and entry.error is None:
                entry.status = "interrupted"

    def resume(self) -> None:
        """A later run of the same thread started: paused calls are only requested again."""
        for entry in self.pending:
            if entry.status == "interrupted":
                entry.status = "requested"

    def ordered(self, out: list[ToolCall]) -> None:
        """Append this scope's calls in request order, nested calls right after their parent."""
        for entry in sorted(self.entries, key=_order_key):
            out.append(entry.freeze())
            if entry.children is not None:
                entry.children.ordered(out)


def _order_key(entry: CallEntry) -> tuple[int, int, int]:
    return (entry.turn, entry.kind, entry.position)


def find_request(
    scopes: Sequence[CallScope], name: str, args: Mapping[str, Any], call_id: str | None
) -> tuple[CallScope, CallEntry] | None:
    """The waiting request an execution runs, searching ``scopes`` in order.

    By id when the execution has one (a reviewer may have redirected it to another tool); an id
    nobody requested, or no id at all, joins the oldest request of the same name and equal
    arguments (one without an id, when the execution has an id).
    """
    if call_id is not None:
        for scope in scopes:
            for entry in scope.pending:
                if entry.id == call_id:
                    return scope, entry
    for scope in scopes:
        for entry in scope.pending:
            if call_id is not None and entry.id is not None:
                continue
            if entry.name == name and entry.args == args:
                return scope, entry
    return None


def find_retry(
    scopes: Sequence[CallScope], name: str, args: Mapping[str, Any], call_id: str | None
) -> CallEntry | None:
    """The executed call this execution tries again: same id (else name and arguments), failed.

    Only a call whose last attempt failed and that is not running can be retried (a retrying
    tool node or ToolRetryMiddleware runs the same call again).
    """
    for scope in scopes:
        for entry in reversed(scope.entries):
            if entry.running or entry.status != "error" or not entry.attempts:
                continue
            if call_id is not None:
                if entry.id == call_id:
                    return entry
            elif entry.name == name and entry.args == args:
                return entry
    return None


def find_elsewhere(
    scopes: Sequence[CallScope], here: CallScope, origin: Origin, call_id: str
) -> tuple[CallScope, CallEntry] | None:
    """The waiting request with ``call_id`` in another top-level run, for an execution in the
    top-level run ``here`` (started at ``origin``) that found none in its own run or thread.

    The only such request; else, of several, the only one made in a run that started where
    the execution's run started (the same asyncio task, or OS thread outside one:
    :func:`tracing.langchain.events.run_origin`); else None. Concurrent runs never share an origin,
    so concurrent runs reusing an id are left apart, never crossed.
    """
    waiting = [
        (scope, entry)
        for scope in scopes
        if scope is not here
        for entry in scope.pending
        if entry.id == call_id
    ]
    if len(waiting) > 1:
        waiting = [(scope, entry) for scope, entry in waiting if scope.origin == origin]
    return waiting[0] if len(waiting) == 1 else None
