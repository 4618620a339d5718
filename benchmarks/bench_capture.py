"""Capture overhead per tool call, and the memory of streaming a large OTLP JSON file.

Run from the repository root: ``python benchmarks/bench_capture.py`` (``--quick`` for a smoke run).

For each capture -- ToolCallRecorder, SpanEmitter behind a SimpleSpanProcessor and behind a
BatchSpanProcessor (no-op exporter), OpenInference's LangChain instrumentor and Traceloop's --
and each workload -- (a) ``tool.invoke`` called directly, (b) a LangGraph ReAct loop whose scripted
model asks for three tools, one per turn -- a fresh subprocess (instrumentors patch LangChain
globally) times the workload without capture, then with it: medians of several repeats, overhead
per tool call = (median with - median without) / tool calls. Printed in µs per call and as a
ratio to OpenInference's overhead. Times are process CPU time (all threads), so other load on
the machine does not count. Then a fresh subprocess streams a generated 100,000-span OTLP
JSON file through ``iter_trace_calls`` and reports its peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

CAPTURES = ("recorder", "emitter_simple", "emitter_batch", "openinference", "traceloop")
WORKLOADS = ("direct", "agent")
TOOLS_PER_AGENT_RUN = 3


# --- worker: time one capture on one workload -----------------------------------------------


class _NoopExporter:
    """A span exporter that drops everything (measures the capture, not the backend)."""

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """Nothing to release."""

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing buffered."""
        return True


def _install(capture: str) -> list[Any]:
    """Install a capture; return the callbacks to pass per run (empty for an instrumentor)."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    provider = TracerProvider()
    noop: Any = _NoopExporter()
    if capture == "emitter_batch":
        provider.add_span_processor(BatchSpanProcessor(noop))
    else:
        provider.add_span_processor(SimpleSpanProcessor(noop))

    if capture == "recorder":
        from tracing.langchain.recorder import ToolCallRecorder

        return [ToolCallRecorder()]
    if capture.startswith("emitter"):
        from tracing.otel.emitter import SpanEmitter

        return [SpanEmitter(provider, capture_content=True)]
    if capture == "openinference":
        from openinference.instrumentation.langchain import LangChainInstrumentor

        LangChainInstrumentor().instrument(tracer_provider=provider)
        return []
    if capture == "traceloop":
        os.environ.setdefault("TRACELOOP_TRACE_CONTENT", "true")
        from opentelemetry.instrumentation.langchain import LangchainInstrumentor

        LangchainInstrumentor().instrument(tracer_provider=provider)
        return []
    raise SystemExit(f"unknown capture {capture!r}; use one of {', '.join(CAPTURES)}")


def _workload(name: str, calls: int) -> tuple[Callable[[dict[str, Any]], None], int]:
    """(a function running the workload once under a config, tool calls it makes)."""
    from tests.support.agents import add, build_react_graph, echo, lookup, user_input

    if name == "direct":

        def direct(config: dict[str, Any]) -> None:
            for _ in range(calls):
                add.invoke({"a": 1, "b": 2}, config)

        return direct, calls
    if name == "agent":
        from harness.models.scripted import ScriptedChatModel

        model = ScriptedChatModel(
            [
                {"tool_calls": [{"name": "add", "args": {"a": 1, "b": 2}}]},
                {"tool_calls": [{"name": "lookup", "args": {"key": "alpha"}}]},
                {"tool_calls": [{"name": "echo", "args": {"token": "t"}}]},
            ]
        )
        graph = build_react_graph(model, [add, lookup, echo])
        prompt = user_input("go")
        runs = max(1, calls // 100)

        def agent(config: dict[str, Any]) -> None:
            for _ in range(runs):
                graph.invoke(prompt, config)

        return agent, runs * TOOLS_PER_AGENT_RUN
    raise SystemExit(f"unknown workload {name!r}; use one of {', '.join(WORKLOADS)}")


def _seconds(run: Callable[[dict[str, Any]], None], config: dict[str, Any]) -> float:
    # CPU time of the whole process (every thread, the batch processor's too), not wall time:
    # on a shared machine, time spent descheduled would otherwise swamp microsecond overheads.
    start = time.process_time()
    run(config)
    return time.process_time() - start


def worker(capture: str, workload: str, calls: int, repeats: int) -> dict[str, Any]:
    """Time the workload without and with the capture, in this fresh process.

    A per-run capture (recorder, emitter) alternates (without, with) repeat by repeat, and the
    overhead is the median of the paired differences. An instrumentor patches LangChain for good
    (Traceloop's ``uninstrument`` leaves its handler in place), so its repeats run without it
    first, then with it: overhead = median with - median without.
    """
    run, tool_calls = _workload(workload, calls)
    run({})  # warm-up: imports, caches
    instrumentor = capture in ("openinference", "traceloop")
    base: list[float] = []
    with_capture: list[float] = []
    if instrumentor:
        base = [_seconds(run, {}) for _ in range(repeats)]
        _install(capture)
        run({})  # warm-up with the capture
        with_capture = [_seconds(run, {}) for _ in range(repeats)]
        overhead = statistics.median(with_capture) - statistics.median(base)
    else:
        config: dict[str, Any] = {"callbacks": _install(capture)}
        run(config)
        for _ in range(repeats):
            base.append(_seconds(run, {}))
            with_capture.append(_seconds(run, config))
        overhead = statistics.median(w - b for w, b in zip(with_capture, base, strict=True))
    return {
        "capture": capture,
        "workload": workload,
        "tool_calls": tool_calls,
        "base_us": statistics.median(base) / tool_calls * 1e6,
        "with_us": statistics.median(with_capture) / tool_calls * 1e6,
        "overhead_us": overhead / tool_calls * 1e6,
    }


# --- worker: peak memory of streaming an OTLP JSON file -------------------------------------


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def generate_otlp(path: Path, spans: int, per_line: int = 500) -> int:
    """Write ``spans`` spans of agent traces (10 spans each, root last) as OTLP JSON lines."""
    per_trace = 10
    batch: list[dict[str, Any]] = []
    written = 0
    t = 1_700_000_000_000_000_000

    def flush(fp: Any) -> None:
        request = {
            "resourceSpans": [
                {"resource": {}, "scopeSpans": [{"scope": {"name": "b"}, "spans": batch}]}
            ]
        }
        fp.write(json.dumps(request, separators=(",", ":")) + "\n")
        batch.clear()

    with path.open("w") as fp:
        for trace in range(spans // per_trace):
            trace_id = f"{trace:032x}"
            root = f"{trace * 16 + 1:016x}"

            def span(
                n: int,
                name: str,
                attrs: list[dict[str, Any]],
                parent: str | None,
                trace: int = trace,
                trace_id: str = trace_id,
            ) -> None:
                item: dict[str, Any] = {
                    "traceId": trace_id,
                    "spanId": f"{trace * 16 + n:016x}",
                    "name": name,
                    "kind": 1,
                    "startTimeUnixNano": str(t + n * 1000),
                    "endTimeUnixNano": str(t + n * 1000 + 500),
                    "attributes": attrs,
                    "status": {},
                }
                if parent:
                    item["parentSpanId"] = parent
                batch.append(item)

            for turn in range(3):
                call_id = f"call_{trace}_{turn}"
                output = [
                    {
                        "role": "assistant",
                        "parts": [
                            {
                                "type": "tool_call",
                                "id": call_id,
                                "name": "add",
                                "arguments": {"a": turn, "b": trace},
                            }
                        ],
                    }
                ]
                span(
                    2 + turn * 3,
                    "chat scripted",
                    [
                        _attr("gen_ai.operation.name", "chat"),
                        _attr("gen_ai.output.messages", json.dumps(output)),
                    ],
                    root,
                )
                span(
                    3 + turn * 3,
                    "execute_tool add",
                    [
                        _attr("gen_ai.operation.name", "execute_tool"),
                        _attr("gen_ai.tool.name", "add"),
                        _attr("gen_ai.tool.call.id", call_id),
                        _attr("gen_ai.tool.call.arguments", json.dumps({"a": turn, "b": trace})),
                        _attr("gen_ai.tool.call.result", str(turn + trace)),
                    ],
                    f"{trace * 16 + 4 + turn * 3:016x}",
                )
                span(4 + turn * 3, "tools", [_attr("graph.node", "tools")], root)
            span(1, "invoke_agent demo", [_attr("gen_ai.operation.name", "invoke_agent")], None)
            written += per_trace
            if len(batch) >= per_line:
                flush(fp)
        if batch:
            flush(fp)
    return written


def read_worker(path: str) -> dict[str, Any]:
    """Stream the file through iter_trace_calls; report counts and RSS before and at peak."""
    from tracing.otlp.file_format import OtlpJsonReader

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    reader = OtlpJsonReader(path)
    traces = calls = 0
    start = time.perf_counter()
    for _, trace_calls in reader.iter_trace_calls():
        traces += 1
        calls += len(trace_calls)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "traces": traces,
        "calls": calls,
        "errors": len(reader.errors),
        "rss_before_mb": before / 1024,
        "rss_peak_mb": peak / 1024,
        "seconds": seconds,
    }


# --- driver ---------------------------------------------------------------------------------


def _subprocess(args: list[str]) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"worker {' '.join(args)} failed:\n{proc.stderr[-2000:]}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    """Run every capture on every workload, then the memory run; print the table."""
    parser = argparse.ArgumentParser(description="capture overhead per tool call")
    parser.add_argument("--quick", action="store_true", help="fewer calls and repeats")
    parser.add_argument("--worker", nargs=2, metavar=("CAPTURE", "WORKLOAD"))
    parser.add_argument("--read-worker", metavar="PATH")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--spans", type=int, default=100_000)
    args = parser.parse_args(argv)
    if args.quick:
        args.calls, args.repeats, args.spans = 300, 3, 10_000
    if args.worker:
        print(json.dumps(worker(args.worker[0], args.worker[1], args.calls, args.repeats)))
        return 0
    if args.read_worker:
        print(json.dumps(read_worker(args.read_worker)))
        return 0

    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cpu(s); "
        f"process CPU time, medians of {args.repeats} repeats; direct: {args.calls} calls, "
        f"agent: {max(1, args.calls // 100)} runs x {TOOLS_PER_AGENT_RUN} tools"
    )
    results: dict[tuple[str, str], dict[str, Any]] = {}
    for workload in WORKLOADS:
        for capture in CAPTURES:
            extra = ["--calls", str(args.calls), "--repeats", str(args.repeats)]
            results[(capture, workload)] = _subprocess(["--worker", capture, workload, *extra])

    print()
    print(f"{'capture':<16}" + "".join(f"{w + ' µs/call':>18}{'vs OI':>8}" for w in WORKLOADS))
    for capture in CAPTURES:
        cells = ""
        for workload in WORKLOADS:
            overhead = results[(capture, workload)]["overhead_us"]
            reference = results[("openinference", workload)]["overhead_us"]
            ratio = overhead / reference if reference > 0 else float("nan")
            cells += f"{overhead:>18.1f}{ratio:>8.2f}"
        print(f"{capture:<16}{cells}")
    base = {w: results[("recorder", w)]["base_us"] for w in WORKLOADS}
    print(
        f"{'(no capture)':<16}"
        + "".join(f"{base[w]:>18.1f}{'':>8}" for w in WORKLOADS)
        + "   <- absolute cost per tool call without capture"
    )

    recorder = results[("recorder", "direct")]["overhead_us"]
    oi_agent = results[("openinference", "agent")]["overhead_us"]
    print()
    print(
        f"target recorder <= 25 µs/call on direct invoke: {recorder:.1f} µs -> "
        f"{'met' if recorder <= 25 else 'MISSED'}"
    )
    for capture in ("emitter_simple", "emitter_batch"):
        ratio = results[(capture, "agent")]["overhead_us"] / oi_agent
        print(
            f"target {capture} <= 1/3 of OpenInference on the agent loop: {ratio:.2f} -> "
            f"{'met' if ratio <= 1 / 3 else 'MISSED'}"
        )

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "spans.jsonl"
        spans = generate_otlp(path, args.spans)
        size_mb = path.stat().st_size / 2**20
        memory = _subprocess(["--read-worker", str(path)])
    print()
    print(
        f"iter_trace_calls over {spans:,} spans ({size_mb:.1f} MiB, {memory['traces']:,} traces, "
        f"{memory['calls']:,} calls) in {memory['seconds']:.2f} s: peak RSS "
        f"{memory['rss_peak_mb']:.1f} MiB (after imports {memory['rss_before_mb']:.1f} MiB, "
        f"+{memory['rss_peak_mb'] - memory['rss_before_mb']:.1f} MiB while reading)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
