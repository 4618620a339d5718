"""Trace files in every format ``harness eval-traces`` reads, made from real exports.

The source is always what a real OpenTelemetry SDK pipeline sent: the protobuf
``ExportTraceServiceRequest`` bodies the OTLP/HTTP exporter posted (captured by
``tests/support/otlp_receiver.py``). From them:

* the Collector file exporter's ``format: proto``: each message preceded by its size, a 4-byte
  unsigned big-endian integer (opentelemetry-collector-contrib exporter/fileexporter,
  ``exportMessageAsBuffer``; its ``TracesData`` has the wire form of these requests);
* OTLP/JSON: protobuf's JSON mapping with the OTLP deviations (the OTLP specification,
  "JSON Protobuf Encoding": trace and span ids as hex, not base64; enums as integers);
* Grafana Tempo's exports of one trace: v1 (``GET /api/traces/<id>``): ``{"batches": [...]}``
  with the pre-1.0 names (``instrumentationLibrarySpans``, ``instrumentationLibrary``), int64
  values as JSON numbers and enums by name, as Tempo's gogo/jsonpb writes them; v2
  (``GET /api/v2/traces/<id>``): ``{"trace": <OTLP/JSON>}``. Cross-checked with agentevals-cli's
  ``samples/tempo_export_with_batches.json`` and its loader (the keys it reads);
* Jaeger's JSON export (``{"data": [{"traceID", "spans", "processes"}]}``) by the
  OpenTelemetry to Jaeger mapping (the specification's trace/sdk_exporters/jaeger.md and
  common/mapping-to-non-otlp.md; the Collector's pkg/translator/jaeger): parent as the first
  ``CHILD_OF`` reference, times in microseconds, attributes as typed tags (arrays and maps as
  JSON text), ``span.kind`` unless internal, ``otel.scope.*``, ``otel.status_code`` /
  ``otel.status_description`` and ``error: true``, events as logs with an ``event`` field, the
  resource as the process. Cross-checked with agentevals-cli's ``samples/helm_reversed_order.json``.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId"})
_KINDS = {0: "SPAN_KIND_UNSPECIFIED", 1: "SPAN_KIND_INTERNAL", 2: "SPAN_KIND_SERVER"}
_KINDS |= {3: "SPAN_KIND_CLIENT", 4: "SPAN_KIND_PRODUCER", 5: "SPAN_KIND_CONSUMER"}
_JAEGER_KINDS = {2: "server", 3: "client", 4: "producer", 5: "consumer"}


def framed(bodies: Iterable[bytes]) -> bytes:
    """The file exporter's ``format: proto``: each message after its 4-byte big-endian size."""
    return b"".join(struct.pack(">I", len(body)) + body for body in bodies)


def _hex_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: base64.b64decode(item).hex() if key in _ID_KEYS and item else _hex_ids(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_hex_ids(item) for item in value]
    return value


def otlp_json(body: bytes) -> dict[str, Any]:
    """One ``ExportTraceServiceRequest`` body as OTLP/JSON."""
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    return _hex_ids(MessageToDict(request, use_integers_for_enums=True))


def otlp_json_logs(body: bytes) -> dict[str, Any]:
    """One ``ExportLogsServiceRequest`` body as OTLP/JSON (a line of the file exporter)."""
    request = ExportLogsServiceRequest()
    request.ParseFromString(body)
    return _hex_ids(MessageToDict(request, use_integers_for_enums=True))


def _resource_spans(requests: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    for request in requests:
        yield from request.get("resourceSpans", [])


def _spans(requests: Iterable[Mapping[str, Any]]) -> Iterator[tuple[Any, Any, Mapping[str, Any]]]:
    """``(resource, scope, span)`` in file order."""
    for resource_spans in _resource_spans(requests):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                yield resource_spans.get("resource", {}), scope_spans.get("scope", {}), span


def trace_order(requests: Sequence[Mapping[str, Any]]) -> list[str]:
    """The trace ids, in the order their first span appears."""
    return list(dict.fromkeys(span["traceId"] for _, _, span in _spans(requests)))


def bare_span_lines(requests: Sequence[Mapping[str, Any]]) -> str:
    """Each span of the requests as a line of its own (no resource, no scope)."""
    return "".join(json.dumps(span) + "\n" for _, _, span in _spans(requests))


# --- Tempo ------------------------------------------------------------------------------------


def _jsonpb_value(value: Mapping[str, Any]) -> dict[str, Any]:
    """An AnyValue as gogo/jsonpb writes it: int64 as a JSON number."""
    out = dict(value)
    if "intValue" in out:
        out["intValue"] = int(out["intValue"])
    if "arrayValue" in out:
        values = out["arrayValue"].get("values", [])
        out["arrayValue"] = {"values": [_jsonpb_value(item) for item in values]}
    if "kvlistValue" in out:
        out["kvlistValue"] = {"values": _jsonpb_attributes(out["kvlistValue"].get("values", []))}
    return out


def _jsonpb_attributes(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [{"key": item["key"], "value": _jsonpb_value(item["value"])} for item in items]


def _tempo_span(span: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(span)
    out["kind"] = _KINDS[int(span.get("kind", 0))]
    for key in ("startTimeUnixNano", "endTimeUnixNano"):
        out[key] = int(span.get(key, 0))
    out["attributes"] = _jsonpb_attributes(span.get("attributes", []))
    out["events"] = [
        {
            **event,
            "timeUnixNano": int(event.get("timeUnixNano", 0)),
            "attributes": _jsonpb_attributes(event.get("attributes", [])),
        }
        for event in span.get("events", [])
    ]
    out["status"] = {"code": int(span.get("status", {}).get("code", 0)), "message": ""}
    out["status"]["message"] = span.get("status", {}).get("message", "")
    return out


def _per_trace(
    requests: Sequence[Mapping[str, Any]], trace_id: str
) -> list[tuple[Any, list[tuple[Any, list[Any]]]]]:
    """The trace's spans grouped as the requests group them: (resource, [(scope, spans)])."""
    out = []
    for resource_spans in _resource_spans(requests):
        scopes = []
        for scope_spans in resource_spans.get("scopeSpans", []):
            spans = [s for s in scope_spans.get("spans", []) if s["traceId"] == trace_id]
            if spans:
                scopes.append((scope_spans.get("scope", {}), spans))
        if scopes:
            out.append((resource_spans.get("resource", {}), scopes))
    return out


def tempo_v1(requests: Sequence[Mapping[str, Any]], trace_id: str) -> dict[str, Any]:
    """Tempo's v1 export of one trace."""
    batches = [
        {
            "resource": {"attributes": _jsonpb_attributes(resource.get("attributes", []))},
            "instrumentationLibrarySpans": [
                {"instrumentationLibrary": scope, "spans": [_tempo_span(s) for s in spans]}
                for scope, spans in scopes
            ],
        }
        for resource, scopes in _per_trace(requests, trace_id)
    ]
    return {"batches": batches}


def tempo_v2(requests: Sequence[Mapping[str, Any]], trace_id: str) -> dict[str, Any]:
    """Tempo's v2 export of one trace: OTLP/JSON wrapped in ``trace``."""
    resource_spans = [
        {
            "resource": resource,
            "scopeSpans": [{"scope": scope, "spans": spans} for scope, spans in scopes],
        }
        for resource, scopes in _per_trace(requests, trace_id)
    ]
    return {"trace": {"resourceSpans": resource_spans}}


# --- Jaeger -----------------------------------------------------------------------------------


def _plain(value: Mapping[str, Any]) -> Any:
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "bytesValue" in value:
        return value["bytesValue"]
    if "arrayValue" in value:
        return [_plain(item) for item in value["arrayValue"].get("values", [])]
    if "kvlistValue" in value:
        return {i["key"]: _plain(i["value"]) for i in value["kvlistValue"].get("values", [])}
    return None


def _tag(key: str, value: Mapping[str, Any]) -> dict[str, Any]:
    if "stringValue" in value:
        return {"key": key, "type": "string", "value": value["stringValue"]}
    if "boolValue" in value:
        return {"key": key, "type": "bool", "value": value["boolValue"]}
    if "intValue" in value:
        return {"key": key, "type": "int64", "value": int(value["intValue"])}
    if "doubleValue" in value:
        return {"key": key, "type": "float64", "value": float(value["doubleValue"])}
    if "bytesValue" in value:
        return {"key": key, "type": "binary", "value": value["bytesValue"]}
    return {"key": key, "type": "string", "value": json.dumps(_plain(value))}


def _tags(attributes: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [_tag(item["key"], item["value"]) for item in attributes]


def _jaeger_span(scope: Mapping[str, Any], span: Mapping[str, Any]) -> dict[str, Any]:
    start, end = int(span.get("startTimeUnixNano", 0)), int(span.get("endTimeUnixNano", 0))
    tags = _tags(span.get("attributes", []))
    kind = _JAEGER_KINDS.get(int(span.get("kind", 0)))
    if kind:
        tags.append({"key": "span.kind", "type": "string", "value": kind})
    if scope.get("name"):
        tags.append({"key": "otel.scope.name", "type": "string", "value": scope["name"]})
    if scope.get("version"):
        tags.append({"key": "otel.scope.version", "type": "string", "value": scope["version"]})
    status = span.get("status", {})
    code = int(status.get("code", 0))
    if code:
        tags.append(
            {"key": "otel.status_code", "type": "string", "value": "OK" if code == 1 else "ERROR"}
        )
        if status.get("message"):
            description = status["message"]
            tags.append({"key": "otel.status_description", "type": "string", "value": description})
        if code == 2:
            tags.append({"key": "error", "type": "bool", "value": True})
    references = []
    if span.get("parentSpanId"):
        parent = {"refType": "CHILD_OF", "traceID": span["traceId"]}
        references.append({**parent, "spanID": span["parentSpanId"]})
    logs = [
        {
            "timestamp": int(event.get("timeUnixNano", 0)) // 1000,
            "fields": [
                {"key": "event", "type": "string", "value": event.get("name", "")},
                *_tags(event.get("attributes", [])),
            ],
        }
        for event in span.get("events", [])
    ]
    return {
        "traceID": span["traceId"],
        "spanID": span["spanId"],
        "operationName": span.get("name", ""),
        "references": references,
        "startTime": start // 1000,
        "duration": (end - start) // 1000,
        "tags": tags,
        "logs": logs,
        "processID": "p1",
        "warnings": None,
    }


def jaeger(requests: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Jaeger's export of every trace of the requests (one process: the harness's resource)."""
    data = []
    for trace_id in trace_order(requests):
        spans = []
        process: dict[str, Any] = {"serviceName": "", "tags": []}
        for resource, scopes in _per_trace(requests, trace_id):
            attributes = resource.get("attributes", [])
            for item in attributes:
                if item["key"] == "service.name":
                    process["serviceName"] = item["value"]["stringValue"]
            process["tags"] = _tags([a for a in attributes if a["key"] != "service.name"])
            spans += [_jaeger_span(scope, span) for scope, group in scopes for span in group]
        data.append(
            {"traceID": trace_id, "spans": spans, "processes": {"p1": process}, "warnings": None}
        )
    return {"data": data, "total": 0, "limit": 0, "offset": 0, "errors": None}


def write_formats(bodies: Sequence[bytes], folder: Path) -> dict[str, list[str]]:
    """Every format of the exported requests, in ``folder``; name -> the eval-traces inputs."""
    import gzip

    folder.mkdir(parents=True, exist_ok=True)
    requests = [otlp_json(body) for body in bodies]
    ids = trace_order(requests)
    out: dict[str, list[str]] = {}

    def write(name: str, data: bytes) -> Path:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path

    out["proto"] = [str(write("traces.pb", framed(bodies)))]
    out["proto.gz"] = [str(write("traces.pb.gz", gzip.compress(framed(bodies))))]
    lines = "".join(json.dumps(request) + "\n" for request in requests).encode()
    out["otlp lines"] = [str(write("collector.jsonl", lines))]
    out["otlp lines.gz"] = [str(write("collector.jsonl.gz", gzip.compress(lines)))]
    merged = {"resourceSpans": [rs for r in requests for rs in r.get("resourceSpans", [])]}
    out["otlp document"] = [str(write("document.json", json.dumps(merged, indent=2).encode()))]
    out["bare spans"] = [str(write("spans.jsonl", bare_span_lines(requests).encode()))]
    for index, trace_id in enumerate(ids):
        write(f"tempo1/{index:04d}.json", json.dumps(tempo_v1(requests, trace_id)).encode())
        v2 = json.dumps(tempo_v2(requests, trace_id), indent=2).encode()
        write(f"tempo2/{index:04d}.json", v2)
    out["tempo v1"] = [str(folder / "tempo1" / "*.json")]
    out["tempo v2"] = [str(folder / "tempo2" / "*.json")]
    out["jaeger"] = [str(write("jaeger.json", json.dumps(jaeger(requests), indent=1).encode()))]
    return out
