"""Capture: turn a running LangChain / LangGraph agent into ToolCall records."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tracing.records import CallSource, CallStatus, InvalidToolCall, ToolCall, parse_arguments

if TYPE_CHECKING:
    from tracing.callback import ToolCallRecorder
    from tracing.exporter import SpanView, ToolCallSpanExporter, calls_from_spans
    from tracing.otlp_json import (
        OtlpJsonError,
        OtlpJsonFileExporter,
        OtlpJsonReader,
        iter_spans,
        iter_trace_calls,
        write_spans,
    )
    from tracing.spans import SpanEmitter

# Imported on first use: the pytest plugin and the CLI import this package, and the OTel and
# LangChain modules behind these names cost a noticeable part of a second to load.
_LAZY = {
    "ToolCallRecorder": "tracing.callback",
    "SpanEmitter": "tracing.spans",
    "SpanView": "tracing.exporter",
    "ToolCallSpanExporter": "tracing.exporter",
    "calls_from_spans": "tracing.exporter",
    "OtlpJsonError": "tracing.otlp_json",
    "OtlpJsonFileExporter": "tracing.otlp_json",
    "OtlpJsonReader": "tracing.otlp_json",
    "iter_spans": "tracing.otlp_json",
    "iter_trace_calls": "tracing.otlp_json",
    "write_spans": "tracing.otlp_json",
}

__all__ = [
    "CallSource",
    "CallStatus",
    "InvalidToolCall",
    "OtlpJsonError",
    "OtlpJsonFileExporter",
    "OtlpJsonReader",
    "SpanEmitter",
    "SpanView",
    "ToolCall",
    "ToolCallRecorder",
    "ToolCallSpanExporter",
    "calls_from_spans",
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
