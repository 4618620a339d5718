"""What the online tests share: a policy built from real rules, the OTel SDK pipelines (traces,
logs, metrics) in memory, and the orders demo agent run under the SpanEmitter."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

try:  # the SDK renamed it (1.39); the old name warns
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter as InMemoryLogExporter
except ImportError:  # pragma: no cover - older SDKs
    from opentelemetry.sdk._logs.export import InMemoryLogExporter

from harness.demo import orders
from harness.models.scripted import ScriptedChatModel
from harness.online import RuleProcessor
from harness.rules import Rule, RuleResult, Trajectory, evaluate_rules, load_rules
from tracing import SpanEmitter, ToolCallRecorder
from tracing.otel.trace_run import TraceRun

RULES = load_rules(
    [
        {
            "name": "lookup before refund",
            "before": {
                "first": {"name": "get_order", "args": {"order_id": {"$same": "order_id"}}},
                "then": "refund_order",
            },
        },
        {"name": "no loops", "max_repeats": 1},
        {"name": "no cancels", "forbid": "cancel_order"},
    ]
)


def trajectory_of(run: TraceRun) -> Trajectory:
    """What the rules read of a trace (the policies module builds the same)."""
    return Trajectory(
        calls=run.calls,
        user_inputs=run.user_inputs,
        model_calls=run.model_calls,
        duration=run.duration,
        output=run.output,
        not_captured=run.not_captured,
    )


@dataclass(frozen=True)
class RulesPolicy:
    """A policy of real rules, selecting the traces of one agent (any, when None)."""

    name: str
    rules: Sequence[Rule] = tuple(RULES)
    agent: str | None = None

    def selects(self, run: TraceRun) -> bool:
        return self.agent is None or run.agent == self.agent

    def evaluate(self, run: TraceRun) -> Sequence[RuleResult]:
        return evaluate_rules(self.rules, trajectory_of(run))


@dataclass
class Pipelines:
    """A TracerProvider with the processor and an in-memory span exporter, and in-memory logs
    and metrics for the processor's events and counters."""

    spans: InMemorySpanExporter = field(default_factory=InMemorySpanExporter)
    logs: InMemoryLogExporter = field(default_factory=InMemoryLogExporter)
    metrics: InMemoryMetricReader = field(default_factory=InMemoryMetricReader)
    tracer_provider: TracerProvider = field(default_factory=TracerProvider)
    logger_provider: LoggerProvider = field(default_factory=LoggerProvider)
    meter_provider: MeterProvider = field(init=False)

    def __post_init__(self) -> None:
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.logger_provider.add_log_record_processor(SimpleLogRecordProcessor(self.logs))
        self.meter_provider = MeterProvider(metric_readers=[self.metrics])

    def processor(self, policies: Iterable[Any], **options: Any) -> RuleProcessor:
        """A processor sending to these pipelines, added to the tracer provider."""
        processor = RuleProcessor(
            policies,
            logger_provider=self.logger_provider,
            meter_provider=self.meter_provider,
            **options,
        )
        self.tracer_provider.add_span_processor(processor)
        return processor

    def events(self) -> list[Any]:
        """The log records emitted so far."""
        return [data.log_record for data in self.logs.get_finished_logs()]

    def counts(self, name: str) -> dict[tuple[tuple[str, Any], ...], int]:
        """A counter's value per attribute set (sorted items)."""
        data = self.metrics.get_metrics_data()
        out: dict[tuple[tuple[str, Any], ...], int] = {}
        if data is None:
            return out
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name != name:
                        continue
                    for point in metric.data.data_points:
                        key = tuple(sorted((point.attributes or {}).items()))
                        out[key] = int(point.value)
        return out

    def close(self) -> None:
        self.tracer_provider.shutdown()
        self.logger_provider.shutdown()
        self.meter_provider.shutdown()


def calls_turns(*turns: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Scripted model turns asking for these calls, then a final answer."""
    script: list[Any] = [
        {"tool_calls": [{"name": name, "args": args} for name, args in turn]} for turn in turns
    ]
    return [*script, {"content": "Done."}]


def run_orders(
    provider: TracerProvider,
    text: str,
    *turns: list[tuple[str, dict[str, Any]]],
    recorder: ToolCallRecorder | None = None,
) -> Mapping[str, Any]:
    """Run the orders demo agent with spans from the SpanEmitter (content captured)."""
    emitter = SpanEmitter(provider, capture_content=True)
    callbacks: list[Any] = [emitter] if recorder is None else [emitter, recorder]
    graph = orders.build(ScriptedChatModel(calls_turns(*turns)), store=orders.OrderStore())
    result: Mapping[str, Any] = graph.invoke(
        {"messages": [("user", text)]}, {"callbacks": callbacks}
    )
    return result
