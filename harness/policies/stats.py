"""The population's figures a team watches, over every trace read (the JSON report's ``stats``).

Per trace: tool calls, model calls, tokens (input, output, total; over the traces whose model
calls report usage). Latency: each tool call's and model call's duration, overall and per tool
name (per model for model calls). Each figure gives its count, mean, p50/p95/p99 and max.

Quantiles are exact: the values are kept (one float each) and sorted when the report is made.
That is bounded up to :data:`EXACT_LIMIT` values per figure (8 MB each); past it a figure keeps
a uniform reservoir sample of that size (Vitter's algorithm R, seeded, so runs repeat), and says
``"exact": false``. Merging the figures of shards concatenates their values (then samples).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from tracing.otel.trace_run import TraceRun
    from tracing.records import ModelCall

__all__ = ["EXACT_LIMIT", "PER_TOOL_ROWS", "Figure", "FigureRow", "TraceStats", "figure_rows"]

EXACT_LIMIT = 1_000_000
"""Values a figure keeps; past that its quantiles come from a uniform sample of this size."""

QUANTILES = (("p50", 0.50), ("p95", 0.95), ("p99", 0.99))


@dataclass(slots=True)
class _Sampled:
    """A figure's count, sum and max over all its values, once it keeps only a sample."""

    count: int
    total: float
    largest: float
    random: random.Random = field(default_factory=lambda: random.Random(0))


@dataclass(slots=True)
class Figure:
    """One figure: its values (up to :data:`EXACT_LIMIT`), count, sum and max of all.

    Adding a value appends it, nothing more: the count, sum and max are read from the values
    when asked for, and kept apart only once the figure samples (past the limit).
    """

    values: list[float] = field(default_factory=list)
    _sampled: _Sampled | None = None

    @property
    def count(self) -> int:
        """How many values were added."""
        return self._sampled.count if self._sampled is not None else len(self.values)

    @property
    def total(self) -> float:
        """The sum of every value added."""
        return self._sampled.total if self._sampled is not None else sum(self.values, 0.0)

    @property
    def largest(self) -> float:
        """The largest value added (-inf before any)."""
        if self._sampled is not None:
            return self._sampled.largest
        return max(self.values, default=-math.inf)

    def add(self, value: float) -> None:
        """Count one value."""
        if self._sampled is None and len(self.values) < EXACT_LIMIT:
            self.values.append(value)
            return
        sampled = self._sampling()
        sampled.count += 1
        sampled.total += value
        if value > sampled.largest:
            sampled.largest = value
        slot = sampled.random.randrange(sampled.count)  # algorithm R: keep it w. p. limit/count
        if slot < EXACT_LIMIT:
            self.values[slot] = value

    def _sampling(self) -> _Sampled:
        """The figures over all values, kept apart from now on (the values become a sample)."""
        if self._sampled is None:
            self._sampled = _Sampled(self.count, self.total, self.largest)
        return self._sampled

    def merge(self, other: Figure) -> None:
        """Count ``other``'s values too."""
        count, total = self.count + other.count, self.total + other.total
        largest = max(self.largest, other.largest)
        for value in other.values:
            self.add(value)
        if count > len(self.values):  # sampled, here or in ``other``: the sums and the max
            sampled = self._sampling()  # are exact whatever was sampled
            sampled.count, sampled.total, sampled.largest = count, total, largest

    def to_json(self, scale: float = 1.0) -> dict[str, Any]:
        """count, mean, p50/p95/p99, max (values times ``scale``), and whether exact."""
        if not self.count:
            return {"count": 0}
        ordered = sorted(self.values)
        data: dict[str, Any] = {"count": self.count, "mean": self.total / self.count * scale}
        for name, q in QUANTILES:
            data[name] = _quantile(ordered, q) * scale
        data["max"] = self.largest * scale
        if self.count > len(self.values):
            data["exact"] = False
        return data


def _quantile(ordered: list[float], q: float) -> float:
    """The ``q`` quantile by linear interpolation between closest ranks (numpy's default)."""
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(slots=True)
class TraceStats:
    """Figures per trace and per call over every run added (module docstring)."""

    traces: int = 0
    tool_calls: Figure = field(default_factory=Figure)
    model_calls: Figure = field(default_factory=Figure)
    input_tokens: Figure = field(default_factory=Figure)
    output_tokens: Figure = field(default_factory=Figure)
    total_tokens: Figure = field(default_factory=Figure)
    tool_latency: Figure = field(default_factory=Figure)
    model_latency: Figure = field(default_factory=Figure)
    tools: dict[str, Figure] = field(default_factory=dict)
    """Latency per tool name."""
    models: dict[str, Figure] = field(default_factory=dict)
    """Latency per model name (model calls that name theirs)."""

    def add(self, run: TraceRun) -> None:
        """Count one trace's calls, tokens and latencies."""
        self.traces += 1
        self.tool_calls.add(len(run.calls))
        models = run.model_calls or ()
        self.model_calls.add(len(models))
        for call in run.calls:
            took = call.duration_ns
            if took is not None and took >= 0:
                self.tool_latency.add(took)
                _figure(self.tools, call.name).add(took)
        if models:  # most traces of tool-calling apps without content: no model span
            self._add_models(models)

    def _add_models(self, models: Sequence[ModelCall]) -> None:
        """Count one trace's model turns: tokens summed per trace, each turn's latency."""
        tokens = [0, 0, 0]
        reported = [False, False, False]
        for model in models:
            for i, value in enumerate(
                (model.input_tokens, model.output_tokens, model.total_tokens)
            ):
                if value is not None:
                    tokens[i] += value
                    reported[i] = True
            if model.started_at is not None and model.ended_at is not None:
                took = model.ended_at - model.started_at
                if took >= 0:
                    self.model_latency.add(took)
                    if model.model:
                        _figure(self.models, model.model).add(took)
        for figure, value, seen in zip(
            (self.input_tokens, self.output_tokens, self.total_tokens),
            tokens,
            reported,
            strict=True,
        ):
            if seen:
                figure.add(value)

    def merge(self, other: TraceStats) -> None:
        """Add the figures of ``other`` (a later part of the input)."""
        self.traces += other.traces
        for name in _FIGURES:
            getattr(self, name).merge(getattr(other, name))
        for mine, theirs in ((self.tools, other.tools), (self.models, other.models)):
            for key, figure in theirs.items():
                _figure(mine, key).merge(figure)

    def to_json(self) -> dict[str, Any]:
        """The JSON report's ``stats``: counts per trace, latencies in milliseconds."""
        ms = 1e-6
        return {
            "traces": self.traces,
            "per_trace": {
                "tool_calls": self.tool_calls.to_json(),
                "model_calls": self.model_calls.to_json(),
                "input_tokens": self.input_tokens.to_json(),
                "output_tokens": self.output_tokens.to_json(),
                "total_tokens": self.total_tokens.to_json(),
            },
            "latency_ms": {
                "tools": self.tool_latency.to_json(ms),
                "models": self.model_latency.to_json(ms),
                "per_tool": {k: f.to_json(ms) for k, f in sorted(self.tools.items())},
                "per_model": {k: f.to_json(ms) for k, f in sorted(self.models.items())},
            },
        }


_FIGURES: tuple[str, ...] = (
    "tool_calls",
    "model_calls",
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "tool_latency",
    "model_latency",
)


def _figure(figures: dict[str, Figure], key: str) -> Figure:
    found = figures.get(key)
    if found is None:
        found = figures[key] = Figure()
    return found


PER_TOOL_ROWS = 10
"""Tools the console and Markdown reports show (the slowest by p95); the JSON has every one."""


class FigureRow(NamedTuple):
    """One row of the figures' table: its label, and count, mean, p50, p95, p99, max as text."""

    label: str
    cells: tuple[str, ...]
    tool: str | None = None
    """The tool name of a per-tool latency row (shown under the overall tool latency)."""


def figure_rows(stats: Mapping[str, Any], per_tool: int = PER_TOOL_ROWS) -> list[FigureRow]:
    """The rows the reports show from :meth:`TraceStats.to_json`: calls, model calls and
    tokens per trace, tool and model latency (ms), then the ``per_tool`` slowest tools by p95;
    figures with no value are left out."""
    per_trace, latency = stats["per_trace"], stats["latency_ms"]
    rows: list[tuple[str, Mapping[str, Any], str, str | None]] = [
        ("tool calls / trace", per_trace["tool_calls"], "{:.1f}", None),
        ("model calls / trace", per_trace["model_calls"], "{:.1f}", None),
        ("tokens / trace", per_trace["total_tokens"], "{:.0f}", None),
        ("tool latency ms", latency["tools"], "{:.1f}", None),
        ("model latency ms", latency["models"], "{:.1f}", None),
    ]
    slowest = sorted(latency["per_tool"].items(), key=lambda item: -item[1].get("p95", 0.0))
    rows += [(f"{name} ms", figure, "{:.1f}", name) for name, figure in slowest[:per_tool]]
    return [
        FigureRow(
            label,
            (str(figure["count"]), *(shown.format(figure[key]) for key in _COLUMNS)),
            tool,
        )
        for label, figure, shown, tool in rows
        if figure["count"]
    ]


_COLUMNS = ("mean", "p50", "p95", "p99", "max")
