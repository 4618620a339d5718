"""Cutting the work into shards: files into slices of whole lines, a selection into ranges.

``eval-traces`` shards are :class:`~tracing.otlp.file_format.FileSlice` s: each file, or, when
large, runs of whole lines whose size a :data:`SliceSizes` gives (at most :data:`SLICE_BYTES`,
shrinking towards the end of the input); the parent counts the newlines on the way, so every
slice knows the file line it starts at; only uncompressed JSON lines files are cut. A cut falls
at any newline, inside traces or not: each slice but a file's first has a lead-in (the lines
before it, :class:`LeadIn`) where its worker finds the earlier spans of the traces it completes
(harness.parallel.traces checks that it found them all). ``run -n``
shards are contiguous ranges of positions in the selection (:func:`plan_shards`). See
docs/architecture.md, "Processes".
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracing.otlp.file_format import FileSlice
from tracing.otlp.sources import splits_by_line

__all__ = [
    "FIRST_SLICE_BYTES",
    "SLICE_BYTES",
    "LeadIn",
    "SliceSizes",
    "fixed_sizes",
    "iter_slices",
    "plan_shards",
    "plan_slices",
    "refit",
    "shard_concurrency",
    "shrinking_sizes",
]

SLICE_BYTES = 8 * 1024 * 1024
"""Input per task: big enough that a task's overhead is small, small enough to stay in memory."""

LEAD_IN_BYTES = 512 * 1024
"""A slice's lead-in to start with: the spread of a trace's spans in the file (about the
requests in flight times a trace's size) is nearly always less."""

LEAD_IN_MARGIN = 2
"""A sized lead-in covers this many times the longest spread seen (lines differ in size, and
a later trace may be longer)."""

_MIN_SLICE_BYTES = 1024 * 1024
"""The smallest slice :func:`shrinking_sizes` cuts (below, a task's overhead would start to
show)."""

FIRST_SLICE_BYTES = 1024 * 1024
"""At most this much in a cut file's first slice for ``eval-traces --workers``: its ledger
shows the spread of the file's traces before the later slices' lead-ins are sized, and a file
read as one process after it (harness.parallel.traces) has read little twice."""

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


@dataclass(slots=True)
class LeadIn:
    """How many bytes before a slice its worker reads first (:class:`FileSlice`'s lead-in), and
    which files are cut no further.

    Mutable on purpose: slices are cut as they are needed, and the parent (harness.parallel.
    traces) tells the cutting what the slices taken so far showed: ``lines``, the spread of
    a trace's spans in the file (lines from its first span to its root), from which each later
    lead-in is sized; ``uncut``, the files (by position in the input) whose rest it reads as
    one process.
    """

    size: int
    """The lead-in until the file shows its spread."""
    floor: int = 0
    """The least lead-in once sized (a trace a little longer than any seen so far then costs
    no second scoring)."""
    lines: int | None = None
    fell_short: int = 0
    """The longest lead-in that missed the start of a trace (lines longer than most, too):
    later ones are at least twice as long."""
    uncut: set[int] = field(default_factory=set)

    @classmethod
    def first(cls) -> LeadIn:
        """:data:`LEAD_IN_BYTES`, to start with."""
        return cls(LEAD_IN_BYTES, LEAD_IN_BYTES // 8)

    def bytes_before(self, start: int, first_line: int) -> int:
        """The lead-in of a slice beginning at byte ``start``, line ``first_line``: what
        :meth:`fits` weighs, at least ``floor``, at most half a :data:`SLICE_BYTES` (beyond
        that the parent reads the rest of the file itself)."""
        wanted = self.size
        if self.lines is not None:
            wanted = max(self._needed(start, first_line), self.floor)
        return min(max(wanted, 2 * self.fell_short), SLICE_BYTES // 2)

    def fits(self, start: int, first_line: int) -> bool:
        """Is what the file showed so far (``lines`` times :data:`LEAD_IN_MARGIN` at its bytes
        per line up to ``start``, twice ``fell_short``) less than half a :data:`SLICE_BYTES`?"""
        return max(self._needed(start, first_line), 2 * self.fell_short) < SLICE_BYTES // 2

    def _needed(self, start: int, first_line: int) -> int:
        if self.lines is None or first_line <= 1:
            return 0
        return int(self.lines * LEAD_IN_MARGIN * start / (first_line - 1))


def iter_slices(
    paths: Iterable[str | Path],
    sizes: SliceSizes,
    lead_in: LeadIn | None = None,
    first_bytes: int | None = None,
) -> Iterator[FileSlice]:
    """:func:`plan_slices` by ``sizes``, one slice at a time (the first is scored while the
    rest are cut); ``first_bytes``: at most this much in a cut file's first slice (it shows
    the spread of the file's traces early, :class:`LeadIn`).

    Only uncompressed JSON lines files are cut (the sources' detection by content,
    :func:`~tracing.otlp.sources.splits_by_line`); gzip, documents and protobuf are one slice.
    """
    lead_in = LeadIn.first() if lead_in is None else lead_in
    paths = list(paths)
    lengths = [_length(path) for path in paths]
    left = sum(lengths)
    for number, (path, size) in enumerate(zip(paths, lengths, strict=True)):
        if size <= sizes(left) or not splits_by_line(path):  # gzip, documents, protobuf: whole
            yield FileSlice(path)
        else:
            yield from _cut(path, size, sizes, left, lead_in, number, first_bytes)
        left -= size


def refit(part: FileSlice, lead_in: LeadIn) -> FileSlice:
    """``part``, cut before ``lead_in`` was sized, with the lead-in it gives now."""
    with open(part.path, "rb") as fp:
        size = lead_in.bytes_before(part.start, part.first_line)
        begin, line = _lead_in(fp, part.start, part.first_line, size)
    return dataclasses.replace(part, lead_in=begin, lead_in_line=line)


def _length(path: str | Path) -> int:
    """The file's size; 0 when it cannot be read (its slice then reports why)."""
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _cut(
    path: str | Path,
    size: int,
    sizes: SliceSizes,
    left: int,
    lead_in: LeadIn,
    number: int,
    first_bytes: int | None,
) -> Iterator[FileSlice]:
    """Slices of one file, each ending at a newline, line numbers counted on the way; each but
    the first with a lead-in (the lines before it, where the traces it completes began:
    harness.parallel.traces) of :meth:`LeadIn.bytes_before`, and, once that is sized from the
    file, at least twice as long (so no slice reads more lead-in than its own lines).

    ``left``: the input left from this file's start on, this file included; ``number``: the
    file's position in the input (none is cut once it is in ``lead_in.uncut``).
    """
    start, first_line = 0, 1
    with open(path, "rb") as fp:
        while number not in lead_in.uncut:
            lead_bytes = lead_in.bytes_before(start, first_line)
            target = sizes(left - start)
            if not start and first_bytes is not None:
                target = min(target, first_bytes)
            elif lead_in.lines is not None:
                target = max(target, 2 * lead_bytes)
            fp.seek(start + target)
            fp.readline()  # to the end of the line the target falls in
            end = fp.tell()
            lead = _lead_in(fp, start, first_line, lead_bytes)
            if end >= size:
                yield FileSlice(path, start, first_line, None, *lead)
                return
            fp.seek(start)
            count = _newlines(fp, end - start)
            yield FileSlice(path, start, first_line, count, *lead)
            start, first_line = end, first_line + count


def _lead_in(fp: Any, start: int, first_line: int, size: int) -> tuple[int | None, int]:
    """(byte, line) where the lead-in of a slice at ``start`` begins: the first line that
    starts at most ``size`` bytes before it; (None, 1) when there is none."""
    if not start or size <= 0:
        return None, 1
    low = max(0, start - size)
    fp.seek(low)
    if low:
        fp.readline()  # to the start of the next whole line
    begin = fp.tell()
    if begin >= start:
        return None, 1  # one line longer than the lead-in: none
    return begin, first_line - _newlines(fp, start - begin)


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


def plan_shards(count: int, workers: int) -> list[range]:
    """``count`` positions as ``workers`` contiguous, nearly equal ranges (none empty)."""
    workers = max(1, min(workers, count))
    return [range(i * count // workers, (i + 1) * count // workers) for i in range(workers)]


def shard_concurrency(concurrency: int, workers: int) -> list[int]:
    """Split a total ``concurrency`` between ``workers`` (the first ones take the remainder)."""
    base, extra = divmod(concurrency, workers)
    return [base + (1 if index < extra else 0) for index in range(workers)]
