"""Process sharding: one executor interface for ``harness run -n`` and ``eval-traces --workers``.

- :mod:`~harness.parallel.executor`: the interface (an executor opens a session for a job and
  runs its shards; plain data both ways; :class:`WorkerLost` when a worker died);
- :mod:`~harness.parallel.local`: :class:`LocalPool`, forked processes on this machine, and
  :class:`~harness.parallel.local.Alone`, one call in a process of its own;
- :mod:`~harness.parallel.shards`: files cut into slices of whole lines, a selection into ranges;
- :mod:`~harness.parallel.traces`: ``eval-traces`` slices scored on an executor, merged in order;
- :mod:`~harness.parallel.runs`: ``run -n`` shards, results streamed, crashed scenarios isolated.

Workers send back results, never rendered reports: the parent feeds the reporters exactly as
one process does (docs/architecture.md, "Processes").
"""

from __future__ import annotations

from harness.parallel.executor import (
    Channel,
    Executor,
    Job,
    Session,
    WorkerLost,
    default_workers,
    in_order,
)
from harness.parallel.local import LocalPool
from harness.parallel.shards import SLICE_BYTES, plan_shards, plan_slices

__all__ = [
    "SLICE_BYTES",
    "Channel",
    "Executor",
    "Job",
    "LocalPool",
    "Session",
    "WorkerLost",
    "default_workers",
    "in_order",
    "plan_shards",
    "plan_slices",
]
