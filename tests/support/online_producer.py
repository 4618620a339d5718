"""Run producer cases with a RuleProcessor on the app's provider; print what it said, as JSON.

Usage: ``python -m tests.support.online_producer PRODUCER CASE...`` (names of
``tests.support.producer_frameworks.PRODUCERS`` and ``producer_cases.CASES``). Instrumentors
patch their framework for the whole process, so tests/harness/online/test_producers.py runs this
in a process of its own. The agent is the real framework with its real instrumentation against
the OpenAI stand-in on 127.0.0.1; events go to an in-memory log exporter, counters to an
in-memory metric reader.

Output: ``{"runs": [{"case", "ledger": [[name, args, result, error]], "results": [[policy,
rule, passed, error, code, trace_id, complete]]}], "events": [[trace_id, name, label]],
"violations": {rule: count}, "errors": int}``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetched from the network

from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider

from harness.online import RuleProcessor, TraceResult
from harness.rules import Rule, RuleResult, Trajectory, evaluate_rules, load_rules
from tests.support.openai_server import StandIn
from tests.support.producer_cases import CASES, LEDGER, reset
from tests.support.producer_frameworks import PRODUCERS
from tracing.otel.trace_run import TraceRun

try:  # the SDK renamed it (1.39)
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter as InMemoryLogExporter
except ImportError:  # pragma: no cover - older SDKs
    from opentelemetry.sdk._logs.export import InMemoryLogExporter

RULES = load_rules(
    [
        {"name": "lookup first", "before": {"first": "lookup", "then": "get_order"}},
        {"name": "grounded ids", "grounded": {"tool": "get_order", "args": ["order_id"]}},
        {"name": "no explosions", "forbid": "explode"},
        {"name": "no loops", "max_repeats": 1},
    ]
)


class Policy:
    """Every trace, the rules above."""

    name = "calc"
    rules: tuple[Rule, ...] = tuple(RULES)

    def selects(self, run: TraceRun) -> bool:
        return True

    def evaluate(self, run: TraceRun) -> tuple[RuleResult, ...]:
        trajectory = Trajectory(
            calls=run.calls,
            user_inputs=run.user_inputs,
            model_calls=run.model_calls,
            duration=run.duration,
            output=run.output,
            not_captured=run.not_captured,
        )
        return evaluate_rules(self.rules, trajectory)


def _row(found: TraceResult) -> list[Any]:
    r = found.result
    return [found.policy, r.rule, r.passed, r.error, r.code, found.trace_id, found.complete]


def main(argv: list[str] | None = None) -> int:
    """Run the producer's cases; print the JSON document."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2 or args[0] not in PRODUCERS or not set(args[1:]) <= set(CASES):
        print("usage: online_producer PRODUCER CASE...", file=sys.stderr)
        return 2
    logs = InMemoryLogExporter()
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    provider = TracerProvider()
    seen: list[TraceResult] = []
    processor = RuleProcessor(
        [Policy()],
        on_result=seen.append,
        logger_provider=logger_provider,
        meter_provider=meter_provider,
    )
    provider.add_span_processor(processor)
    standin = StandIn().start()
    runs: list[dict[str, Any]] = []
    try:
        agent_turn = PRODUCERS[args[0]](provider, standin.url)
        for name in args[1:]:
            case = CASES[name]
            model = f"{args[0]}-{name}"
            standin.script(model, list(case.replies))
            reset()
            before = len(seen)
            with contextlib.suppress(Exception), contextlib.redirect_stdout(sys.stderr):
                agent_turn(case.prompt, model)
            processor.force_flush(10_000)
            runs.append(
                {
                    "case": name,
                    "ledger": [list(entry) for entry in LEDGER],
                    "results": [_row(found) for found in seen[before:]],
                }
            )
    finally:
        standin.stop()
        provider.shutdown()
    events = []
    for data in logs.get_finished_logs():
        record = data.log_record
        attributes = dict(record.attributes or {})
        events.append(
            [
                format(record.trace_id or 0, "032x"),
                attributes.get("gen_ai.evaluation.name"),
                attributes.get("gen_ai.evaluation.score.label"),
            ]
        )
    counts: dict[str, int] = {}
    errors = 0
    metrics = reader.get_metrics_data()
    for resource in metrics.resource_metrics if metrics else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:  # type: ignore[union-attr]
                    if metric.name == "harness.rule.violations":
                        counts[str(point.attributes["rule"])] = int(point.value)
                    elif metric.name == "harness.rule.errors":
                        errors += int(point.value)
    document = {"runs": runs, "events": events, "violations": counts, "errors": errors}
    sys.stdout.write(json.dumps(document, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
