"""Process-pool sharding for ``harness eval-traces --workers N`` (docs/architecture.md).

Three modules: :mod:`~harness.workers.slices` cuts the input, :mod:`~harness.workers.task` is
what a worker does with one slice, :mod:`~harness.workers.pool` runs the pool and merges.

The input is cut into :class:`~tracing.otlp_json.FileSlice` s: each file, and runs of whole
lines within a large one, each a ``2 × workers``-th of the input left, between 1 MB and
:data:`SLICE_BYTES` (:func:`~harness.workers.slices.shrinking_sizes`): the last slices are short,
so no worker waits long for another at the end. Worker processes of a standard
:class:`concurrent.futures.ProcessPoolExecutor` score one slice each with the one scoring path,
:func:`~harness.evaluate_traces.evaluate_traces`; the parent takes the slices in input order, so
the report feed sees exactly the sequence one process would produce and writes the same reports.

The parent competes with the workers for the cores, so a worker does everything per result that
needs no state shared across slices: it also builds each result's report view, masked and
scrubbed as :meth:`ReportFeed.add <harness.report.base.ReportFeed.add>` builds it
(docs/architecture.md, "Reporter"), renders them for the reporters that render (the JSON and
JUnit files' bytes), and sends back whole only the views a sampling reporter may keep, plus the
full results only of the few the summary may keep (:class:`~harness.result.ResultSample`: a
result the whole stream keeps is one its slice alone keeps, too); the others travel as a
status (:func:`~harness.report.base.prepare`). Once the parent's samples keep nothing more, a
flag in shared memory says so and the workers send neither; a slice that was in flight by then
is read without them (:func:`~harness.workers.task._spool`). The parent appends the chunks,
hands the views to the reporters and counts.

A stream's scrubber remembers the secrets of earlier results (docs/architecture.md,
"Redaction"), and a worker does not know the slices before its own. So a worker's views are
used only while no result so far carried a secret: a slice that holds one comes back as
results, and from then on every slice does, and the parent builds the views as one process
would. A trace whose root never came (complete only at the end of its file) also comes back as
a result: one process reports it at the end of the file, after the slices that follow.

A trace whose spans straddle a cut (a batching exporter split it over lines on both sides) shows
up in both slices under one trace id. Slices are compared with their neighbour before their
results are passed on; two that share a trace id are scored again as one slice, which is what
one process reads, so the verdicts never depend on where the cuts fell.

A worker killed by a signal (the out-of-memory killer) breaks the pool for good: each slice
it had not sent back, and every later one, is then scored in the parent, still in order, and
one warning says so.

At most ``2 × workers`` slices are in flight, so memory stays bounded by the slice size, not by
the file. Workers are forked (they inherit the loaded scenarios); where ``fork`` is not
available, or with one worker or one slice, everything runs in this process.
"""

from __future__ import annotations

from harness.workers.pool import default_workers, evaluate_traces_in_workers
from harness.workers.slices import SLICE_BYTES, plan_slices

__all__ = ["SLICE_BYTES", "default_workers", "evaluate_traces_in_workers", "plan_slices"]
