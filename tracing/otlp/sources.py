"""The span source interface, and the file source that finds a file's format by its content.

A *source* hands out decoded spans (:data:`~tracing.otlp.decode.SpanFields`, the arguments of a
:class:`~tracing.otel.span_view.SpanView`) in input order, in :data:`Batch` es: ``(location, spans,
ends_record, resources)``. ``location`` is where the batch was read (a line number, a record
number, a page: the source's ``unit``), so an error names it; ``ends_record`` says the record is
over, which is when :class:`~tracing.otlp.reader.OtlpJsonReader` counts a trace whose root it
holds as complete (a record is what a producer wrote as one unit: a line, a protobuf message,
one trace of a Jaeger export, a whole OTLP or Tempo document, a page pulled from Phoenix);
``resources`` are the attributes of the spans' resources (``service.name``, ...), as
:data:`Resources` says: OTLP JSON, Tempo and protobuf carry them in their resource blocks, a
Jaeger export as each span's process (its ``serviceName`` and tags); bare spans and Phoenix's
spans have none. What cannot be read is passed to ``report`` and skipped; a source never raises
for bad content, only for a file it cannot open (``OSError``).

:class:`FileSource` reads a file, a part of one (:class:`~tracing.otlp.reader.FileSlice`) or
standard input (``-``) and picks the format by content, as :func:`sniff` documents. Each format
lives in its own module of this package: :mod:`~tracing.otlp.lines`, :mod:`~tracing.otlp.document`,
:mod:`~tracing.otlp.protobuf`; :mod:`~tracing.otlp.logs` joins log events to the spans of any
source, :mod:`~tracing.otlp.phoenix` pulls them from a running Phoenix.
"""

from __future__ import annotations

import gzip
import io
import itertools
import os
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal, Protocol, cast, runtime_checkable

import orjson

from tracing.otlp.decode import KnownIds, SpanFields, why_skipped

__all__ = [
    "JSON_LINE_LIMIT",
    "NEEDS_PROTO",
    "Batch",
    "Decode",
    "FileSource",
    "Report",
    "Resources",
    "SpanSource",
    "Stream",
    "decode_batch",
    "open_source",
    "sniff",
    "splits_by_line",
    "why_unreadable",
]

Resources = Mapping[str, Any] | list[Mapping[str, Any]]
"""The resource attributes of a batch's spans: one mapping for all of them (a line of the file
exporter has one resource, nearly always), or one per span."""

Batch = tuple[int, list[SpanFields], bool, Resources]
"""``(location, spans, ends_record, resources)``: spans read at ``location`` (in the source's
unit), the last batch of a record says so, and the spans' resources."""

Decode = Callable[[Any, KnownIds, KnownIds], SpanFields]
"""One raw span (a JSON object, a protobuf message) to its fields; raises on a bad span."""


class Report(Protocol):
    """Where a source tells what it could not read (the reader turns it into an error)."""

    def __call__(
        self, location: int, message: str, *, name: str | None = None, unit: str | None = None
    ) -> None:
        """``location`` in the source's unit; ``name`` / ``unit`` when another file is meant
        (the logs file beside the traces)."""


@runtime_checkable
class SpanSource(Protocol):
    """Spans in input order, in batches that say where they were read."""

    @property
    def name(self) -> str:
        """What errors name: the file, ``<stdin>`` or the URL."""
        ...

    @property
    def unit(self) -> str:
        """What a location counts: ``line``, ``record`` or ``page``."""
        ...

    def batches(self, report: Report) -> Iterator[Batch]:
        """The spans, batch by batch; unreadable content goes to ``report`` and is skipped."""
        ...


JSON_LINE_LIMIT = 8 * 1024 * 1024
"""A first line longer than this is not read whole to tell JSON lines from a document: the file
is read by the streaming parser (which reads JSON lines too, only slower)."""

NEEDS_PROTO = (
    "the Collector's protobuf format (format: proto) needs opentelemetry-proto: "
    "pip install 'toolcall-harness[otlp]'"
)

_HEAD = 64 * 1024
_BLOCK = 1024 * 1024
_GZIP = b"\x1f\x8b"
_ZSTD = b"\x28\xb5\x2f\xfd"
_BOM = b"\xef\xbb\xbf"
_BLANK = b" \t\r\n"

Shape = Literal["lines", "document", "protobuf", "empty", "unknown", "zstd"]


@dataclass(frozen=True, slots=True)
class Stream:
    """A byte stream with its shape found (:func:`sniff`); ``data`` starts at the beginning."""

    shape: Shape
    data: IO[bytes]
    compressed: bool
    head: bytes
    """The first bytes (what an ``unknown`` shape is described by)."""


_SPAN_ERRORS = (TypeError, ValueError, AttributeError, ArithmeticError, RecursionError)
"""What a bad span raises in a decoder (reported as ``span N skipped: ...``)."""

READ_ERRORS = (EOFError, OSError, zlib.error)
"""What reading on raises when a compressed stream is cut short or corrupt."""


def why_unreadable(exc: BaseException) -> str:
    """One line on why the stream cannot be read on (a truncated or corrupt ``.gz``)."""
    if isinstance(exc, EOFError):
        return f"the compressed data ends early (a truncated file?): {exc}"
    if isinstance(exc, gzip.BadGzipFile):
        return f"not valid gzip data: {exc}"
    if isinstance(exc, zlib.error):
        return f"corrupt compressed data: {exc}"
    return f"cannot read on: {exc}"


def decode_batch(
    location: int,
    raw_spans: list[Any],
    decode: Decode,
    report: Report,
    resources: Resources,
    *,
    ends: bool = True,
    first: int = 0,
) -> Batch:
    """The batch of the spans of ``raw_spans`` that decode; each bad one is reported (``span N
    skipped``) and left out, with its resource when ``resources`` has one per span.

    ``first``: the position of ``raw_spans[0]`` in its record (a record may come in chunks).
    """
    trace_ids: KnownIds = {}
    span_ids: KnownIds = {}
    try:  # every span good (almost every record): no bookkeeping per span
        return location, [decode(raw, trace_ids, span_ids) for raw in raw_spans], ends, resources
    except _SPAN_ERRORS:
        pass
    # read again span by span; a decoder changes nothing but the id dicts, which hold good ids
    spans: list[SpanFields] = []
    keep = spans.append
    each = resources if isinstance(resources, list) else None
    kept: list[Mapping[str, Any]] = []
    for position, raw in enumerate(raw_spans):
        try:
            keep(decode(raw, trace_ids, span_ids))
        except (TypeError, ValueError, AttributeError, ArithmeticError) as exc:
            # ArithmeticError: 1e999 (infinity) as an int, a time or a status
            report(location, f"span {first + position} skipped: {why_skipped(exc)}")
        except RecursionError:
            report(location, f"span {first + position} skipped: nested too deeply")
        else:
            if each is not None:
                kept.append(each[position])
    return location, spans, ends, resources if each is None else kept


class _Replay(io.RawIOBase):
    """The bytes already read from a stream, then the rest of it."""

    def __init__(self, prefix: bytes, rest: IO[bytes]) -> None:
        self._prefix = memoryview(prefix)
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._prefix:
            size = min(len(buffer), len(self._prefix))
            buffer[:size] = self._prefix[:size]
            self._prefix = self._prefix[size:]
            return size
        data = self._rest.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _replayed(prefix: bytes, rest: IO[bytes]) -> IO[bytes]:
    return io.BufferedReader(_Replay(prefix, rest), _BLOCK)


def _read_head(stream: IO[bytes], size: int) -> bytes:
    """Up to ``size`` bytes (fewer only at the end of the stream)."""
    parts: list[bytes] = []
    left = size
    while left > 0:
        data = stream.read(left)
        if not data:
            break
        parts.append(data)
        left -= len(data)
    return b"".join(parts)


def sniff(stream: IO[bytes]) -> Stream:
    """Find a byte stream's shape by its first bytes; may raise what a ``.gz`` raises.

    The rule (documented in docs/architecture.md, "Trace inputs"):

    * ``1f 8b`` (gzip): the shape of what it decompresses to (any of the others).
    * ``28 b5 2f fd`` (zstd, the Collector's ``compression: zstd``): not read; decompress first.
    * Otherwise, past blank space and a UTF-8 byte order mark, ``{`` or ``[``: JSON. JSON
      *lines* when the first line is a whole JSON value, or broken before its end (a bad line
      is reported and the next lines are read); a *document* when the first line is a JSON
      value cut short at the end of the line (a pretty-printed document) or longer than
      :data:`JSON_LINE_LIMIT`.
    * A 4-byte big-endian length followed by ``0a`` (protobuf field 1, length-delimited: a
      ``TracesData`` / ``ExportTraceServiceRequest``'s ``resource_spans``): the Collector file
      exporter's ``format: proto``.
    * Nothing but blank space: ``empty``. Anything else: ``unknown``.
    """
    head = _read_head(stream, _HEAD)
    compressed = head.startswith(_GZIP)
    if compressed:
        stream = cast(IO[bytes], gzip.GzipFile(fileobj=_replayed(head, stream), mode="rb"))
        head = _read_head(stream, _HEAD)
    if head.startswith(_ZSTD):
        return Stream("zstd", _replayed(head, stream), compressed, head)
    text = head.lstrip(_BLANK)
    if text.startswith(_BOM):
        head = head[head.index(_BOM) + len(_BOM) :]  # the JSON parsers refuse a mark
        text = head.lstrip(_BLANK)
    if not text:
        if len(head) < _HEAD:
            return Stream("empty", _replayed(head, stream), compressed, head)
        return _sniff_blank(head, stream, compressed)
    if text[:1] in (b"{", b"["):
        return _sniff_json(head, stream, compressed)
    if len(head) >= 5 and head[4] == 0x0A:
        return Stream("protobuf", _replayed(head, stream), compressed, head)
    return Stream("unknown", _replayed(head, stream), compressed, head)


def _sniff_blank(head: bytes, stream: IO[bytes], compressed: bool) -> Stream:
    """A head of blank space only: read on to the first content."""
    while True:
        more = stream.read(_BLOCK)
        head += more
        if not more:
            return Stream("empty", _replayed(head, stream), compressed, head)
        if more.strip(_BLANK):
            break
    return sniff_json_or_unknown(head, stream, compressed)


def sniff_json_or_unknown(head: bytes, stream: IO[bytes], compressed: bool) -> Stream:
    """After leading blank space: JSON (lines or document) or an unknown shape."""
    if head.lstrip(_BLANK)[:1] in (b"{", b"["):
        return _sniff_json(head, stream, compressed)
    return Stream("unknown", _replayed(head, stream), compressed, head.lstrip(_BLANK))


def _sniff_json(head: bytes, stream: IO[bytes], compressed: bool) -> Stream:
    """JSON lines or one document, by the first line that is not blank."""
    start = len(head) - len(head.lstrip(_BLANK))
    start = head.rfind(b"\n", 0, start) + 1  # that line's first byte
    end = head.find(b"\n", start)
    while end < 0 and len(head) - start <= JSON_LINE_LIMIT:
        more = stream.read(_BLOCK)
        if not more:
            end = len(head)
            break
        found = more.find(b"\n")
        end = len(head) + found if found >= 0 else -1
        head += more
    if end < 0:  # a first line longer than the limit: read by the streaming parser
        return Stream("document", _replayed(head, stream), compressed, head[:64])
    line = head[start:end].rstrip(_BLANK)
    shape: Shape = "document" if _cut_short(line) else "lines"
    return Stream(shape, _replayed(head, stream), compressed, head[:64])


def _cut_short(line: bytes) -> bool:
    """Is ``line`` the start of a JSON value that goes on past it (not a whole value, and not
    broken before its end)?"""
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        return exc.pos >= len(line)
    except RecursionError:
        return False
    return False


class FileSource:
    """The spans of a file, a part of one, or standard input (``-``), in whatever format.

    The format is found by content (:func:`sniff`), not by the file's name; a part of a file
    (a :class:`~tracing.otlp.reader.FileSlice` with an offset) is always JSON lines, since only
    such files are cut (:func:`splits_by_line`).
    """

    def __init__(self, path: str | Path | Any) -> None:
        """Read ``path``: a file, ``-`` for standard input, or a FileSlice."""
        from tracing.otlp.reader import FileSlice  # the reader imports this module

        self.part = path if isinstance(path, FileSlice) else FileSlice(path)
        shown = os.fspath(self.part.path)
        self.stdin = shown == "-"
        self.name = "<stdin>" if self.stdin else shown
        self.unit = "line"

    def __str__(self) -> str:
        """The name errors use."""
        return self.name

    def batches(self, report: Report) -> Iterator[Batch]:
        """The file's spans; raises OSError when the file cannot be opened."""
        from tracing.otlp import lines

        part = self.part
        if part.start or part.line_count is not None:
            begin = part.start if part.lead_in is None else part.lead_in
            # utf-8-sig at the start: a byte order mark is not part of the first line
            encoding = "utf-8" if begin else "utf-8-sig"
            with open(part.path, encoding=encoding, errors="replace") as fp:
                fp.seek(begin)  # a byte offset where a line starts: a clean decoder state
                if part.lead_in is not None:
                    lead = itertools.islice(fp, part.first_line - part.lead_in_line)
                    yield from lines.lead_in_batches(lead, part, report)
                text: Iterable[str] = (
                    fp if part.line_count is None else itertools.islice(fp, part.line_count)
                )
                yield from lines.line_batches(text, part.first_line, report)
            return
        raw: IO[bytes] = sys.stdin.buffer if self.stdin else open(part.path, "rb")  # noqa: SIM115
        try:
            yield from self._read(raw, report)
        finally:
            if not self.stdin:
                raw.close()

    def _read(self, raw: IO[bytes], report: Report) -> Iterator[Batch]:
        from tracing.otlp import document, lines

        try:
            stream = sniff(raw)
        except READ_ERRORS as exc:
            report(1, why_unreadable(exc))
            return
        shape = stream.shape
        if shape == "lines" and not stream.compressed and not self.stdin:
            # a plain file: read as text straight from the disk (the common case, kept fast)
            with open(self.part.path, encoding="utf-8-sig", errors="replace") as fp:
                yield from lines.line_batches(fp, 1, report)
        elif shape == "lines":
            text = io.TextIOWrapper(stream.data, encoding="utf-8", errors="replace")
            yield from lines.line_batches(text, 1, report)
        elif shape == "document":
            self.unit = "record"
            yield from document.document_batches(stream.data, report)
        elif shape == "protobuf":
            self.unit = "record"
            try:
                from tracing.otlp import protobuf
            except ImportError:
                report(1, NEEDS_PROTO)
                return
            yield from protobuf.proto_batches(stream.data, report)
        elif shape != "empty":
            report(1, _unknown(stream))


def _unknown(stream: Stream) -> str:
    if stream.shape == "zstd":
        return (
            "zstd-compressed (the Collector's `compression: zstd`): decompress it first "
            "(`zstd -d FILE`)"
        )
    shown = " ".join(f"{byte:02x}" for byte in stream.head[:8])
    return (
        f"not a trace file this reader knows (it starts with bytes {shown}): expected OTLP "
        "JSON (lines or one document), bare spans one per line, a Tempo or Jaeger JSON export, "
        "the Collector's length-prefixed protobuf (format: proto), or any of these gzipped"
    )


def open_source(path: str | os.PathLike[str] | SpanSource | Any) -> SpanSource:
    """``path`` as a source: a source stays itself; a path, ``-`` or a FileSlice is a file."""
    if isinstance(path, SpanSource):
        return path
    return FileSource(path)


def splits_by_line(path: str | os.PathLike[str]) -> bool:
    """Can ``path`` be cut between lines and its parts read apart (uncompressed JSON lines)?

    What sharding asks before it cuts a large file; a file it cannot read is not cut (its one
    part then reports why).
    """
    if os.fspath(path) == "-":
        return False
    try:
        with open(path, "rb") as raw:
            stream = sniff(raw)
    except READ_ERRORS:
        return False
    return stream.shape == "lines" and not stream.compressed


def readable(path: str | os.PathLike[str] | SpanSource) -> None:
    """Raise OSError now if ``path`` is a file that cannot be opened (a source or ``-`` can)."""
    if isinstance(path, SpanSource) or os.fspath(path) == "-":
        return
    Path(os.fspath(path)).open("rb").close()
