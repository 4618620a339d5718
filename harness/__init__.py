"""toolcall-harness: score the tool calls a LangChain / LangGraph agent really makes."""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _distribution_version

from harness.errors import HarnessError, MatcherError, MetricConfigError, SampleError
from harness.expectation import Expectation
from harness.sample import Sample
from tracing.records import ToolCall

try:
    __version__ = _distribution_version("toolcall-harness")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "Expectation",
    "HarnessError",
    "MatcherError",
    "MetricConfigError",
    "Sample",
    "SampleError",
    "ToolCall",
]
