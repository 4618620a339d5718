"""Streaming ``harness eval-traces``: peak memory over 100,000- and 200,000-trace OTLP JSON files.

Writes a collector-format file (one ExportTraceServiceRequest per line, ``--per-line`` traces per
line, as a batching exporter does), each trace a ``scenario`` root, an ``invoke_agent`` span and
two ``execute_tool`` spans with their arguments; one trace in ten breaks its scenario. Then,
each in a fresh subprocess that reports its own peak RSS at exit
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``):

* ``baseline``: the command's imports and the scenario file loaded, no trace read (what the
  interpreter and libraries cost; the loader pulls in langchain_core and pydantic);
* ``reader``: stream every trace out of the file (``iter_recorded_traces``), keep nothing;
* ``eval-traces --json``: the real command, ``harness eval-traces FILE --scenarios S --json OUT``;
* ``... --junit-xml --html``: the same with every report (JSON and JUnit streamed, HTML from the
  bounded sample of kept results).

Before those: throughput on a 20,000-trace file (the reader alone, eval-traces with one
process and ``--workers 2``); the same ``--json`` run on each layout of :data:`LAYOUTS` (spans
one per line, traces interleaved, as producers write them), one process against ``--workers
2``; and the policy run (``eval-traces --rules``, 100,000 traces, half GenAI semconv, half
OpenInference, a 10-rule policy) against the reader alone, with each one's peak RSS.

Prints each file's size and each peak RSS, for every ``--traces`` count (default 100,000 and
200,000: streaming means the figures stay flat when the count doubles). The reader's peak minus
the baseline is what reading costs; a reader that loaded the file would need about the file's
size on top. ``eval-traces`` writes each result to the JSON and JUnit reports as it is scored
and keeps at most 500 (those that did not pass first) for the console and HTML reports, so it
should cost little more than the reader, whatever the count.

    .venv/bin/python benchmarks/bench_eval_traces.py [--traces N [N ...]] [--per-line 10] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
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

CHILD_ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
"""The timed children's environment: their imports read from cached bytecode, as a pip-installed
package's are (where PYTHONDONTWRITEBYTECODE is set, as on the development machines, each
command compiled the modules it imports lazily inside the timed run)."""

# VmHWM, not ru_maxrss: after fork + exec, Linux carries the parent's RSS into the child's
# ru_maxrss, so a child of a big parent would report the parent's size; VmHWM is the new
# process's own high-water mark.
_PEAK = (
    "import resource\n"
    "peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "try:\n"
    "    with open('/proc/self/status') as status:\n"
    "        peak = next(int(l.split()[1]) for l in status if l.startswith('VmHWM:'))\n"
    "except (OSError, StopIteration):\n"
    "    pass\n"
    "print('peak_kb', peak)\n"
)
# everything the command imports (the scenario loader pulls in langchain_core and pydantic)
CHILD_BASELINE = (
    "import harness.cli, harness.traces.evaluate, harness.run.runner, harness.scenarios\n"
    "import harness.report.console, harness.report.json_report, harness.report.junit\n"
    "import harness.report.html, harness.report.markdown, harness.report.github\n"
    "import harness.cli.eval_traces, harness.config, harness.parallel.traces\n"
    "import concurrent.futures.process, multiprocessing.queues, multiprocessing.synchronize\n"
)
CHILD_LOADED = (
    CHILD_BASELINE
    + "import sys\nfrom harness.scenarios import load_paths\nload_paths([sys.argv[1]])\n"
)
CHILD_READER = (
    CHILD_BASELINE
    + "import sys\nfrom harness.traces.evaluate import iter_recorded_traces\n"
    + "print(sum(1 for _ in iter_recorded_traces(sys.argv[1])))\n"
)
CHILD_EVAL = (
    CHILD_BASELINE
    + "import contextlib, os, sys, time\nfrom harness.cli import build_parser, main\n"
    + "build_parser()  # its lazy imports, so the clock sees the command's own work\n"
    + "start = time.perf_counter()\n"
    + "with open(os.devnull, 'w') as devnull, contextlib.redirect_stdout(devnull):\n"
    + "    code = main(['eval-traces', sys.argv[1], '--scenarios', sys.argv[2], "
    + "'--json', sys.argv[3], *sys.argv[4:]])\n"
    + "print(code, time.perf_counter() - start)\n"
)
# the reader alone, timed inside the child (interpreter start and imports left out)
CHILD_READER_TIMED = (
    CHILD_BASELINE
    + "import sys, time\nfrom harness.traces.evaluate import iter_recorded_traces\n"
    + "start = time.perf_counter()\n"
    + "count = sum(1 for _ in iter_recorded_traces(sys.argv[1]))\n"
    + "print(count, time.perf_counter() - start)\n"
)
THROUGHPUT_TRACES = 20_000
TARGET_JSON = 10_000  # traces/s, one process, --json
TARGET_ALL = 5_000  # traces/s, one process, --json --junit-xml --html
TARGET_WORKERS = 1.6  # --workers 2 over --workers 1 (issue 27, item 6)
POLICY_TRACES = 100_000
THROUGHPUT_REPEAT = 4  # rounds of fresh children per throughput figure; the best is kept


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


LAYOUTS = ("whole", "span-per-line", "span-per-line-interleaved", "batches-interleaved")
"""How a file holds its spans: ``whole``, ``--per-line`` whole traces per request line (as
above); ``span-per-line``, one span per line, each written when it ends (children before the
root), as the SDK's ``SimpleSpanProcessor`` writes them for one request at a time;
``span-per-line-interleaved``, the same with about :data:`OPEN_TRACES` requests served at once;
``batches-interleaved``, that stream :data:`BATCH_SPANS` spans a line, as a
``BatchSpanProcessor`` or the Collector's batches write it (nearly every trace cut across
lines)."""
OPEN_TRACES = 12
BATCH_SPANS = 64


def _interleaved(traces: int, open_traces: int) -> list[dict[str, Any]]:
    """Every span of ``traces`` traces in the order they end, about ``open_traces`` traces open
    at any moment (trace ``i``'s ``j``-th span ends at step ``i + j * open_traces / 4``)."""
    step = open_traces // 4
    keyed = [
        (index + position * step, index, span)
        for index in range(traces)
        for position, span in enumerate(_trace(index))
    ]
    keyed.sort(key=lambda item: (item[0], item[1]))
    return [span for _, _, span in keyed]


def write_layout(path: Path, traces: int, layout: str, per_line: int) -> None:
    """The file of ``traces`` traces in ``layout`` (:data:`LAYOUTS`)."""
    if layout == "whole":
        write_file(path, traces, per_line)
        return
    spans = _interleaved(traces, 1 if layout == "span-per-line" else OPEN_TRACES)
    size = BATCH_SPANS if layout == "batches-interleaved" else 1
    resource_block = {"attributes": [_attr("service.name", "toolcall-harness")]}
    with path.open("w", encoding="utf-8") as fp:
        for first in range(0, len(spans), size):
            request = {
                "resourceSpans": [
                    {
                        "resource": resource_block,
                        "scopeSpans": [
                            {
                                "scope": {"name": "toolcall-harness"},
                                "spans": spans[first : first + size],
                            }
                        ],
                    }
                ]
            }
            fp.write(json.dumps(request, separators=(",", ":")))
            fp.write("\n")


POLICY = """policies:
  - name: support
    select: {agent: bench}
    rules:
      - {name: no delete, forbid: delete}
      - {name: known tools, allow: [get_weather, get_time, get_order, refund, delete]}
      - {name: lookup before refund, before: {first: get_order, then: refund}}
      - {name: refund ids grounded, grounded: {tool: refund, args: [order_id]}}
      - {name: no loops, max_repeats: 1}
      - {name: budget, budget: {tool_calls: 4}, max_rate: 0.5}
      - {name: one refund, max_calls: {tool: refund, max: 1}}
      - {name: never order 8, forbid: {name: refund, args: {order_id: 8}}, max_rate: 0.2}
      - {name: weather before time, before: {first: get_weather, then: get_time}, severity: warn}
  - name: refunds
    select: {uses_tool: refund}
    rules:
      - {name: refunds bounded, max_calls: {tool: "*", max: 3}}
"""
"""A 10-rule policy over the bench traces' tools (two policies, one selecting by tool)."""

CHILD_POLICY = (
    CHILD_BASELINE
    + "import contextlib, os, sys, time\nfrom harness.cli import build_parser, main\n"
    + "build_parser()\n"
    + "start = time.perf_counter()\n"
    + "with open(os.devnull, 'w') as devnull, contextlib.redirect_stdout(devnull):\n"
    + "    code = main(['eval-traces', sys.argv[1], '--rules', sys.argv[2], '-q', "
    + "'--json', sys.argv[3], '--workers', sys.argv[4]])\n"
    + "print(code, time.perf_counter() - start)\n"
)
BASELINE_TREE = "BENCH_POLICY_BASELINE"
"""Environment variable: a source tree of the code to compare the policy run with (say
``git archive main | tar -x -C /tmp/main``), timed in the same rounds as this tree's."""


def _openinference(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same trace as OpenInference writes it (``openinference.span.kind``, ``tool.name``,
    ``input.value``/``output.value``): a second producer's attribute forms."""
    out = []
    for span in spans:
        attrs = {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}
        operation = attrs.get("gen_ai.operation.name")
        if operation == "execute_tool":
            attrs = {
                "openinference.span.kind": "TOOL",
                "tool.name": attrs["gen_ai.tool.name"],
                "input.value": attrs["gen_ai.tool.call.arguments"],
                "input.mime_type": "application/json",
                "output.value": attrs["gen_ai.tool.call.result"],
            }
        elif operation == "invoke_agent":
            attrs = {"openinference.span.kind": "AGENT", "agent.name": "bench"}
        else:
            attrs = {"openinference.span.kind": "CHAIN"}
        out.append({**span, "attributes": [_attr(k, v) for k, v in attrs.items()]})
    return out


def write_mixed(path: Path, traces: int, per_line: int) -> None:
    """``traces`` traces, every other pair in OpenInference's forms, ``per_line`` a line."""
    resource_block = {"attributes": [_attr("service.name", "shop")]}
    with path.open("w", encoding="utf-8") as fp:
        for first in range(0, traces, per_line):
            spans = [
                s
                for i in range(first, min(first + per_line, traces))
                for s in (_openinference(_trace(i)) if i // 2 % 2 else _trace(i))
            ]
            scope = {"scope": {"name": "bench"}, "spans": spans}
            request = {"resourceSpans": [{"resource": resource_block, "scopeSpans": [scope]}]}
            fp.write(json.dumps(request, separators=(",", ":")))
            fp.write("\n")


def policy_run(folder: Path, traces: int, per_line: int) -> None:
    """``eval-traces --rules`` over ``traces`` mixed-producer traces: traces/s with one process
    and with ``--workers 2`` against the reader alone, peak RSS; with :data:`BASELINE_TREE`
    set, the same one-process run of that tree, in the same interleaved rounds (A/B)."""
    path = folder / "mixed.json"
    write_mixed(path, traces, per_line)
    policy = folder / "policy.yaml"
    policy.write_text(POLICY, encoding="utf-8")
    report = folder / "policy.json"
    here = Path(__file__).resolve().parents[1]
    baseline = os.environ.get(BASELINE_TREE)
    rounds = max(THROUGHPUT_REPEAT // 2, 1) + (1 if baseline else 0)
    print(
        f"\npolicy run: {traces:,} traces ({os.path.getsize(path) / 1e6:.0f} MB, half GenAI "
        f"semconv, half OpenInference), 10 rules, best of {rounds} interleaved rounds, "
        f"load {_load()}"
    )
    rows = [
        ("reader only (the floor)", CHILD_READER_TIMED, [str(path)], here),
        ("eval-traces --rules, 1 process", CHILD_POLICY, [str(path), str(policy), "1"], here),
        ("eval-traces --rules, --workers 2", CHILD_POLICY, [str(path), str(policy), "2"], here),
    ]
    if baseline:
        tree = Path(baseline).resolve()
        rows.append((f"before ({tree}), 1 process", CHILD_POLICY, rows[1][2], tree))
    best = [float("inf")] * len(rows)
    peaks = [0.0] * len(rows)
    counts: dict[str, dict[str, int]] = {}  # each run's violations per rule: all must agree
    for _ in range(rounds):
        for index, (label, code, args, tree) in enumerate(rows):
            if code is CHILD_POLICY:
                args = [args[0], args[1], str(report), args[2]]
            peak, seconds = _policy_child(tree, code, *args)
            best[index] = min(best[index], seconds)
            peaks[index] = max(peaks[index], peak)
            if code is CHILD_POLICY:
                counts[label] = _violations(report)
    for index, (label, _, _, _) in enumerate(rows):
        rate = traces / best[index]
        ratio = "" if not index else f"  {best[index] / best[0]:.2f}x the reader's time"
        target = " (target <= 2x)" if index == 1 else ""
        print(
            f"  {label:<40} {rate:>9,.0f} traces/s  peak RSS {peaks[index]:6.1f} MB{ratio}{target}"
        )
    print(
        f"  --workers 2 over 1 process: {best[1] / best[2]:.2f}x (target >= {TARGET_WORKERS}); "
        f"the machine's ceiling: two independent processes {ceiling():.2f}x one"
    )
    if baseline:
        print(f"  before / after, 1 process: {best[3] / best[1]:.2f}x (same rounds, same load)")
    agree = len({json.dumps(found, sort_keys=True) for found in counts.values()}) == 1
    print(f"  load after: {_load()}; violations {next(iter(counts.values()))}")
    print(f"  every run's violations equal: {agree}")
    path.unlink()


def _policy_child(tree: Path, code: str, *args: str) -> tuple[float, float]:
    """Run ``code`` in a fresh interpreter importing the code of ``tree`` (its working
    directory comes first on ``sys.path``); (its peak RSS in MB, the seconds it reports)."""
    proc = subprocess.run(
        [sys.executable, "-c", code + _PEAK, *args],
        capture_output=True,
        text=True,
        cwd=tree,
        env=CHILD_ENV,
    )
    if proc.returncode != 0:
        raise SystemExit(f"child failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    lines = proc.stdout.strip().splitlines()
    return int(lines[-1].split()[1]) / 1024, float(lines[0].split()[1])


def _violations(report: Path) -> dict[str, int]:
    data = json.loads(report.read_text(encoding="utf-8"))
    return {
        f"{p['policy']}/{r['rule']}": r["violations"] for p in data["policies"] for r in p["rules"]
    }


def peak_rss_mb(code: str, *args: str, tree: Path | None = None) -> tuple[float, float, str]:
    """Run ``code`` in a fresh interpreter; (its peak RSS in MB, seconds, its first line).

    ``tree``: the checkout whose code it runs (default: this one).
    """
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code + _PEAK, *args],
        capture_output=True,
        text=True,
        cwd=tree or Path(__file__).resolve().parents[1],
        env=CHILD_ENV,
    )
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"child failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    lines = proc.stdout.strip().splitlines()
    peak_kb = int(lines[-1].split()[1])  # VmHWM (and ru_maxrss on Linux) are in KiB
    return peak_kb / 1024, seconds, lines[0] if len(lines) > 1 else ""


def json_report_summary(path: Path) -> tuple[dict[str, int], int]:
    """The report's counts and how many scenarios it lists, read line by line (not loaded)."""
    head: list[str] = []
    listed = 0
    in_head = True
    with path.open(encoding="utf-8") as fp:
        for line in fp:
            if in_head:
                if line.startswith('  "scenarios": ['):
                    head.append('  "scenarios": []\n}')
                    in_head = False
                else:
                    head.append(line)
            if line == "    {\n":  # a scenario object opens at this indent, nothing else does
                listed += 1
    counts: dict[str, int] = json.loads("".join(head))["counts"]
    return counts, listed


def main() -> None:
    """Generate the files, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, nargs="+", default=[100_000, 200_000])
    parser.add_argument("--per-line", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="10,000 and 20,000 traces")
    parser.add_argument(
        "--only",
        choices=["layouts", "policy"],
        help="run only this part (the layouts, or the policy run: a quick A/B)",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another checkout (e.g. `git worktree add /tmp/main main`): the layouts are also "
        "timed with its code, in the same rounds, as the 'before' columns",
    )
    args = parser.parse_args()
    counts = [10_000, 20_000] if args.quick else args.traces
    with tempfile.TemporaryDirectory(prefix="bench-eval-traces-") as tmp:
        folder = Path(tmp)
        agent = folder / "noop_agent.py"
        agent.write_text("def build(model):\n    return None\n", encoding="utf-8")
        suite = folder / "bench.yaml"
        suite.write_text(SUITE.format(agent=agent), encoding="utf-8")
        if args.only == "layouts":
            layouts(
                folder,
                suite,
                4_000 if args.quick else THROUGHPUT_TRACES,
                args.per_line,
                args.baseline,
            )
            return
        if args.only == "policy":
            policy_run(folder, 10_000 if args.quick else POLICY_TRACES, args.per_line)
            return
        imports, _, _ = peak_rss_mb(CHILD_BASELINE)
        print(f"imports only:                  peak RSS {imports:7.1f} MB")
        base, _, _ = peak_rss_mb(CHILD_LOADED, str(suite))
        print(
            f"baseline (+ scenarios loaded): peak RSS {base:7.1f} MB "
            "(what eval-traces costs before reading a trace: the loader imports langchain_core)"
        )
        throughput(folder, suite, 4_000 if args.quick else THROUGHPUT_TRACES, args.per_line)
        layouts(
            folder, suite, 4_000 if args.quick else THROUGHPUT_TRACES, args.per_line, args.baseline
        )
        policy_run(folder, 10_000 if args.quick else POLICY_TRACES, args.per_line)
        for traces in counts:
            measure(folder, suite, traces, args.per_line, (imports, base))


def _child_seconds(code: str, *args: str, tree: Path | None = None) -> float:
    """Seconds one fresh child reports for its work (its second output field)."""
    _, _, first = peak_rss_mb(code, *args, tree=tree)
    return float(first.split()[1])


def throughput(folder: Path, suite: Path, traces: int, per_line: int) -> None:
    """Traces per second: the reader alone (the floor), then eval-traces with its reports."""
    path = folder / "throughput.json"
    write_file(path, traces, per_line)
    report = folder / "report.json"
    junit, html = folder / "report.xml", folder / "report.html"
    every = ["--junit-xml", str(junit), "--html", str(html)]
    print(
        f"\nthroughput, {traces:,} traces ({os.path.getsize(path) / 1e6:.0f} MB), best of "
        f"{THROUGHPUT_REPEAT} interleaved rounds of fresh processes, load {_load()}"
    )
    alone = ["--workers", "1"]
    rows = [
        ("--json, 1 process", alone, f"target >= {TARGET_JSON:,}"),
        ("--json --junit-xml --html, 1 process", [*alone, *every], f"target >= {TARGET_ALL:,}"),
        ("--json, --workers 2", ["--workers", "2"], ""),
    ]
    children = [(CHILD_READER_TIMED, [str(path)])]
    children += [(CHILD_EVAL, [str(path), str(suite), str(report), *extra]) for _, extra, _ in rows]
    # Rounds, each running every child once: a slow phase of the shared machine then lands on
    # both sides of a ratio instead of on all the runs of one side.
    best = [float("inf")] * len(children)
    for _ in range(THROUGHPUT_REPEAT):
        for index, (code, args) in enumerate(children):
            best[index] = min(best[index], _child_seconds(code, *args))
    reader = traces / best[0]
    print(f"  reader only (the floor)            {reader:>9,.0f} traces/s")
    rates = [traces / seconds for seconds in best[1:]]
    for (label, _, target), rate in zip(rows, rates, strict=True):
        print(
            f"  eval-traces {label:<38} {rate:>9,.0f} traces/s  {rate / reader:>5.2f}x the reader"
            f"  {target}"
        )
    print(f"  --workers 2 over 1 process: {rates[2] / rates[0]:.2f}x (target >= {TARGET_WORKERS})")
    path.unlink()


CHILD_CEILING = (
    "import json, multiprocessing, time\n"
    "def work():\n"
    "    text = json.dumps([{'a': i, 'b': str(i) * 5, 'c': [i, i + 1]} for i in range(2000)])\n"
    "    for _ in range(300):\n"
    "        {item['b']: item for item in json.loads(text)}\n"
    "def timed(copies):\n"
    "    processes = [multiprocessing.get_context('fork').Process(target=work)\n"
    "                 for _ in range(copies)]\n"
    "    start = time.perf_counter()\n"
    "    for process in processes: process.start()\n"
    "    for process in processes: process.join()\n"
    "    return time.perf_counter() - start\n"
    "one = timed(1)\n"
    "print('ceiling', 2 * one / timed(2))\n"
)
"""The machine's own ceiling for two processes: two copies of a fixed CPU-bound loop (JSON and
dicts, as the reader does) run at once, their throughput over one copy's. Two processes that
share nothing reach this, not 2x, on a machine whose cores are shared with other guests."""


def ceiling() -> float:
    """Two independent processes' throughput over one's, now (:data:`CHILD_CEILING`)."""
    return _child_seconds(CHILD_CEILING)


def layouts(
    folder: Path, suite: Path, traces: int, per_line: int, baseline: Path | None = None
) -> None:
    """``--json`` with one process and with ``--workers 2`` on each :data:`LAYOUTS` file, and
    with the ``baseline`` checkout's code too when given (every command once per round, the
    best of the rounds kept: a slow phase of the machine falls on both sides)."""
    rounds = max(THROUGHPUT_REPEAT - 1, 1)
    print(f"\nlayouts, {traces:,} traces each, --json, best of {rounds} rounds, load {_load()}")
    report = folder / "report.json"
    trees: list[tuple[str, Path | None]] = [("", None)]
    if baseline is not None:
        trees.insert(0, ("before: ", baseline.resolve()))
    for layout in LAYOUTS:
        path = folder / f"{layout}.json"
        write_layout(path, traces, layout, per_line)
        best = {(tree, workers): float("inf") for tree, _ in trees for workers in ("1", "2")}
        ceilings = []
        for _ in range(rounds):
            ceilings.append(ceiling())
            for name, tree in trees:
                for workers in ("1", "2"):
                    args = [str(path), str(suite), str(report), "--workers", workers]
                    seconds = _child_seconds(CHILD_EVAL, *args, tree=tree)
                    best[name, workers] = min(best[name, workers], seconds)
        counts, _ = json_report_summary(report)
        size = os.path.getsize(path) / 1e6
        for name, _ in trees:
            one, two = best[name, "1"], best[name, "2"]
            label = f"{name}{layout}"
            print(
                f"  {label:<34} {size:4.0f} MB  1 process {one:5.2f} s, --workers 2 {two:5.2f} s: "
                f"{one / two:.2f}x (never < 1; target >= {TARGET_WORKERS}); "
                f"failed {counts['failed']:,}"
            )
        print(
            f"    load {_load()}; the machine's ceiling: two independent processes "
            f"{statistics.median(ceilings):.2f}x one (median of the rounds, {min(ceilings):.2f}"
            f"-{max(ceilings):.2f})"
        )
        path.unlink()


def _load() -> str:
    try:
        return f"{os.getloadavg()[0]:.2f} (1-min average, {os.cpu_count()} cores)"
    except OSError:
        return "unknown"


def measure(
    folder: Path, suite: Path, traces: int, per_line: int, bases: tuple[float, float]
) -> None:
    """One file of ``traces`` traces: write it, then the reader and eval-traces peaks.

    ``bases``: the imports-only peak (the reader's baseline) and the scenarios-loaded one.
    """
    imports, base = bases
    path = folder / "traces.json"
    start = time.perf_counter()
    write_file(path, traces, per_line)
    size_mb = os.path.getsize(path) / 1e6
    took = time.perf_counter() - start
    print(f"\nfile: {traces:,} traces, {size_mb:,.1f} MB ({took:.1f}s to write)")
    reader, reader_s, count = peak_rss_mb(CHILD_READER, str(path))
    print(
        f"reader (stream {count} traces): peak RSS {reader:7.1f} MB "
        f"(+{reader - imports:.1f} MB over imports only; file {size_mb:.0f} MB) in {reader_s:.1f}s"
    )
    report = folder / "report.json"
    full, full_s, _ = peak_rss_mb(CHILD_EVAL, str(path), str(suite), str(report), "--workers", "1")
    counts, listed = json_report_summary(report)
    print(
        f"eval-traces --json:            peak RSS {full:7.1f} MB "
        f"(+{full - base:.1f} MB over baseline) in {full_s:.1f}s; counts {counts}, "
        f"{listed:,} results in the JSON report"
    )
    junit, html = folder / "report.xml", folder / "report.html"
    extra = ["--workers", "1", "--junit-xml", str(junit), "--html", str(html)]
    every, every_s, _ = peak_rss_mb(CHILD_EVAL, str(path), str(suite), str(report), *extra)
    print(
        f"  ... --junit-xml --html:      peak RSS {every:7.1f} MB "
        f"(+{every - base:.1f} MB over baseline) in {every_s:.1f}s; reports "
        f"JSON {report.stat().st_size / 1e6:.0f} MB, JUnit {junit.stat().st_size / 1e6:.0f} MB, "
        f"HTML {html.stat().st_size / 1e6:.1f} MB"
    )
    path.unlink()


if __name__ == "__main__":
    main()
