"""The executor interface: one job, run over shards in other processes, plain data both ways.

An :class:`Executor` opens a :class:`Session` for a :class:`Job`; the session takes shards and
gives a :class:`concurrent.futures.Future` of each shard's result. Shards and results are plain
picklable data (a slice of a file, positions in a selection; lists of results), and a shard
whose worker died gives :class:`WorkerLost`, so the caller decides how to redo it. While a shard
runs, its job may :meth:`~Channel.send` the parent messages (``harness run -n`` streams each
scenario's start and result that way) and ask whether the run was :meth:`~Channel.halted`.

:class:`~harness.parallel.local.LocalPool` runs on this machine (forked processes, the default);
:class:`~harness.parallel.dask.DaskExecutor` on a Dask cluster (``--executor dask``; each task
carries the pickled job, a killed worker's task gives :class:`WorkerLost`, no messages cross).
See docs/architecture.md, "Processes".
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future
from typing import Any, Protocol, TypeVar

from harness.errors import WorkerLost

__all__ = ["Channel", "Executor", "Job", "Session", "WorkerLost", "default_workers", "in_order"]

S = TypeVar("S")
"""A shard: plain, picklable data saying what part of the work to do."""
R = TypeVar("R")
"""A shard's result: plain, picklable data."""
S_contra = TypeVar("S_contra", contravariant=True)
R_co = TypeVar("R_co", covariant=True)


class Channel(Protocol):
    """A worker's line to the parent while it works on a shard."""

    def send(self, message: Any) -> None:
        """Hand the parent ``message`` now (a shard's messages arrive in the order sent)."""

    def halt(self) -> None:
        """Tell every worker of the session to start nothing new (``-x`` after a failure)."""

    def halted(self) -> bool:
        """Did this worker, another one or the parent :meth:`halt` the session?"""


class Job(Protocol[S_contra, R_co]):
    """What every shard of a session is processed with, in a worker process."""

    def __call__(self, shard: S_contra, channel: Channel, /) -> R_co:
        """The result of one shard."""


class Session(Protocol[S_contra, R]):
    """A job open on an executor's workers."""

    def submit(self, shard: S_contra) -> Future[R]:
        """Start ``shard``; the future's ``result()`` raises :class:`WorkerLost` if its worker
        died (the job's own exceptions are raised as they are)."""

    def receive(self, timeout: float) -> Any | None:
        """The next message a job sent, or None after ``timeout`` seconds without one."""

    def halt(self) -> None:
        """As :meth:`Channel.halt`, from the parent."""

    def halted(self) -> bool:
        """As :meth:`Channel.halted`, from the parent."""

    def close(self, *, cancel: bool = False) -> None:
        """Wait for the shards submitted (``cancel``: drop those not started) and let the
        workers go."""


class Executor(Protocol):
    """Where sessions run: :class:`~harness.parallel.local.LocalPool`, or a cluster."""

    @property
    def workers(self) -> int:
        """How many shards a session runs at once."""

    def open(self, job: Job[S, R]) -> Session[S, R]:
        """Start the workers for ``job``; close the session when done with it."""


def in_order(
    session: Session[S, R], shards: Iterable[S], ahead: int
) -> Iterator[tuple[S, Future[R]]]:
    """Each shard with its finished future, in input order, at most ``ahead`` shards submitted.

    So memory stays bounded by ``ahead`` shards' results however long the input is, and the
    last shards are submitted while the first ones are being passed on.
    """
    pending: deque[tuple[S, Future[R]]] = deque()
    shards = iter(shards)
    for shard in shards:
        pending.append((shard, session.submit(shard)))
        if len(pending) >= ahead:
            break
    while pending:
        shard, future = pending.popleft()
        future.exception()  # wait for it; its result() still raises what the shard raised
        for following in shards:
            pending.append((following, session.submit(following)))
            break
        yield shard, future


def default_workers() -> int:
    """The number of cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1
