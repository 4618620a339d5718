"""The local executor (harness/parallel/local.py): forked workers, plain data both ways.

Real worker processes throughout: shards in, results and messages out, a worker killed with
SIGKILL as the out-of-memory killer does, and a stop signal forwarded to the workers.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from harness.parallel import LocalPool, WorkerLost, in_order
from harness.parallel.executor import Channel, Session
from harness.parallel.local import stops_forwarded


def _square_slowly(shard: int, channel: Channel) -> tuple[int, int, int]:
    """The first shards take longest, so they finish last unless taken in order."""
    time.sleep(0.02 * max(0, 6 - shard))
    return shard, shard * shard, os.getpid()


class _Counting:
    """A session that counts the shards submitted and not yet handed back."""

    def __init__(self, session: Session[int, Any]) -> None:
        self.session = session
        self.submitted = 0

    def submit(self, shard: int) -> Future[Any]:
        self.submitted += 1
        return self.session.submit(shard)


def test_shards_come_back_in_input_order_with_a_bounded_number_in_flight() -> None:
    session = LocalPool(2).open(_square_slowly)
    counting = _Counting(session)
    seen: list[int] = []
    pids: set[int] = set()
    try:
        ordered = in_order(counting, range(12), ahead=3)  # type: ignore[arg-type]
        for number, (shard, future) in enumerate(ordered):
            assert counting.submitted - (number + 1) <= 3  # at most `ahead` besides this one
            got, square, pid = future.result()
            assert (got, square) == (shard, shard * shard)
            seen.append(got)
            pids.add(pid)
    finally:
        session.close()
    assert seen == list(range(12))
    assert len(pids) == 2 and os.getpid() not in pids  # two worker processes did the work


def _die_on_three(shard: int, channel: Channel) -> int:
    if shard == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.05)
    return shard


def test_a_worker_killed_mid_shard_gives_worker_lost_for_what_it_cut_short() -> None:
    session = LocalPool(2).open(_die_on_three)
    try:
        done = [session.submit(shard) for shard in range(2)]
        assert [future.result() for future in done] == [0, 1]
        futures = [session.submit(shard) for shard in range(2, 6)]
        outcomes = []
        for future in futures:
            try:
                outcomes.append(future.result())
            except WorkerLost:
                outcomes.append("lost")
        assert outcomes[1] == "lost"  # the shard whose process died
        with pytest.raises(WorkerLost) as lost:  # the pool is broken: later shards, at once
            session.submit(9).result()
        assert lost.value.shard == 9 and "shard 9 in hand" in str(lost.value)
    finally:
        session.close(cancel=True)
    assert [future.result() for future in done] == [0, 1]  # what came back stays


def _talk(shard: int, channel: Channel) -> bool:
    channel.send(("start", shard, os.getpid()))
    if shard == 0:
        channel.halt()
    else:
        deadline = time.monotonic() + 10
        while not channel.halted() and time.monotonic() < deadline:
            time.sleep(0.01)
    channel.send(("end", shard))
    return channel.halted()


def test_messages_reach_the_parent_and_a_halt_reaches_every_worker() -> None:
    session = LocalPool(2).open(_talk)
    try:
        futures = [session.submit(1), session.submit(0)]
        assert [future.result(timeout=30) for future in futures] == [True, True]
        assert session.halted()
        messages = []
        while len(messages) < 4:
            message = session.receive(5.0)
            assert message is not None, messages
            messages.append(message)
    finally:
        session.close()
    starts = [m for m in messages if m[0] == "start"]
    assert sorted(m[1] for m in starts) == [0, 1]
    assert len({m[2] for m in starts}) == 2  # sent from two processes
    assert messages.index(("start", 1, starts[[m[1] for m in starts].index(1)][2])) < (
        messages.index(("end", 1))
    )  # one worker's messages arrive in the order it sent them


def _wait_for_term(shard: str, channel: Channel) -> int:
    """Note each SIGTERM this worker gets in a file of its own, then end on the first one."""

    def noted(signum: int, frame: Any) -> None:
        with open(Path(shard) / f"{os.getpid()}.term", "a", encoding="utf-8") as out:
            out.write("term\n")
        os._exit(0)

    signal.signal(signal.SIGTERM, noted)
    (Path(shard) / f"{os.getpid()}.ready").touch()
    time.sleep(30)
    return os.getpgrp()


def test_a_stop_signal_reaches_each_worker_once_then_does_what_it_did_before(
    tmp_path: Path,
    ctrl_c_raises: None,
) -> None:
    session = LocalPool(2).open(_wait_for_term)
    futures = [session.submit(str(tmp_path)) for _ in range(2)]
    try:
        deadline = time.monotonic() + 30
        while len(list(tmp_path.glob("*.ready"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        pids = [int(path.stem) for path in tmp_path.glob("*.ready")]
        assert len(pids) == 2
        # each worker left the terminal's process group: a Ctrl-C reaches only the parent
        assert all(os.getpgid(pid) != os.getpgrp() for pid in pids)
        with pytest.raises(KeyboardInterrupt), stops_forwarded():
            os.kill(os.getpid(), signal.SIGINT)  # Python's own handler runs after forwarding
            time.sleep(5)  # the KeyboardInterrupt comes first
        for future in futures:
            with pytest.raises(WorkerLost):
                future.result(timeout=30)
    finally:
        session.close(cancel=True)
    assert sorted(path.read_text() for path in tmp_path.glob("*.term")) == ["term\n"] * 2
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored
    assert not multiprocessing.active_children()


def _until_halted(shard: str, channel: Channel) -> tuple[bool, float]:
    """Wait (at most 30 s) for the session to halt, as a scenario run checks between scenarios."""
    (Path(shard) / f"{os.getpid()}.ready").touch()
    began = time.monotonic()
    while not channel.halted() and time.monotonic() - began < 30:
        time.sleep(0.02)
    return channel.halted(), time.monotonic() - began


def _ready_worker(folder: Path) -> int:
    """The pid of the worker that marked itself ready in ``folder`` (within 30 s)."""
    deadline = time.monotonic() + 30
    while not list(folder.glob("*.ready")) and time.monotonic() < deadline:
        time.sleep(0.02)
    (ready,) = folder.glob("*.ready")
    return int(ready.stem)


def test_a_worker_stopped_by_a_signal_halts_its_job_without_raising(tmp_path: Path) -> None:
    # A stop signal in a worker used to raise out of the job (the handler a fork inherits):
    # now the job sees the session halted and returns what it has.
    with stops_forwarded():
        session = LocalPool(1).open(_until_halted)
        try:
            future = session.submit(str(tmp_path))
            os.kill(_ready_worker(tmp_path), signal.SIGTERM)
            halted, waited = future.result(timeout=30)
            assert halted and waited < 30
        finally:
            session.close()


def _ignore_the_halt(shard: str, channel: Channel) -> int:
    (Path(shard) / f"{os.getpid()}.ready").touch()
    time.sleep(120)  # a job that never looks at the halt flag
    return 0


def test_a_stopped_worker_that_does_not_end_is_ended_after_its_grace(tmp_path: Path) -> None:
    # The orphan seen under load: a worker that caught the stop and then waited forever.
    with stops_forwarded():
        session = LocalPool(1).open(_ignore_the_halt)
        try:
            future = session.submit(str(tmp_path))
            pid = _ready_worker(tmp_path)
            began = time.monotonic()
            os.kill(pid, signal.SIGTERM)
            with pytest.raises(WorkerLost):
                future.result(timeout=60)
            assert time.monotonic() - began < 60  # the alarm, not the job's two minutes
        finally:
            session.close(cancel=True)
