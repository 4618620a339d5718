"""``harness eval-traces`` on real producers' traces, written one span a line (issue 27, item 6).

Seeds: each producer (a real framework with its real instrumentation, run against the local
OpenAI-compatible stand-in: tests/support/producer_run.py, tests/support/producer_frameworks.py)
runs the cases of tests/support/producer_cases.py once, in its own process (instrumentors patch
globally); its spans go through a real SDK pipeline (``SimpleSpanProcessor``) to an OTLP JSON
file, one span a line. The header prints, per producer, the traces and tool calls the reader
recovers from that file against what the run really produced and the tools really executed
(their ledger).

Files: each producer's seed traces replicated to ``--size`` MB with fresh trace and span ids
(parent links rewritten, conversation ids made fresh per copy, timestamps shifted), in the two
layouts of :data:`LAYOUTS`, in a temporary folder (never the repository), plus a policy file
(:data:`POLICY`) and a scenario file (:data:`SUITE`) that apply to every trace.

Timing, in rounds (each round runs every command once per file, so a slow phase of a shared
machine lands on both sides of a ratio), each a fresh child timing its own work (interpreter
start and imports left out): the bare :class:`~tracing.otlp.reader.OtlpJsonReader` (the
baseline), then ``harness eval-traces FILE --json OUT`` with ``--rules POLICY`` and with
``--scenarios SUITE --scenario calc``, each with ``--workers 1`` and ``--workers 2``. Prints per
file its size and traces, traces/s of each command (median of the rounds, or the best of two),
the ratio of ``--workers 2`` to ``--workers 1`` and of each command to the reader, and peak RSS
(the command's process, and its largest pool worker). The JSON reports of ``--workers 1`` and
``--workers 2`` must be equal but for timing fields: a ``MISMATCH`` line says where they differ.
``--baseline DIR``: the ``eval-traces`` commands run with that checkout's code too (``git
archive main | tar -x -C DIR``), in the same rounds, its figures printed as ``before:``.

    .venv/bin/python benchmarks/bench_producers.py [--size MB] [--quick] [--rounds N]
        [--producers NAME [NAME ...]] [--layouts LAYOUT [LAYOUT ...]] [--keep DIR]
        [--baseline DIR]
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # tests.support: the producers and their stand-in
    sys.path.insert(0, str(ROOT))

LANGGRAPH = "langgraph-openinference"
DEFAULT_PRODUCERS = (LANGGRAPH, "pydantic-ai", "agents-openinference", "openai-loop", "smolagents")
"""LangGraph (LangChain v1's ``create_agent``) under OpenInference, and four of
tests/support/producer_frameworks.py's PRODUCERS; ``--producers`` takes any of them."""

LAYOUTS = ("span-per-line", "span-per-line-interleaved")
"""``span-per-line``: each span a line when it ends, one request at a time (what
``SimpleSpanProcessor`` writes for a sequential app: the seed run's own order, copied);
``span-per-line-interleaved``: the same with about :data:`IN_FLIGHT` requests served at once
(the spans of overlapping traces alternate across lines)."""
IN_FLIGHT = 12

# A few rules over the cases' tools, applied to every producer's traces (the agent is named
# "calc" by most frameworks, not by smolagents or LlamaIndex, so the policies select otherwise).
POLICY = """policies:
  - name: calculator
    select: {service: "producers-*"}
    rules:
      - {name: known tools, allow: [add, lookup, get_order, explode]}
      - {name: never explode, forbid: explode, max_rate: 0.5}
      - {name: lookup before fetch, before: {first: lookup, then: get_order}}
      - {name: no loops, max_repeats: 1}
      - {name: budget, budget: {tool_calls: 3}}
  - name: orders
    select: {uses_tool: get_order}
    rules:
      - {name: order ids grounded, grounded: {tool: get_order, args: [order_id]}}
      - {name: one fetch, max_calls: {tool: get_order, max: 1}}
"""
SUITE = """suite: producers
agent: {agent}:build
model: {{provider: demo}}
scenarios:
  - name: calc
    input: Add 2 and 3.
    expect:
      tool_calls: [{{name: add, args: {{a: 2, b: 3}}}}]
      forbid: [explode]
"""
"""Every trace scored against one scenario (``--scenario calc``): the scenario path."""

COMMANDS: dict[str, list[str]] = {
    "rules, --workers 1": ["--rules", "{policy}", "--workers", "1"],
    "rules, --workers 2": ["--rules", "{policy}", "--workers", "2"],
    "scenario, --workers 1": ["--scenarios", "{suite}", "--scenario", "calc", "--workers", "1"],
    "scenario, --workers 2": ["--scenarios", "{suite}", "--scenario", "calc", "--workers", "2"],
}
"""Each ``eval-traces`` command timed, after ``FILE --json OUT -q``."""

_PEAK = (
    "import resource\n"
    "peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "try:\n"
    "    with open('/proc/self/status') as status:\n"
    "        peak = next(int(l.split()[1]) for l in status if l.startswith('VmHWM:'))\n"
    "except (OSError, StopIteration):\n"
    "    pass\n"
    "print('peak_kb', peak, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)
"""The child's own high-water mark (VmHWM: after fork + exec, ru_maxrss would carry the
parent's) and its largest reaped child's (the pool's workers)."""
CHILD_READER = (
    "import sys, time\nfrom tracing.otlp.reader import OtlpJsonReader\n"
    "start = time.perf_counter()\n"
    "count = sum(1 for _ in OtlpJsonReader(sys.argv[1]).iter_traces())\n"
    "print(count, time.perf_counter() - start)\n"
)
CHILD_EVAL = (
    "import contextlib, os, sys, time\nfrom harness.cli import build_parser, main\n"
    "import harness.cli.eval_traces, harness.traces.evaluate, harness.parallel.traces\n"
    "build_parser()  # its lazy imports, so the clock sees the command's own work\n"
    "start = time.perf_counter()\n"
    "with open(os.devnull, 'w') as devnull, contextlib.redirect_stdout(devnull):\n"
    "    code = main(['eval-traces', *sys.argv[1:]])\n"
    "print(code, time.perf_counter() - start)\n"
)
CHILD_SEED = (
    "import json, sys\nfrom pathlib import Path\n"
    "from tests.support.producer_run import run_all\n"
    "document = run_all(sys.argv[1], Path(sys.argv[2]))\n"
    "sys.stdout.write(json.dumps(document, default=str) + '\\n')\n"
)
TIMING_KEYS = frozenset({"started_at", "duration", "summary"})
"""The JSON report's top-level fields that time the run (``summary`` ends "in 0.04s")."""


# --- seeds ------------------------------------------------------------------------------------


@dataclass
class Seed:
    """One producer's seed run: its span file and what ran."""

    producer: str
    path: Path
    document: dict[str, Any]
    seconds: float = 0.0
    units: list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = field(default_factory=list)


def run_seed(producer: str, folder: Path) -> Seed:
    """Run ``producer``'s cases in a fresh process; keep its span file in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [sys.executable, "-c", CHILD_SEED, producer, str(folder)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=900,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(
            f"seed run of {producer} failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
        )
    document = json.loads(proc.stdout.strip().splitlines()[-1])
    seed = Seed(producer, folder / "spans.jsonl", document)
    seed.units = list(_units(seed.path))
    return seed


def _units(path: Path) -> Iterator[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """(resource, scope, span) of every span of an OTLP JSON lines file, in file order."""
    with path.open(encoding="utf-8") as fp:
        for line in fp:
            if not line.strip():
                continue
            for block in json.loads(line).get("resourceSpans", []):
                resource = block.get("resource", {})
                for scoped in block.get("scopeSpans", []):
                    for span in scoped.get("spans", []):
                        yield resource, scoped.get("scope", {}), span


EXECUTED = ("ok", "error")
"""Reader statuses of a call that ran (``requested``, ``invalid``: asked for, never run)."""


def recovery(seed: Seed, reader_traces: int) -> str:
    """What the reader recovers from the seed file against what ran: traces, executed calls
    matched to the tools' own ledger by name and arguments, and the calls the model asked for
    that never ran (a tool the agent lacks, arguments that are not JSON); the cases that
    differ, named."""
    from tests.support.producer_cases import CASES

    runs = seed.document["runs"]
    totals = Counter[str]()
    differ = []
    for run in runs:
        ledger = Counter(json.dumps([n, a], sort_keys=True) for n, a, _, _ in run["ledger"])
        read = Counter(
            json.dumps([n, a], sort_keys=True)
            for n, a, status, *_ in run["reader"]
            if status in EXECUTED
        )
        not_run = sum(1 for _, _, status, *_ in run["reader"] if status not in EXECUTED)
        asked = len(CASES[run["case"]].scripted_calls()) - len(run["ledger"])
        counts = {
            "traces made": run["traces"],
            "executed": sum(ledger.values()),
            "read as run": sum(read.values()),
            "matched": sum((ledger & read).values()),
            "never run": asked,
            "read as not run": not_run,
            "raised": 1 if run["raised"] else 0,
        }
        totals.update(counts)
        if ledger != read or asked != not_run:
            differ.append(
                f"{run['case']} (ran {sum(ledger.values())}, read {sum(read.values())} as run; "
                f"{asked} never ran, read {not_run})"
            )
    return (
        f"{seed.producer:<26} {len(runs)} turns ({totals['raised']} raised into the app): "
        f"traces made {totals['traces made']}, read {reader_traces}; tool executions "
        f"{totals['executed']}, read as run {totals['read as run']} ({totals['matched']} match "
        f"the ledger by name and arguments); asked for by the model and never run "
        f"{totals['never run']}, read as requested/invalid {totals['read as not run']}"
        + (f"; differs in: {', '.join(differ)}" if differ else "; every case exact")
    )


# --- replication ------------------------------------------------------------------------------


def _conversation_keys() -> frozenset[str]:
    from tracing.otel.conventions import CONVERSATION_KEYS

    return frozenset(CONVERSATION_KEYS)


@dataclass
class Copier:
    """Copies of a seed's traces with fresh ids: every id of one copy rewritten consistently."""

    seed: Seed
    rng: random.Random
    keys: frozenset[str] = field(default_factory=_conversation_keys)

    def traces(self) -> list[list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]]:
        """The seed's traces, each its spans in file (end) order, in the order they started."""
        by_trace: dict[str, list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]] = {}
        for unit in self.seed.units:
            by_trace.setdefault(unit[2]["traceId"], []).append(unit)
        return sorted(by_trace.values(), key=lambda spans: min(_start(s) for _, _, s in spans))

    def copy(
        self,
        units: list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]],
        shift: int,
        ids: dict[str, str],
    ) -> list[tuple[int, str]]:
        """(end time, the line) of each span of ``units`` shifted by ``shift`` ns, with the ids
        of ``ids`` (old -> new, filled as met: one map per copy keeps links consistent)."""
        lines = []
        for resource, scope, span in units:
            new = dict(span)
            new["traceId"] = self._id(ids, span["traceId"], 16)
            new["spanId"] = self._id(ids, span["spanId"], 8)
            if span.get("parentSpanId"):
                new["parentSpanId"] = self._id(ids, span["parentSpanId"], 8)
            end = int(span["endTimeUnixNano"]) + shift
            new["startTimeUnixNano"] = str(int(span["startTimeUnixNano"]) + shift)
            new["endTimeUnixNano"] = str(end)
            if span.get("events"):
                new["events"] = [
                    {**e, "timeUnixNano": str(int(e["timeUnixNano"]) + shift)}
                    for e in span["events"]
                ]
            if span.get("links"):
                new["links"] = [self._link(ids, link) for link in span["links"]]
            attributes = span.get("attributes") or []
            if any(a["key"] in self.keys for a in attributes):
                new["attributes"] = [self._conversation(ids, a) for a in attributes]
            request = {
                "resourceSpans": [
                    {"resource": resource, "scopeSpans": [{"scope": scope, "spans": [new]}]}
                ]
            }
            lines.append((end, json.dumps(request, separators=(",", ":"))))
        return lines

    def _id(self, ids: dict[str, str], old: str, size: int) -> str:
        new = ids.get(old)
        if new is None:
            new = ids[old] = self.rng.randbytes(size).hex()
        return new

    def _link(self, ids: dict[str, str], link: dict[str, Any]) -> dict[str, Any]:
        if link.get("traceId") not in ids:  # a link out of the copied traces stays as it was
            return link
        return {**link, "traceId": ids[link["traceId"]], "spanId": self._id(ids, link["spanId"], 8)}

    def _conversation(self, ids: dict[str, str], attribute: dict[str, Any]) -> dict[str, Any]:
        value = attribute.get("value", {}).get("stringValue")
        if attribute["key"] not in self.keys or value is None:
            return attribute
        key = f"conversation:{value}"
        if key not in ids:
            ids[key] = str(uuid.UUID(bytes=self.rng.randbytes(16)))
        return {"key": attribute["key"], "value": {"stringValue": ids[key]}}


def _start(span: dict[str, Any]) -> int:
    return int(span["startTimeUnixNano"])


def _end(span: dict[str, Any]) -> int:
    return int(span["endTimeUnixNano"])


def write_layout(seed: Seed, path: Path, layout: str, size_mb: float) -> int:
    """Write ``seed``'s traces copied to ``size_mb`` MB in ``layout``; return the traces."""
    copier = Copier(seed, random.Random(f"{seed.producer}/{layout}"))
    traces = copier.traces()
    starts = [min(_start(s) for _, _, s in spans) for spans in traces]
    window = max(_end(s) for _, _, s in seed.units) - min(starts) + 1_000_000
    mean = sum(
        max(_end(s) for _, _, s in spans) - start
        for spans, start in zip(traces, starts, strict=True)
    ) // len(traces)
    limit, written, count = size_mb * 1e6, 0, 0
    heap: list[tuple[int, int, str]] = []
    order = 0
    with path.open("w", encoding="utf-8") as fp:
        copy = 0
        while written < limit:
            ids: dict[str, str] = {}  # one map per copy of the seed run: its conversations too
            for spans, start in zip(traces, starts, strict=True):
                if layout == "span-per-line":  # the seed run again, after the previous copy
                    shift = copy * window
                else:  # each request starts mean / IN_FLIGHT after the previous one
                    shift = count * max(mean // IN_FLIGHT, 1) - (start - starts[0])
                lines = copier.copy(spans, shift, ids)
                count += 1
                if layout == "span-per-line":
                    for _, line in lines:
                        written += fp.write(line + "\n")
                    continue
                begin = starts[0] + count * max(mean // IN_FLIGHT, 1)
                while heap and heap[0][0] <= begin:
                    written += fp.write(heapq.heappop(heap)[2] + "\n")
                for end, line in lines:
                    heapq.heappush(heap, (end, order, line))
                    order += 1
            copy += 1
        while heap:
            written += fp.write(heapq.heappop(heap)[2] + "\n")
    return count


# --- timing -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Measure:
    """One child's run: seconds of its own work, its first output field, its peaks in MB."""

    seconds: float
    first: str
    peak_mb: float
    worker_mb: float


def child(code: str, *args: str, tree: Path = ROOT) -> Measure:
    """Run ``code`` in a fresh interpreter from ``tree``'s root (its code imported first)."""
    proc = subprocess.run(
        [sys.executable, "-c", code + _PEAK, *args],
        capture_output=True,
        text=True,
        cwd=tree,
        env={key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"},
        check=False,
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or len(lines) < 2:
        raise SystemExit(f"child failed ({proc.returncode}): {args}\n{proc.stderr[-3000:]}")
    first, seconds = lines[0].split()
    _, own, workers = lines[-1].split()
    return Measure(float(seconds), first, int(own) / 1024, int(workers) / 1024)


def comparable(report: dict[str, Any]) -> dict[str, Any]:
    """The report without the fields that time the run."""
    return {key: value for key, value in report.items() if key not in TIMING_KEYS}


def first_difference(a: Any, b: Any, where: str = "$") -> str | None:
    """Where two JSON values first differ (a JSON path), or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(a.keys() | b.keys()):
            if key not in a or key not in b:
                return f"{where}.{key}: only in {'--workers 2' if key in b else '--workers 1'}"
            found = first_difference(a[key], b[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for index, (x, y) in enumerate(zip(a, b, strict=False)):
            found = first_difference(x, y, f"{where}[{index}]")
            if found:
                return found
        return None if len(a) == len(b) else f"{where}: {len(a)} items vs {len(b)}"
    return None if a == b else f"{where}: {a!r:.120} vs {b!r:.120}"


def load() -> str:
    """``uptime``'s load averages and the cores."""
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f} (1/5/15 min, {os.cpu_count()} cores)"


@dataclass
class FileRun:
    """One file's figures over the rounds."""

    producer: str
    layout: str
    path: Path
    traces: int
    times: dict[str, list[float]] = field(default_factory=dict)
    peaks: dict[str, tuple[float, float]] = field(default_factory=dict)
    counted: str = ""
    mismatches: list[str] = field(default_factory=list)


def one_round(
    run: FileRun, folder: Path, policy: Path, suite: Path, trees: dict[str, Path]
) -> None:
    """Every command once on ``run``'s file (with each of ``trees``' code: label prefix ->
    checkout); the --workers 1 and 2 reports compared."""
    measured = child(CHILD_READER, str(run.path))
    run.times.setdefault("reader", []).append(measured.seconds)
    run.counted = measured.first
    run.peaks["reader"] = _max_peaks(run.peaks.get("reader"), measured)
    reports: dict[str, Any] = {}
    for label, extra in COMMANDS.items():
        for prefix, tree in trees.items():
            out = folder / f"{label.split(',')[0]}-{label[-1]}.json"
            args = [a.format(policy=policy, suite=suite) for a in extra]
            measured = child(CHILD_EVAL, str(run.path), "--json", str(out), "-q", *args, tree=tree)
            named = prefix + label
            run.times.setdefault(named, []).append(measured.seconds)
            run.peaks[named] = _max_peaks(run.peaks.get(named), measured)
            reports[named] = comparable(json.loads(out.read_text(encoding="utf-8")))
            out.unlink()
    for prefix in trees:
        for mode in ("rules", "scenario"):
            one, two = (reports[f"{prefix}{mode}, --workers {n}"] for n in (1, 2))
            found = first_difference(one, two)
            if found:
                run.mismatches.append(f"{prefix}{mode}: {found}")


def _max_peaks(old: tuple[float, float] | None, measured: Measure) -> tuple[float, float]:
    if old is None:
        return measured.peak_mb, measured.worker_mb
    return max(old[0], measured.peak_mb), max(old[1], measured.worker_mb)


def summary(times: list[float]) -> float:
    """The median of three or more rounds, else the best."""
    return statistics.median(times) if len(times) >= 3 else min(times)


def report(run: FileRun, prefixes: list[str]) -> None:
    """Print ``run``'s figures (each tree's, by label prefix)."""
    size = run.path.stat().st_size / 1e6
    reader = summary(run.times["reader"])
    print(
        f"\n{run.producer} / {run.layout}: {size:.0f} MB, {run.traces:,} traces "
        f"(the reader counted {run.counted}), {len(run.times['reader'])} round(s)"
    )
    peak, _ = run.peaks["reader"]
    print(
        f"  {'reader alone (the baseline)':<24} {run.traces / reader:>8,.0f} traces/s "
        f"{reader:6.2f}s  peak RSS {peak:5.0f} MB"
    )
    for label in (prefix + label for label in COMMANDS for prefix in prefixes):
        seconds = summary(run.times[label])
        peak, worker = run.peaks[label]
        workers = ""
        if label.endswith("2"):  # no reaped child: the command scored in its own process
            workers = f" + largest worker {worker:.0f} MB" if worker else " (no worker process)"
        print(
            f"  {label:<32} {run.traces / seconds:>8,.0f} traces/s {seconds:6.2f}s  "
            f"{seconds / reader:4.2f}x the reader's time  peak RSS {peak:5.0f} MB{workers}"
        )
    for mode in ("rules", "scenario"):
        for prefix in prefixes:
            one, two = (summary(run.times[f"{prefix}{mode}, --workers {n}"]) for n in (1, 2))
            verdict = "SLOWER than one process" if two > one else "faster"
            print(
                f"  {prefix}{mode}: --workers 2 / --workers 1 = {one / two:.2f}x the speed "
                f"({verdict})"
            )
    for mismatch in run.mismatches:
        print(f"  MISMATCH --workers 1 vs --workers 2 reports: {mismatch}")
    if not run.mismatches:
        print("  reports equal: --workers 1 and --workers 2 (timing fields left out)")


def main() -> None:
    """Seed, replicate, time, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=float, default=100.0, help="MB per file (default 100)")
    parser.add_argument("--quick", action="store_true", help="10 MB files")
    parser.add_argument("--rounds", type=int, default=0, help="default: 3, or 2 above 150 MB")
    parser.add_argument("--producers", nargs="+", default=list(DEFAULT_PRODUCERS))
    parser.add_argument("--layouts", nargs="+", choices=LAYOUTS, default=list(LAYOUTS))
    parser.add_argument("--keep", type=Path, help="write the files here and keep them")
    parser.add_argument("--baseline", type=Path, help="a checkout to time too ('before:')")
    args = parser.parse_args()
    size = 10.0 if args.quick else args.size
    rounds = args.rounds or (2 if size > 150 else 3)
    trees = {"": ROOT}
    if args.baseline:
        trees = {"before: ": args.baseline.resolve(), **trees}
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        bench(args.keep, args.producers, args.layouts, size, rounds, trees)
        return
    with tempfile.TemporaryDirectory(prefix="bench-producers-") as tmp:
        bench(Path(tmp), args.producers, args.layouts, size, rounds, trees)


def bench(
    folder: Path,
    producers: list[str],
    layouts: list[str],
    size: float,
    rounds: int,
    trees: dict[str, Path],
) -> None:
    """Seed each producer, write its files, time every command on them (with each tree's
    code)."""
    from tracing.otlp.reader import OtlpJsonReader

    print(f"seeds: each producer's cases run once against the stand-in; {load()}")
    print("what the reader recovers from each seed file against what ran:")
    seeds = []
    for producer in producers:
        seed = run_seed(producer, folder / "seeds" / producer)
        seeds.append(seed)
        read = sum(1 for _ in OtlpJsonReader(seed.path).iter_traces())
        print(f"  {recovery(seed, read)}")
    policy, suite, agent = folder / "policy.yaml", folder / "suite.yaml", folder / "noop_agent.py"
    policy.write_text(POLICY, encoding="utf-8")
    agent.write_text("def build(model):\n    return None\n", encoding="utf-8")
    suite.write_text(SUITE.format(agent=agent), encoding="utf-8")
    runs = []
    for seed in seeds:
        for layout in layouts:
            path = folder / f"{seed.producer}.{layout}.jsonl"
            runs.append(
                FileRun(seed.producer, layout, path, write_layout(seed, path, layout, size))
            )
    print(
        f"\n{len(runs)} files of about {size:.0f} MB in {folder}; {rounds} rounds, each running "
        f"every command once per file; timed inside each fresh child; {load()}"
    )
    for index in range(rounds):
        for run in runs:
            one_round(run, folder, policy, suite, trees)
            print(f"  round {index + 1}: {run.path.name} done", file=sys.stderr, flush=True)
        print(f"  round {index + 1} done; {load()}", flush=True)
    for run in runs:
        report(run, list(trees))
    print(f"\n{load()}")


if __name__ == "__main__":
    main()
