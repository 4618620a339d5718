"""Events written as OTLP logs, joined to their spans: ``eval-traces FILE --logs LOGS``.

Some instrumentations write message content as log *events* instead of span attributes: the
GenAI ``gen_ai.client.inference.operation.details`` event (``opentelemetry-util-genai`` with
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=EVENT_ONLY``), the older
``gen_ai.user.message`` / ``gen_ai.choice`` events (OpenLLMetry without legacy attributes). A
log file holds them as ``resourceLogs`` -> ``scopeLogs`` -> ``logRecords``, in any format the
traces may have (JSON lines as the Collector's file exporter writes them, a JSON document, the
length-prefixed protobuf, gzipped or not).

A log record is an event when it has a name (its ``eventName``, else its ``event.name``
attribute) and the trace and span ids of the span it happened in; other records (plain log
lines) are left out. Each event becomes a :class:`~tracing.otel.span_view.SpanEvent` of that span:
its name, its attributes plus, when it has one, its body under :data:`LOG_BODY`, its time
(``timeUnixNano``, else ``observedTimeUnixNano``). A span's events are then in time order, its
own first on a tie; so the span readers see a log event as they see a span event. A chat
span's messages carried by its events become the message attributes it lacks
(tracing/otel/event_content.py), so calls' arguments and results, the user's input and the
final answer read as they do when the span carries them.

Memory stays flat: the events are indexed on disk (SQLite, in a temporary folder removed when
the index goes) by trace id before the traces are read, and each batch of spans asks for its
traces' events in one query.
"""

from __future__ import annotations

import os
import pickle
import shutil
import sqlite3
import tempfile
import weakref
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, Any

import ijson

from tracing.otel.event_content import content_attributes
from tracing.otel.span_view import SpanEvent
from tracing.otlp.decode import BadSpan, SpanFields, _hex_id, _read_attributes, _value
from tracing.otlp.lines import loads
from tracing.otlp.sources import (
    NEEDS_PROTO,
    READ_ERRORS,
    Batch,
    Report,
    SpanSource,
    sniff,
    why_unreadable,
)

__all__ = [
    "LOG_BODY",
    "JoinedSource",
    "LogEvents",
    "SpanLogEvent",
    "json_event",
    "json_records",
    "proto_event",
]

LOG_BODY = "body"
"""The event attribute that holds a log event's body."""

_EVENT_NAME = "event.name"
_ROWS = 1000
_IDS_PER_QUERY = 500

SpanLogEvent = tuple[str, str, SpanEvent]
"""``(trace id, span id, event)``: a log event and the span it happened in (hex ids)."""
Row = tuple[str, str, int, str, bytes]
"""``(trace id, span id, time, name, pickled attributes)``."""


def _row(trace: str, span: str, time: int, name: str, attributes: dict[str, Any]) -> Row:
    return trace, span, time, name, pickle.dumps(attributes, pickle.HIGHEST_PROTOCOL)


def json_event(record: Any) -> SpanLogEvent | None:
    """A JSON log record as (trace id, span id, event), or None when it is not an event of a
    span; BadSpan (a ValueError) for a record that is not an object or has malformed ids."""
    if not isinstance(record, Mapping):
        raise BadSpan(f"a log record must be an object, got {type(record).__name__}")
    attributes = _read_attributes(record.get("attributes"))
    name = record.get("eventName") or attributes.get(_EVENT_NAME)
    trace, span = record.get("traceId"), record.get("spanId")
    if not name or not trace or not span:
        return None
    body = record.get("body")
    if body:
        attributes[LOG_BODY] = _value(body)
    time = int(record.get("timeUnixNano") or record.get("observedTimeUnixNano") or 0)
    event = SpanEvent(str(name), attributes, time)
    return _hex_id(trace, 16, "traceId"), _hex_id(span, 8, "spanId"), event


def _json_row(record: Any) -> Row | None:
    return _pickled(json_event(record))


def _pickled(found: SpanLogEvent | None) -> Row | None:
    if found is None:
        return None
    trace, span, event = found
    return _row(trace, span, event.time_ns, event.name, dict(event.attributes))


def json_records(request: Any) -> list[Any]:
    """The log records of an OTLP JSON logs request (BadSpan when it is not one)."""
    if not isinstance(request, Mapping) or not isinstance(request.get("resourceLogs"), list):
        raise BadSpan("not an OTLP logs export: no 'resourceLogs' list")
    out: list[Any] = []
    for resource_logs in request["resourceLogs"]:
        scopes = resource_logs.get("scopeLogs") if isinstance(resource_logs, Mapping) else None
        for scope_logs in scopes if isinstance(scopes, list) else ():
            records = scope_logs.get("logRecords") if isinstance(scope_logs, Mapping) else None
            if isinstance(records, list):
                out += records
    return out


def proto_event(record: Any) -> SpanLogEvent | None:
    """A protobuf ``LogRecord`` as (trace id, span id, event), or None when it is not an event
    of a span; BadSpan for ids that are not 16 / 8 bytes."""
    from tracing.otlp.protobuf import any_value, key_values

    attributes = key_values(record.attributes)
    name = record.event_name or attributes.get(_EVENT_NAME)
    if not name or not record.trace_id or not record.span_id:
        return None
    if len(record.trace_id) != 16 or len(record.span_id) != 8:
        raise BadSpan("a log record's trace_id / span_id are not 16 / 8 bytes")
    if record.HasField("body"):
        attributes[LOG_BODY] = any_value(record.body)
    time = record.time_unix_nano or record.observed_time_unix_nano
    return record.trace_id.hex(), record.span_id.hex(), SpanEvent(str(name), attributes, time)


def _proto_row(record: Any) -> Row | None:
    return _pickled(proto_event(record))


class _Reading:
    """One log file read into rows; its errors go to ``report`` under its own name."""

    def __init__(self, path: str, report: Report) -> None:
        self.name = path
        self.unit = "line"
        self._report = report

    def error(self, location: int, message: str) -> None:
        self._report(location, message, name=self.name, unit=self.unit)

    def rows(self) -> Iterator[Row]:
        with open(self.name, "rb") as raw:
            try:
                stream = sniff(raw)
            except READ_ERRORS as exc:
                self.error(1, why_unreadable(exc))
                return
            if stream.shape == "lines":
                yield from self._lines(stream.data)
            elif stream.shape == "document":
                self.unit = "record"
                yield from self._document(stream.data)
            elif stream.shape == "protobuf":
                self.unit = "record"
                yield from self._protobuf(stream.data)
            elif stream.shape != "empty":
                self.error(1, "not an OTLP logs file (JSON lines, a JSON document or protobuf)")

    def _records(self, location: int, records: Sequence[Any], row: Any) -> Iterator[Row]:
        for position, record in enumerate(records):
            try:
                found = row(record)
            except (ValueError, TypeError, AttributeError, ArithmeticError) as exc:
                self.error(location, f"log record {position} skipped: {exc}")
                continue
            except RecursionError:
                self.error(location, f"log record {position} skipped: nested too deeply")
                continue
            if found is not None:
                yield found

    def _lines(self, data: IO[bytes]) -> Iterator[Row]:
        number = 0
        try:
            for number, line in enumerate(data, 1):
                if line.isspace():
                    continue
                try:
                    records = json_records(loads(line))
                except (ValueError, RecursionError) as exc:
                    self.error(number, f"not an OTLP logs request: {exc}")
                    continue
                yield from self._records(number, records, _json_row)
        except READ_ERRORS as exc:
            self.error(number + 1, why_unreadable(exc))

    def _document(self, data: IO[bytes]) -> Iterator[Row]:
        prefix = "resourceLogs.item.scopeLogs.item.logRecords.item"
        position = 0
        try:
            for position, record in enumerate(  # noqa: B007 (named in errors after the loop)
                ijson.items(data, prefix, multiple_values=True, use_float=True)
            ):
                yield from self._records(1, [record], _json_row)
        except (ijson.JSONError, ValueError) as exc:
            self.error(1, f"not valid JSON after log record {position}: {exc}")
        except READ_ERRORS as exc:
            self.error(1, why_unreadable(exc))

    def _protobuf(self, data: IO[bytes]) -> Iterator[Row]:
        try:
            from google.protobuf.message import DecodeError
            from opentelemetry.proto.logs.v1.logs_pb2 import LogsData

            from tracing.otlp.protobuf import read_frames
        except ImportError:
            self.error(1, NEEDS_PROTO)
            return
        for record, body in read_frames(data, self.error):
            message = LogsData()
            try:
                message.ParseFromString(body)
            except (DecodeError, RecursionError) as exc:
                self.error(record, f"not an OTLP logs message (LogsData): {exc}")
                continue
            records = [
                log
                for resource_logs in message.resource_logs
                for scope_logs in resource_logs.scope_logs
                for log in scope_logs.log_records
            ]
            yield from self._records(record, records, _proto_row)


def _close(connection: sqlite3.Connection, folder: str) -> None:
    connection.close()
    shutil.rmtree(folder, ignore_errors=True)


class LogEvents:
    """The events of some OTLP log files, indexed on disk by trace id (read on first use)."""

    def __init__(self, paths: Sequence[str]) -> None:
        """Index the events of ``paths`` when a source first asks (:meth:`build`)."""
        self.paths = list(paths)
        self.count = 0
        """Events read from the files."""
        self.joined = 0
        """Events attached to a span so far."""
        self._db: sqlite3.Connection | None = None

    def build(self, report: Report) -> None:
        """Read the files into the index (once); what cannot be read goes to ``report``."""
        if self._db is not None:
            return
        folder = tempfile.mkdtemp(prefix="harness-logs-")
        db = sqlite3.connect(os.path.join(folder, "events.sqlite3"))
        weakref.finalize(self, _close, db, folder)
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("PRAGMA synchronous = OFF")
        db.execute(
            "CREATE TABLE events (trace TEXT, span TEXT, time INTEGER, name TEXT, attrs BLOB)"
        )
        for path in self.paths:
            rows: list[Row] = []
            for row in _Reading(path, report).rows():
                rows.append(row)
                if len(rows) >= _ROWS:
                    self._insert(db, rows)
            self._insert(db, rows)
        db.execute("CREATE INDEX events_by_trace ON events (trace)")
        db.commit()
        self._db = db

    def _insert(self, db: sqlite3.Connection, rows: list[Row]) -> None:
        db.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?)", rows)
        self.count += len(rows)
        rows.clear()

    def _events(self, trace_ids: list[str]) -> dict[tuple[str, str], list[SpanEvent]]:
        assert self._db is not None, "build() first"
        found: dict[tuple[str, str], list[SpanEvent]] = {}
        for start in range(0, len(trace_ids), _IDS_PER_QUERY):
            chunk = trace_ids[start : start + _IDS_PER_QUERY]
            marks = ", ".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT trace, span, time, name, attrs FROM events WHERE trace IN ({marks}) "
                "ORDER BY rowid",
                chunk,
            )
            for trace, span, time, name, attrs in rows:
                event = SpanEvent(name, pickle.loads(attrs), time)
                found.setdefault((trace, span), []).append(event)
        return found

    def attach(self, spans: list[SpanFields]) -> list[SpanFields]:
        """``spans`` with the events of their traces' logs added (the same list when none)."""
        events = self._events(list({fields[0] for fields in spans}))
        if not events:
            return spans
        out: list[SpanFields] = []
        for fields in spans:
            extra = events.pop((fields[0], fields[1]), None)
            if extra:
                self.joined += len(extra)
                merged = sorted((*fields[9], *extra), key=lambda event: event.time_ns)
                attributes = fields[3]
                content = content_attributes(merged, attributes)
                if content:  # the messages the span's events carry (tracing/otel/event_content)
                    attributes = {**attributes, **content}
                fields = (*fields[:3], attributes, *fields[4:9], tuple(merged))
            out.append(fields)
        return out


class JoinedSource:
    """A source's spans with the events of ``events``' log files added to them."""

    def __init__(self, source: SpanSource, events: LogEvents) -> None:
        """Join ``events`` to what ``source`` reads."""
        self.source = source
        self.events = events

    @property
    def name(self) -> str:
        """The traces' name (errors in the logs name the log file)."""
        return self.source.name

    @property
    def unit(self) -> str:
        """The traces' unit."""
        return self.source.unit

    def __str__(self) -> str:
        """The traces' name."""
        return self.source.name

    def batches(self, report: Report) -> Iterator[Batch]:
        """The source's batches, each span with its log events."""
        self.events.build(report)
        attach = self.events.attach
        for location, spans, ends, resources in self.source.batches(report):
            yield location, attach(spans) if spans else spans, ends, resources
