"""``harness eval-traces --json`` on the local pool and on a Dask cluster: traces/s and peak RSS.

One trace file (the ``bench_eval_traces.py`` generator's, in one of its layouts) is scored by
the real command in a fresh interpreter each time, with:

* ``--workers 1`` (one process: the baseline every ratio is against, measured in the same run),
* ``--workers 2`` (the local pool: forked processes),
* ``--executor dask://...`` on a ``distributed.LocalCluster`` of 1, then 2 single-threaded
  worker processes. The clusters are started once, before any timing, and the command
  connects to them as it would to a remote scheduler (the connect is in the timing: a user
  pays it).

Rounds run every configuration once, in turn, so a slow phase of a shared machine lands on all
of them; the median of the rounds is printed, with the load average. Peak RSS: the command's
process (VmHWM), the largest local pool worker, and each Dask worker's high-water mark at the
end (workers live across the rounds).

    .venv/bin/python benchmarks/bench_executors.py [--traces 20000] [--layout whole] [--rounds 3]
    .venv/bin/python benchmarks/bench_executors.py --quick

Needs the ``[dask]`` extra (``distributed``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_eval_traces import CHILD_ENV, SUITE, write_file  # the same traces and suite

ROOT = Path(__file__).resolve().parents[1]

# The command in a fresh interpreter: its seconds (imports left out), then the peak RSS of this
# process and of its largest waited-for child (the local pool's workers), in KiB.
CHILD = """
import contextlib, os, resource, sys, time
from harness.cli import build_parser, main
build_parser()  # its lazy imports, so the clock sees the command's own work
start = time.perf_counter()
with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
    code = main(["eval-traces", sys.argv[1], "--scenarios", sys.argv[2], "--json", sys.argv[3],
                 *sys.argv[4:]])
seconds = time.perf_counter() - start
with open("/proc/self/status") as status:
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
print(code, seconds, peak, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def _hwm_kb() -> int:
    """This process's peak RSS in KiB (run in each Dask worker)."""
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))


def _run(path: Path, suite: Path, report: Path, extra: list[str]) -> tuple[float, int, int]:
    """One command: (seconds, its peak RSS KiB, its largest child's KiB)."""
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(suite), str(report), *extra],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=CHILD_ENV,
        timeout=1800,
        check=False,
    )
    if proc.returncode != 0 or not proc.stdout.strip():
        raise SystemExit(f"eval-traces {' '.join(extra)} failed:\n{proc.stderr[-3000:]}")
    code, seconds, peak, child = proc.stdout.split()
    if code not in ("0", "1"):  # 1: the bench file holds failing traces, as it should
        raise SystemExit(f"eval-traces {' '.join(extra)} exited {code}:\n{proc.stderr[-3000:]}")
    return float(seconds), int(peak), int(child)


def _load() -> str:
    try:
        return f"{os.getloadavg()[0]:.2f} (1-min average, {os.cpu_count()} cores)"
    except OSError:
        return "unknown"


def _cluster(distributed: Any, workers: int) -> Any:
    return distributed.LocalCluster(
        n_workers=workers,
        processes=True,
        threads_per_worker=1,
        dashboard_address=":0",
        scheduler_kwargs={"dashboard": False},
        host="127.0.0.1",
    )


def main(argv: list[str] | None = None) -> None:
    """Write the file, start the clusters, time every configuration, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=20_000)
    parser.add_argument("--per-line", type=int, default=10)
    parser.add_argument(
        "--layout", default="whole", help="a bench_eval_traces.LAYOUTS name (default whole)"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="2,000 traces, one round")
    args = parser.parse_args(argv)
    traces, rounds = (2_000, 1) if args.quick else (args.traces, args.rounds)
    try:
        import distributed
    except ImportError:
        raise SystemExit("needs Dask distributed: pip install -e '.[dask]'") from None
    with tempfile.TemporaryDirectory(prefix="bench-executors-") as tmp:
        folder = Path(tmp)
        agent = folder / "noop_agent.py"
        agent.write_text("def build(model):\n    return None\n", encoding="utf-8")
        suite = folder / "bench.yaml"
        suite.write_text(SUITE.format(agent=agent), encoding="utf-8")
        path = folder / f"{args.layout}.json"
        if args.layout == "whole":
            write_file(path, traces, args.per_line)
        else:
            import bench_eval_traces

            bench_eval_traces.write_layout(path, traces, args.layout, args.per_line)
        report = folder / "report.json"
        clusters = [_cluster(distributed, 1), _cluster(distributed, 2)]
        try:
            urls = [c.scheduler_address.replace("tcp://", "dask://") for c in clusters]
            configs = [
                ("local pool, --workers 1", ["--workers", "1"]),
                ("local pool, --workers 2", ["--workers", "2"]),
                ("Dask, 1 worker", ["--executor", urls[0]]),
                ("Dask, 2 workers", ["--executor", urls[1]]),
            ]
            size = path.stat().st_size / 1e6
            print(
                f"eval-traces --json, {traces:,} traces ({size:.0f} MB, layout {args.layout}), "
                f"median of {rounds} interleaved round(s), load {_load()} before"
            )
            runs: list[list[tuple[float, int, int]]] = [[] for _ in configs]
            for _ in range(rounds):
                for index, (_, extra) in enumerate(configs):
                    runs[index].append(_run(path, suite, report, extra))
            print(f"load {_load()} after")
            base = statistics.median(seconds for seconds, _, _ in runs[0])
            for (label, _), measured in zip(configs, runs, strict=True):
                seconds = statistics.median(s for s, _, _ in measured)
                peak = max(p for _, p, _ in measured) / 1024
                child = max(c for _, _, c in measured) / 1024
                workers = (
                    f", largest worker {child:6.1f} MB" if "pool, --workers 2" in label else ""
                )
                print(
                    f"  {label:<24} {traces / seconds:>9,.0f} traces/s  {base / seconds:5.2f}x "
                    f"--workers 1  ({seconds:.2f} s; command peak RSS {peak:6.1f} MB{workers})"
                )
            for label, cluster in zip(("1 worker", "2 workers"), clusters, strict=True):
                with distributed.Client(cluster, set_as_default=False) as client:
                    peaks = client.run(_hwm_kb)
                shown = ", ".join(f"{kb / 1024:.1f}" for kb in peaks.values())
                print(f"  Dask {label} peak RSS (MB, each worker, over the rounds): {shown}")
        finally:
            for cluster in clusters:
                cluster.close()


if __name__ == "__main__":
    main()
