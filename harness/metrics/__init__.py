"""Deterministic tool-call metrics (docs/metrics.md) and the registry that names them."""

from __future__ import annotations

from harness.metrics.accuracy import NoUnexpectedToolCalls, ToolCallAccuracy, ToolCallOrder
from harness.metrics.arguments import ToolArgumentCorrectness
from harness.metrics.base import Details, Issue, Metric, Pair, ReasonCode, Score
from harness.metrics.f1 import ToolCallF1
from harness.metrics.partial_order import ToolCallPartialOrder
from harness.metrics.ragas import RagasToolCallAccuracy, RagasToolCallF1
from harness.metrics.registry import get_metric, metric_names, metric_options, register_metric
from harness.metrics.selection import ToolSelectionAccuracy
from harness.metrics.sequence import ToolCallSequenceAccuracy

__all__ = [
    "Details",
    "Issue",
    "Metric",
    "NoUnexpectedToolCalls",
    "Pair",
    "RagasToolCallAccuracy",
    "RagasToolCallF1",
    "ReasonCode",
    "Score",
    "ToolArgumentCorrectness",
    "ToolCallAccuracy",
    "ToolCallF1",
    "ToolCallOrder",
    "ToolCallPartialOrder",
    "ToolCallSequenceAccuracy",
    "ToolSelectionAccuracy",
    "get_metric",
    "metric_names",
    "metric_options",
    "register_metric",
]
