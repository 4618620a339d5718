"""Capture: turn a running LangChain / LangGraph agent into ToolCall records."""

from tracing.records import CallSource, CallStatus, InvalidToolCall, ToolCall, parse_arguments

__all__ = ["CallSource", "CallStatus", "InvalidToolCall", "ToolCall", "parse_arguments"]
