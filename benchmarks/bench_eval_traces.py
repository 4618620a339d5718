"""Streaming ``harness eval-traces``: peak memory over a 100,000-trace OTLP JSON file.

Writes a collector-format file (one ExportTraceServiceRequest per line, ``--per-line`` traces per
line, as a batching exporter does), each trace a ``scenario`` root, an ``invoke_agent`` span and
two ``execute_tool`` spans with their arguments; one trace in ten breaks its scenario. Then,
each in a fresh subprocess that reports its own peak RSS at exit
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``):

* ``baseline``: the same imports, no file read (what the interpreter and libraries cost);
* ``reader``: stream every trace out of the file (``iter_recorded_traces``), keep nothing;
* ``eval-traces``: the real command, ``harness eval-traces FILE --scenarios S --json OUT``.

Prints the file size and each peak RSS. The reader's peak minus the baseline is what streaming
costs; a reader that loaded the file would need about the file's size on top. ``eval-traces``
also keeps one result per trace for the reports (passing traces without their calls).

    .venv/bin/python benchmarks/bench_eval_traces.py [--traces 100000] [--per-line 10] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SUITE = """suite: bench
agent: {agent}:build
model: {{provider: demo}}
scenarios:
  - name: weather
    input: weather in Berlin
    expect:
      tool_calls: [{{name: get_weather, args: {{city: Berlin}}}}, get_time]
      forbid: [delete]
  - name: refund
    input: refund order 7
    expect:
      tool_calls:
        - {{name: get_order, args: {{order_id: 7}}}}
        - {{name: refund, args: {{order_id: 7}}}}
      order: strict
"""

_PEAK = "import resource\nprint('peak_kb', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
CHILD_BASELINE = "import harness.cli, harness.evaluate_traces, harness.report.json_report\n"
CHILD_READER = (
    CHILD_BASELINE
    + "import sys\nfrom harness.evaluate_traces import iter_recorded_traces\n"
    + "print(sum(1 for _ in iter_recorded_traces(sys.argv[1])))\n"
)
CHILD_EVAL = (
    CHILD_BASELINE
    + "import contextlib, io, sys\nfrom harness.cli import main\n"
    + "with contextlib.redirect_stdout(io.StringIO()):\n"
    + "    code = main(['eval-traces', sys.argv[1], '--scenarios', sys.argv[2], "
    + "'--json', sys.argv[3]])\n"
    + "print(code)\n"
)


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def _span(
    trace: str, span: int, parent: int | None, name: str, t0: int, attrs: dict[str, Any]
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": trace,
        "spanId": f"{span:016x}",
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(t0 + span * 1000),
        "endTimeUnixNano": str(t0 + span * 1000 + 500),
        "attributes": [_attr(k, v) for k, v in attrs.items()],
        "status": {},
    }
    if parent is not None:
        out["parentSpanId"] = f"{parent:016x}"
    return out


def _tool(trace: str, span: int, t0: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    attrs = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.id": f"call_{trace[:8]}_{span}",
        "gen_ai.tool.call.arguments": json.dumps(args),
        "gen_ai.tool.call.result": json.dumps({"ok": True, "detail": "x" * 40}),
    }
    return _span(trace, span, 2, f"execute_tool {name}", t0, attrs)


def _trace(index: int) -> list[dict[str, Any]]:
    trace = f"{index + 1:032x}"
    t0 = 1_700_000_000_000_000_000 + index * 10_000
    broken = index % 10 == 9
    if index % 2:
        name = "refund"
        calls = [("get_order", {"order_id": 7}), ("refund", {"order_id": 8 if broken else 7})]
    else:
        name = "weather"
        calls = [("get_weather", {"city": "Berlin"}), ("delete" if broken else "get_time", {})]
    spans = [_tool(trace, 3 + i, t0, tool, args) for i, (tool, args) in enumerate(calls)]
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bench"}
    spans.append(_span(trace, 2, 1, "invoke_agent bench", t0, agent))
    root = {"harness.suite": "bench", "harness.scenario": name, "harness.run": 0}
    spans.append(_span(trace, 1, None, f"scenario {name}", t0, root))
    return spans


def write_file(path: Path, traces: int, per_line: int) -> None:
    """The collector-format file: ``per_line`` traces per request line."""
    resource_block = {"attributes": [_attr("service.name", "toolcall-harness")]}
    with path.open("w", encoding="utf-8") as fp:
        for first in range(0, traces, per_line):
            spans = [s for i in range(first, min(first + per_line, traces)) for s in _trace(i)]
            request = {
                "resourceSpans": [
                    {
                        "resource": resource_block,
                        "scopeSpans": [{"scope": {"name": "toolcall-harness"}, "spans": spans}],
                    }
                ]
            }
            fp.write(json.dumps(request, separators=(",", ":")))
            fp.write("\n")


def peak_rss_mb(code: str, *args: str) -> tuple[float, float, str]:
    """Run ``code`` in a fresh interpreter; (its peak RSS in MB, seconds, its first line)."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code + _PEAK, *args],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"child failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    lines = proc.stdout.strip().splitlines()
    peak_kb = int(lines[-1].split()[1])  # ru_maxrss is in KiB on Linux
    return peak_kb / 1024, seconds, lines[0] if len(lines) > 1 else ""


def main() -> None:
    """Generate the file, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=100_000)
    parser.add_argument("--per-line", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="10,000 traces")
    args = parser.parse_args()
    traces = 10_000 if args.quick else args.traces
    with tempfile.TemporaryDirectory(prefix="bench-eval-traces-") as tmp:
        folder = Path(tmp)
        agent = folder / "noop_agent.py"
        agent.write_text("def build(model):\n    return None\n", encoding="utf-8")
        suite = folder / "bench.yaml"
        suite.write_text(SUITE.format(agent=agent), encoding="utf-8")
        path = folder / "traces.json"
        start = time.perf_counter()
        write_file(path, traces, args.per_line)
        size_mb = os.path.getsize(path) / 1e6
        print(
            f"file: {traces:,} traces, {size_mb:,.1f} MB "
            f"({time.perf_counter() - start:.1f}s to write)"
        )
        base, _, _ = peak_rss_mb(CHILD_BASELINE)
        print(f"baseline (imports only):       peak RSS {base:7.1f} MB")
        reader, reader_s, count = peak_rss_mb(CHILD_READER, str(path))
        print(
            f"reader (stream {count} traces): peak RSS {reader:7.1f} MB "
            f"(+{reader - base:.1f} MB over baseline; file {size_mb:.0f} MB) in {reader_s:.1f}s"
        )
        report = folder / "report.json"
        full, full_s, _ = peak_rss_mb(CHILD_EVAL, str(path), str(suite), str(report))
        data = json.loads(report.read_text())
        print(
            f"eval-traces --json:            peak RSS {full:7.1f} MB "
            f"(+{full - base:.1f} MB over baseline) in {full_s:.1f}s; counts {data['counts']}"
        )


if __name__ == "__main__":
    main()
