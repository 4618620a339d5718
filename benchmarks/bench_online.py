"""The online rule processor's cost: µs per span and per trace against the bare SDK, and the
rate at which its worker evaluates traces (above it the bounded queue fills, then drops).

Run from the repository root: ``python benchmarks/bench_online.py`` (``--quick`` for a smoke run).

The trace: one real run of the orders demo agent (LangGraph, real tools, the scripted model
asking for get_order then refund_order) recorded with the SpanEmitter, content captured; the
benchmark replays its spans (names, attributes, nesting) through the SDK's tracer ``--traces``
times, each replay a new trace. Baseline: a ``TracerProvider`` with a ``BatchSpanProcessor``
and a no-op exporter (an app's usual set-up, minus the network). Measured: the same with a
``RuleProcessor`` holding one policy of ten rules. Each side's time is process CPU time (all
threads: the app's and the workers'), up to ``force_flush`` returning, so evaluation is
included; best of ``--repeat`` runs, alternating sides.

Then ``harness serve``'s rate: ``serve()`` with the same policy in a child process pinned to one
core, an app replaying the traces through the SDK's OTLP/HTTP span exporter (batches, protobuf)
into it, and a local sink taking the events and counters it exports. Timed (wall clock) from the
first span to the child's exit after SIGTERM, so every received trace is evaluated and its events
sent: spans per second on one core.
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

RULES: list[dict[str, Any]] = [
    {"name": "no deletes", "forbid": "delete_*"},
    {"name": "no cancels", "forbid": "cancel_order"},
    {"name": "known tools", "allow": ["get_order", "search_orders", "refund_order", "find_*"]},
    {
        "name": "lookup before refund",
        "before": {
            "first": {"name": "get_order", "args": {"order_id": {"$same": "order_id"}}},
            "then": "refund_order",
        },
    },
    {"name": "grounded ids", "grounded": {"tool": "*_order", "args": ["order_id"]}},
    {"name": "no loops", "max_repeats": 1},
    {"name": "few calls", "max_calls": {"max": 8}},
    {"name": "few lookups", "max_calls": {"tool": "get_order", "max": 3}},
    {"name": "budget", "budget": {"tool_calls": 10, "model_calls": 6}},
    {"name": "refund budget", "budget": {"seconds": 60}},
]


@dataclass(frozen=True)
class _Span:
    name: str
    attributes: dict[str, Any]
    children: tuple[_Span, ...]


class _NoopExporter:
    """A span exporter that drops everything (the app's exporter, minus the network)."""

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """Nothing to release."""

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing buffered."""
        return True


class _Policy:
    """One policy of real rules selecting every trace (harness.policies builds the same)."""

    name = "bench"

    def __init__(self) -> None:
        from harness.rules import load_rules

        self.rules = load_rules(RULES)

    def selects(self, run: Any) -> bool:
        return True

    def evaluate(self, run: Any) -> Any:
        from harness.rules import Trajectory, evaluate_rules

        trajectory = Trajectory(
            calls=run.calls,
            user_inputs=run.user_inputs,
            model_calls=run.model_calls,
            duration=run.duration,
            output=run.output,
            not_captured=run.not_captured,
        )
        return evaluate_rules(self.rules, trajectory)


def _template() -> _Span:
    """The span tree of one real orders-agent run."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from harness.demo import orders
    from harness.models.scripted import ScriptedChatModel
    from tracing import SpanEmitter

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    model = ScriptedChatModel(
        [
            {"tool_calls": [{"name": "get_order", "args": {"order_id": "ORD-1042"}}]},
            {
                "tool_calls": [
                    {
                        "name": "refund_order",
                        "args": {"order_id": "ORD-1042", "amount": 10.0, "reason": "scratched"},
                    }
                ]
            },
            {"content": "Refunded 10 EUR."},
        ]
    )
    graph = orders.build(model, store=orders.OrderStore())
    emitter = SpanEmitter(provider, capture_content=True)
    graph.invoke({"messages": [("user", "Refund 10 EUR on ORD-1042")]}, emitter.config)
    spans = sorted(memory.get_finished_spans(), key=lambda s: s.start_time or 0)
    kids: dict[int | None, list[Any]] = {}
    for span in spans:
        kids.setdefault(span.parent.span_id if span.parent else None, []).append(span)

    def tree(span: Any) -> _Span:
        children = tuple(tree(c) for c in kids.get(span.context.span_id, []))
        return _Span(span.name, dict(span.attributes or {}), children)

    (root,) = kids[None]
    return tree(root)


def _count(span: _Span) -> int:
    return 1 + sum(_count(c) for c in span.children)


def _replay(tracer: Any, span: _Span, context: Any = None) -> None:
    from opentelemetry.trace import set_span_in_context

    live = tracer.start_span(span.name, context=context, attributes=span.attributes)
    inner = set_span_in_context(live)
    for child in span.children:
        _replay(tracer, child, inner)
    live.end()


def _run(template: _Span, traces: int, with_rules: bool) -> tuple[float, float, int]:
    """(CPU seconds for ``traces`` replays and the flush, of which on the app's thread before
    the flush, rule results produced)."""
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from harness.online import RuleProcessor

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(_NoopExporter()))  # type: ignore[arg-type]
    results: list[Any] = []
    if with_rules:
        processor = RuleProcessor(
            [_Policy()],
            on_result=results.append,
            queue_size=traces + 1,
            logger_provider=LoggerProvider(),  # events made and handed to a provider
            meter_provider=MeterProvider(),
        )
        provider.add_span_processor(processor)
    tracer = provider.get_tracer("bench")
    gc.collect()
    gc.disable()
    try:
        start, app_start = time.process_time(), time.thread_time()
        for _ in range(traces):
            _replay(tracer, template)
        app = time.thread_time() - app_start
        provider.force_flush(600_000)
        elapsed = time.process_time() - start
    finally:
        gc.enable()
        provider.shutdown()
    return elapsed, app, len(results)


def _capacity(template: _Span, traces: int, queue_size: int) -> tuple[float, float, int]:
    """(traces/s the app produced, traces/s the worker evaluated, traces dropped), wall clock,
    one run with a queue of ``queue_size`` traces (the app as fast as it can go)."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider

    from harness.online import RuleProcessor

    provider = TracerProvider()
    reader = InMemoryMetricReader()
    processor = RuleProcessor(
        [_Policy()], queue_size=queue_size, meter_provider=MeterProvider(metric_readers=[reader])
    )
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("bench")
    start = time.perf_counter()
    for _ in range(traces):
        _replay(tracer, template)
    produced = time.perf_counter() - start
    processor.force_flush(600_000)
    total = time.perf_counter() - start
    provider.shutdown()
    data = reader.get_metrics_data()
    dropped = sum(
        int(point.value)
        for resource in (data.resource_metrics if data else ())
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "harness.rule.dropped"
        for point in metric.data.data_points
    )
    return traces / produced, (traces - dropped) / total, dropped


def _parts(template: _Span, traces: int) -> tuple[float, float, float, float]:
    """Where the worker's CPU goes, µs per trace: (reading the spans into a TraceRun, the ten
    rules, the ten events and counters, of which the SDK's log records alone)."""
    from opentelemetry._logs import LogRecord
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from harness.online.policy import TraceResult
    from harness.online.reading import read_trace, span_hex_id
    from harness.online.signals import Signals, trace_context

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("bench")
    for _ in range(traces):
        _replay(tracer, template)
    by_trace: dict[int, list[Any]] = {}
    for span in memory.get_finished_spans():
        by_trace.setdefault(span.context.trace_id, []).append(span)
    jobs = [
        (format(t, "032x"), items, next(s for s in items if s.parent is None))
        for t, items in by_trace.items()
    ]
    policy, logs = _Policy(), LoggerProvider()
    signals = Signals(logs, MeterProvider())
    start = time.process_time()
    runs = [read_trace(trace_id, items, root) for trace_id, items, root in jobs]
    read = time.process_time() - start
    start = time.process_time()
    results = [tuple(policy.evaluate(run)) for run in runs]
    rules = time.process_time() - start
    start = time.process_time()
    for (trace_id, _, root), run, found in zip(jobs, runs, results, strict=True):
        context = trace_context(trace_id, span_hex_id(root))
        scrub = _lazy(signals, run)
        for result in found:
            signals.result(TraceResult(result, "bench", trace_id, None, True), scrub, context)
    events = time.process_time() - start
    logger = logs.get_logger("bench")
    attributes = {"gen_ai.evaluation.name": "rule:x", "harness.policy": "bench"}
    start = time.process_time()
    for (trace_id, _, root), found in zip(jobs, results, strict=True):
        context = trace_context(trace_id, span_hex_id(root))
        for _ in found:
            logger.emit(LogRecord(context=context, event_name="e", attributes=dict(attributes)))
    records = time.process_time() - start
    provider.shutdown()
    n = len(jobs) / 1e6
    return read / n, rules / n, events / n, records / n


def _lazy(signals: Any, run: Any) -> Any:
    made: list[Any] = []

    def scrub() -> Any:
        if not made:
            made.append(signals.scrubber(run))
        return made[0]

    return scrub


def _serve_child(sink: str) -> None:
    """The child process: serve() on one core until SIGTERM."""
    from harness.online.serve import serve

    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())

    def ready(url: str) -> None:
        print(url, flush=True)

    spans = serve([_Policy()], stop, port=0, otlp_endpoint=sink, ready=ready)
    print(spans, flush=True)


def _serve_rate(template: _Span, traces: int) -> tuple[float, int]:
    """(spans/s through harness serve on one core, spans it received)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    class Sink(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    sink = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve-child", f"http://127.0.0.1:{sink.server_address[1]}"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    url = child.stdout.readline().strip()
    provider = TracerProvider()
    provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces"), max_queue_size=100_000)
    )
    tracer = provider.get_tracer("bench")
    start = time.perf_counter()
    for _ in range(traces):
        _replay(tracer, template)
    provider.force_flush(600_000)
    child.send_signal(signal.SIGTERM)
    received = int(child.stdout.readline().strip() or 0)
    child.wait(600)
    elapsed = time.perf_counter() - start
    provider.shutdown()
    sink.shutdown()
    return received / elapsed, received


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="200 traces, 2 repeats")
    parser.add_argument("--serve-child", metavar="SINK", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_child:
        _serve_child(args.serve_child)
        return
    traces, repeat = (200, 2) if args.quick else (args.traces, args.repeat)

    template = _template()
    per_trace = _count(template)
    _run(template, 50, True)  # warm-up: imports, first-use caches
    bare: list[tuple[float, float]] = []
    rules: list[tuple[float, float]] = []
    produced = 0
    for _ in range(repeat):
        seconds, app, _ = _run(template, traces, False)
        bare.append((seconds, app))
        seconds, app, produced = _run(template, traces, True)
        rules.append((seconds, app))
    spans = traces * per_trace
    b, r = min(x[0] for x in bare), min(x[0] for x in rules)
    b_app, r_app = min(x[1] for x in bare), min(x[1] for x in rules)
    print(f"{traces} traces x {per_trace} spans (orders agent: 2 tools, 3 model calls), 10 rules")
    for label, seconds in (("bare SDK (batch, no-op exporter)", b), ("+ RuleProcessor", r)):
        per_span, per_trace_us = seconds / spans * 1e6, seconds / traces * 1e6
        print(f"  {label:34} {per_span:8.1f} µs/span {per_trace_us:9.1f} µs/trace")
    print(f"  ratio {r / b:.2f}x the bare SDK span cost; {produced} rule results")
    print(
        f"  on the app's thread alone: {b_app / spans * 1e6:.1f} vs {r_app / spans * 1e6:.1f} "
        f"µs/span, ratio {r_app / b_app:.2f}x (evaluation runs on the worker)"
    )
    read, evaluated, events, records = _parts(template, traces)
    budget = (0.3 * b / traces) * 1e6
    print(
        f"  the worker per trace: read {read:.0f} µs, 10 rules {evaluated:.0f} µs, 10 events "
        f"and counters {events:.0f} µs (the SDK's 10 log records alone {records:.0f} µs); "
        f"the 1.3x target leaves {budget:.0f} µs per trace for all of it"
    )
    app, worker, _ = _capacity(template, traces, traces + 1)
    print(
        f"  the queue starts dropping above {worker * per_trace:,.0f} spans/s "
        f"({worker:,.0f} traces/s, the worker's capacity while the app produces "
        f"{app:,.0f} traces/s): a steady rate above it fills the queue (queue_size traces), "
        "then drops"
    )
    small = 64
    app, _, dropped = _capacity(template, traces, small)
    print(
        f"  with queue_size={small} and the app at {app * per_trace:,.0f} spans/s: "
        f"{dropped} of {traces} traces dropped (counted in harness.rule.dropped)"
    )
    rate, received = _serve_rate(template, traces)
    print(
        f"  harness serve (one core, SDK OTLP/HTTP exporter as client): {rate:,.0f} spans/s "
        f"({received} spans received and evaluated)"
    )


if __name__ == "__main__":
    main()
