"""An OTLP/HTTP trace receiver that feeds a :class:`~harness.online.processor.RuleProcessor`.

``POST /v1/traces`` takes an ``ExportTraceServiceRequest`` as protobuf
(``application/x-protobuf``) or as OTLP JSON (``application/json``), plain or gzip, and answers
as the OTLP/HTTP specification says (an empty response in the request's encoding; 400 for a body
that is not a request, 413 for one over the size bound, 415 for another content type).
``POST /v1/logs`` takes an ``ExportLogsServiceRequest`` the same ways: content written as log
events (the GenAI ``gen_ai.*.message`` / ``gen_ai.choice`` / inference-details events) is
joined to its span by trace and span id before the trace is evaluated (as eval-traces
``--logs`` joins a log file); plain log lines are left out. ``GET /healthz`` answers ``ok``.
The standard library's ``ThreadingHTTPServer`` serves; decoding
a request is the trace reader's (:mod:`tracing.otlp.decode`), so a span reads the same here as
in ``harness eval-traces``. A span that does not fit is skipped (counted in the response's
``partialSuccess``), the others still go to the processor.
"""

from __future__ import annotations

import json
import logging
import threading
import zlib
from collections.abc import Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from harness.errors import OtlpRequestError
from harness.online.processor import RuleProcessor
from tracing import SpanView
from tracing.otlp.decode import BadSpan, KnownIds, span_fields
from tracing.otlp.logs import SpanLogEvent, json_event, json_records, proto_event
from tracing.otlp.tempo import request_spans

__all__ = ["DEFAULT_MAX_BODY", "OtlpReceiver", "decode_logs", "decode_request"]

DEFAULT_MAX_BODY = 16 * 1024 * 1024
"""The largest request body, compressed or not, in bytes (the Collector's default is 20 MiB)."""
PROTOBUF = "application/x-protobuf"
JSON = "application/json"
TRACES = "/v1/traces"
LOGS = "/v1/logs"

log = logging.getLogger("harness.online")


def _gunzip(body: bytes, limit: int) -> bytes:
    inflater = zlib.decompressobj(wbits=31)  # gzip framing
    try:
        out = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise OtlpRequestError(
            HTTPStatus.BAD_REQUEST, f"the gzip body does not inflate: {exc}"
        ) from None
    if len(out) > limit:
        raise OtlpRequestError(
            HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"the body inflates to more than {limit} bytes"
        )
    return out


def _json(body: bytes) -> Mapping[str, Any]:
    try:
        request = json.loads(body)
    except ValueError as exc:
        raise OtlpRequestError(HTTPStatus.BAD_REQUEST, f"the body is not JSON: {exc}") from None
    if not isinstance(request, Mapping):
        raise OtlpRequestError(HTTPStatus.BAD_REQUEST, "the body is not a JSON object")
    return request


def _parse(body: bytes, content_type: str) -> Mapping[str, Any]:
    """The request as OTLP JSON's shape (protobuf converted by its JSON mapping)."""
    if content_type == JSON:
        return _json(body)
    from google.protobuf.json_format import MessageToDict
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    try:
        message = ExportTraceServiceRequest.FromString(body)
    except DecodeError as exc:
        raise OtlpRequestError(
            HTTPStatus.BAD_REQUEST, f"the body is not an ExportTraceServiceRequest: {exc}"
        ) from None
    converted: dict[str, Any] = MessageToDict(message)
    converted.setdefault("resourceSpans", [])  # protobuf's JSON leaves out an empty list
    return converted


def decode_request(request: Mapping[str, Any]) -> tuple[list[tuple[SpanView, Any]], list[str]]:
    """The spans of one request with their resource's attributes, and why others were
    skipped (one line each)."""
    blocks = request.get("resourceSpans") if isinstance(request, Mapping) else None
    if not isinstance(blocks, list):
        raise OtlpRequestError(
            HTTPStatus.BAD_REQUEST, "not an ExportTraceServiceRequest: no 'resourceSpans' list"
        )
    spans, resources = request_spans(blocks)
    trace_ids: KnownIds = {}
    span_ids: KnownIds = {}
    out: list[tuple[SpanView, Any]] = []
    skipped: list[str] = []
    for index, span in enumerate(spans):
        resource = resources[index] if isinstance(resources, list) else resources
        try:
            out.append((SpanView(*span_fields(span, trace_ids, span_ids)), resource))
        except (BadSpan, TypeError, ValueError, AttributeError, ArithmeticError) as exc:
            skipped.append(f"span {index}: {exc}")
    return out, skipped


def decode_logs(body: bytes, content_type: str) -> tuple[list[SpanLogEvent], list[str]]:
    """The span events of one ``ExportLogsServiceRequest`` (log records with an event name and
    the trace and span ids of their span, read as eval-traces ``--logs`` reads a log file), and
    why others were skipped; plain log lines are left out without a word."""
    found: list[SpanLogEvent | None] = []
    skipped: list[str] = []
    if content_type == JSON:
        try:
            records: list[Any] = json_records(_json(body))
        except BadSpan as exc:
            raise OtlpRequestError(HTTPStatus.BAD_REQUEST, str(exc)) from None
        read: Any = json_event
    else:
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
            ExportLogsServiceRequest,
        )

        try:
            message = ExportLogsServiceRequest.FromString(body)
        except DecodeError as exc:
            raise OtlpRequestError(
                HTTPStatus.BAD_REQUEST, f"the body is not an ExportLogsServiceRequest: {exc}"
            ) from None
        records = [
            record
            for resource_logs in message.resource_logs
            for scope_logs in resource_logs.scope_logs
            for record in scope_logs.log_records
        ]
        read = proto_event
    for index, record in enumerate(records):
        try:
            found.append(read(record))
        except (BadSpan, TypeError, ValueError, AttributeError, ArithmeticError) as exc:
            skipped.append(f"log record {index}: {exc}")
    return [event for event in found if event is not None], skipped


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] == "/healthz":
            self._answer(HTTPStatus.OK, "text/plain", b"ok\n")
            return
        self._answer(HTTPStatus.NOT_FOUND, "text/plain", b"not found\n")

    def do_POST(self) -> None:
        content_type = (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
        try:
            body = self._body()  # always read, so the connection stays usable
            path = self.path.split("?", 1)[0]
            if path not in (TRACES, LOGS):
                raise OtlpRequestError(HTTPStatus.NOT_FOUND, f"no such endpoint: {self.path}")
            if content_type not in (PROTOBUF, JSON):
                raise OtlpRequestError(
                    HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                    f"Content-Type {content_type or '(none)'}: send {PROTOBUF} or {JSON}",
                )
            if (self.headers.get("Content-Encoding") or "").strip().lower() == "gzip":
                body = _gunzip(body, self.server.max_body)
            if path == LOGS:
                events, skipped = decode_logs(body, content_type)
            else:
                spans, skipped = decode_request(_parse(body, content_type))
        except OtlpRequestError as exc:
            self._refuse(exc, content_type)
            return
        if path == LOGS:
            for trace_id, span_id, event in events:
                self.server.processor.receive_event(trace_id, span_id, event)
            self.server.count(0, len(events))
            self._accept_logs(content_type, skipped)
            return
        for view, resource in spans:
            self.server.processor.receive(view, resource)
        self.server.count(len(spans))
        self._accept(content_type, skipped)

    def _body(self) -> bytes:
        try:
            length = int(self.headers.get("Content-Length") or "")
        except ValueError:
            self.close_connection = True
            raise OtlpRequestError(HTTPStatus.LENGTH_REQUIRED, "send a Content-Length") from None
        if length < 0 or length > self.server.max_body:
            self.close_connection = True
            raise OtlpRequestError(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                f"the body is {length} bytes; at most {self.server.max_body}",
            )
        return self.rfile.read(length)

    def _accept(self, content_type: str, skipped: list[str]) -> None:
        if content_type == JSON:
            partial = (
                {"partialSuccess": {"rejectedSpans": len(skipped), "errorMessage": skipped[0]}}
                if skipped
                else {}
            )
            self._answer(HTTPStatus.OK, JSON, json.dumps(partial).encode())
            return
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTracePartialSuccess,
            ExportTraceServiceResponse,
        )

        response = ExportTraceServiceResponse()
        if skipped:
            response.partial_success.CopyFrom(
                ExportTracePartialSuccess(rejected_spans=len(skipped), error_message=skipped[0])
            )
        self._answer(HTTPStatus.OK, PROTOBUF, response.SerializeToString())

    def _accept_logs(self, content_type: str, skipped: list[str]) -> None:
        if content_type == JSON:
            partial = (
                {"partialSuccess": {"rejectedLogRecords": len(skipped), "errorMessage": skipped[0]}}
                if skipped
                else {}
            )
            self._answer(HTTPStatus.OK, JSON, json.dumps(partial).encode())
            return
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
            ExportLogsPartialSuccess,
            ExportLogsServiceResponse,
        )

        response = ExportLogsServiceResponse()
        if skipped:
            response.partial_success.CopyFrom(
                ExportLogsPartialSuccess(
                    rejected_log_records=len(skipped), error_message=skipped[0]
                )
            )
        self._answer(HTTPStatus.OK, PROTOBUF, response.SerializeToString())

    def _refuse(self, error: OtlpRequestError, content_type: str) -> None:
        if content_type == PROTOBUF:
            from google.rpc.status_pb2 import Status

            body = Status(code=3, message=error.reason).SerializeToString()  # INVALID_ARGUMENT
            self._answer(error.status, PROTOBUF, body)
            return
        self._answer(error.status, JSON, json.dumps({"code": 3, "message": error.reason}).encode())

    def _answer(self, status: HTTPStatus, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], processor: RuleProcessor, max_body: int) -> None:
        super().__init__(address, _Handler)
        self.processor = processor
        self.max_body = max_body
        self._lock = threading.Lock()
        self.spans = 0
        self.events = 0

    def count(self, spans: int, events: int = 0) -> None:
        with self._lock:
            self.spans += spans
            self.events += events


class OtlpReceiver:
    """An OTLP/HTTP receiver on ``host:port`` (0: any free port) feeding ``processor``."""

    def __init__(
        self,
        processor: RuleProcessor,
        host: str = "127.0.0.1",
        port: int = 4318,
        *,
        max_body: int = DEFAULT_MAX_BODY,
    ) -> None:
        """Bind now (OSError when the address is taken); serve with :meth:`serve_forever`."""
        self._server = _Server((host, port), processor, max_body)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://HOST:PORT`` as bound."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def spans(self) -> int:
        """Spans received so far."""
        return self._server.spans

    @property
    def events(self) -> int:
        """Span events received so far (``/v1/logs``)."""
        return self._server.events

    def serve_forever(self) -> None:
        """Serve on this thread until :meth:`close` (from another thread)."""
        self._server.serve_forever(poll_interval=0.2)

    def start(self) -> None:
        """Serve on a daemon thread."""
        self._thread = threading.Thread(target=self.serve_forever, daemon=True, name="otlp")
        self._thread.start()

    def close(self) -> None:
        """Stop serving and release the port."""
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)
