"""Cutting the work into shards: files into slices of whole lines, a selection into ranges.

``eval-traces`` shards are :class:`~tracing.otlp.file_format.FileSlice` s: each file, or, when
large, runs of whole lines whose size a :data:`SliceSizes` gives (at most :data:`SLICE_BYTES`,
shrinking towards the end of the input); the parent counts the newlines on the way, so every
slice knows the file line it starts at; only uncompressed JSON lines files are cut. ``run -n``
shards are contiguous ranges of positions in the selection (:func:`plan_shards`). See
docs/architecture.md, "Processes".
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from tracing.otlp.file_format import FileSlice
from tracing.otlp.sources import splits_by_line

__all__ = [
    "SLICE_BYTES",
    "SliceSizes",
    "fixed_sizes",
    "iter_slices",
    "joined",
    "neighbours",
    "plan_shards",
    "plan_slices",
    "shard_concurrency",
    "shrinking_sizes",
]

SLICE_BYTES = 8 * 1024 * 1024
"""Input per task: big enough that a task's overhead is small, small enough to stay in memory."""

_MIN_SLICE_BYTES = 1024 * 1024
"""The smallest slice :func:`shrinking_sizes` cuts (below, a task's overhead would start to
show)."""

_BLOCK = 1024 * 1024


def plan_slices(paths: Sequence[str | Path], slice_bytes: int) -> list[FileSlice]:
    """Each file as one slice, or, past ``slice_bytes``, as runs of whole lines of about that size.

    A file that cannot be read stays one slice: the scoring reports it as one process would.
    """
    return list(iter_slices(paths, fixed_sizes(slice_bytes)))


SliceSizes = Callable[[int], int]
"""``sizes(left) -> bytes``: how much the next slice takes, given the input left from there on."""


def fixed_sizes(slice_bytes: int) -> SliceSizes:
    """Every slice about ``slice_bytes``."""
    return lambda _left: slice_bytes


def shrinking_sizes(workers: int) -> SliceSizes:
    """Slices of :data:`SLICE_BYTES` that shrink towards the end of the input.

    Each slice takes ``1 / (2 × workers)`` of what is left, between :data:`_MIN_SLICE_BYTES`
    and :data:`SLICE_BYTES`. The last slices then take little time, so no worker waits long for
    another's at the end, while the first ones are big enough for a task's overhead to vanish.
    """
    share = 2 * max(workers, 1)
    return lambda left: min(SLICE_BYTES, max(_MIN_SLICE_BYTES, left // share))


def iter_slices(paths: Iterable[str | Path], sizes: SliceSizes) -> Iterator[FileSlice]:
    """:func:`plan_slices` by ``sizes``, one slice at a time (the first is scored while the
    rest are cut).

    Only uncompressed JSON lines files are cut (the sources' detection by content,
    :func:`~tracing.otlp.sources.splits_by_line`); gzip, documents and protobuf are one slice.
    """
    paths = list(paths)
    lengths = [_length(path) for path in paths]
    left = sum(lengths)
    for path, size in zip(paths, lengths, strict=True):
        if size <= sizes(left) or not splits_by_line(path):  # gzip, documents, protobuf: whole
            yield FileSlice(path)
        else:
            yield from _cut(path, size, sizes, left)
        left -= size


def _length(path: str | Path) -> int:
    """The file's size; 0 when it cannot be read (its slice then reports why)."""
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _cut(path: str | Path, size: int, sizes: SliceSizes, left: int) -> Iterator[FileSlice]:
    """Slices of one file, each ending at a newline no trace straddles; line numbers counted
    on the way.

    ``left``: the input left from this file's start on, this file included. Where every line
    near a target holds spans of a trace that also has spans across it (a trace's spans on
    several lines, traces interleaved), the slice grows to the next target instead: a trace cut
    in two is scored again with both slices (harness.parallel.traces), so cutting there would
    cost more than it saves.
    """
    start, first_line = 0, 1
    target = start + sizes(left - start)
    with open(path, "rb") as fp:
        while True:
            fp.seek(target)
            fp.readline()  # to the end of the line the target falls in
            end: int | None = fp.tell()
            if end is not None and end < size:
                end = _clean_cut(fp, start, end)
            if end is None:
                target += sizes(left - target)
                continue
            if end >= size:
                yield FileSlice(path, start, first_line, None)
                return
            fp.seek(start)
            count = _newlines(fp, end - start)
            yield FileSlice(path, start, first_line, count)
            start, first_line = end, first_line + count
            target = start + sizes(left - start)


_TRACE_ID = re.compile(rb'"traceId"\s*:\s*"([^"]*)"')
"""A span's trace id in an OTLP JSON line (what the planner scans near a cut; the reader,
not this, decides what a line holds)."""

_WINDOW = 256 * 1024
"""Bytes looked at on each side of a cut for a newline no trace straddles."""


def _clean_cut(fp: Any, start: int, end: int) -> int | None:
    """The first newline from ``end`` on (at most half a :data:`_WINDOW` further) with no trace
    id seen on both sides of it within :data:`_WINDOW`; None when there is none.

    Lines without a ``traceId`` (another format) never hold a cut back.
    """
    low = max(start, end - _WINDOW)
    fp.seek(low)
    block = fp.read(end + _WINDOW - low)
    lines = block.split(b"\n")
    lines.pop()  # a line the window cut off, or the nothing after its last newline
    if low > start and lines:
        low += len(lines.pop(0)) + 1  # (it may also be cut off at the front)
    if len(lines) < 2:
        return end  # lines longer than the window: cut where the target fell, as ever
    # each trace id's first and last line in the window; a boundary between lines b-1 and b is
    # clean when no id has first < b <= last
    first: dict[bytes, int] = {}
    last: dict[bytes, int] = {}
    offsets: list[int] = []
    offset = low
    for number, line in enumerate(lines):
        offset += len(line) + 1
        offsets.append(offset)  # where the line after this one begins
        for trace_id in _TRACE_ID.findall(line):
            first.setdefault(trace_id, number)
            last[trace_id] = number
    crossing = [0] * (len(lines) + 1)
    for trace_id, begin in first.items():
        crossing[begin + 1] += 1
        crossing[last[trace_id] + 1] -= 1
    open_ids = 0
    for number in range(len(lines) - 1):  # the boundary after line ``number``
        open_ids += crossing[number + 1]
        cut = offsets[number]
        if cut > end + _WINDOW // 2:
            return None  # too near the window's edge to know
        if cut >= end and not open_ids:
            return cut
    return None


def _newlines(fp: Any, length: int) -> int:
    """Newlines in the next ``length`` bytes of ``fp`` (the text reader splits lines there)."""
    count = 0
    while length > 0:
        block = fp.read(min(_BLOCK, length))
        if not block:
            break
        count += block.count(b"\n")
        length -= len(block)
    return count


def joined(first: FileSlice, second: FileSlice) -> FileSlice:
    """Two neighbouring slices of one file as one."""
    count = None
    if first.line_count is not None and second.line_count is not None:
        count = first.line_count + second.line_count
    return FileSlice(first.path, first.start, first.first_line, count)


def neighbours(first: FileSlice, second: FileSlice) -> bool:
    """Does ``second`` start on the line after ``first`` ends, in the same file?"""
    return (
        os.fspath(first.path) == os.fspath(second.path)
        and first.line_count is not None
        and first.first_line + first.line_count == second.first_line
    )


def plan_shards(count: int, workers: int) -> list[range]:
    """``count`` positions as ``workers`` contiguous, nearly equal ranges (none empty)."""
    workers = max(1, min(workers, count))
    return [range(i * count // workers, (i + 1) * count // workers) for i in range(workers)]


def shard_concurrency(concurrency: int, workers: int) -> list[int]:
    """Split a total ``concurrency`` between ``workers`` (the first ones take the remainder)."""
    base, extra = divmod(concurrency, workers)
    return [base + (1 if index < extra else 0) for index in range(workers)]
