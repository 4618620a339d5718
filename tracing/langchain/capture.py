"""Capture without passing a config: ``with capture_tool_calls() as recorder:``, and turns.

For an app whose agent is invoked deep inside code a test cannot change, nobody can hand the
recorder's config to ``invoke``. LangChain has a mechanism for exactly this, the one LangSmith
tracing and OpenInference use: ``langchain_core.tracers.context.register_configure_hook``. A
hook names a ContextVar; whenever LangChain configures the callbacks of a run and the variable
holds a handler, that handler is added (once: a handler already attached, say through
``recorder.config``, is not added twice). Here the variable holds the recorder of the innermost
open ``capture_tool_calls()`` block, so every LangChain / LangGraph run started in that block
is recorded: in this thread, in the asyncio tasks it starts (tasks copy the context), and on
the executor threads LangChain runs sync tools on (it copies the context too). A thread the app
starts by hand with ``threading.Thread`` does not inherit the context and is not captured.

:class:`RecorderTurn` (``recorder.turn()``) gives the calls of the runs started inside one
``with`` block: one turn of a conversation, for ``expect_tools(turn)``.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from typing import Any, Generic, TypeVar

from langchain_core.tracers.context import register_configure_hook

from tracing.langchain.recorder import ToolCallRecorder
from tracing.records import ModelCall, ToolCall

__all__ = ["RecorderTurn", "ToolCapture", "active_recorder", "capture_tool_calls"]

_ACTIVE: contextvars.ContextVar[ToolCallRecorder | None] = contextvars.ContextVar(
    "toolcall_harness_capture", default=None
)
# inheritable: the recorder sees the runs nested in a captured run as well, as with callbacks=
register_configure_hook(_ACTIVE, inheritable=True)

_Value = TypeVar("_Value")


def active_recorder() -> ToolCallRecorder | None:
    """The recorder of the innermost open ``capture_tool_calls()`` block here, if any."""
    return _ACTIVE.get()


class _Block(Generic[_Value]):
    """A ``with`` block that also works as ``async with``: one body for both.

    Entering and leaving only set and reset a ContextVar or read the recorder, so the async
    form has nothing to await; each block defines :meth:`_start` and :meth:`_stop` once.
    """

    __slots__ = ()

    def _start(self) -> _Value:
        raise NotImplementedError

    def _stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> _Value:
        """Enter the block; its value is what ``as`` binds."""
        return self._start()

    def __exit__(self, *exc_info: object) -> None:
        """Leave the block (exceptions pass through)."""
        self._stop()

    async def __aenter__(self) -> _Value:
        """``async with``: the same as ``with``."""
        return self._start()

    async def __aexit__(self, *exc_info: object) -> None:
        """``async with``: the same as ``with``."""
        self._stop()


class ToolCapture(_Block[ToolCallRecorder]):
    """The block of ``capture_tool_calls()``: ``with`` and ``async with`` both work."""

    __slots__ = ("_previous", "_token", "recorder")

    def __init__(self, recorder: ToolCallRecorder | None = None) -> None:
        """Capture into ``recorder`` (a fresh one by default)."""
        self.recorder = recorder if recorder is not None else ToolCallRecorder()
        self._token: contextvars.Token[ToolCallRecorder | None] | None = None
        self._previous: ToolCallRecorder | None = None

    def _start(self) -> ToolCallRecorder:
        """Start capturing; the recorder is the block's value."""
        self._previous = _ACTIVE.get()
        self._token = _ACTIVE.set(self.recorder)
        return self.recorder

    def _stop(self) -> None:
        """Stop capturing; the recorder keeps what it saw."""
        token, self._token = self._token, None
        if token is None:
            return
        try:
            _ACTIVE.reset(token)
        except ValueError:
            # closed in another context than it was opened in (a fixture torn down by another
            # task): put the previous recorder back by value
            _ACTIVE.set(self._previous)


def capture_tool_calls(recorder: ToolCallRecorder | None = None) -> ToolCapture:
    """Record every LangChain / LangGraph run started inside the block, without any config."""
    return ToolCapture(recorder)


class RecorderTurn(_Block["RecorderTurn"]):
    """The calls of the top-level runs started inside one ``with recorder.turn():`` block.

    A call requested in this turn and resumed in a later one (an interrupted tool) stays in
    this turn, with its final status, as ``harness run`` scores turns. Iterating gives the
    calls, so ``expect_tools(turn)`` works; ``Sample.from_recorder(turn)`` gives a Sample.
    """

    __slots__ = ("_before", "_recorder", "_runs")

    def __init__(self, recorder: ToolCallRecorder) -> None:
        """A turn of ``recorder``; it starts when the ``with`` block is entered."""
        self._recorder = recorder
        self._before: frozenset[str] = frozenset()
        self._runs: tuple[str, ...] | None = None

    def _start(self) -> RecorderTurn:
        """Start the turn: runs already recorded belong to earlier turns."""
        self._before = frozenset(self._recorder.calls_by_run())
        self._runs = None
        return self

    def _stop(self) -> None:
        """End the turn: the runs started since it began are its runs."""
        self._runs = self._new_runs()

    def _new_runs(self) -> tuple[str, ...]:
        return tuple(run for run in self._recorder.calls_by_run() if run not in self._before)

    @property
    def run_ids(self) -> tuple[str, ...]:
        """The top-level runs of this turn (so far, while the block is open)."""
        return self._runs if self._runs is not None else self._new_runs()

    def calls(self) -> list[ToolCall]:
        """This turn's calls, in request order."""
        by_run = self._recorder.calls_by_run()
        return [call for run in self.run_ids for call in by_run.get(run, ())]

    def model_calls(self) -> list[ModelCall]:
        """This turn's model calls (token usage, times), in start order."""
        return [call for run in self.run_ids for call in self._recorder.model_calls(run)]

    def __iter__(self) -> Iterator[ToolCall]:
        """The calls, for ``expect_tools(turn)``."""
        return iter(self.calls())

    def __len__(self) -> int:
        """How many calls this turn made."""
        return len(self.calls())

    def last_output(self) -> Any:
        """The final answer of the recorder's last finished run (this turn's, once it ended)."""
        return self._recorder.last_output()
