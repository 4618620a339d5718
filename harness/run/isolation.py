"""Keeping a misbehaving agent inside its own scenario (docs/architecture.md, "Threading").

What an agent or tool does must end as that scenario's result, never as the end of the run:

- :func:`contained` turns *any* exception of an agent call, ``BaseException`` included
  (``KeyboardInterrupt``, ``SystemExit(n)`` from an argparse tool, ``GeneratorExit``, a
  ``CancelledError`` the agent raises itself), into an :class:`Outcome`. Only a stop the harness
  process really received (its signal handler sets :attr:`StopState.forced`) goes through.
- :class:`LoopWatch` is a watchdog thread over the event loop. An async agent that blocks the
  loop (``time.sleep`` in async code) stops every timer; when the loop has not ticked while a
  run is past its deadline, the watchdog sends the loop's thread a signal whose handler raises
  :class:`LoopBlocked` inside the blocking call, so the run ends as a timeout that says it
  blocked, and the other scenarios go on. Without signals (not the main thread, Windows) the
  block is still detected and reported once the call returns.
- :class:`WaitLedger` counts the time a run's model calls waited for a ``max_concurrency``
  slot (:mod:`harness.models.limits`): the runner moves the run's deadline by it, up to one more
  timeout, since that wait is the harness's queue, not the agent's slowness.
- :class:`DaemonExecutor` is the loop's default executor (LangChain's sync tools run there) on
  daemon threads that interpreter exit never joins, so a hung sync tool cannot keep pytest or
  ``harness`` from exiting. :func:`in_thread` runs sync agents and factories on one of its own,
  in the caller's context (the run's capture hooks and ledger go with it).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import queue
import signal
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

TICK = 0.05
"""Seconds between the loop's heartbeats (and the watchdog's looks at them)."""

BLOCKED_AFTER = 0.25
"""A loop without a heartbeat for this long is blocked (scoring a large result stays below)."""

REFIRE = 0.5
"""Seconds between two interrupts of a call that swallowed the first."""

_SIGNAL: int | None = getattr(signal, "SIGUSR1", None)

_IN_AGENT: contextvars.ContextVar[object | None] = contextvars.ContextVar(
    "harness_in_agent", default=None
)
"""The agent call a task works for: set in the call's task, copied into every task it starts."""


class LoopBlocked(BaseException):
    """Raised inside a call that blocked the event loop past a run's deadline.

    A ``BaseException``, so an agent's ``except Exception`` does not swallow it.
    """

    def __init__(self, seconds: float) -> None:
        """``seconds``: how long the loop had been blocked when the call was interrupted."""
        super().__init__(f"blocked the event loop for {seconds:.1f}s")
        self.seconds = seconds


@dataclass(slots=True)
class StopState:
    """What the harness process itself was told: the signal that stops the run, a forced stop."""

    signal: int | None = None
    """SIGINT or SIGTERM received: the run is being cancelled (partial result)."""
    forced: bool = False
    """A second signal: ``KeyboardInterrupt`` is the harness's own, let it through."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one agent call ended: its value, or whatever it raised."""

    value: Any = None
    error: BaseException | None = None


async def contained(call: Awaitable[Any], stop: StopState, owner: object) -> Outcome:
    """Await ``call``; anything it raises becomes the outcome, but a forced stop goes through.

    Run it as a task of its own: it marks that task's context as working for ``owner``.
    """
    _IN_AGENT.set(owner)
    try:
        return Outcome(value=await call)
    except KeyboardInterrupt as exc:
        if stop.forced:
            raise
        return Outcome(error=exc)
    except BaseException as exc:  # SystemExit, GeneratorExit, CancelledError, LoopBlocked, ...
        return Outcome(error=exc)


class LoopWatch:
    """A heartbeat on the loop and a watchdog thread that interrupts a call blocking it."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        """Watch ``loop`` (not started until :meth:`start`)."""
        self._loop = loop
        self._lock = threading.Lock()
        self._deadlines: dict[int, float] = {}
        self._next_token = 0
        self._last_tick = time.monotonic()
        self.stalled = 0.0
        """Total seconds the loop went without a heartbeat (beyond one tick)."""
        self._pending = False
        self._last_fired = 0.0
        self._done = threading.Event()
        self._target: int | None = None
        self._previous: Any = None
        self._handle: asyncio.TimerHandle | None = None
        self._owners: weakref.WeakKeyDictionary[asyncio.Future[Any], object]
        self._owners = weakref.WeakKeyDictionary()
        self._blame: dict[int, float] = {}

    def task_factory(
        self, loop: asyncio.AbstractEventLoop, coro: Any, /, **kwargs: Any
    ) -> asyncio.Task[Any]:
        """The loop's task factory: a task started by an agent call is known as that call's."""
        task: asyncio.Task[Any] = asyncio.Task(coro, loop=loop, **kwargs)
        context = kwargs.get("context")
        owner = context.get(_IN_AGENT) if context is not None else _IN_AGENT.get()
        if owner is not None:
            self._owners[task] = owner
        return task

    def own(self, task: asyncio.Future[Any], owner: object) -> None:
        """``task`` is the agent call ``owner``'s (its own task, made before the mark is set)."""
        self._owners[task] = owner

    def blocked_by(self, owner: object) -> float:
        """How long the longest stall lasted while ``owner``'s code held the loop (0: never)."""
        with self._lock:
            return self._blame.get(id(owner), 0.0)

    def release(self, owner: object) -> None:
        """``owner`` is done: forget its stalls (ids are reused once it is collected)."""
        with self._lock:
            self._blame.pop(id(owner), None)

    def start(self) -> None:
        """Start the heartbeat; interrupt blocking calls if this is the main thread."""
        self._last_tick = time.monotonic()
        self._handle = self._loop.call_later(TICK, self._tick)
        on_main = threading.current_thread() is threading.main_thread()
        if _SIGNAL is not None and hasattr(signal, "pthread_kill") and on_main:
            self._target = threading.get_ident()
            self._previous = signal.signal(_SIGNAL, self._on_signal)
        threading.Thread(target=self._watch, name="harness-loop-watch", daemon=True).start()

    def close(self) -> None:
        """Stop watching and restore the signal handler."""
        self._done.set()
        if self._handle is not None:
            self._handle.cancel()
        if self._target is not None and _SIGNAL is not None:
            signal.signal(_SIGNAL, self._previous)
            self._target = None

    def expect(self, deadline: float) -> int:
        """Register a run due by ``deadline`` (monotonic); the token is for :meth:`forget`."""
        with self._lock:
            self._next_token += 1
            self._deadlines[self._next_token] = deadline
            return self._next_token

    def forget(self, token: int) -> None:
        """The run is over (or abandoned): its deadline no longer counts."""
        with self._lock:
            self._deadlines.pop(token, None)

    def lag(self) -> float:
        """Seconds since the last heartbeat."""
        return time.monotonic() - self._last_tick

    def _tick(self) -> None:
        now = time.monotonic()
        gap = now - self._last_tick
        if gap > 2 * TICK:
            self.stalled += gap - TICK
        self._last_tick = now
        if not self._done.is_set():
            self._handle = self._loop.call_later(TICK, self._tick)

    def _watch(self) -> None:
        while not self._done.wait(TICK):
            now = time.monotonic()
            lag = self.lag()
            if lag < BLOCKED_AFTER:
                continue
            self._blame_current(lag)
            if self._target is None:
                continue  # no signal can reach the loop's thread: the block is reported later
            with self._lock:
                overdue = any(deadline < now for deadline in self._deadlines.values())
            if overdue and now - self._last_fired >= REFIRE:
                self._last_fired = now
                self._pending = True
                signal.pthread_kill(self._target, _SIGNAL)  # type: ignore[arg-type]

    def _blame_current(self, lag: float) -> None:
        """Charge the stall to the agent call whose task the loop is stuck in, if any."""
        try:
            current = asyncio.current_task(self._loop)  # a read of the loop's table; any thread
        except RuntimeError:
            return
        owner = self._owners.get(current) if current is not None else None
        if owner is not None:
            with self._lock:
                self._blame[id(owner)] = max(self._blame.get(id(owner), 0.0), lag)

    def _on_signal(self, signum: int, frame: Any) -> None:
        if self._pending:
            self._pending = False
            lag = self.lag()
            # still blocked, and by an agent call (the handler runs in the context of the task
            # being stepped): never raise into the harness's own work, such as scoring
            if lag >= BLOCKED_AFTER and _IN_AGENT.get() is not None:
                raise LoopBlocked(lag)
            return
        if callable(self._previous):  # not ours: whoever had the signal before
            self._previous(signum, frame)


class WaitLedger:
    """How long one run's model calls waited for slots: the time any of them was waiting."""

    def __init__(self) -> None:
        """An empty ledger; the runner makes one per run."""
        self._lock = threading.Lock()
        self._done = 0.0
        self._waiting = 0
        self._since = 0.0
        self.ended = threading.Event()
        """Set by the runner when the run is over: a call still waiting gives up."""

    def start(self) -> None:
        """A wait begins now (calls of one run may wait side by side: they count once)."""
        with self._lock:
            if self._waiting == 0:
                self._since = time.monotonic()
            self._waiting += 1

    def stop(self) -> None:
        """One wait is over (a slot was won, or the wait given up)."""
        with self._lock:
            self._waiting -= 1
            if self._waiting == 0:
                self._done += time.monotonic() - self._since

    def waited(self) -> float:
        """Seconds during which at least one of the run's calls waited, up to now."""
        with self._lock:
            ongoing = time.monotonic() - self._since if self._waiting else 0.0
            return self._done + ongoing


_LEDGER: contextvars.ContextVar[WaitLedger | None] = contextvars.ContextVar(
    "harness_model_waits", default=None
)


@contextmanager
def counting_waits(ledger: WaitLedger) -> Iterator[WaitLedger]:
    """Model calls made in this block (its tasks and the threads given its context) note their
    waits for a slot in ``ledger``."""
    token = _LEDGER.set(ledger)
    try:
        yield ledger
    finally:
        _LEDGER.reset(token)


def current_ledger() -> WaitLedger | None:
    """The ledger of the run this code works for, if a runner opened one."""
    return _LEDGER.get()


class DaemonExecutor(ThreadPoolExecutor):
    """A thread pool on daemon threads, never joined: not at shutdown, not at interpreter exit.

    A ``ThreadPoolExecutor`` subclass only because ``loop.set_default_executor`` demands one;
    none of its machinery is used (its workers are joined at exit, which is the problem).
    """

    def __init__(self, thread_name_prefix: str = "harness-tool") -> None:
        """No thread starts until work is submitted; idle workers are reused."""
        super().__init__(max_workers=1, thread_name_prefix=thread_name_prefix)
        self._jobs: queue.SimpleQueue[tuple[Future[Any], Callable[..., Any], Any, Any] | None]
        self._jobs = queue.SimpleQueue()
        self._state = threading.Lock()
        self._idle = 0
        self._workers = 0
        self._closed = False
        self._prefix = thread_name_prefix

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """Run ``fn`` on an idle worker, or on a new one when all are busy (or hung)."""
        future: Future[T] = Future()
        with self._state:
            if self._closed:
                raise RuntimeError("cannot schedule new futures after shutdown")
            self._jobs.put((future, fn, args, kwargs))
            if self._idle:
                self._idle -= 1
                return future
            self._workers += 1
            name = f"{self._prefix}_{self._workers}"
        threading.Thread(target=self._work, name=name, daemon=True).start()
        return future

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            future, fn, args, kwargs = job
            del job
            if future.set_running_or_notify_cancel():
                try:
                    result = fn(*args, **kwargs)
                except BaseException as exc:  # delivered to the awaiting task, like the stdlib's
                    future.set_exception(exc)
                else:
                    future.set_result(result)
            del future, fn, args, kwargs
            with self._state:
                if self._closed:
                    return
                self._idle += 1

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Let idle workers go; a busy (or hung) one ends when its call does. Never waits."""
        with self._state:
            self._closed = True
            idle, self._idle = self._idle, 0
        if cancel_futures:
            while True:
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if job is not None:
                    job[0].cancel()
        for _ in range(idle):
            self._jobs.put(None)


# --- agent threads ----------------------------------------------------------------------------


_agent_threads = DaemonExecutor("harness-agent")
"""Where sync factories and agents run. Daemon threads, reused when idle: starting a fresh
thread per call cost about 0.1 ms of CPU per scenario (bench_runner); a hung call keeps its
thread and the next call gets a new one, so nothing waits for it, not even exit."""


def _fresh_agent_threads() -> None:
    # a forked child (harness run -n) has none of the parent's threads, idle or not
    global _agent_threads
    _agent_threads = DaemonExecutor("harness-agent")


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_fresh_agent_threads)


FACTORY_HOLD = 0.005
"""Seconds the loop waits, blocked, for a sync factory on its thread before awaiting it."""


async def in_thread(func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run ``func`` on a daemon thread: a call that never returns cannot block exit."""
    future, _ = _start_in_thread(func, args, kwargs)
    return await future


async def build_in_thread(func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """:func:`in_thread` for a sync agent factory: the loop first waits ``FACTORY_HOLD``.

    A factory mostly compiles a graph, pure Python work. Were the loop to carry on meanwhile,
    every loop iteration would hand the GIL to the factory's thread and wait up to a switch
    interval to get it back: about 15 more context switches and 1.5-2.5 ms more CPU per
    scenario (bench_runner, variant langgraph). Holding the loop lets a quick build finish
    alone; a slow or hung one is then awaited like any other thread call, so the factory's
    timeout and isolation are unchanged (docs/architecture.md, "Threading and concurrency
    contracts").
    """
    future, finished = _start_in_thread(func, args, kwargs)
    finished.wait(FACTORY_HOLD)  # releases the GIL: the factory runs without the loop's turns
    return await future


def _start_in_thread(
    func: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[asyncio.Future[T], threading.Event]:
    """Submit ``func`` to a daemon thread: its result's future, and an event set once it ended."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    finished = threading.Event()
    context = contextvars.copy_context()

    def settle(setter: Callable[[Any], None], value: Any) -> None:
        if not future.done():
            setter(value)

    def work() -> None:
        try:
            value = context.run(func, *args, **kwargs)
        except BaseException as exc:
            _post(loop, settle, future.set_exception, exc)
        else:
            _post(loop, settle, future.set_result, value)
        finally:
            finished.set()

    _agent_threads.submit(work)
    return future, finished


def _post(loop: asyncio.AbstractEventLoop, *callback: Any) -> None:
    # the loop may have closed while a hung call was still running: then nobody waits for it
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(*callback)
