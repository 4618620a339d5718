"""Capture: turn a running LangChain / LangGraph agent into ToolCall records."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tracing.records import (
    RAW_ARGUMENTS_KEY,
    Attempt,
    AttemptStatus,
    CallSource,
    CallStatus,
    InvalidToolCall,
    ToolCall,
    parse_arguments,
)

if TYPE_CHECKING:
    from tracing.langchain.capture import RecorderTurn, ToolCapture, capture_tool_calls
    from tracing.langchain.recorder import ToolCallRecorder
    from tracing.otel.emitter import SpanEmitter
    from tracing.otel.joining import calls_by_trace, calls_from_spans
    from tracing.otel.span_view import SpanView
    from tracing.otel.tool_call_exporter import ToolCallSpanExporter
    from tracing.otlp.file_format import (
        OtlpJsonError,
        OtlpJsonFileExporter,
        OtlpJsonReader,
        iter_spans,
        iter_trace_calls,
        write_spans,
    )

# Imported on first use: the pytest plugin and the CLI import this package, and the OTel and
# LangChain modules behind these names cost a noticeable part of a second to load.
_LAZY = {
    "ToolCallRecorder": "tracing.langchain.recorder",
    "capture_tool_calls": "tracing.langchain.capture",
    "ToolCapture": "tracing.langchain.capture",
    "RecorderTurn": "tracing.langchain.capture",
    "SpanEmitter": "tracing.otel.emitter",
    "SpanView": "tracing.otel.span_view",
    "ToolCallSpanExporter": "tracing.otel.tool_call_exporter",
    "calls_by_trace": "tracing.otel.joining",
    "calls_from_spans": "tracing.otel.joining",
    "OtlpJsonError": "tracing.otlp.file_format",
    "OtlpJsonFileExporter": "tracing.otlp.file_format",
    "OtlpJsonReader": "tracing.otlp.file_format",
    "iter_spans": "tracing.otlp.file_format",
    "iter_trace_calls": "tracing.otlp.file_format",
    "write_spans": "tracing.otlp.file_format",
}

__all__ = [
    "RAW_ARGUMENTS_KEY",
    "Attempt",
    "AttemptStatus",
    "CallSource",
    "CallStatus",
    "InvalidToolCall",
    "OtlpJsonError",
    "OtlpJsonFileExporter",
    "OtlpJsonReader",
    "RecorderTurn",
    "SpanEmitter",
    "SpanView",
    "ToolCall",
    "ToolCallRecorder",
    "ToolCallSpanExporter",
    "ToolCapture",
    "calls_by_trace",
    "calls_from_spans",
    "capture_tool_calls",
    "iter_spans",
    "iter_trace_calls",
    "parse_arguments",
    "write_spans",
]


def __getattr__(name: str) -> Any:
    """Load the lazily exported names on first access."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tracing' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
