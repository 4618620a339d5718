"""OTLP JSON: write like the Collector's file exporter, stream tool calls back per trace."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode

from tests.support.agents import (
    echo_agent,
    nested_agent,
    parallel_calls_agent,
    run_case,
    tool_exception_agent,
    unknown_tool_agent,
)
from tracing.otel.emitter import SpanEmitter
from tracing.otel.tool_call_exporter import ToolCallSpanExporter
from tracing.otlp.file_format import (
    OtlpJsonError,
    OtlpJsonFileExporter,
    OtlpJsonReader,
    OtlpJsonWarning,
    iter_spans,
    iter_trace_calls,
)

BUILDS = (parallel_calls_agent, nested_agent, unknown_tool_agent, tool_exception_agent)


@pytest.fixture
def recorded(tmp_path: Path) -> Iterator[tuple[Path, ToolCallSpanExporter]]:
    """Four agent runs written to a file (batch processor) and collected in memory alike."""
    path = tmp_path / "traces.jsonl"
    provider = TracerProvider(resource=Resource.create({"service.name": "parity"}))
    memory = ToolCallSpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    provider.add_span_processor(BatchSpanProcessor(OtlpJsonFileExporter(path)))
    emitter = SpanEmitter(provider, capture_content=True)
    for build in BUILDS:
        run_case(build(), "invoke", emitter.config)
    provider.shutdown()
    yield path, memory


def test_round_trip_gives_the_same_calls(recorded: tuple[Path, ToolCallSpanExporter]) -> None:
    """Every field of every call read back from the file equals the in-memory exporter's."""
    path, memory = recorded
    errors: list[OtlpJsonError] = []
    from_file = dict(iter_trace_calls(path, errors=errors))
    assert errors == []
    assert set(from_file) == set(memory.trace_ids())
    assert len(from_file) == len(BUILDS)
    for trace_id, calls in from_file.items():
        assert calls == memory.calls(trace_id)
    statuses = sorted(c.status for calls in from_file.values() for c in calls)
    assert {"ok", "error", "requested"} <= set(statuses)


def test_file_is_protobuf_json(recorded: tuple[Path, ToolCallSpanExporter]) -> None:
    """Each line parses with protobuf's json_format into an ExportTraceServiceRequest.

    OTLP JSON writes ids as hex where protobuf's canonical JSON uses base64; the hex digits are
    valid base64, so protobuf reads them as other bytes: the text round-trips exactly.
    """
    path, _ = recorded
    lines = path.read_text().splitlines()
    assert lines
    names = []
    for line in lines:
        message = json_format.Parse(line, ExportTraceServiceRequest())
        document = json.loads(line)
        for rs, rs_json in zip(message.resource_spans, document["resourceSpans"], strict=True):
            assert rs.resource.attributes[0].key
            for ss, ss_json in zip(rs.scope_spans, rs_json["scopeSpans"], strict=True):
                for span, span_json in zip(ss.spans, ss_json["spans"], strict=True):
                    names.append(span.name)
                    assert span.name == span_json["name"]
                    assert str(span.start_time_unix_nano) == span_json["startTimeUnixNano"]
                    assert base64.b64encode(span.trace_id).decode() == span_json["traceId"]
                    assert span.kind == span_json["kind"]
                    assert {a.key for a in span.attributes} == {
                        a["key"] for a in span_json.get("attributes", [])
                    }
    assert any(name.startswith("execute_tool") for name in names)
    assert any(name.startswith("chat") for name in names)


def test_attribute_types_round_trip(tmp_path: Path) -> None:
    """str, int, float, bool, arrays, events and error status come back as written."""
    path = tmp_path / "t.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(path)))
    tracer = provider.get_tracer("t")
    attributes = {"s": "x", "i": -(2**40), "f": 0.25, "b": True, "a": ("p", "q"), "n": (1, 2)}
    with tracer.start_as_current_span("one", attributes=attributes) as span:
        span.add_event("note", {"k": "v"})
        span.set_status(Status(StatusCode.ERROR, "bad"))
    provider.shutdown()
    [view] = list(iter_spans(path))
    assert dict(view.attributes) == attributes
    assert (view.status, view.status_message) == ("ERROR", "bad")
    assert [(e.name, dict(e.attributes)) for e in view.events] == [("note", {"k": "v"})]
    assert view.parent_id is None and len(view.trace_id) == 32 and len(view.span_id) == 16


def _write_runs(path: Path, tokens: list[str]) -> None:
    """One line per span (simple processor), each run's root span last, as SDKs write them."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(path)))
    emitter = SpanEmitter(provider, capture_content=True)
    for token in tokens:
        run_case(echo_agent(token), "invoke", emitter.config)
    provider.shutdown()


def test_broken_line_is_reported_and_other_traces_still_come_out(tmp_path: Path) -> None:
    """A garbage line and a span with a bad id: both reported by line; all traces still read."""
    path = tmp_path / "t.jsonl"
    _write_runs(path, ["a", "b", "c"])
    lines = path.read_text().splitlines()
    bad_span = json.loads(lines[0])
    bad_span["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["spanId"] = "zz"
    lines[2:2] = ['{"resourceSpans": [ truncated', json.dumps(bad_span)]
    path.write_text("\n".join(lines) + "\n")

    reader = OtlpJsonReader(path)
    traces = dict(reader.iter_trace_calls())
    assert [(e.line, e.path) for e in reader.errors] == [(3, str(path)), (4, str(path))]
    assert "not an OTLP JSON request" in reader.errors[0].message
    assert "spanId 'zz'" in reader.errors[1].message
    assert str(reader.errors[0]).startswith(f"{path}:3: ")
    tokens = sorted(calls[0].args["token"][0] for calls in traces.values())
    assert tokens == ["a", "b", "c"]
    assert all(len(calls) == 3 for calls in traces.values())

    with pytest.warns(OtlpJsonWarning) as caught:
        assert len(list(iter_trace_calls(path))) == 3
    assert [str(w.message).split(": ")[0] for w in caught] == [f"{path}:3", f"{path}:4"]


def test_traces_stream_out_before_the_file_is_read(tmp_path: Path) -> None:
    """The first trace comes out when its root span is read, before the rest of the file."""
    path = tmp_path / "t.jsonl"
    _write_runs(path, ["a", "b"])
    with path.open("a") as fp:
        fp.write("not json\n")
    reader = OtlpJsonReader(path)
    stream = reader.iter_trace_calls()
    first_id, first = next(stream)
    assert first[0].args["token"] == "a-a"
    assert reader.errors == []  # the broken last line has not been read yet
    rest = list(stream)
    assert len(rest) == 1 and rest[0][0] != first_id
    assert [e.message.split(":")[0] for e in reader.errors] == ["not an OTLP JSON request"]


def test_late_span_and_rootless_trace(tmp_path: Path) -> None:
    """A span after its trace's root is reported; a trace with no root comes out at the end."""
    path = tmp_path / "t.jsonl"
    _write_runs(path, ["a"])
    lines = path.read_text().splitlines()
    tool_lines = [line for line in lines if "execute_tool" in line]
    late = tool_lines[0]
    rootless = json.loads(tool_lines[1])
    span = rootless["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span["traceId"] = "ab" * 16
    lines += [late, json.dumps(rootless)]
    path.write_text("\n".join(lines) + "\n")

    reader = OtlpJsonReader(path)
    traces = list(reader.iter_trace_calls())
    assert [e.line for e in reader.errors] == [len(lines) - 1]
    assert "after the trace was complete" in reader.errors[0].message
    assert traces[-1][0] == "ab" * 16 and len(traces[-1][1]) == 1
    assert len(traces[0][1]) == 3

    merged = OtlpJsonReader(path, complete_on_root=False)
    everything = dict(merged.iter_trace_calls())
    assert merged.errors == []
    assert len(everything) == 2


def test_reads_protobuf_canonical_json(tmp_path: Path) -> None:
    """Files written by protobuf's MessageToJson (base64 ids, enum names) read the same."""
    source = tmp_path / "otlp.jsonl"
    _write_runs(source, ["z"])
    expected = [calls for _, calls in iter_trace_calls(source)]
    converted = tmp_path / "proto.jsonl"
    with converted.open("w") as out:
        for line in source.read_text().splitlines():
            document = json.loads(line)
            for rs in document["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    for span in ss["spans"]:
                        for key in ("traceId", "spanId", "parentSpanId"):
                            if key in span:
                                span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
            message = json_format.Parse(json.dumps(document), ExportTraceServiceRequest())
            out.write(json_format.MessageToJson(message, indent=None) + "\n")
    assert '"SPAN_KIND_INTERNAL"' in converted.read_text()
    assert [calls for _, calls in iter_trace_calls(converted)] == expected


def _line(*spans: dict[str, object]) -> str:
    request = {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}
    return json.dumps(request)


def _raw_span(trace: int, span: int, parent: int | None, **attributes: str) -> dict[str, object]:
    out: dict[str, object] = {
        "traceId": f"{trace:032x}",
        "spanId": f"{span:016x}",
        "name": f"span {span}",
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()],
    }
    if parent is not None:
        out["parentSpanId"] = f"{parent:016x}"
    return out


def test_iter_traces_gives_every_trace_with_its_root_and_line(tmp_path: Path) -> None:
    """Traces without tool spans come out too, each with its root attributes and closing line."""
    tool = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "lookup",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.call.arguments": '{"key": "a"}',
    }
    path = tmp_path / "t.jsonl"
    lines = [
        _line(_raw_span(1, 3, 2), _raw_span(1, 4, 3, **tool)),
        _line(_raw_span(1, 2, 1), _raw_span(1, 1, None, **{"harness.scenario": "one"})),
        _line(_raw_span(2, 1, None, **{"harness.scenario": "no tools"})),
        _line(_raw_span(3, 5, 9, **tool)),  # its root lives elsewhere: complete at the end
    ]
    path.write_text("\n".join(lines) + "\n")
    reader = OtlpJsonReader(path)
    traces = list(reader.iter_traces())
    assert [(t.trace_id[-1], t.line) for t in traces] == [("1", 2), ("2", 3), ("3", 0)]
    first, second, third = traces
    assert first.root_attributes == {"harness.scenario": "one"}
    assert [s.span_id for s in first.spans] == [f"{4:016x}"]
    assert first.parents[f"{3:016x}"] == f"{2:016x}"  # the non-tool spans' links are kept
    assert [(c.name, c.args) for c in first.calls()] == [("lookup", {"key": "a"})]
    assert second.spans == () and second.calls() == []
    assert second.root_attributes == {"harness.scenario": "no tools"}
    assert third.root is None and third.root_attributes == {}
    assert [c.name for c in third.calls()] == ["lookup"]
    # the calls-only view is this stream, minus the traces without tool spans
    assert [tid for tid, _ in reader.iter_trace_calls()] == [first.trace_id, third.trace_id]
    assert reader.errors == []
