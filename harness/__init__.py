"""toolcall-harness: score the tool calls a LangChain / LangGraph agent really makes."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.errors import HarnessError, MatcherError, MetricConfigError, SampleError
    from harness.expectation import Expectation
    from harness.sample import Sample
    from tracing.records import ToolCall

    __version__: str

# Imported on first use (PEP 562): every `harness` command imports this package first, and
# `harness --version`, `schema` or `metrics` need none of the matching code behind these names.
_LAZY = {
    "Expectation": "harness.expectation",
    "HarnessError": "harness.errors",
    "MatcherError": "harness.errors",
    "MetricConfigError": "harness.errors",
    "Sample": "harness.sample",
    "SampleError": "harness.errors",
    "ToolCall": "tracing.records",
}

__all__ = [
    "Expectation",
    "HarnessError",
    "MatcherError",
    "MetricConfigError",
    "Sample",
    "SampleError",
    "ToolCall",
]


def __getattr__(name: str) -> Any:
    """Load the lazily exported names, and ``__version__``, on first access."""
    if name == "__version__":
        value: Any = _distribution_version()
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    else:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    globals()[name] = value
    return value


def _distribution_version() -> str:
    """The installed distribution's version (reading the metadata costs tens of milliseconds)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("toolcall-harness")
    except PackageNotFoundError:  # imported from a source tree that was never installed
        return "0+unknown"
