"""One OTLP JSON span decoded into a SpanView: ids, attribute values, status, events.

The format is the one :mod:`tracing.otlp.file_format` describes. A span that does not fit it raises
:class:`BadSpan` naming what is wrong; :mod:`tracing.otlp.reader` reports that as a located error
(``path:line: span N skipped: ...``) and reads on.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from tracing.otel.span_view import SpanEvent, SpanStatus

__all__ = [
    "BadSpan",
    "KnownIds",
    "SpanFields",
    "resource_attributes",
    "span_fields",
    "why_skipped",
]

_STATUS_NAMES: dict[int, SpanStatus] = {0: "UNSET", 1: "OK", 2: "ERROR"}
_STATUS_TEXT: dict[str, SpanStatus] = {
    "STATUS_CODE_UNSET": "UNSET",
    "STATUS_CODE_OK": "OK",
    "STATUS_CODE_ERROR": "ERROR",
}


class BadSpan(ValueError):
    """A span (or request) that does not fit the format; the message names what is wrong."""


def why_skipped(exc: Exception) -> str:
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
        raise BadSpan(f"{what} missing or not a string: {value!r:.60}")
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
    raise BadSpan(
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
        raise BadSpan(f"attributes must be a list of {{key, value}}, got {type(items).__name__}")
    out: dict[str, Any] = {}
    for item in items:
        # most attributes are `{"key": str, "value": {"stringValue" | "intValue": ...}}`: read
        # those with no call and no exception (a value of one key is what _value reads it as);
        # anything else (or wrong) is read and checked by _read_attribute
        try:
            key = item["key"]
            value = item["value"]
            if type(key) is str and len(value) == 1:
                text = value.get("stringValue", _ABSENT)
                if text is not _ABSENT:
                    out[key] = text
                    continue
                number = value.get("intValue", _ABSENT)
                if number is not _ABSENT:
                    out[key] = int(number)  # a bad number raises as _value's int() does
                    continue
        except (KeyError, TypeError, AttributeError):  # not a dict with these keys
            pass
        _read_attribute(item, out)
    return out


_ABSENT: Any = object()
"""What ``dict.get`` answers for a key that is not there (no JSON value is this object)."""


def _read_attribute(item: Any, out: dict[str, Any]) -> None:
    if type(item) is not dict and not isinstance(item, Mapping):
        raise BadSpan(f"attribute without a string key: {item!r:.60}")
    key = item.get("key")
    if type(key) is not str and not isinstance(key, str):
        raise BadSpan(f"attribute without a string key: {item!r:.60}")
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


SpanFields = tuple[
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


KnownIds = dict[str, str]
"""Ids already read, as written (a plain ``str``) -> lowercase hex; one dict per id size."""


def _new_id(value: Any, size: int, what: str, known: KnownIds) -> str:
    """:func:`_hex_id`, remembered in ``known`` when ``value`` is a plain string (the answer
    depends on nothing else, and a wrong id raises, so only good ids are remembered)."""
    found = _hex_id(value, size, what)
    if type(value) is str:
        known[value] = found
    return found


def span_fields(span: Any, trace_ids: KnownIds, span_ids: KnownIds) -> SpanFields:
    """One OTLP JSON span's SpanView fields (raises BadSpan naming what is wrong).

    ``trace_ids`` / ``span_ids``: ids read before (the caller keeps them per line), filled in
    here. The spans of a line repeat the same trace id, and a parent's id is the id of another
    span, so most ids are checked once per line, not once per span. Trace and span ids are
    kept apart: no text is a good id of both sizes, so one dict would answer for a bad id.
    """
    if type(span) is not dict and not isinstance(span, Mapping):
        raise BadSpan(f"a span must be an object, got {type(span).__name__}")
    get = span.get
    parent = get("parentSpanId")
    # the fields are checked in this order, so a span wrong in several ways names the same one
    status_field = get("status")
    status, message = _status(status_field) if status_field else _UNSET
    raw = get("traceId")
    # `type(...) is str` before the look-up: an id may be any JSON value, a list included
    trace_id = trace_ids.get(raw) if type(raw) is str else None
    if trace_id is None:
        trace_id = _new_id(raw, 16, "traceId", trace_ids)
    raw = get("spanId")
    span_id = span_ids.get(raw) if type(raw) is str else None
    if span_id is None:
        span_id = _new_id(raw, 8, "spanId", span_ids)
    parent_id = None
    if parent:
        parent_id = span_ids.get(parent) if type(parent) is str else None
        if parent_id is None:
            parent_id = _new_id(parent, 8, "parentSpanId", span_ids)
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


def resource_attributes(resource: Any) -> dict[str, Any]:
    """The attributes of a request's ``resource`` object (``service.name``, ...); a resource
    that cannot be read has none (it names the service, it holds no call)."""
    try:
        return _read_attributes(
            resource.get("attributes") if isinstance(resource, Mapping) else None
        )
    except (BadSpan, TypeError, ValueError, AttributeError, ArithmeticError, RecursionError):
        return {}
