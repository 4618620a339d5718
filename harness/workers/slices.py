"""Cutting ``eval-traces --workers`` input into slices of whole, numbered lines.

Each file is one :class:`~tracing.otlp_json.FileSlice`, or, when large, runs of about
:data:`SLICE_BYTES` whole lines; the parent counts the newlines on the way, so every slice
knows the file line it starts at (docs/architecture.md, "Processes").
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

from tracing.otlp_json import FileSlice

SLICE_BYTES = 8 * 1024 * 1024
"""Input per task: big enough that a task's overhead is small, small enough to stay in memory."""

_MIN_SLICE_BYTES = 1024 * 1024
"""The smallest slice :func:`_slice_size` cuts (below, a task's overhead would start to show)."""

_BLOCK = 1024 * 1024


def plan_slices(paths: Sequence[str | Path], slice_bytes: int) -> list[FileSlice]:
    """Each file as one slice, or, past ``slice_bytes``, as runs of whole lines of about that size.

    A file that cannot be read stays one slice: the scoring reports it as one process would.
    """
    return list(_iter_slices(paths, slice_bytes))


def _slice_size(paths: Iterable[str | Path], workers: int) -> int:
    """:data:`SLICE_BYTES`, or less so each worker gets four slices or more: the last slices
    then take little time, so no worker waits long for the others at the end."""
    total = 0
    for path in paths:
        with suppress(OSError):
            total += os.path.getsize(path)
    return min(SLICE_BYTES, max(_MIN_SLICE_BYTES, total // (4 * max(workers, 1))))


def _iter_slices(paths: Iterable[str | Path], slice_bytes: int) -> Iterator[FileSlice]:
    """:func:`plan_slices`, one slice at a time (the first is scored while the rest are cut)."""
    for path in paths:
        try:
            size = os.path.getsize(path)
        except OSError:
            size = 0
        if size <= slice_bytes:
            yield FileSlice(path)
            continue
        yield from _cut(path, size, slice_bytes)


def _cut(path: str | Path, size: int, slice_bytes: int) -> Iterator[FileSlice]:
    """Slices of one file, each ending at a newline; line numbers counted on the way."""
    start, first_line = 0, 1
    with open(path, "rb") as fp:
        while True:
            fp.seek(start + slice_bytes)
            fp.readline()  # to the end of the line the target falls in
            end = fp.tell()
            if end >= size:
                yield FileSlice(path, start, first_line, None)
                return
            fp.seek(start)
            count = _newlines(fp, end - start)
            yield FileSlice(path, start, first_line, count)
            start, first_line = end, first_line + count


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


def _joined(first: FileSlice, second: FileSlice) -> FileSlice:
    """Two neighbouring slices of one file as one."""
    count = None
    if first.line_count is not None and second.line_count is not None:
        count = first.line_count + second.line_count
    return FileSlice(first.path, first.start, first.first_line, count)


def _neighbours(first: FileSlice, second: FileSlice) -> bool:
    return (
        os.fspath(first.path) == os.fspath(second.path)
        and first.line_count is not None
        and first.first_line + first.line_count == second.first_line
    )
