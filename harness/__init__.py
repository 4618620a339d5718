"""toolcall-harness: score the tool calls a LangChain / LangGraph agent really makes."""

from harness.errors import HarnessError, MatcherError, MetricConfigError, SampleError
from harness.expectation import Expectation
from harness.sample import Sample
from tracing.records import ToolCall

__all__ = [
    "Expectation",
    "HarnessError",
    "MatcherError",
    "MetricConfigError",
    "Sample",
    "SampleError",
    "ToolCall",
]
