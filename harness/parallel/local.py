"""The executor on this machine: forked worker processes (docs/architecture.md, "Processes").

:class:`LocalPool` runs a session's shards in a standard
:class:`concurrent.futures.ProcessPoolExecutor` whose workers are forked: each inherits the job
as the parent holds it (compiled scenarios, agents imported, models built), so only shards and
results are pickled. The workers leave the terminal's process group: a Ctrl-C reaches the
parent alone, which forwards it once (:func:`stops_forwarded`). A worker that dies breaks the
pool, as the standard executor does: every shard not done yet gives :class:`WorkerLost`.

:class:`Alone` runs one call in a forked process of its own, with a deadline, and says how the
process ended when it sent nothing (``harness run -n`` isolates a crashed scenario so).
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import pickle
import queue
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from harness.parallel.executor import Job, WorkerLost

__all__ = [
    "Alone",
    "Handler",
    "LocalPool",
    "LocalSession",
    "Settled",
    "can_fork",
    "stops_forwarded",
]

S = TypeVar("S")
R = TypeVar("R")

_POLL_SECONDS = 0.05
_JOIN_SECONDS = 5.0
_STOPS = (signal.SIGINT, signal.SIGTERM)
"""What stops a command (CI sends SIGTERM on cancel or timeout), forwarded to its workers."""


def can_fork() -> bool:
    """Can this platform fork worker processes (not Windows; not macOS's default)?"""
    return "fork" in multiprocessing.get_all_start_methods()


def _context() -> Any:
    return multiprocessing.get_context("fork")


class LocalPool:
    """``workers`` forked processes per session, on this machine."""

    def __init__(self, workers: int) -> None:
        """Run up to ``workers`` shards at once (one, in this process, where nothing forks)."""
        self.workers = workers if can_fork() else 1

    def open(self, job: Job[S, R]) -> LocalSession[S, R]:
        """Fork the workers for ``job`` (as they are needed)."""
        return LocalSession(job, self.workers)


class _Channel:
    """A worker's :class:`~harness.parallel.executor.Channel`: a queue and a flag, both made
    before the fork, so every worker and the parent share them."""

    def __init__(self, messages: Any, halted: Any) -> None:
        self.messages = messages
        self.flag = halted

    def send(self, message: Any) -> None:
        self.messages.put(message)

    def halt(self) -> None:
        self.flag.value = True

    def halted(self) -> bool:
        return bool(self.flag.value)


_JOB: Any = None
_CHANNEL: _Channel | None = None
_SPOOL: str | None = None


def _install(job: Any, channel: _Channel, spool: str | None) -> None:
    """Worker initializer: keep the job (inherited, not pickled); leave the terminal's group."""
    global _JOB, _CHANNEL, _SPOOL
    _JOB, _CHANNEL, _SPOOL = job, channel, spool
    # The parent forwards SIGINT/SIGTERM itself (stops_forwarded). A Ctrl-C reaches the whole
    # foreground group, so a worker still in it would get two signals, and a second one forces
    # a run to stop at once instead of ending with a partial result.
    os.setpgrp()
    for signum in _STOPS:
        signal.signal(signum, _stop_worker)


_WORKER_GRACE_SECONDS = 5
"""How long a worker that got a stop signal may take to end by itself."""


def _stop_worker(signum: int, frame: Any) -> None:
    """A stop signal in a worker: start nothing new, and end within a grace period.

    A fork inherits the parent's handler, which raised: a ``SystemExit`` inside the pool's
    worker loop was then sent back on the result queue, whose lock a dead sibling could hold
    (the pool SIGTERMs the other workers when one dies), and the worker waited forever,
    outliving the command. Here nothing raises: the job sees the session halted at its next
    check (a scenario run ends with what finished), and the kernel ends the process at the
    alarm if it is still there (the pool waits for the workers it stopped).
    """
    if _CHANNEL is not None:
        _CHANNEL.halt()
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.alarm(_WORKER_GRACE_SECONDS)


def _call(shard: Any) -> Any:
    result = _JOB(shard, _CHANNEL)
    if _SPOOL is None:
        return result
    # The pool sends a result through a pipe that a thread of the parent drains, 64 KB a read,
    # each read waiting for the interpreter lock while the parent reports: a worker sending a
    # slice's results (near a megabyte) waited with it, idle. A file is written at once; only
    # its name crosses the pipe. Measured with two workers returning 1 MB results from 0.2 s
    # shards to a parent busy in Python: 16 shards in 2.6-3.0 s through the pipe, 2.0 s so.
    fd, path = tempfile.mkstemp(suffix=".pickle", dir=_SPOOL)
    with os.fdopen(fd, "wb") as out:
        pickle.dump(result, out, pickle.HIGHEST_PROTOCOL)
    return _Spooled(path)


@dataclass(frozen=True, slots=True)
class _Spooled:
    """Where a worker wrote a shard's result."""

    path: str

    def load(self) -> Any:
        """The result; the file is removed."""
        with open(self.path, "rb") as spooled:
            result = pickle.load(spooled)
        os.unlink(self.path)
        return result


class LocalSession(Generic[S, R]):
    """A job on forked workers; see :class:`~harness.parallel.executor.Session`."""

    def __init__(self, job: Job[S, R], workers: int) -> None:
        """Make the shared queue and flag, then the pool (its workers fork on first use)."""
        context = _context()
        self._channel = _Channel(context.Queue(), context.RawValue(ctypes.c_bool, False))
        self._inbox: _Inbox | None = None
        try:
            self._spool: str | None = tempfile.mkdtemp(prefix="harness-pool-")
        except OSError:  # no temporary folder: results come through the pipe
            self._spool = None
        self._pool = ProcessPoolExecutor(
            workers, context, initializer=_install, initargs=(job, self._channel, self._spool)
        )

    def submit(self, shard: S) -> Future[R]:
        """Start ``shard`` on a worker (see the Session protocol)."""
        future: Future[R] = Future()
        try:
            inner = self._pool.submit(_call, shard)
        except BrokenProcessPool as exc:
            future.set_exception(_lost(exc, shard))
            return future
        inner.add_done_callback(lambda done: _relay(done, future, shard))
        return future

    def receive(self, timeout: float) -> Any | None:
        """The next message a worker sent, or None after ``timeout`` seconds."""
        if self._inbox is None:
            self._inbox = _Inbox(self._channel.messages)
        return self._inbox.get(timeout)

    def halt(self) -> None:
        """Start no new work in any worker (the job asks :meth:`Channel.halted`)."""
        self._channel.halt()

    def halted(self) -> bool:
        """Was the session halted, here or by a worker?"""
        return self._channel.halted()

    def close(self, *, cancel: bool = False) -> None:
        """Wait for the submitted shards (``cancel``: those not started are dropped)."""
        try:
            self._pool.shutdown(wait=True, cancel_futures=cancel)
        finally:
            if self._inbox is not None:
                self._inbox.close()
            else:
                self._channel.messages.close()
            if self._spool is not None:
                shutil.rmtree(self._spool, ignore_errors=True)


def _relay(done: Future[Any], future: Future[Any], shard: Any) -> None:
    """Pass a pool future's outcome on, a broken pool as :class:`WorkerLost` (on the pool's
    thread: what escaped here would be logged, and ``future`` never resolved)."""
    if done.cancelled():
        future.cancel()
        return
    error = done.exception()
    if isinstance(error, BrokenProcessPool):
        future.set_exception(_lost(error, shard))
    elif error is not None:
        future.set_exception(error)
    else:
        result = done.result()
        try:
            future.set_result(result.load() if type(result) is _Spooled else result)
        except BaseException as exc:  # e.g. the spool file could not be read
            future.set_exception(exc)


def _lost(error: BrokenProcessPool, shard: Any) -> WorkerLost:
    message = "a worker process ended abruptly (killed by a signal or out of memory)"
    lost = WorkerLost(f"{message} with shard {shard!r} in hand", shard=shard)
    lost.__cause__ = error
    return lost


class _Inbox:
    """The workers' messages, moved off the multiprocessing queue by a daemon thread.

    A worker killed halfway through a ``put`` leaves a message that can never be read to its
    end; a daemon thread stuck on it costs nothing, where the main thread would hang.
    """

    def __init__(self, source: Any) -> None:
        self._source = source
        # Not a SimpleQueue: on CPython 3.11 its get(timeout) waits forever once a signal
        # handler (the parent's stops_forwarded) runs past the deadline.
        self._items: queue.Queue[Any] = queue.Queue()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._move, name="harness-inbox", daemon=True)
        self._thread.start()

    def _move(self) -> None:
        get, put = self._source.get, self._items.put
        while not self._closed.is_set():
            try:
                put(get(timeout=_POLL_SECONDS))
            except queue.Empty:
                continue
            except (EOFError, OSError, ValueError):  # the queue was closed under this thread
                return

    def get(self, timeout: float) -> Any:
        """The next message, or None after ``timeout`` seconds without one."""
        try:
            return self._items.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self) -> None:
        """Stop moving messages; the queue is closed once the thread has let go of it."""
        self._closed.set()
        self._thread.join(timeout=2 * _POLL_SECONDS + 0.5)
        if not self._thread.is_alive():
            self._source.close()


Handler = Callable[[int, Any], None]
"""A signal handler: ``handler(signum, frame)``."""


@contextmanager
def stops_forwarded(then: Handler | None = None) -> Iterator[None]:
    """While inside, SIGINT/SIGTERM reach this process's worker processes too.

    Each stop signal sends SIGTERM to every process this one started (SIGKILL from the second
    signal on: a second Ctrl-C stops at once), then calls ``then``, or does what it did before:
    the handler that was installed, or the default (SIGINT raises KeyboardInterrupt; SIGTERM
    ends the process, here as ``SystemExit(143)``, so the workers' spool is removed on the way).
    Off the main thread (no signals there) it does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous: dict[int, Any] = {}
    owner = os.getpid()

    def forward(signum: int, frame: Any) -> None:
        if os.getpid() != owner:
            # a worker forked a moment ago, before its initializer set its own handler: the
            # pool stopping a broken pool's workers must end it (it holds no work yet); going
            # on, it could wait for ever on a queue lock a killed sibling held
            os._exit(128 + signum)
        received.append(signum)
        for child in multiprocessing.active_children():
            if child.pid is not None:
                os.kill(child.pid, signal.SIGKILL if len(received) > 1 else signal.SIGTERM)
        handler = then or previous[signum]
        if callable(handler):
            handler(signum, frame)
        elif handler == signal.SIG_DFL:
            raise SystemExit(128 + signum)  # the shell's status for a process the signal ended

    previous.update({signum: signal.signal(signum, forward) for signum in _STOPS})
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@dataclass(frozen=True, slots=True)
class Settled:
    """How a call run :class:`Alone` ended: what it sent, or why it sent nothing."""

    result: Any
    """What the call returned (None when it sent nothing)."""
    sent: bool
    timed_out: bool
    """Killed at its deadline."""
    exitcode: int | None
    """The process's exit status (negative: the signal that ended it)."""


@dataclass(slots=True)
class Alone:
    """One call in a forked process of its own, its result sent back on a pipe."""

    process: Any
    receiver: Any
    began: float
    limit: float

    @classmethod
    def start(cls, call: Callable[[], Any], limit: float, name: str) -> Alone:
        """Fork a process that runs ``call`` and sends what it returns (unless None); it is
        killed after ``limit`` seconds."""
        context = _context()
        receiver, sender = context.Pipe(duplex=False)
        process = context.Process(target=_alone, args=(call, sender), name=name, daemon=True)
        process.start()
        sender.close()  # the child holds the only writer: its death reads as the end of the pipe
        return cls(process, receiver, time.monotonic(), limit)

    def settle(self) -> Settled:
        """Wait for the call's result, its process's end, or its deadline."""
        result: Any = None
        sent = timed_out = False
        try:
            if self.receiver.poll(max(self.began + self.limit - time.monotonic(), 0.0)):
                result, sent = self.receiver.recv(), True
            else:
                timed_out = True
        except (EOFError, OSError):
            pass  # it died before sending anything
        finally:
            self.receiver.close()
        self.process.join(timeout=_JOIN_SECONDS)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        return Settled(result, sent, timed_out, self.process.exitcode)

    @property
    def seconds(self) -> float:
        """Since the process started."""
        return time.monotonic() - self.began


def _alone(call: Callable[[], Any], sender: Any) -> None:
    """In the forked process: leave the terminal's group, run ``call``, send its result."""
    os.setpgrp()  # as a pool worker (see _install)
    result = call()
    if result is not None:
        sender.send(result)
    sender.close()
