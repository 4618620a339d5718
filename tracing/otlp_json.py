"""OTLP JSON, as the OpenTelemetry Collector's file exporter writes it: write spans, stream calls.

Format: one ``ExportTraceServiceRequest`` JSON object per line (``resourceSpans`` ->
``scopeSpans`` -> ``spans``), ids as lowercase hex, times as decimal strings of nanoseconds,
attributes as ``{"key", "value": {"stringValue" | "intValue" | "doubleValue" | "boolValue" |
"arrayValue" | "kvlistValue" | "bytesValue"}}``, enums as integers, empty fields left out.

Reading streams line by line and never holds the file. Which traces are held, and when a trace
is complete (the rule):

* Only *open* traces are held, and of each only what the tool-call conversion needs (its tool and
  chat spans, and the parent link of every span), so memory is bounded by the open traces, not
  by the file.
* A trace is complete at the end of the line that brought its root span (a span without a
  parent). Exporters write a span when it ends and a root ends after its children, so a file
  written by an SDK or by the Collector has every span of a trace before (or on the line of) its
  root. A trace whose root is not in the file (its root lives in another service) is complete
  at the end of the file.
* A span that arrives after its trace was complete is reported as an error and skipped (at
  least the last 32,768 and at most 65,536 completed trace ids are remembered for this, about
  9 MB at most; an older trace would be yielded a second time, at the end of the file). Pass
  ``complete_on_root=False`` for files that break the rule: then every trace is held to the
  end of the file, and memory grows with it.

A line that is not valid JSON, or not shaped like a request, is reported as an
:class:`OtlpJsonError` (``path:line: what``) in ``reader.errors`` (or as a warning through the
module functions) and skipped; every other line and trace still comes out.

:meth:`OtlpJsonReader.iter_traces` hands out each complete trace (its tool and chat spans, the
parent links, its root span and the line that completed it) for callers that need more than the
calls, e.g. ``harness eval-traces`` reading the root's ``harness.scenario`` attribute.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import io
import itertools
import json
import os
import threading
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import SpanKind, StatusCode

from tracing.conventions import ERROR_TYPE, CallSpanKind, classify
from tracing.joining import calls_from_classified
from tracing.records import ToolCall
from tracing.span_reading import keeps
from tracing.span_view import SpanEvent, SpanStatus, SpanView

__all__ = [
    "FileSlice",
    "OtlpJsonError",
    "OtlpJsonFileExporter",
    "OtlpJsonReader",
    "OtlpJsonWarning",
    "OtlpTrace",
    "iter_spans",
    "iter_trace_calls",
    "span_to_otlp",
    "write_spans",
]

_STATUS_CODES: dict[StatusCode, int] = {StatusCode.UNSET: 0, StatusCode.OK: 1, StatusCode.ERROR: 2}
_STATUS_NAMES: dict[int, SpanStatus] = {0: "UNSET", 1: "OK", 2: "ERROR"}
_STATUS_TEXT: dict[str, SpanStatus] = {
    "STATUS_CODE_UNSET": "UNSET",
    "STATUS_CODE_OK": "OK",
    "STATUS_CODE_ERROR": "ERROR",
}
_REMEMBERED_COMPLETE = 65_536


# --- writing ------------------------------------------------------------------------------


def _any_value(value: Any) -> dict[str, Any]:
    """One attribute value as an OTLP ``AnyValue``."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}  # int64 is a string in proto3 JSON
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, (bytes, bytearray)):
        return {"bytesValue": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, Mapping):
        return {"kvlistValue": {"values": _attributes(value)}}
    if isinstance(value, Sequence):
        return {"arrayValue": {"values": [_any_value(item) for item in value]}}
    return {"stringValue": str(value)}


def _attributes(attributes: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    return [{"key": key, "value": _any_value(value)} for key, value in (attributes or {}).items()]


def span_to_otlp(span: ReadableSpan) -> dict[str, Any]:
    """One SDK span as an OTLP JSON ``Span`` object (empty fields left out, as the Collector)."""
    context = span.context
    if context is None:
        raise ValueError(f"span {span.name!r} has no span context; it cannot be written")
    out: dict[str, Any] = {
        "traceId": format(context.trace_id, "032x"),
        "spanId": format(context.span_id, "016x"),
    }
    if context.trace_state:
        out["traceState"] = context.trace_state.to_header()
    if span.parent is not None:
        out["parentSpanId"] = format(span.parent.span_id, "016x")
    out["flags"] = 0x100 | int(context.trace_flags)  # bit 8: the has-is-remote flag is known
    out["name"] = span.name
    out["kind"] = _kind(span.kind)
    out["startTimeUnixNano"] = str(span.start_time or 0)
    out["endTimeUnixNano"] = str(span.end_time or 0)
    if span.attributes:
        out["attributes"] = _attributes(span.attributes)
    if span.events:
        out["events"] = [
            {
                "timeUnixNano": str(event.timestamp),
                "name": event.name,
                **({"attributes": _attributes(event.attributes)} if event.attributes else {}),
            }
            for event in span.events
        ]
    if span.links:
        out["links"] = [
            {
                "traceId": format(link.context.trace_id, "032x"),
                "spanId": format(link.context.span_id, "016x"),
                **({"attributes": _attributes(link.attributes)} if link.attributes else {}),
            }
            for link in span.links
        ]
    status: dict[str, Any] = {}
    if span.status.description:
        status["message"] = span.status.description
    code = _STATUS_CODES[span.status.status_code]
    if code:
        status["code"] = code
    out["status"] = status
    return out


def _kind(kind: SpanKind) -> int:
    # The API's SpanKind starts at INTERNAL = 0; OTLP's at UNSPECIFIED = 0, INTERNAL = 1.
    return int(kind.value) + 1


def _request(spans: Iterable[ReadableSpan]) -> dict[str, Any]:
    """Group spans by resource, then scope, in first-seen order: one ExportTraceServiceRequest."""
    resources: dict[int, tuple[Any, dict[tuple[str, str, str], list[dict[str, Any]]]]] = {}
    for span in spans:
        resource = span.resource
        _, scopes = resources.setdefault(id(resource), (resource, {}))
        scope = span.instrumentation_scope
        key = (scope.name, scope.version or "", scope.schema_url or "") if scope else ("", "", "")
        scopes.setdefault(key, []).append(span_to_otlp(span))
    resource_spans = []
    for resource, scopes in resources.values():
        scope_spans = []
        for (name, version, schema_url), items in scopes.items():
            scope_obj: dict[str, Any] = {"name": name}
            if version:
                scope_obj["version"] = version
            entry: dict[str, Any] = {"scope": scope_obj, "spans": items}
            if schema_url:
                entry["schemaUrl"] = schema_url
            scope_spans.append(entry)
        block: dict[str, Any] = {
            "resource": {"attributes": _attributes(resource.attributes if resource else None)},
            "scopeSpans": scope_spans,
        }
        if resource is not None and resource.schema_url:
            block["schemaUrl"] = resource.schema_url
        resource_spans.append(block)
    return {"resourceSpans": resource_spans}


def write_spans(spans: Iterable[ReadableSpan], fp: IO[str]) -> int:
    """Write spans as one OTLP JSON line (one ExportTraceServiceRequest); return the count."""
    items = list(spans)
    if not items:
        return 0
    fp.write(json.dumps(_request(items), separators=(",", ":"), ensure_ascii=False))
    fp.write("\n")
    return len(items)


class OtlpJsonFileExporter(SpanExporter):
    """A SpanExporter appending each batch to a file as one OTLP JSON line. Thread-safe."""

    def __init__(self, path: str | Path) -> None:
        """Append to ``path`` (created on the first export, with its parent folders)."""
        self.path = Path(path)
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = None
        self._closed = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Write the batch as one line and flush it; a failed write leaves no partial line.

        Raises OSError when the line cannot be written (disk full, file gone): the file then
        ends after the last whole line, as if the batch had never come.
        """
        with self._lock:
            if self._closed:
                return SpanExportResult.FAILURE
            if self._file is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                # unbuffered: a line is written here or not at all, never flushed later in part
                self._file = self.path.open("ab", buffering=0)
            buffer = io.StringIO()
            write_spans(spans, buffer)
            # a lone surrogate becomes its JSON escape (\udc80): UTF-8 cannot carry it raw
            line = memoryview(buffer.getvalue().encode("utf-8", "backslashreplace"))
            start = os.fstat(self._file.fileno()).st_size
            try:
                while line:
                    line = line[self._file.write(line) or 0 :]
            except OSError:
                with contextlib.suppress(OSError):  # back to the end of the last whole line
                    os.ftruncate(self._file.fileno(), start)
                raise
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """Close the file; later exports fail."""
        with self._lock:
            self._closed = True
            if self._file is not None:
                self._file.close()
                self._file = None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Every export is flushed as it is written."""
        return True


# --- reading ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OtlpJsonError:
    """A line (or a span on it) that could not be read; the rest of the file still is."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        """``path:line: message``, like a compiler."""
        return f"{self.path}:{self.line}: {self.message}"


class OtlpJsonWarning(UserWarning):
    """Issued for each unreadable line when no error list is given to the module functions."""


class _BadSpan(ValueError):
    pass


def _why(exc: Exception) -> str:
    """The reason a span was skipped, naming a number that is not one (``1e999``)."""
    if isinstance(exc, OverflowError):
        return f"a number out of range ({exc})"
    return str(exc)


def _hex_id(value: Any, size: int, what: str) -> str:
    """An id as lowercase hex: OTLP JSON writes hex; protobuf's own JSON writes base64."""
    if type(value) is str and len(value) == size * 2:
        try:  # what OTLP JSON writes, checked first: hex digits only, one fast C call
            if len(bytes.fromhex(value)) == size:
                return value.lower()
        except ValueError:
            pass
    return _other_id(value, size, what)


def _other_id(value: Any, size: int, what: str) -> str:
    """An id that is not plainly hex: base64 (protobuf's JSON), a str subclass, or wrong."""
    if not isinstance(value, str) or not value:
        raise _BadSpan(f"{what} missing or not a string: {value!r:.60}")
    if len(value) == size * 2:
        try:
            int(value, 16)
            return value.lower()
        except ValueError:
            pass
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) == size:
        return raw.hex()
    raise _BadSpan(
        f"{what} {value!r:.60} is neither {size * 2} hex digits nor base64 of {size} bytes"
    )


def _value(any_value: Any) -> Any:
    """An OTLP ``AnyValue`` back to a Python value."""
    # `type(...) is dict` first: the parsers give plain dicts, and an ABC check per value
    # costs more than the rest of reading it
    if type(any_value) is not dict and not isinstance(any_value, Mapping):
        return None
    for key, value in any_value.items():
        if key == "stringValue":
            return value
        if key == "boolValue":
            return bool(value)
        if key == "intValue":
            return int(value)
        if key == "doubleValue":
            return float(value)
        if key == "arrayValue":
            return tuple(_value(item) for item in (value or {}).get("values", ()))
        if key == "kvlistValue":
            return _read_attributes((value or {}).get("values"))
        if key == "bytesValue":
            return base64.b64decode(value)
    return None


def _read_attributes(items: Any) -> dict[str, Any]:
    if not items:
        return {}
    if type(items) is not list and not isinstance(items, list):
        raise _BadSpan(f"attributes must be a list of {{key, value}}, got {type(items).__name__}")
    out: dict[str, Any] = {}
    for item in items:
        # most attributes are `{"key": str, "value": {"stringValue": ...}}`: read those with
        # no call; anything else (or wrong) is read and checked by _read_attribute
        try:
            key = item["key"]
            value = item["value"]
            if type(key) is str and len(value) == 1:
                out[key] = value["stringValue"]
                continue
        except (KeyError, TypeError):
            pass
        _read_attribute(item, out)
    return out


def _read_attribute(item: Any, out: dict[str, Any]) -> None:
    if type(item) is not dict and not isinstance(item, Mapping):
        raise _BadSpan(f"attribute without a string key: {item!r:.60}")
    key = item.get("key")
    if type(key) is not str and not isinstance(key, str):
        raise _BadSpan(f"attribute without a string key: {item!r:.60}")
    out[key] = _value(item.get("value"))


_UNSET: tuple[SpanStatus, str | None] = ("UNSET", None)


def _status(status: Any) -> tuple[SpanStatus, str | None]:
    if not status:
        return "UNSET", None  # `"status": {}`, what most spans carry (or none at all)
    if not isinstance(status, Mapping):
        return "UNSET", None
    code = status.get("code", 0)
    name = _STATUS_TEXT.get(code) if isinstance(code, str) else _STATUS_NAMES.get(int(code))
    message = status.get("message")
    return name or "UNSET", message if isinstance(message, str) and message else None


def _events(events: Any) -> tuple[SpanEvent, ...]:
    return tuple(
        SpanEvent(
            str(e.get("name", "")),
            _read_attributes(e.get("attributes")),
            int(e.get("timeUnixNano") or 0),
        )
        for e in events
        if isinstance(e, Mapping)
    )


_Fields = tuple[
    str,
    str,
    str,
    dict[str, Any],
    int,
    int,
    str | None,
    SpanStatus,
    str | None,
    tuple[SpanEvent, ...],
]
"""A span read and checked: the arguments of its SpanView, in order, built only when kept."""


def _fields(span: Any) -> _Fields:
    """One OTLP JSON span's SpanView fields (raises _BadSpan naming what is wrong)."""
    if type(span) is not dict and not isinstance(span, Mapping):
        raise _BadSpan(f"a span must be an object, got {type(span).__name__}")
    get = span.get
    parent = get("parentSpanId")
    # the fields are checked in this order, so a span wrong in several ways names the same one
    status_field = get("status")
    status, message = _status(status_field) if status_field else _UNSET
    trace_id = _hex_id(get("traceId"), 16, "traceId")
    span_id = _hex_id(get("spanId"), 8, "spanId")
    parent_id = _hex_id(parent, 8, "parentSpanId") if parent else None
    name = get("name", "")
    events = get("events")
    return (
        trace_id,
        span_id,
        name if type(name) is str else str(name),
        _read_attributes(get("attributes")),
        int(get("startTimeUnixNano") or 0),
        int(get("endTimeUnixNano") or 0),
        parent_id,
        status,
        message,
        _events(events) if events else (),
    )


def _view(span: Any) -> SpanView:
    """One OTLP JSON span as a SpanView (raises _BadSpan naming what is wrong)."""
    return SpanView(*_fields(span))


def _spans_of(request: Any) -> list[Any]:
    """The spans of one request, in order (raises _BadSpan when it is not one)."""
    if type(request) is not dict and not isinstance(request, Mapping):
        raise _BadSpan("not an ExportTraceServiceRequest: no 'resourceSpans' list")
    resources = request.get("resourceSpans")
    if not isinstance(resources, list):
        raise _BadSpan("not an ExportTraceServiceRequest: no 'resourceSpans' list")
    out: list[Any] = []
    for resource_spans in resources:
        scopes = resource_spans.get("scopeSpans") if isinstance(resource_spans, Mapping) else None
        if isinstance(scopes, list):
            for scope_spans in scopes:
                spans = scope_spans.get("spans") if isinstance(scope_spans, Mapping) else None
                if isinstance(spans, list):
                    out += spans
    return out


@dataclass(slots=True)
class _OpenTrace:
    views: list[SpanView] = field(default_factory=list)
    kinds: list[CallSpanKind | None] = field(default_factory=list)
    parents: dict[str, str | None] = field(default_factory=dict)
    root: SpanView | None = None


@dataclass(frozen=True, slots=True)
class OtlpTrace:
    """One complete trace as the reader hands it out: what scoring needs, nothing more."""

    trace_id: str
    spans: tuple[SpanView, ...]
    """Its tool and chat spans (the spans a tool-call convention claims), and the spans where
    LangGraph paused the run, in file order."""
    parents: Mapping[str, str | None]
    """Parent span id of each of its other spans (to find a tool span's agent node)."""
    root: SpanView | None
    """Its root span (no parent), or None when the root is not in the file."""
    line: int
    """The line that completed it (brought its root); 0 when it was complete at end of file."""
    kinds: tuple[CallSpanKind | None, ...] = ()
    """:func:`~tracing.conventions.classify` of each of ``spans``, as the reader found it
    (empty: worked out when needed), so no span is classified twice."""

    @property
    def root_attributes(self) -> Mapping[str, Any]:
        """The root span's attributes (empty without a root)."""
        return self.root.attributes if self.root is not None else {}

    @property
    def span_kinds(self) -> tuple[CallSpanKind | None, ...]:
        """:func:`~tracing.conventions.classify` of each of ``spans``."""
        if len(self.kinds) == len(self.spans):
            return self.kinds
        return tuple(classify(span.attributes) for span in self.spans)

    @property
    def has_calls(self) -> bool:
        """Whether it has a tool or chat span."""
        return any(kind is not None for kind in self.span_kinds)

    def calls(self) -> list[ToolCall]:
        """Its tool calls in request order (empty without tool spans).

        One trace at a time: the runs of a conversation are not joined here (a call paused in
        one run and resumed in the next is two calls); ToolCallSpanExporter joins them.
        """
        kinds = self.span_kinds
        if not any(kind is not None for kind in kinds):
            return []
        root = self.root
        if root is None:
            return calls_from_classified(self.spans, kinds, self.parents)
        spans = (*self.spans, root)
        return calls_from_classified(spans, (*kinds, classify(root.attributes)), self.parents)


@dataclass(frozen=True, slots=True)
class FileSlice:
    """Consecutive whole lines of an OTLP JSON file, for readers working on parts in parallel.

    ``start`` is the byte offset where line ``first_line`` begins; ``line_count`` lines are read
    (None: to the end). Line numbers in errors and traces stay those of the whole file. Used as
    a path (``os.fspath``, ``str``) it is the file's.
    """

    path: str | Path
    start: int = 0
    first_line: int = 1
    line_count: int | None = None

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def __str__(self) -> str:
        return str(self.path)


def _loads(line: str) -> Any:
    """Parse one request line: orjson (C, several times faster), else the standard parser.

    The standard one decides what orjson refuses (NaN and Infinity literals, lone surrogate
    escapes), so such lines read as they always did and a bad line's error is the standard
    parser's message. One difference remains: orjson reads an integer past 64 bits as a float;
    no OTLP field holds one (they are int64 / fixed64, written as strings).
    """
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)


class OtlpJsonReader:
    """Stream spans, or tool calls per trace, out of an OTLP JSON file; errors collect here."""

    def __init__(self, path: str | Path | FileSlice, *, complete_on_root: bool = True) -> None:
        """Read ``path`` (or that part of a file); see the module docstring for when a trace
        counts as complete."""
        self.slice = path if isinstance(path, FileSlice) else FileSlice(Path(path))
        self.path = Path(self.slice.path)
        self.complete_on_root = complete_on_root
        self.errors: list[OtlpJsonError] = []

    def _error(self, line: int, message: str) -> None:
        self.errors.append(OtlpJsonError(str(self.path), line, message))

    def _lines(self) -> Iterator[tuple[int, list[_Fields]]]:
        """(line number, the spans on it) for each readable line; bad lines become errors."""
        part = self.slice
        with self.path.open(encoding="utf-8", errors="replace") as fp:
            if part.start:
                fp.seek(part.start)  # a byte offset where a line starts: a clean decoder state
            lines = fp if part.line_count is None else itertools.islice(fp, part.line_count)
            for number, line in enumerate(lines, part.first_line):
                if line.isspace():  # a blank line (the file's lines are never empty)
                    continue
                try:
                    raw_spans = _spans_of(_loads(line))
                except ValueError as exc:  # JSONDecodeError and _BadSpan
                    self._error(number, f"not an OTLP JSON request: {exc}")
                    continue
                except RecursionError:  # 100,000 nested brackets: Python's parser gives up
                    self._error(number, "not an OTLP JSON request: nested too deeply to read")
                    continue
                spans: list[_Fields] = []
                keep = spans.append
                for position, raw in enumerate(raw_spans):
                    try:
                        keep(_fields(raw))
                    except (TypeError, ValueError, AttributeError, ArithmeticError) as exc:
                        # ArithmeticError: 1e999 (infinity) as an int, a time or a status code
                        self._error(number, f"span {position} skipped: {_why(exc)}")
                    except RecursionError:
                        self._error(number, f"span {position} skipped: nested too deeply")
                yield number, spans

    def iter_spans(self) -> Iterator[SpanView]:
        """Every readable span, in file order."""
        for _, spans in self._lines():
            for fields in spans:
                yield SpanView(*fields)

    def iter_traces(self) -> Iterator[OtlpTrace]:
        """Every trace, tool calls or not, as soon as it is complete (see the module docstring).

        Traces complete on a line come out in the order their roots appear on it; traces still
        open at the end of the file come out last, with ``line`` 0.
        """
        open_traces: dict[str, _OpenTrace] = {}
        complete = _RecentTraces(_REMEMBERED_COMPLETE)
        completed = complete.lines
        on_root = self.complete_on_root
        for number, spans in self._lines():
            finished: list[str] = []
            for fields in spans:
                trace_id, span_id, _, attributes, _, _, parent_id, _, _, events = fields
                root_line = completed.get(trace_id)
                if root_line is not None:
                    self._error(
                        number,
                        f"span {span_id} of trace {trace_id} arrives after the trace "
                        f"was complete (root span on line {root_line}); skipped",
                    )
                    continue
                trace = open_traces.get(trace_id)
                if trace is None:
                    trace = open_traces[trace_id] = _OpenTrace()
                if parent_id is None:  # a root: held as the root, and as a parent link
                    trace.parents[span_id] = None
                    trace.root = SpanView(*fields)
                    if on_root:
                        finished.append(trace_id)
                    continue
                # keeps(), with the span classified once for the conversion; only the spans
                # kept become SpanViews, the others are a parent link
                kind = classify(attributes)
                if kind is not None or (
                    (events or ERROR_TYPE in attributes)
                    and keeps(attributes, parent_id, [(e.name, e.attributes) for e in events])
                ):
                    trace.views.append(SpanView(*fields))
                    trace.kinds.append(kind)
                else:
                    trace.parents[span_id] = parent_id
            for trace_id in finished:
                trace = open_traces.pop(trace_id, None)
                if trace is None:
                    continue  # two roots on one line
                complete.add(trace_id, number)
                yield _record(trace_id, trace, number)
        for trace_id, trace in open_traces.items():
            yield _record(trace_id, trace, 0)

    def iter_trace_calls(self) -> Iterator[tuple[str, list[ToolCall]]]:
        """(trace id, its calls in request order) per trace with tool or chat spans."""
        for trace in self.iter_traces():
            if trace.has_calls:
                yield trace.trace_id, trace.calls()


class _RecentTraces:
    """The line of each recently completed trace (``lines``: trace id -> line): at least the
    last ``size // 2``, at most ``size`` of them, oldest forgotten first."""

    __slots__ = ("_half", "_size", "lines")

    def __init__(self, size: int) -> None:
        self._half = max(size // 2, 1)
        self._size = 2 * self._half
        # one plain dict, changed in place, so the reader looks an id up without a call
        self.lines: dict[str, int] = {}

    def add(self, trace_id: str, line: int) -> None:
        lines = self.lines
        if len(lines) >= self._size:  # forget the oldest, keeping the newest half
            for old in list(itertools.islice(lines, len(lines) - self._half)):
                del lines[old]
        lines[trace_id] = line

    def get(self, trace_id: str) -> int | None:
        return self.lines.get(trace_id)


def _record(trace_id: str, trace: _OpenTrace, line: int) -> OtlpTrace:
    return OtlpTrace(
        trace_id, tuple(trace.views), trace.parents, trace.root, line, tuple(trace.kinds)
    )


def _report(reader: OtlpJsonReader, errors: list[OtlpJsonError] | None, seen: int) -> int:
    for error in reader.errors[seen:]:
        if errors is not None:
            errors.append(error)
        else:
            warnings.warn(str(error), OtlpJsonWarning, stacklevel=3)
    return len(reader.errors)


def iter_spans(
    path: str | Path, *, errors: list[OtlpJsonError] | None = None
) -> Iterator[SpanView]:
    """Stream every span of an OTLP JSON file; unreadable lines go to ``errors`` (or warn)."""
    reader = OtlpJsonReader(path)
    seen = 0
    for view in reader.iter_spans():
        seen = _report(reader, errors, seen)
        yield view
    _report(reader, errors, seen)


def iter_trace_calls(
    path: str | Path,
    *,
    errors: list[OtlpJsonError] | None = None,
    complete_on_root: bool = True,
) -> Iterator[tuple[str, list[ToolCall]]]:
    """Stream (trace id, calls) out of an OTLP JSON file; unreadable lines go to ``errors``."""
    reader = OtlpJsonReader(path, complete_on_root=complete_on_root)
    seen = 0
    for item in reader.iter_trace_calls():
        seen = _report(reader, errors, seen)
        yield item
    _report(reader, errors, seen)
