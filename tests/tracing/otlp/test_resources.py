"""Every format keeps each trace's resource (``service.name``, ...) and the agents its spans name.

The traces are the demo suites' real export (conftest.py). The baseline is the OTLP JSON lines
file ``harness run --trace-file`` wrote, read as before the span sources existed; every other
format must hand out, per trace, the same root resource (a Jaeger span's process, by the
OpenTelemetry to Jaeger mapping) and the same agent names. A second export relabels every other
trace's resource as another service, so one record holds two resource blocks (two processes
for Jaeger) and each trace must get its own, whichever comes first in the record.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.support.trace_formats import framed, jaeger, otlp_json, tempo_v1, trace_order
from tests.tracing.otlp.conftest import DemoExport
from tracing.otel.trace_run import trace_run
from tracing.otlp.file_format import OtlpJsonReader, OtlpTrace

WITH_RESOURCE = [
    "otlp lines",
    "otlp lines.gz",
    "otlp document",
    "proto",
    "proto.gz",
    "tempo v1",
    "tempo v2",
    "jaeger",
]
"""The formats that carry the resource (bare spans have none)."""


def _read(inputs: list[str]) -> dict[str, OtlpTrace]:
    """Every trace of the inputs (globs expanded as eval-traces expands them), no error."""
    from tracing.otlp.inputs import trace_inputs

    traces: dict[str, OtlpTrace] = {}
    for path in trace_inputs(inputs):
        reader = OtlpJsonReader(path)
        traces |= {trace.trace_id: trace for trace in reader.iter_traces()}
        assert not reader.errors, reader.errors
    return traces


def _agents(trace: OtlpTrace) -> list[tuple[int, str]]:
    """(start in µs, name): Jaeger keeps times in microseconds."""
    return [(start // 1000, name) for start, name in trace.agents]


@pytest.fixture(scope="module")
def truth(demo_export: DemoExport) -> dict[str, OtlpTrace]:
    """The traces of the file ``harness run`` wrote: each root with the harness's service."""
    traces = _read([str(demo_export.trace_file)])
    rooted = [trace for trace in traces.values() if trace.root is not None]
    assert len(rooted) > 40
    assert all(trace.resource.get("service.name") for trace in rooted)
    assert sum(bool(trace.agents) for trace in traces.values()) > 10  # the supervisor's agents
    return traces


@pytest.mark.parametrize("name", WITH_RESOURCE)
def test_each_format_keeps_the_resource_and_the_agents(
    name: str, demo_export: DemoExport, truth: dict[str, OtlpTrace]
) -> None:
    found = _read(demo_export.formats[name])
    assert found.keys() == truth.keys()
    for trace_id, trace in found.items():
        expected = truth[trace_id]
        assert dict(trace.resource) == dict(expected.resource), (name, trace_id)
        assert trace_run(trace).service == trace_run(expected).service, (name, trace_id)
        assert _agents(trace) == _agents(expected), (name, trace_id)


def test_bare_spans_have_no_resource_but_name_their_agents(
    demo_export: DemoExport, truth: dict[str, OtlpTrace]
) -> None:
    found = _read(demo_export.formats["bare spans"])
    assert found.keys() == truth.keys()
    assert all(not trace.resource for trace in found.values())
    assert all(_agents(trace) == _agents(truth[tid]) for tid, trace in found.items())


# --- two services in one record ---------------------------------------------------------------

OTHER = "billing-agent"


def _two_services(bodies: list[bytes]) -> tuple[bytes, dict[str, str]]:
    """The export as one request of two resource blocks: every other trace (in order of first
    appearance) moved to a copy of its resource naming the service :data:`OTHER`; and the
    service each trace id (hex) must get."""
    merged = ExportTraceServiceRequest()
    blocks: dict[str, Any] = {}
    order: dict[bytes, int] = {}
    expected: dict[str, str] = {}
    for body in bodies:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for resource_spans in request.resource_spans:
            resource = resource_spans.resource
            (own,) = [a.value.string_value for a in resource.attributes if a.key == "service.name"]
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    index = order.setdefault(span.trace_id, len(order))
                    service = OTHER if index % 2 else own
                    expected[span.trace_id.hex()] = service
                    block = blocks.get(service)
                    if block is None:
                        block = blocks[service] = merged.resource_spans.add()
                        block.resource.CopyFrom(resource)
                        for attribute in block.resource.attributes:
                            if attribute.key == "service.name":
                                attribute.value.string_value = service
                        block.scope_spans.add().scope.CopyFrom(scope_spans.scope)
                    block.scope_spans[0].spans.add().CopyFrom(span)
    assert len(merged.resource_spans) == 2
    return merged.SerializeToString(), expected


def _resource_last(request: dict[str, Any]) -> dict[str, Any]:
    """The request with each block's ``resource`` after its spans (JSON keys have no order)."""
    blocks = [
        {**{k: v for k, v in block.items() if k != "resource"}, "resource": block["resource"]}
        for block in request["resourceSpans"]
    ]
    return {"resourceSpans": blocks}


def _write_proto(body: bytes, folder: Path) -> list[str]:
    (folder / "traces.pb.gz").write_bytes(gzip.compress(framed([body]), mtime=0))
    return [str(folder / "traces.pb.gz")]


def _write_line(body: bytes, folder: Path) -> list[str]:
    (folder / "traces.jsonl").write_text(json.dumps(otlp_json(body)) + "\n")
    return [str(folder / "traces.jsonl")]


def _write_document(body: bytes, folder: Path) -> list[str]:
    document = json.dumps(_resource_last(otlp_json(body)), indent=2)
    (folder / "traces.json").write_text(document)
    return [str(folder / "traces.json")]


def _write_tempo(body: bytes, folder: Path) -> list[str]:
    request = otlp_json(body)
    for index, trace_id in enumerate(trace_order([request])):
        export = tempo_v1([request], trace_id)
        (folder / f"{index:04d}.json").write_text(json.dumps(export))
    return [str(folder / "*.json")]


def _write_jaeger_line(body: bytes, folder: Path) -> list[str]:
    (folder / "jaeger.jsonl").write_text(json.dumps(jaeger([otlp_json(body)])) + "\n")
    return [str(folder / "jaeger.jsonl")]


def _write_jaeger_document(body: bytes, folder: Path) -> list[str]:
    (folder / "jaeger.json").write_text(json.dumps(jaeger([otlp_json(body)]), indent=1))
    return [str(folder / "jaeger.json")]


WRITERS: dict[str, Callable[[bytes, Path], list[str]]] = {
    "protobuf (gzipped)": _write_proto,
    "otlp line": _write_line,
    "otlp document, resource after the spans": _write_document,
    "tempo v1": _write_tempo,
    "jaeger line": _write_jaeger_line,
    "jaeger document": _write_jaeger_document,
}


@pytest.mark.parametrize("name", list(WRITERS))
def test_two_services_in_one_record_each_trace_gets_its_own(
    name: str, demo_export: DemoExport, truth: dict[str, OtlpTrace], tmp_path: Path
) -> None:
    body, expected = _two_services(demo_export.bodies)
    found = _read(WRITERS[name](body, tmp_path))
    assert found.keys() == truth.keys()
    services = {
        trace_id: trace_run(trace).service
        for trace_id, trace in found.items()
        if trace.root is not None
    }
    assert len(services) > 40
    assert services == {trace_id: expected[trace_id] for trace_id in services}
    assert OTHER in services.values() and len(set(services.values())) == 2


def test_a_skipped_span_takes_its_resource_with_it(
    demo_export: DemoExport, truth: dict[str, OtlpTrace], tmp_path: Path
) -> None:
    """A bad span of the first block is skipped; the spans after it keep their own resources.

    Roots stand at both sides of the blocks' border (the first block's last span, and the
    second's last root moved to its front: the record is read whole), so a resource one place
    off either way gives one of them the other service.
    """
    body, expected = _two_services(demo_export.bodies)
    request = otlp_json(body)
    first, second = (block["scopeSpans"][0]["spans"] for block in request["resourceSpans"])
    assert not first[-1].get("parentSpanId")  # a root, written after its children
    assert not second[-1].get("parentSpanId")
    second.insert(0, second.pop())
    spoiled = first[0]
    spoiled["spanId"] = "not hex"
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps(request) + "\n")
    reader = OtlpJsonReader(path)
    found = {trace.trace_id: trace for trace in reader.iter_traces()}
    (error,) = reader.errors
    assert error.message.startswith("span 0 skipped: spanId 'not hex' is"), error
    rooted = {tid: trace_run(trace).service for tid, trace in found.items() if trace.root}
    assert len(rooted) > 40
    assert rooted == {trace_id: expected[trace_id] for trace_id in rooted}
