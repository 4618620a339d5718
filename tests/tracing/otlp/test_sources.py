"""Formats found by content, and bad input: one located error, every other trace still read.

The traces are the demo suites' real export (conftest.py); each bad file is made from it the
way such files happen (a ``.gz`` cut short or corrupted, a protobuf logs file given as traces,
a span with a malformed tag, a file of another kind), and the reader must name the file and the
line or record, and still hand out every trace it could read, exactly as the good file has it.
"""

from __future__ import annotations

import gzip
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from harness.cli import main
from tests.support.paths import SCENARIOS
from tests.support.trace_formats import framed
from tests.tracing.otlp.conftest import DemoExport
from tracing.otlp.file_format import OtlpJsonReader, OtlpTrace
from tracing.otlp.sources import sniff, splits_by_line


def _traces(path: str | Path) -> tuple[dict[str, OtlpTrace], list[str]]:
    reader = OtlpJsonReader(path)
    traces = {trace.trace_id: trace for trace in reader.iter_traces()}
    return traces, [str(error) for error in reader.errors]


def _calls(trace: OtlpTrace) -> list[tuple[str, object, str]]:
    return [(call.name, call.args, call.status) for call in trace.calls()]


@pytest.fixture(scope="module")
def truth(demo_export: DemoExport) -> dict[str, OtlpTrace]:
    """The traces of the file ``harness run`` wrote."""
    traces, errors = _traces(demo_export.trace_file)
    assert not errors and len(traces) > 40
    return traces


def _same(found: dict[str, OtlpTrace], truth: dict[str, OtlpTrace]) -> None:
    """Every trace found is the true one, call for call."""
    assert found
    for trace_id, trace in found.items():
        assert _calls(trace) == _calls(truth[trace_id]), trace_id


# --- found by content -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "shape", "compressed"),
    [
        (b"", "empty", False),
        (b"\n \n\t", "empty", False),
        (b'{"resourceSpans": []}\n{"resourceSpans": []}\n', "lines", False),
        (b'\n\n{"a": 1}', "lines", False),
        (b'{"resourceSpans": [ broken\n{"resourceSpans": []}\n', "lines", False),
        (b'\xef\xbb\xbf{"a": 1}\n', "lines", False),
        (b'{\n  "data": [\n  ]\n}\n', "document", False),
        (b'  {"batches": [\n', "document", False),
        (b"[\n1]", "document", False),
        (gzip.compress(b'{"a": 1}\n', mtime=0), "lines", True),
        (gzip.compress(b'{\n"trace": {}}', mtime=0), "document", True),
        (b"\x00\x00\x00\x03\x0a\x01\x00", "protobuf", False),
        (b"\x28\xb5\x2f\xfd\x00\x00", "zstd", False),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "unknown", False),
        (b"resourceSpans", "unknown", False),
    ],
    ids=[
        *("empty", "blank", "json lines", "lines after blank lines", "broken first line"),
        *("byte order mark", "pretty document", "document opening", "array document"),
        *("gzipped lines", "gzipped document", "protobuf", "zstd", "png", "text"),
    ],
)
def test_the_shape_is_found_by_content(data: bytes, shape: str, compressed: bool) -> None:
    found = sniff(io.BytesIO(data))
    assert (found.shape, found.compressed) == (shape, compressed)
    if shape not in ("empty", "unknown", "zstd"):  # nothing is lost by looking
        raw = gzip.decompress(data) if compressed else data
        assert found.data.read() == raw.removeprefix(b"\xef\xbb\xbf")


def test_a_long_first_line_is_streamed(tmp_path: Path) -> None:
    """A first line past the limit is read by the streaming parser, which reads lines too."""
    from tracing.otlp import sources

    line = json.dumps({"resourceSpans": [], "pad": "x" * 70_000}).encode() + b"\n"
    old = sources.JSON_LINE_LIMIT
    sources.JSON_LINE_LIMIT = 100
    try:
        assert sniff(io.BytesIO(line * 3)).shape == "document"
    finally:
        sources.JSON_LINE_LIMIT = old


def test_a_file_is_read_by_content_whatever_its_name(
    demo_export: DemoExport, truth: dict[str, OtlpTrace], tmp_path: Path
) -> None:
    formats = demo_export.formats
    for name, misleading in [
        ("proto.gz", "traces.json"),
        ("proto", "traces.jsonl"),
        ("jaeger", "export.pb"),
        ("otlp lines.gz", "lines.txt"),
    ]:
        path = tmp_path / misleading
        shutil.copy(formats[name][0], path)
        found, errors = _traces(path)
        assert not errors, (name, errors)
        assert found.keys() == truth.keys(), name
        _same(found, truth)


def test_only_uncompressed_json_lines_are_cut_for_workers(demo_export: DemoExport) -> None:
    formats = demo_export.formats
    assert splits_by_line(demo_export.trace_file)
    assert splits_by_line(formats["bare spans"][0])
    for name in ("otlp lines.gz", "otlp document", "proto", "jaeger"):
        assert not splits_by_line(formats[name][0]), name
    assert not splits_by_line("-")


# --- bad input --------------------------------------------------------------------------------


def test_a_truncated_gz_names_the_line_and_keeps_the_traces_before(
    demo_export: DemoExport, truth: dict[str, OtlpTrace], tmp_path: Path
) -> None:
    data = gzip.compress(Path(demo_export.formats["bare spans"][0]).read_bytes())
    path = tmp_path / "spans.jsonl.gz"
    path.write_bytes(data[: len(data) * 2 // 3])
    found, errors = _traces(path)
    assert len(errors) == 1 and errors[0].startswith(f"{path}:"), errors
    assert "the compressed data ends early" in errors[0]
    complete = {trace_id for trace_id, trace in found.items() if trace.line}
    assert 5 < len(complete) < len(truth)
    _same({trace_id: found[trace_id] for trace_id in complete}, truth)


def test_an_unreadable_gz_is_one_error(demo_export: DemoExport, tmp_path: Path) -> None:
    """A gzip header that is not one (here: an unknown compression method)."""
    data = bytearray(gzip.compress(Path(demo_export.formats["bare spans"][0]).read_bytes()))
    data[2] = 7  # the method byte: only 8 (deflate) exists
    path = tmp_path / "spans.jsonl.gz"
    path.write_bytes(bytes(data))
    found, errors = _traces(path)
    assert errors == [f"{path}:1: not valid gzip data: Unknown compression method"]
    assert not found


def _per_trace_messages(bodies: list[bytes]) -> list[bytes]:
    """One request per trace, in order of each trace's first span: a protobuf file of many
    messages. A trace the batch exporter split over two bodies is one message here."""
    messages: dict[bytes, ExportTraceServiceRequest] = {}
    for body in bodies:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for resource_spans in request.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    message = messages.setdefault(span.trace_id, ExportTraceServiceRequest())
                    _scope_of(message, resource_spans, scope_spans).spans.add().CopyFrom(span)
    return [message.SerializeToString() for message in messages.values()]


def _scope_of(message: Any, resource_spans: Any, scope_spans: Any) -> Any:
    """``message``'s scope entry for this resource and scope, added when new."""
    for target in message.resource_spans:
        if target.resource == resource_spans.resource:
            for scope in target.scope_spans:
                if scope.scope == scope_spans.scope:
                    return scope
            break
    else:
        target = message.resource_spans.add()
        target.resource.CopyFrom(resource_spans.resource)
    scope = target.scope_spans.add()
    scope.scope.CopyFrom(scope_spans.scope)
    return scope


def test_a_truncated_protobuf_names_the_record(
    demo_export: DemoExport, truth: dict[str, OtlpTrace], tmp_path: Path
) -> None:
    messages = _per_trace_messages(demo_export.bodies)
    data = framed(messages)
    path = tmp_path / "traces.pb"
    path.write_bytes(data[: len(data) - len(messages[-1]) // 2])
    found, errors = _traces(path)
    assert errors == [
        f"{path}: record {len(messages)}: truncated: its 4-byte size says "
        f"{len(messages[-1]):,} bytes, {len(messages[-1]) - len(messages[-1]) // 2:,} follow "
        "(a file cut short, or not the Collector's length-prefixed protobuf)"
    ]
    assert len([t for t in found.values() if t.line]) == len(messages) - 1
    _same({k: v for k, v in found.items() if v.line}, truth)


def test_a_protobuf_logs_file_is_not_a_trace_export(tmp_path: Path) -> None:
    """Log records the real OTel Logs SDK exported, framed as the file exporter frames them."""
    from tests.tracing.otlp.test_logs import sdk_log_bodies

    path = tmp_path / "logs.pb"
    path.write_bytes(framed(sdk_log_bodies()))
    found, errors = _traces(path)
    assert not found
    assert errors and all(e.startswith(f"{path}: record ") for e in errors), errors
    assert all("not a trace export" in e or "not an OTLP trace message" in e for e in errors)


def test_a_malformed_jaeger_tag_skips_its_span_only(
    demo_export: DemoExport, truth: dict[str, OtlpTrace], tmp_path: Path
) -> None:
    document = json.loads(Path(demo_export.formats["jaeger"][0]).read_text())
    spoiled = document["data"][3]["spans"][0]
    spoiled["tags"].append({"key": "tokens", "type": "int64", "value": "many"})
    path = tmp_path / "jaeger.json"
    path.write_text(json.dumps(document, indent=2))
    found, errors = _traces(path)
    assert errors == [
        f"{path}: record 4: span 0 skipped: tag 'tokens' of type int64 has the value 'many'"
    ]
    assert found.keys() == truth.keys()
    others = {k: v for k, v in found.items() if k != document["data"][3]["traceID"]}
    _same(others, truth)


def test_a_document_cut_short_keeps_the_traces_before(
    demo_export: DemoExport, truth: dict[str, OtlpTrace], tmp_path: Path
) -> None:
    text = Path(demo_export.formats["jaeger"][0]).read_text()
    path = tmp_path / "jaeger.json"
    path.write_text(text[: len(text) // 2])
    found, errors = _traces(path)
    assert len(errors) == 1 and errors[0].startswith(f"{path}: record "), errors
    assert "not valid JSON" in errors[0]
    complete = {k: v for k, v in found.items() if v.line}
    assert len(complete) > 5
    _same(complete, truth)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"\x89PNG\r\n\x1a\n" + bytes(64), "1: not a trace file this reader knows"),
        (b'{"schema_version": 1, "scenarios": []}\n', "1: not an OTLP JSON request: not a trace"),
        (b'{\n "resourceLogs": []\n}\n', " record 1: an OTLP logs export, not traces"),
        (b"\x28\xb5\x2f\xfd" + bytes(16), "1: zstd-compressed"),
    ],
)
def test_a_file_of_another_kind_is_one_line_naming_it(
    data: bytes, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "input.json"
    path.write_bytes(data)
    found, errors = _traces(path)
    assert not found
    assert len(errors) == 1 and errors[0].startswith(f"{path}:{expected}"), errors
    assert "\n" not in errors[0]
    assert main(["eval-traces", str(path), "--scenarios", str(SCENARIOS)]) == 1
    out = capsys.readouterr()
    assert errors[0] in out.out.replace("\n", "") or errors[0][:60] in out.out
