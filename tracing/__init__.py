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
    from tracing.callback import ToolCallRecorder
    from tracing.capture import RecorderTurn, ToolCapture, capture_tool_calls
    from tracing.exporter import ToolCallSpanExporter
    from tracing.joining import calls_by_trace, calls_from_spans
    from tracing.otlp_json import (
        OtlpJsonError,
        OtlpJsonFileExporter,
        OtlpJsonReader,
        iter_spans,
        iter_trace_calls,
        write_spans,
    )
    from tracing.span_view import SpanView
    from tracing.spans import SpanEmitter

# Imported on first use: the pytest plugin and the CLI import this package, and the OTel and
# LangChain modules behind these names cost a noticeable part of a second to load.
_LAZY = {
    "ToolCallRecorder": "tracing.callback",
    "capture_tool_calls": "tracing.capture",
    "ToolCapture": "tracing.capture",
    "RecorderTurn": "tracing.capture",
    "SpanEmitter": "tracing.spans",
    "SpanView": "tracing.span_view",
    "ToolCallSpanExporter": "tracing.exporter",
    "calls_by_trace": "tracing.joining",
    "calls_from_spans": "tracing.joining",
    "OtlpJsonError": "tracing.otlp_json",
    "OtlpJsonFileExporter": "tracing.otlp_json",
    "OtlpJsonReader": "tracing.otlp_json",
    "iter_spans": "tracing.otlp_json",
    "iter_trace_calls": "tracing.otlp_json",
    "write_spans": "tracing.otlp_json",
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
