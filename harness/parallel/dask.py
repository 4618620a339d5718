"""The executor on a Dask cluster: ``harness eval-traces --executor dask[://HOST:PORT]``.

:class:`DaskExecutor` implements the executor interface (:mod:`harness.parallel.executor`) over
a ``distributed.Client``: each shard is one task ``job(shard, channel)``, and each task's Dask
future is relayed to a standard :class:`concurrent.futures.Future`, so the eval-traces
slicing and merge (:mod:`harness.parallel.traces`) are the same code as for the local pool.

What a cluster does differently from the forked pool:

- the job travels as pickled bytes with each task and is loaded once per worker process (kept
  by its digest): a worker the nanny restarts, or one that joins mid-run, gets it from the task
  itself, and nothing in it refers to a module the parent loaded from a file (the eval-traces
  job holds its scenarios as eval-traces loads them: no agent imported, no model built);
- a worker that dies has the tasks it held run again on other workers; a task whose workers died
  more than ``distributed.scheduler.allowed-failures`` times (default 3) gives
  :class:`WorkerLost` naming its shard. Each lost task is named on its own: a task that kills
  every worker it runs on is one of them, and one that only sat queued beside it on those
  workers may be too. The caller scores such a shard as it would after a lost local worker;
- no messages cross from the workers (:meth:`DaskSession.receive` waits and gives None; a job
  that calls :meth:`Channel.send` gets :class:`RuntimeError`), and :meth:`DaskSession.halt`
  stops only new submissions from this process: ``harness run -n`` keeps the local pool;
- a cluster left with no worker (all gone, none restarted) or a scheduler that stops answering
  would leave the tasks waiting for ever: after :data:`NO_WORKER_SECONDS` of that, every task
  not done gives :class:`WorkerLost` and the caller scores its shard itself;
- the workers read the input files by the paths the parent gives, so on a cluster of several
  machines the files must be on storage they share (docs/scale.md).

``distributed`` is imported only here, when an executor is made (the ``[dask]`` extra).
"""

from __future__ import annotations

import contextlib
import hashlib
import pickle
import re
import threading
import time
from concurrent.futures import Future, InvalidStateError, wait
from typing import Any, Generic, TypeVar

from harness.errors import ExecutorError
from harness.parallel.executor import Job, WorkerLost

__all__ = [
    "CONNECT_SECONDS",
    "FETCH_SECONDS",
    "NO_WORKER_SECONDS",
    "DaskExecutor",
    "DaskSession",
    "scheduler_address",
]

S = TypeVar("S")
R = TypeVar("R")

_CONNECT_GRACE = 1.0
"""Seconds past the client's own timeout before the connect is given up."""
CONNECT_SECONDS = 10.0
"""How long to wait for a scheduler to answer before giving up on it."""
FETCH_SECONDS = 120.0
"""How long fetching a finished task's result (a slice's results, about a megabyte) may take."""
NO_WORKER_SECONDS = 60.0
"""How long tasks may wait on a cluster with no worker, or a scheduler that does not answer."""
_WATCH_SECONDS = 2.0

_URL = re.compile(r"dask://(?P<host>\[[0-9a-fA-F:]+\]|[^:/\s]+):(?P<port>[0-9]{1,5})/?")


def scheduler_address(url: str) -> str:
    """``dask://HOST:PORT`` as the scheduler address Dask takes (``tcp://HOST:PORT``)."""
    match = _URL.fullmatch(url)
    if match is None or not 0 < int(match["port"]) < 65536:
        raise ExecutorError(
            f"--executor {url}: not a Dask scheduler URL; give dask://HOST:PORT "
            "(e.g. dask://127.0.0.1:8786), dask (a local cluster) or local",
            url=url,
        )
    return f"tcp://{match['host']}:{match['port']}"


def _distributed() -> Any:
    try:
        import distributed
    except ImportError as exc:
        raise ExecutorError(
            "--executor dask needs Dask distributed: pip install 'toolcall-harness[dask]'",
            url="dask",
        ) from exc
    return distributed


class DaskExecutor:
    """Sessions on a Dask cluster: one this process starts, or one it connects to."""

    def __init__(self, client: Any, url: str, cluster: Any = None) -> None:
        """Run on ``client`` (``url``: how the user named the cluster); ``cluster``: a local
        cluster this executor started and stops on :meth:`close`."""
        self.client = client
        self.url = url
        self._cluster = cluster

    @classmethod
    def connect(cls, url: str, timeout: float | None = None) -> DaskExecutor:
        """Connect to the scheduler at ``dask://HOST:PORT``; :class:`ExecutorError` if it does
        not answer within ``timeout`` seconds (default :data:`CONNECT_SECONDS`)."""
        address = scheduler_address(url)
        timeout = CONNECT_SECONDS if timeout is None else timeout
        distributed = _distributed()
        # Client(timeout=) bounds the TCP connect, not the handshake after it: a server that
        # accepts and never answers kept it waiting past its timeout. The connect runs on a
        # daemon thread under a deadline of its own; one that never returns stays there.
        made: list[Any] = []
        failed: list[BaseException] = []

        def make() -> None:
            try:
                made.append(distributed.Client(address, timeout=timeout, set_as_default=False))
            except BaseException as exc:  # handed to the caller's thread below
                failed.append(exc)

        connecting = threading.Thread(target=make, name="harness-dask-connect", daemon=True)
        connecting.start()
        connecting.join(timeout + _CONNECT_GRACE)
        if made:
            return cls._with_workers(made[0], url, address, timeout)
        error = failed[0] if failed else TimeoutError(f"no answer within {timeout:g}s")
        if not isinstance(error, OSError | TimeoutError):
            raise error
        raise ExecutorError(
            f"--executor {url}: no Dask scheduler answered at {address} within "
            f"{timeout:g}s ({type(error).__name__}); start one (dask scheduler) or give "
            "--executor dask for a local cluster",
            url=url,
        ) from error

    @classmethod
    def _with_workers(cls, client: Any, url: str, address: str, timeout: float) -> DaskExecutor:
        """The executor on ``client`` once its cluster has a worker: tasks given to a cluster
        without one would wait for ever."""
        try:
            client.wait_for_workers(1, timeout=timeout)
        except (OSError, TimeoutError) as exc:
            client.close(timeout=timeout)
            raise ExecutorError(
                f"--executor {url}: the Dask scheduler at {address} has no workers (none came "
                f"within {timeout:g}s); start some (dask worker {address}) or scale the cluster",
                url=url,
            ) from exc
        return cls(client, url)

    @classmethod
    def local(cls, workers: int) -> DaskExecutor:
        """Start a cluster of ``workers`` single-threaded worker processes on this machine."""
        distributed = _distributed()
        cluster = distributed.LocalCluster(
            n_workers=workers,
            processes=True,
            threads_per_worker=1,
            dashboard_address=":0",  # its HTTP server on a free port, no dashboard
            scheduler_kwargs={"dashboard": False},
            host="127.0.0.1",
        )
        try:
            client = distributed.Client(cluster, set_as_default=False)
        except BaseException:
            cluster.close()
            raise
        return cls(client, "dask", cluster)

    @property
    def workers(self) -> int:
        """The threads of the cluster's workers now (at least one)."""
        threads: int = sum(self.client.nthreads(callback_timeout=CONNECT_SECONDS).values())
        return max(1, threads)

    def open(self, job: Job[S, R]) -> DaskSession[S, R]:
        """Send ``job`` to every worker once; its shards then go as tasks."""
        return DaskSession(self, job)

    def close(self) -> None:
        """Let the cluster go (a local one is stopped)."""
        try:
            self.client.close(timeout=CONNECT_SECONDS)
        finally:
            if self._cluster is not None:
                self._cluster.close()

    def __enter__(self) -> DaskExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Detached:
    """The channel a Dask task gets: no line back to the parent (see the module docstring)."""

    def send(self, message: Any) -> None:
        raise RuntimeError("the Dask executor carries no messages from its workers")

    def halt(self) -> None:
        return None

    def halted(self) -> bool:
        return False


_LOADED: dict[str, Any] = {}
"""In a worker process: the jobs loaded from their bytes, by digest (one per session)."""
_LOADING = threading.Lock()


def _call(digest: str, packed: bytes, shard: Any) -> Any:
    """A task: one shard through the job, loaded from ``packed`` once per worker process."""
    job = _LOADED.get(digest)
    if job is None:
        with _LOADING:  # a worker of several threads loads it once
            job = _LOADED.get(digest)
            if job is None:
                job = pickle.loads(packed)
                _LOADED.clear()  # a long-lived worker keeps only the latest session's job
                _LOADED[digest] = job
    return job(shard, _Detached())


class DaskSession(Generic[S, R]):
    """A job on a Dask cluster; see :class:`~harness.parallel.executor.Session`."""

    def __init__(self, executor: DaskExecutor, job: Job[S, R]) -> None:
        """Pickle ``job`` once; each task carries the bytes (see the module docstring)."""
        self._executor = executor
        self._client = executor.client
        # Standard pickle, not cloudpickle: a job that refers to something a fresh process
        # cannot import fails here, in the parent, not in every worker.
        self._packed = pickle.dumps(job, pickle.HIGHEST_PROTOCOL)
        self._digest = hashlib.sha256(self._packed).hexdigest()
        self._tasks: list[tuple[Any, Future[R], S]] = []
        self._halted = threading.Event()
        self._closed = threading.Event()
        self._watch: threading.Thread | None = None

    def submit(self, shard: S) -> Future[R]:
        """Start ``shard`` as a task (see the Session protocol)."""
        future: Future[R] = Future()
        task = self._client.submit(_call, self._digest, self._packed, shard, pure=False)
        self._tasks.append((task, future, shard))
        task.add_done_callback(lambda done: _relay(done, future, shard, self._executor.url))
        if self._watch is None:
            self._watch = threading.Thread(target=self._watch_workers, daemon=True)
            self._watch.name = "harness-dask-watch"
            self._watch.start()
        return future

    def _watch_workers(self) -> None:
        """Give up on the tasks not done once the cluster had no worker, or its scheduler did
        not answer, for :data:`NO_WORKER_SECONDS` (else they would wait for ever)."""
        since: float | None = None
        while not self._closed.wait(_WATCH_SECONDS):
            try:
                workers = len(self._client.nthreads(callback_timeout=CONNECT_SECONDS))
                why = "the cluster had no worker"
            except Exception:  # the scheduler went away or does not answer
                workers, why = 0, "the Dask scheduler did not answer"
            if workers:
                since = None
                continue
            now = time.monotonic()
            since = now if since is None else since
            if now - since < NO_WORKER_SECONDS:
                continue
            for _, future, shard in list(self._tasks):
                if not future.done():
                    why_lost = f"{why} for {NO_WORKER_SECONDS:g}s"
                    lost = _lost(shard, self._executor.url, why_lost, None)
                    _settle(future, lost)

    def receive(self, timeout: float) -> Any | None:
        """None after ``timeout`` seconds: no messages cross from Dask workers."""
        self._halted.wait(timeout)
        return None

    def halt(self) -> None:
        """Remember the halt (the tasks already submitted run to their end)."""
        self._halted.set()

    def halted(self) -> bool:
        """Was :meth:`halt` called here?"""
        return self._halted.is_set()

    def close(self, *, cancel: bool = False) -> None:
        """Wait for the tasks (``cancel``: cancel those not done)."""
        tasks = list(self._tasks)
        try:
            if cancel:
                self._client.cancel([task for task, _, _ in tasks if not task.done()])
            else:  # the watch gives up on tasks that can never end
                wait([relayed for _, relayed, _ in tasks])
        finally:
            self._closed.set()
            self._tasks = []


def _relay(done: Any, future: Future[Any], shard: Any, url: str) -> None:
    """Pass a Dask future's outcome on; a killed worker or lost scheduler as WorkerLost (on
    Dask's callback thread: what escaped here would leave ``future`` unresolved)."""
    if future.done():
        return
    try:
        if done.status == "finished":
            future.set_result(done.result(timeout=FETCH_SECONDS))
            return
        if done.status == "cancelled":
            why = "its task was cancelled (the scheduler went away, or someone cancelled it)"
            future.set_exception(_lost(shard, url, why, None))
            return
        # Dask also calls back when a dying worker loses the task, which then runs again:
        # exception() waits for that run, and a task that then finished gives its result
        error = done.exception()
        if error is None and done.status == "finished":
            future.set_result(done.result(timeout=FETCH_SECONDS))
            return
    except InvalidStateError:  # the watch gave it up first
        return
    except BaseException as exc:  # the result could not be fetched: the scheduler went away
        _settle(future, _lost(shard, url, f"its result was lost ({exc!r})", exc))
        return
    if isinstance(error, _distributed().KilledWorker):
        deaths = getattr(error, "allowed_failures", 0) + 1
        why = (
            f"the {deaths} workers given its task all died (out of memory or killed: see "
            "the workers' logs)"
        )
        future.set_exception(_lost(shard, url, why, error))
    elif error is None:  # lost with the scheduler: its status says no more
        future.set_exception(_lost(shard, url, f"its task was {done.status}", None))
    else:
        future.set_exception(error)


def _settle(future: Future[Any], error: BaseException) -> None:
    """Fail ``future`` unless Dask's callback settled it first."""
    with contextlib.suppress(InvalidStateError):
        future.set_exception(error)


def _lost(shard: Any, url: str, why: str, cause: BaseException | None) -> WorkerLost:
    path, line = getattr(shard, "path", None), getattr(shard, "first_line", None)
    named = f"the slice of {path} from line {line}" if path is not None else f"shard {shard!r}"
    lost = WorkerLost(f"Dask cluster {url}: {named} was not scored: {why}", shard=shard)
    lost.__cause__ = cause
    return lost
