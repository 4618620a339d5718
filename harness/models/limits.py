"""``model: {..., max_concurrency: N}``: at most N calls of that model in flight, in the whole run.

A local engine that serves one request at a time, or a provider with a rate limit, cannot take
``--concurrency`` scenarios' calls at once: they queue inside the engine and the runs time out.
The limit bounds the model's *calls*, not the scenarios: an agent's tools, and the scenarios
whose model is another one, keep running beside it.

* **One gate per model config.** :func:`gate_for` gives every scenario whose model spec is the
  same (suites included) the same :class:`ModelGate`. Its slots are a semaphore made when the
  suite loads, before ``harness run -n`` forks its workers, so the workers share it as well; where
  a process-shared semaphore cannot be made (no ``fork``, no ``sem_open``) it is this process's.
* **Sync and async calls.** A sync call (on an agent's or LangChain's thread) waits on the
  semaphore; an async one waits on a thread of its own, so the event loop never blocks, and a
  slot its cancelled waiter won after all is handed back at once.
* **The run's timeout.** Time spent waiting for a slot is the harness's queue, not the agent's
  slowness, so it does not count against the run's ``timeout``: the run's deadline moves by the
  time its calls waited (:class:`WaitLedger`), up to one more ``timeout`` — a slot held by a
  stuck call (a sync call cannot be cancelled) must not hold every run behind it forever. The
  runner reads the ledger (docs/architecture.md, "Threading and concurrency contracts").
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncIterator, Hashable, Iterator
from concurrent.futures import Future
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Protocol

from langchain_core.language_models.base import LangSmithParams
from langchain_core.messages import AIMessage, AIMessageChunk

from harness.models.wrapping import (
    InnerChatModel,
    Turn,
    as_ai_message,
    ask,
    ask_async,
    ask_stream,
    ask_stream_async,
)
from harness.run.isolation import DaemonExecutor, WaitLedger, current_ledger

__all__ = ["LimitedChatModel", "ModelGate", "gate_for"]

POLL = 0.25
"""Seconds between two looks, while waiting for a slot, at whether the run is still waiting."""


class _Slots(Protocol):
    def acquire(self, block: bool = ..., timeout: float | None = ...) -> bool: ...

    def release(self) -> None: ...


def _slots(limit: int) -> _Slots:
    """A semaphore of ``limit`` slots that forked ``-n`` workers share (else this process's)."""
    try:
        import multiprocessing

        return multiprocessing.get_context("fork").BoundedSemaphore(limit)
    except (ImportError, OSError, ValueError):  # Windows, or a system without sem_open
        return threading.BoundedSemaphore(limit)


_waiters = DaemonExecutor("harness-model-slot")
"""Where async calls wait for a slot: daemon threads, so a wait never keeps the process alive."""


def _fresh_waiters() -> None:
    # a forked -n worker has none of the parent's threads, idle or not
    global _waiters
    _waiters = DaemonExecutor("harness-model-slot")


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_fresh_waiters)


class ModelGate:
    """The ``max_concurrency`` slots of one model config, shared by every scenario using it."""

    def __init__(self, label: str, limit: int) -> None:
        """``label`` names the model in messages; ``limit`` slots."""
        self.label = label
        self.limit = limit
        self._slots = _slots(limit)

    def __repr__(self) -> str:
        return f"ModelGate({self.label!r}, max_concurrency={self.limit})"

    def _wait(self, ledger: WaitLedger | None, stop: threading.Event | None) -> bool:
        """Block until a slot is won (True), or the run or the waiter gave up (False)."""
        while not self._slots.acquire(True, POLL):
            if stop is not None and stop.is_set():
                return False
            if ledger is not None and ledger.ended.is_set():
                return False
        return True

    def _ended(self) -> TimeoutError:
        # raised in a call whose run is over (timed out, stopped): nobody scores it any more
        return TimeoutError(
            f"the run ended while a call waited for a slot of model {self.label} "
            f"(max_concurrency {self.limit})"
        )

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold a slot for the block (a sync call: this thread waits for it)."""
        if not self._slots.acquire(False):
            ledger = current_ledger()
            if ledger is not None:
                ledger.start()
            try:
                won = self._wait(ledger, None)
            finally:
                if ledger is not None:
                    ledger.stop()
            if not won:
                raise self._ended()
        try:
            yield
        finally:
            self._slots.release()

    @asynccontextmanager
    async def held_async(self) -> AsyncIterator[None]:
        """Hold a slot for the block (an async call: a thread waits, the loop does not)."""
        if not self._slots.acquire(False):
            await self._wait_async()
        try:
            yield
        finally:
            self._slots.release()

    async def _wait_async(self) -> None:
        ledger = current_ledger()
        if ledger is not None:
            ledger.start()
        stop = threading.Event()
        waiting: Future[bool] = _waiters.submit(self._wait, ledger, stop)
        try:
            won = await asyncio.wrap_future(waiting)
        except BaseException:
            # cancelled (a timeout, a stop): the thread may still win a slot; it goes back then
            stop.set()
            waiting.add_done_callback(self._give_back)
            raise
        finally:
            if ledger is not None:
                ledger.stop()
        if not won:
            raise self._ended()

    def _give_back(self, waiting: Future[bool]) -> None:
        if not waiting.cancelled() and waiting.exception() is None and waiting.result():
            self._slots.release()


_gates: dict[Hashable, ModelGate] = {}
_gates_lock = threading.Lock()


def gate_for(key: Hashable, label: str, limit: int) -> ModelGate:
    """The one gate of a model config (``key``: the config, its limit included)."""
    with _gates_lock:
        gate = _gates.get(key)
        if gate is None:
            gate = _gates[key] = ModelGate(label, limit)
        return gate


class LimitedChatModel(InnerChatModel):
    """``inner`` behind its :class:`ModelGate`: each turn holds a slot while the model answers."""

    gate: Any
    """The :class:`ModelGate` (typed loosely: pydantic would try to validate it)."""

    def __repr__(self) -> str:
        return f"LimitedChatModel({self.inner!r}, max_concurrency={self.gate.limit})"

    def cassette_identity(self) -> tuple[str, str, dict[str, Any]]:
        """The inner model's identity: a limit changes no answer, so no cassette key."""
        from harness.cassettes.request_key import identity_of

        identity = identity_of(self.inner)
        return identity.provider, identity.model, dict(identity.params)

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        return self.inner._get_ls_params(stop=stop, **kwargs)

    def _reply(self, turn: Turn) -> AIMessage:
        with self.gate.held():
            return as_ai_message(ask(self.inner, turn))

    async def _areply(self, turn: Turn) -> AIMessage:
        async with self.gate.held_async():
            return as_ai_message(await ask_async(self.inner, turn))

    def _pieces(self, turn: Turn) -> Iterator[AIMessageChunk]:
        with self.gate.held():
            yield from ask_stream(self.inner, turn)

    async def _apieces(self, turn: Turn) -> AsyncIterator[AIMessageChunk]:
        async with self.gate.held_async():
            async for piece in ask_stream_async(self.inner, turn):
                yield piece
