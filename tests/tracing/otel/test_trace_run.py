"""TraceRun on what no producer test makes: spans the reader cannot interpret, and files mixing
several services' resources (spans written through the real OTel SDK, read back from its file)."""

from __future__ import annotations

import json
from pathlib import Path

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tracing.otel.tool_call_exporter import ToolCallSpanExporter
from tracing.otel.trace_run import trace_run
from tracing.otlp.file_format import OtlpJsonFileExporter, OtlpJsonReader, write_spans


def _provider(service: str, *exporters: object) -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    for exporter in exporters:
        provider.add_span_processor(SimpleSpanProcessor(exporter))  # type: ignore[arg-type]
    return provider


def test_spans_the_reader_cannot_interpret_are_counted_per_reason(tmp_path: Path) -> None:
    """A tool span naming no tool, a requested call without a name and output messages that
    are not JSON are counted, and the calls that can be read still are."""
    path = tmp_path / "spans.jsonl"
    exporter = ToolCallSpanExporter()
    provider = _provider("odd", exporter, OtlpJsonFileExporter(path))
    tracer = provider.get_tracer("app")
    nameless = [{"type": "tool_call", "id": "c1", "arguments": {"x": 1}}]
    with tracer.start_as_current_span(
        "invoke_agent shop", attributes={"gen_ai.agent.name": "shop"}
    ):
        with tracer.start_as_current_span(
            "chat", attributes={"gen_ai.operation.name": "chat", "gen_ai.output.messages": "{"}
        ):
            pass
        with tracer.start_as_current_span(
            "chat",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": nameless}]),
            },
        ):
            pass
        for _ in range(2):
            with tracer.start_as_current_span(
                "", attributes={"gen_ai.operation.name": "execute_tool"}
            ):
                pass
        with tracer.start_as_current_span(
            "execute_tool add",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "add",
                "gen_ai.tool.call.arguments": '{"a": 1}',
            },
        ):
            pass
    provider.shutdown()
    (trace,) = list(OtlpJsonReader(path).iter_traces())
    run = trace_run(trace)
    assert dict(run.unread) == {
        "tool span without a tool name": 2,
        "chat span whose gen_ai.output.messages is not a JSON list": 1,
        "requested call without a tool name": 1,
    }
    assert [(call.name, dict(call.args)) for call in run.calls][-1] == ("add", {"a": 1})
    assert run.agent == "shop" and run.service == "odd"
    assert exporter.run(trace.trace_id).unread == run.unread


def test_each_trace_gets_its_own_resource_from_a_shared_file(tmp_path: Path) -> None:
    """Two services' spans in one file (resource blocks of their own, lines interleaved):
    each trace's service is its root's resource's."""
    path = tmp_path / "spans.jsonl"
    writer = OtlpJsonFileExporter(path)
    shop = _provider("shop", writer)
    bank = _provider("bank", writer)
    for provider in (shop, bank, shop):
        with provider.get_tracer("app").start_as_current_span("request"):
            pass
    runs = [trace_run(trace) for trace in OtlpJsonReader(path).iter_traces()]
    assert [run.service for run in runs] == ["shop", "bank", "shop"]
    assert all(run.duration is not None and run.duration >= 0 for run in runs)
    assert all(run.calls == () and run.model_calls is None for run in runs)


def test_a_line_of_several_resources_gives_each_trace_its_own(tmp_path: Path) -> None:
    """One request line holding two resource blocks (a batching exporter's, grouped by
    resource): each trace still gets its root's resource."""
    memory = InMemorySpanExporter()
    shop = _provider("shop", memory)
    bank = _provider("bank", memory)
    for provider in (shop, bank, shop):
        with provider.get_tracer("app").start_as_current_span("request"):
            pass
    path = tmp_path / "spans.jsonl"
    with path.open("w", encoding="utf-8") as fp:
        write_spans(memory.get_finished_spans(), fp)
    assert len(path.read_text(encoding="utf-8").splitlines()) == 1
    runs = [trace_run(trace) for trace in OtlpJsonReader(path).iter_traces()]
    assert [run.service for run in runs] == ["shop", "shop", "bank"]  # the line's order
