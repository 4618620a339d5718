"""Capture: turn a running LangChain / LangGraph agent into ToolCall records."""

from tracing.callback import ToolCallRecorder
from tracing.records import CallSource, CallStatus, InvalidToolCall, ToolCall, parse_arguments
from tracing.spans import SpanEmitter

__all__ = ["CallSource", "CallStatus", "InvalidToolCall", "ToolCall", "parse_arguments"]
__all__ += ["SpanEmitter", "ToolCallRecorder"]

from tracing.exporter import SpanView, ToolCallSpanExporter, calls_from_spans  # noqa: E402
from tracing.otlp_json import (  # noqa: E402
    OtlpJsonError,
    OtlpJsonFileExporter,
    OtlpJsonReader,
    iter_spans,
    iter_trace_calls,
    write_spans,
)

__all__ += ["SpanView", "ToolCallSpanExporter", "calls_from_spans"]
__all__ += ["OtlpJsonError", "OtlpJsonFileExporter", "OtlpJsonReader"]
__all__ += ["iter_spans", "iter_trace_calls", "write_spans"]
