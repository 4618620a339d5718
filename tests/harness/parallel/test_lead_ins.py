"""Slices with lead-ins give what one process gives, however the traces are laid out.

Random trace sets are written in random interleavings and batchings (as concurrent apps, the
SDK's processors and the Collector write them), with traces whose root never comes, late spans
of a completed trace, unreadable lines and bad spans, then scored with random worker counts,
slice sizes and lead-ins (small, so cuts fall inside traces and lead-ins fall short), with
traces far longer than any lead-in and files whose traces mostly or never complete, and with
the guards that read a file's rest in the parent set off: the results, their order, the
warnings, the ``-k`` count and the policy report are one process's (harness/parallel/traces.py).
Where each slice was scored (a worker or this process, again or not) is read from a log each
scoring writes as it starts: the lead-ins are sized from the first slice, and a file whose
cutting costs more than it saves is read on here, once.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.parallel import LocalPool
from harness.parallel import traces as traces_module
from harness.parallel.shards import fixed_sizes, iter_slices, shrinking_sizes
from harness.parallel.traces import evaluate_traces_in_workers
from harness.policies.load import load_policies
from harness.policies.report import PolicyReport
from harness.policies.run import PolicyPass
from harness.run.results import ScenarioResult, SuiteResult
from harness.scenarios import iter_scenarios, load_paths
from tests.support.paths import ROOT
from tracing.otlp.file_format import FileSlice

sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_eval_traces as bench  # the benchmark's own traces and policy


def _line(spans: list[dict[str, Any]]) -> str:
    scope = {"scope": {"name": "test"}, "spans": spans}
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "shop"}}]}
    return json.dumps({"resourceSpans": [{"resource": resource, "scopeSpans": [scope]}]}) + "\n"


def _written(
    seed: int,
    traces: int,
    per_line: int,
    first: int = 0,
    rootless: float = 0.15,
    slow: int = 0,
) -> str:
    """``traces`` bench traces, their spans merged in a random order (each trace's own in
    order, root last), ``1..per_line`` spans a line; about ``rootless`` of them rootless,
    some with a late span, an unreadable line and a bad span here and there; the first
    ``slow`` ones begin first and end last (far longer than any lead-in)."""
    rng = random.Random(seed)
    queues: list[list[dict[str, Any]]] = []
    for index in range(first, first + traces):
        spans = bench._trace(index)
        if rng.random() < rootless:
            spans = spans[:-1]  # its root lives in another service
        elif rng.random() < 0.1:
            late = dict(spans[0], spanId=f"{0xFF00 + index:016x}")
            spans = [*spans, late]  # a span after its root
        queues.append(spans)
    slows, queues = queues[:slow], queues[slow:]
    started: list[list[dict[str, Any]]] = []
    stream: list[dict[str, Any]] = []
    waiting = list(reversed(queues))
    while waiting or started:
        # a new request starts, or one in flight writes its next span
        if waiting and (not started or rng.random() < 0.3):
            started.append(waiting.pop())
        queue = rng.choice(started)
        stream.append(queue.pop(0))
        if not queue:
            started.remove(queue)
    out: list[str] = []
    while stream:
        size = rng.randint(1, per_line)
        batch, stream = stream[:size], stream[size:]
        if rng.random() < 0.03:
            batch = [*batch, {"traceId": "zz", "spanId": "1"}]  # a bad span
        out.append(_line(batch))
        if rng.random() < 0.02:
            out.append("{not json\n")
    head = [_line(spans[:1]) for spans in slows]
    return "".join(head + out + [_line(spans[1:]) for spans in slows if spans[1:]])


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any], Path]:
    folder = tmp_path_factory.mktemp("lead-ins")
    agent = folder / "noop_agent.py"
    agent.write_text("def build(model):\n    return None\n", encoding="utf-8")
    suite = folder / "bench.yaml"
    suite.write_text(bench.SUITE.format(agent=agent), encoding="utf-8")
    policy = folder / "policy.yaml"
    policy.write_text(bench.POLICY, encoding="utf-8")
    return folder, list(iter_scenarios(load_paths([suite]))), policy


def _run(
    paths: list[Path], scenarios: list[Any], policy: Path, workers: int, slice_bytes: int
) -> tuple[list[tuple[Any, ...]], SuiteResult, Any]:
    seen: list[ScenarioResult] = []
    report = PolicyReport(load_policies([str(policy)]), examples=50, per_trace=True)
    kept = {id(scenarios[0])}  # -k: the first scenario's traces only
    result = evaluate_traces_in_workers(
        [str(path) for path in paths],
        scenarios,
        executor=LocalPool(workers),
        progress=seen.append,
        selected=lambda scenario: id(scenario) in kept,
        slice_bytes=slice_bytes,
        policy=PolicyPass(report),
    )
    rows = [(r.trace_id, r.status, r.suite, r.name, r.source, r.reasons) for r in seen]
    return rows, result, report.to_json()


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 2**32 - 1),
    traces=st.integers(1, 40),
    per_line=st.sampled_from([1, 2, 4, 9]),
    files=st.integers(1, 2),
    workers=st.integers(2, 3),
    slice_bytes=st.integers(400, 6_000),
    lead_in=st.sampled_from([0, 300, 2_000, 20_000]),
    rootless=st.sampled_from([0.15, 0.15, 0.7, 1.0]),
    slow=st.integers(0, 2),
    first_bytes=st.sampled_from([1 << 20, 500]),
    guard=st.sampled_from(["default", "rootless", "short slices"]),
)
def test_any_layout_and_cuts_give_the_one_process_results(
    setup: tuple[Path, list[Any], Path],
    seed: int,
    traces: int,
    per_line: int,
    files: int,
    workers: int,
    slice_bytes: int,
    lead_in: int,
    rootless: float,
    slow: int,
    first_bytes: int,
    guard: str,
) -> None:
    """Also with traces far longer than any lead-in, files whose traces mostly or never
    complete, a small first slice, and the guards that read a file's rest in the parent
    (a few open traces, a lead-in longer than half a slice) set off early."""
    folder, scenarios, policy = setup
    paths = []
    for index in range(files):
        path = folder / f"t{seed}-{traces}-{per_line}-{index}-{rootless}-{slow}.jsonl"
        text = _written(seed + index, traces, per_line, rootless=rootless, slow=slow)
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("harness.parallel.shards.LEAD_IN_BYTES", lead_in)
        patch.setattr("harness.parallel.traces.FIRST_SLICE_BYTES", first_bytes)
        if guard == "rootless":
            patch.setattr("harness.parallel.traces._ROOTLESS", 3)
        elif guard == "short slices":  # a sized lead-in past half a slice: read on here
            patch.setattr("harness.parallel.shards.SLICE_BYTES", 4 * slice_bytes)
        many = _run(paths, scenarios, policy, workers, slice_bytes)
    one = _run(paths, scenarios, policy, 1, slice_bytes)
    assert many[0] == one[0]
    assert many[1].counts == one[1].counts
    assert many[1].warnings == one[1].warnings
    assert many[2] == one[2]


def test_interleaved_traces_are_cut_and_every_slice_past_the_first_has_a_lead_in(
    tmp_path: Path,
) -> None:
    """Where traces are always interleaved, the file is cut all the same."""
    path = tmp_path / "spans.jsonl"
    bench.write_layout(path, 2_000, "span-per-line-interleaved", 10)
    parts = list(iter_slices([path], lambda _left: 200_000))
    assert len(parts) > 10
    assert parts[0].lead_in is None
    lines = path.read_bytes().splitlines(keepends=True)
    for part in parts[1:]:
        assert part.lead_in is not None and part.lead_in < part.start
        skipped = sum(len(line) for line in lines[: part.lead_in_line - 1])
        assert skipped == part.lead_in  # the lead-in begins where its line does


def test_a_trace_longer_than_the_lead_in_grows_the_next_lead_ins(
    setup: tuple[Path, list[Any], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One slow request spans the whole file: each slice it is open over misses it, and only
    the last, which reports it, is scored again; the lead-in grows after a short one."""
    folder, scenarios, policy = setup
    slow = bench._trace(998)  # a "weather" trace: kept by -k
    path = folder / "slow.jsonl"
    lines = [_line([slow[0]])]
    lines += [_line(bench._trace(index)) for index in range(60)]
    lines += [_line(slow[1:])]
    path.write_text("".join(lines), encoding="utf-8")
    monkeypatch.setattr("harness.parallel.shards.LEAD_IN_BYTES", 1_000)
    assert len(list(iter_slices([path], shrinking_sizes(2)))) == 1  # (default sizes: whole)
    many = _run([path], scenarios, policy, 2, 2_000)
    one = _run([path], scenarios, policy, 1, 2_000)
    assert many[0] == one[0] and many[2] == one[2]
    assert many[0][-1][0] == slow[0]["traceId"]


@pytest.fixture
def scorings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[Scoring]]:
    """Every scoring of a slice, in a worker or in this process, as it starts: the reading
    each one ran (the workers are forked, so they log it too)."""
    log = tmp_path / "scorings.jsonl"
    real = traces_module.evaluate_traces

    def logged(paths: Any, *args: Any, **kwargs: Any) -> Any:
        part = paths[0]
        if isinstance(part, FileSlice):
            lead = 0 if part.lead_in is None else part.start - part.lead_in
            again = part.lead_ids is not None or bool(part.complete)
            row = [os.getpid(), part.first_line, part.line_count is None, lead, again]
            with log.open("a", encoding="utf-8") as fp:
                fp.write(json.dumps(row) + "\n")
        return real(paths, *args, **kwargs)

    monkeypatch.setattr(traces_module, "evaluate_traces", logged)

    def read() -> list[Scoring]:
        rows = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
        return [Scoring(*json.loads(row)) for row in rows]

    return read


class Scoring(NamedTuple):
    pid: int
    first_line: int
    to_the_end: bool
    lead_in: int
    again: bool
    """Scored again: with a lead-in of the open traces only, or the traces complete before."""


def test_the_first_slice_sizes_the_lead_ins_of_the_rest(
    setup: tuple[Path, list[Any], Path],
    monkeypatch: pytest.MonkeyPatch,
    scorings: Callable[[], list[Scoring]],
) -> None:
    """Traces spread over 25 kB of lines, lead-ins of 2 kB to start with: the first slice,
    scored here before any worker starts, sizes every later lead-in, so each covers the
    spread and no slice is scored again (the lead-in does not grow by misses)."""
    folder, scenarios, policy = setup
    path = folder / "spread.jsonl"
    bench.write_layout(path, 2_000, "span-per-line-interleaved", 10)
    monkeypatch.setattr("harness.parallel.shards.LEAD_IN_BYTES", 2_000)
    monkeypatch.setattr("harness.parallel.traces.FIRST_SLICE_BYTES", 30_000)
    many = _run([path], scenarios, policy, 2, 60_000)
    seen = scorings()
    one = _run([path], scenarios, policy, 1, 60_000)
    assert many[0] == one[0] and many[2] == one[2] and many[1].warnings == one[1].warnings
    assert len(seen) > 10 and seen[0].pid == os.getpid() and seen[0].first_line == 1
    assert not any(row.again for row in seen)
    spread = 33 * 739  # (lines from a trace's first span to its root) x (bytes a line)
    assert all(row.lead_in > spread for row in seen[1:])


def test_a_file_whose_traces_never_complete_is_read_on_here(
    setup: tuple[Path, list[Any], Path],
    monkeypatch: pytest.MonkeyPatch,
    scorings: Callable[[], list[Scoring]],
) -> None:
    """Every trace rootless: the last slice would read the whole file again, so once more
    than 20 are open the rest is read in this process, once, and the workers score no
    slice of it but those already in flight."""
    folder, scenarios, policy = setup
    path = folder / "rootless.jsonl"
    path.write_text(_written(3, 300, 2, rootless=1.0), encoding="utf-8")
    monkeypatch.setattr("harness.parallel.traces.FIRST_SLICE_BYTES", 5_000)
    monkeypatch.setattr("harness.parallel.traces._ROOTLESS", 20)
    cut = len(list(iter_slices([path], fixed_sizes(3_000), first_bytes=5_000)))
    many = _run([path], scenarios, policy, 2, 3_000)
    seen = scorings()
    one = _run([path], scenarios, policy, 1, 3_000)
    assert many[0] == one[0] and many[2] == one[2] and many[1].warnings == one[1].warnings
    assert len(many[0]) > 200  # (every trace is reported, at the end of the file)
    here = [row for row in seen if row.pid == os.getpid()]
    assert len(here) == 2 and here[0].first_line == 1 and here[1].to_the_end
    after = [row for row in seen if row.pid != os.getpid() and row.first_line > here[1].first_line]
    assert len(after) < 2 * 2  # (in flight when the rest was read here)
    assert len(seen) < cut / 2 and not any(row.again for row in seen if row.pid != os.getpid())


def test_a_lead_in_past_half_a_slice_reads_the_rest_here(
    setup: tuple[Path, list[Any], Path],
    monkeypatch: pytest.MonkeyPatch,
    scorings: Callable[[], list[Scoring]],
) -> None:
    """Traces spread over more than a quarter of a slice: each slice would read nearly twice
    its lines, so the file's rest is read in this process, right after its first slice."""
    folder, scenarios, policy = setup
    path = folder / "wide.jsonl"
    bench.write_layout(path, 1_000, "span-per-line-interleaved", 10)
    monkeypatch.setattr("harness.parallel.shards.SLICE_BYTES", 80_000)  # spread: 25 kB
    monkeypatch.setattr("harness.parallel.traces.FIRST_SLICE_BYTES", 60_000)
    many = _run([path], scenarios, policy, 2, 60_000)
    seen = scorings()
    one = _run([path], scenarios, policy, 1, 60_000)
    assert many[0] == one[0] and many[2] == one[2] and many[1].warnings == one[1].warnings
    here = [row for row in seen if row.pid == os.getpid()]
    assert len(here) == 2 and here[0].first_line == 1 and here[1].to_the_end
    assert seen == here  # (the first slice showed the spread: no worker scored a slice)


_CLOCKS = [
    (rb'"(started_at|duration|seconds)": [0-9.e+-]+', rb'"\1": 0'),
    (rb"in [0-9.]+ ?m?s\b", rb"in 0s"),
    (rb"took [0-9.]+s", rb"took 0s"),
    (rb"started [0-9-]+ [0-9:]+ UTC", rb"started 0 UTC"),
    (rb'(time|timestamp)="[^"]*"', rb'\1="0"'),
    (rb"[0-9.]+ traces/s", rb"0 traces/s"),
]


def _unclocked(data: bytes) -> bytes:
    for pattern, replacement in _CLOCKS:
        data = re.sub(pattern, replacement, data)
    return data


@pytest.mark.parametrize("layout", ["span-per-line-interleaved", "batches-interleaved"])
def test_the_command_writes_the_one_process_reports_on_interleaved_traces(
    layout: str,
    setup: tuple[Path, list[Any], Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--scenarios`` and ``--rules`` together: the JSON report, the console and the policy
    report of ``--workers 2`` are one process's byte for byte (but the clocks), on a file cut
    into many slices inside traces, with rootless traces, late spans and a bad line."""
    folder, _, policy = setup
    suite = folder / "bench.yaml"
    traces = tmp_path / f"{layout}.jsonl"
    bench.write_layout(traces, 600, layout, 10)
    lines = traces.read_text(encoding="utf-8").splitlines(keepends=True)
    extra = _written(7, 40, 3, 1_000)  # rootless traces, late spans, bad spans and lines
    traces.write_text("".join(lines[:50]) + extra + "".join(lines[50:]), encoding="utf-8")
    monkeypatch.setattr("harness.parallel.shards.SLICE_BYTES", 40_000)
    monkeypatch.setattr("harness.parallel.shards._MIN_SLICE_BYTES", 20_000)
    monkeypatch.setattr("harness.parallel.shards.LEAD_IN_BYTES", 8_000)
    assert len(list(iter_slices([traces], shrinking_sizes(2)))) > 10
    outputs = []
    for workers in ("1", "2"):
        (tmp_path / workers).mkdir()
        report = tmp_path / workers / "r.json"
        argv = ["eval-traces", str(traces), "--scenarios", str(suite), "--rules", str(policy)]
        code = main([*argv, "--json", str(report), "--workers", workers, "--examples", "20"])
        console = capsys.readouterr()
        shown = _unclocked(console.out.encode()).replace(str(report).encode(), b"REPORT")
        outputs.append((code, _unclocked(report.read_bytes()), shown))
    assert outputs[0][0] == 1  # failing traces, violations and unreadable lines
    assert b"arrives after the trace was complete" in outputs[0][1]
    assert b'"policies"' in outputs[0][1]
    assert outputs[1] == outputs[0]
