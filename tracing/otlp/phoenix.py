"""Spans pulled from a running Arize Phoenix, page by page: ``--from phoenix://HOST:PORT/PROJECT``.

Through Phoenix's public REST API and its client (``arize-phoenix-client``, the ``[phoenix]``
extra). A page is up to :data:`PAGE` traces of the project, oldest first (``get_traces``,
sorted by start time, from ``--since`` to ``--until``), then every span of those traces
(``get_spans`` by trace id); a page is one record, so its traces are complete at its end and
memory holds one page. The next page starts at the last trace's start time, skipping the traces
already read at that instant.

What Phoenix keeps differs from the OTLP it was sent: span ids and times (to the microsecond)
are kept; attributes come back flattened to dotted keys (lists of primitives stay lists, read
here as tuples, as OTLP arrays are), and ``openinference.span.kind`` comes back as the span's
``span_kind``, which is put back as that attribute unless it is ``UNKNOWN`` (what Phoenix says
of a span without one). When Phoenix ingests a GenAI span (one with ``gen_ai.operation.name``)
it fills in the OpenInference attributes it derives from the ``gen_ai.*`` ones (and drops what
is empty: a tool's ``{}`` arguments); those are left out again, so the span reads as it was
sent, by its GenAI attributes, which Phoenix keeps. The spans of a trace are handed on by end
time, the order an exporter writes them in.

The address: ``phoenix://HOST:PORT/PROJECT`` (HTTP) or ``phoenix+https://HOST/PROJECT``; a path
before the project is Phoenix's root path. The API key is the Phoenix client's:
``PHOENIX_API_KEY`` (or ``PHOENIX_CLIENT_HEADERS``). Every call has a timeout; a Phoenix that
is down, slow or refuses the key ends the pull with one error naming the URL (the traces already
pulled are still scored).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from tracing.otel.span_view import SpanEvent, SpanStatus
from tracing.otlp.decode import BadSpan, KnownIds, SpanFields, _hex_id
from tracing.otlp.sources import Batch, Report, decode_batch

__all__ = ["PAGE", "TIMEOUT", "PhoenixSource", "parse_phoenix_url", "span_fields"]

PAGE = 100
"""Traces per page."""

TIMEOUT = 30
"""Seconds each call to Phoenix may take."""

_MAX_SPANS = 10_000_000
"""``get_spans``' limit for one page's traces (the client pages through them itself)."""

_KIND = "openinference.span.kind"
_GENAI_OPERATION = "gen_ai.operation.name"
_DERIVED = (
    *("openinference.", "tool.", "input.", "output.", "llm.", "embedding.", "retrieval."),
    "session.id",
)
"""What Phoenix fills in from ``gen_ai.*`` attributes when it ingests a span (its
``phoenix.trace.gen_ai.conversion``): OpenInference's keys for the same facts."""
_STATUS: dict[str, SpanStatus] = {"OK": "OK", "ERROR": "ERROR", "UNSET": "UNSET"}
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_SCHEMES = {"phoenix": "http", "phoenix+http": "http", "phoenix+https": "https"}


@dataclass(frozen=True, slots=True)
class PhoenixAddress:
    """Where the project lives: the API's base URL and the project's name."""

    base_url: str
    project: str


def parse_phoenix_url(url: str) -> PhoenixAddress:
    """``phoenix://HOST:PORT/PROJECT`` as the base URL and the project; ValueError if not one."""
    parts = urllib.parse.urlsplit(url)
    scheme = _SCHEMES.get(parts.scheme)
    path = parts.path.strip("/")
    if scheme is None or not parts.netloc or not path:
        raise ValueError(
            f"{url!r} is not a Phoenix address: expected phoenix://HOST:PORT/PROJECT "
            "(or phoenix+https://HOST/PROJECT)"
        )
    root, _, project = path.rpartition("/")
    base = f"{scheme}://{parts.netloc}" + (f"/{root}" if root else "")
    return PhoenixAddress(base, urllib.parse.unquote(project))


def _nanoseconds(value: Any) -> int:
    if not value:
        return 0
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return ((moment - _EPOCH) // timedelta(microseconds=1)) * 1000


def _plain(value: Any) -> Any:
    """A JSON value as OTLP decoding gives it (arrays as tuples)."""
    if isinstance(value, list):
        return tuple(_plain(item) for item in value)
    return value


def span_fields(span: Any, trace_ids: KnownIds, span_ids: KnownIds) -> SpanFields:
    """One span of Phoenix's REST API as SpanView fields (raises BadSpan naming what is wrong)."""
    if not isinstance(span, Mapping) or not isinstance(span.get("context"), Mapping):
        raise BadSpan("a Phoenix span must be an object with a 'context'")
    context = span["context"]
    attributes = {key: _plain(value) for key, value in (span.get("attributes") or {}).items()}
    kind = span.get("span_kind")
    if _GENAI_OPERATION in attributes:
        # what Phoenix derived from the GenAI attributes, which are all still there
        attributes = {k: v for k, v in attributes.items() if not k.startswith(_DERIVED)}
    elif isinstance(kind, str) and kind != "UNKNOWN":
        attributes.setdefault(_KIND, kind)
    parent = span.get("parent_id")
    message = span.get("status_message")
    events = tuple(
        SpanEvent(
            str(event.get("name", "")),
            {key: _plain(value) for key, value in (event.get("attributes") or {}).items()},
            _nanoseconds(event.get("timestamp")),
        )
        for event in span.get("events") or ()
    )
    return (
        _hex_id(context.get("trace_id"), 16, "context.trace_id"),
        _hex_id(context.get("span_id"), 8, "context.span_id"),
        str(span.get("name", "")),
        attributes,
        _nanoseconds(span.get("start_time")),
        _nanoseconds(span.get("end_time")),
        _hex_id(parent, 8, "parent_id") if parent else None,
        _STATUS.get(str(span.get("status_code", "")).upper(), "UNSET"),
        message if isinstance(message, str) and message else None,
        events,
    )


class PhoenixSource:
    """The spans of a Phoenix project's traces that started between ``since`` and ``until``."""

    unit = "page"

    def __init__(
        self,
        url: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        timeout: int = TIMEOUT,
        page: int = PAGE,
    ) -> None:
        """Pull from ``url`` (``phoenix://HOST:PORT/PROJECT``); raises ValueError if it is not
        one."""
        self.name = url
        self.address = parse_phoenix_url(url)
        self.since = since
        self.until = until
        self.timeout = timeout
        self.page = page

    def __str__(self) -> str:
        """The URL as given."""
        return self.name

    def batches(self, report: Report) -> Iterator[Batch]:
        """One batch per page of traces; a failed call ends the pull with one error."""
        import httpx
        from phoenix.client import Client
        from phoenix.client.utils.config import get_env_client_headers

        # the client's own HTTP client, with the timeout on every call (its version check too)
        http = httpx.Client(
            base_url=self.address.base_url,
            headers=get_env_client_headers(),
            timeout=httpx.Timeout(self.timeout),
        )
        with http:
            yield from self._pages(Client(http_client=http), report)

    def _pages(self, client: Any, report: Report) -> Iterator[Batch]:
        import httpx
        from phoenix.client.exceptions import PhoenixException

        project = self.address.project
        start, seen, size, number = self.since, set[str](), self.page, 0
        try:
            while True:
                number += 1
                traces = client.traces.get_traces(
                    project_identifier=project,
                    start_time=start,
                    end_time=self.until,
                    sort="start_time",
                    order="asc",
                    limit=size,
                    timeout=self.timeout,
                )
                fresh = [t for t in traces if t["trace_id"] not in seen]
                if not fresh and len(traces) >= size:
                    size *= 2  # more traces start at one instant than a page holds
                    continue
                if fresh:
                    spans = client.spans.get_spans(
                        project_identifier=project,
                        trace_ids=[t["trace_id"] for t in fresh],
                        limit=_MAX_SPANS,
                        timeout=self.timeout,
                    )
                    spans = sorted(spans, key=lambda span: _nanoseconds(span.get("end_time")))
                    # Phoenix's span API gives no resource: the spans have none here
                    yield decode_batch(number, list(spans), span_fields, report, {})
                if len(traces) < size:
                    return
                last = traces[-1]["start_time"]
                start = datetime.fromisoformat(str(last))
                seen = {t["trace_id"] for t in traces if t["start_time"] == last}
                size = self.page
        except httpx.HTTPStatusError as exc:
            report(number, self._refused(exc.response.status_code, exc.response.text))
        except httpx.TimeoutException:
            report(number, f"{self.address.base_url} gave no answer within {self.timeout} s")
        except httpx.HTTPError as exc:
            report(number, f"cannot reach Phoenix at {self.address.base_url}: {exc}")
        except PhoenixException as exc:  # a Phoenix too old for the calls made here
            report(number, f"{self.address.base_url}: {exc}")
        except (ValueError, KeyError, TypeError) as exc:  # an answer not shaped as documented
            report(number, f"{self.address.base_url} answered unexpectedly: {exc!r:.200}")

    def _refused(self, status: int, text: str) -> str:
        base = self.address.base_url
        if status in (401, 403):
            return (
                f"{base} refused the API key (HTTP {status}): set PHOENIX_API_KEY to a key of "
                "that Phoenix"
            )
        if status == 404:
            return f"{base} has no project {self.address.project!r} (HTTP 404)"
        return f"{base} answered HTTP {status}: {' '.join(text.split())[:200]}"
