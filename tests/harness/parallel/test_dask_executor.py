"""eval-traces on a real Dask cluster gives what one process gives (harness/parallel/dask.py).

A ``distributed.LocalCluster`` of two worker processes is started and stopped here; the traces
come from a real run of the demo agents (``harness run scenarios/ --trace-file``) and from the
benchmark's generator cut into many slices with traces straddling the cuts. Workers die for
real (``os._exit`` in the worker process, as the out-of-memory killer ends one); the cluster
lets a task kill two workers before giving up on it (``allowed-failures: 1``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

distributed = pytest.importorskip("distributed")

import dask  # noqa: E402  (after the skip: the [dask] extra)

from harness.cli import main  # noqa: E402
from harness.errors import ExecutorError  # noqa: E402
from harness.parallel import WorkerLost, plan_slices  # noqa: E402
from harness.parallel.dask import DaskExecutor, scheduler_address  # noqa: E402
from harness.parallel.traces import evaluate_traces_in_workers  # noqa: E402
from harness.run.results import ScenarioResult  # noqa: E402
from harness.scenarios import iter_scenarios, load_paths  # noqa: E402
from harness.traces.evaluate import evaluate_traces  # noqa: E402
from tests.harness.parallel.test_eval_traces_workers import _lines, _suite, _unclocked  # noqa: E402
from tests.support.dying_jobs import DiesOnce, DiesOnSlice, sleeps, times_ten  # noqa: E402
from tests.support.paths import ROOT  # noqa: E402


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """Two single-threaded worker processes; a task is given up on once two workers holding it
    died (Dask's default is four: the tests that kill workers stay short)."""
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        local = distributed.LocalCluster(
            n_workers=2,
            processes=True,
            threads_per_worker=1,
            dashboard_address=":0",  # its HTTP server on a free port, no dashboard
            scheduler_kwargs={"dashboard": False},
            host="127.0.0.1",
        )
    try:
        yield local
    finally:
        local.close()


def _url(cluster: Any) -> str:
    return cluster.scheduler_address.replace("tcp://", "dask://")


_BASE_SUITES = {"travel", "orders", "calculator"}
"""The demo suites whose agents need no extra (``make test-lowest`` runs them at the floors);
the others need ``[langchain]``."""
_LANGCHAIN = importlib.util.find_spec("langchain") is not None


@pytest.fixture(scope="module")
def demo_traces(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The spans of a real run of the demo agents, a file per example suite (a run writes its
    spans as one request, one line: the files are the shards)."""
    folder = tmp_path_factory.mktemp("demo")
    files = []
    for suite in sorted((ROOT / "scenarios").glob("*.yaml")):
        if suite.name == "policies.yaml" or (suite.stem not in _BASE_SUITES and not _LANGCHAIN):
            continue
        files.append(folder / f"{suite.stem}.jsonl")
        with contextlib.redirect_stdout(io.StringIO()):
            main(["run", str(suite), "--trace-file", str(files[-1]), "-q"])
    assert len(files) >= 3 and all(path.stat().st_size > 10_000 for path in files)
    return files


def _reports(
    traces: Path | list[Path], suite: Path, folder: Path, *extra: str
) -> tuple[int, dict[str, bytes]]:
    """The exit code, and every report of one eval-traces run (console output included)."""
    folder.mkdir()
    paths = {"json": folder / "r.json", "junit-xml": folder / "r.xml", "html": folder / "r.html"}
    flags = [arg for name, path in paths.items() for arg in (f"--{name}", str(path))]
    console = io.StringIO()
    with contextlib.redirect_stdout(console):
        files = [str(path) for path in (traces if isinstance(traces, list) else [traces])]
        code = main(["eval-traces", *files, "--scenarios", str(suite), *flags, *extra])
    reports = {name: _unclocked(path.read_bytes()) for name, path in paths.items()}
    # the console's rule of '=' is as long as the clock leaves room for
    shown = re.sub(r"=+", "=", console.getvalue().replace(str(folder), "FOLDER"))
    reports["console"] = _unclocked(shown.encode())
    return code, reports


def test_the_demo_agents_traces_give_the_one_process_reports(
    cluster: Any, demo_traces: list[Path], tmp_path: Path
) -> None:
    suite = ROOT / "scenarios"
    one = _reports(demo_traces, suite, tmp_path / "one", "--workers", "1")
    assert one[0] == 0  # the demo's known mistakes are xfail scenarios
    assert one[1]["json"].count(b'"trace_id"') > 50 and b'"xfailed"' in one[1]["json"]
    assert b"xfailed" in one[1]["console"]
    on_dask = _reports(demo_traces, suite, tmp_path / "dask", "--executor", _url(cluster))
    assert on_dask == one


def test_rules_beside_scenarios_give_the_one_process_policy_report(
    cluster: Any, demo_traces: list[Path], tmp_path: Path
) -> None:
    suite, rules = ROOT / "scenarios", ["--rules", str(ROOT / "scenarios" / "policies.yaml")]
    one = _reports(demo_traces, suite, tmp_path / "one", "--workers", "1", *rules)
    policies = json.loads(one[1]["json"])["policies"]
    assert {p["policy"] for p in policies} >= {"orders-support", "refunds"}
    assert sum(rule["violations"] for p in policies for rule in p["rules"]) > 0
    assert b"orders-support" in one[1]["console"]
    on_dask = _reports(demo_traces, suite, tmp_path / "dask", "--executor", _url(cluster), *rules)
    assert on_dask == one


def test_rules_alone_give_the_one_process_policy_report(
    cluster: Any, demo_traces: list[Path], tmp_path: Path
) -> None:
    def policy_json(folder: str, *extra: str) -> tuple[int, Any]:
        path = tmp_path / f"{folder}.json"
        rules = ["--rules", str(ROOT / "scenarios" / "policies.yaml"), "--json", str(path)]
        with contextlib.redirect_stdout(io.StringIO()):
            code = main(["eval-traces", *map(str, demo_traces), *rules, *extra])
        return code, json.loads(_unclocked(path.read_bytes()))

    one = policy_json("one", "--workers", "1")
    assert sum(r["violations"] for p in one[1]["policies"] for r in p["rules"]) > 0
    assert policy_json("dask", "--executor", _url(cluster)) == one


def test_many_slices_with_traces_across_the_cuts_give_the_one_process_reports(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, suite = _suite(tmp_path)
    traces = tmp_path / "traces.json"
    traces.write_text("".join(_lines(True)), encoding="utf-8")  # a bad line, split traces
    monkeypatch.setattr("harness.parallel.shards.SLICE_BYTES", 3_000)
    monkeypatch.setattr("harness.parallel.shards._MIN_SLICE_BYTES", 1_500)
    assert len(plan_slices([traces], 3_000)) > 10
    link = ["--trace-url", "https://traces.example/{trace_id}"]
    one = _reports(traces, suite, tmp_path / "one", "--workers", "1", *link)
    assert one[0] == 1 and b"https://traces.example/" in one[1]["html"]
    assert _reports(traces, suite, tmp_path / "dask", "--executor", _url(cluster), *link) == one


def test_the_cli_starts_and_stops_a_local_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, suite = _suite(tmp_path)
    traces = tmp_path / "traces.json"
    traces.write_text("".join(_lines(False)), encoding="utf-8")
    monkeypatch.setattr("harness.parallel.shards.SLICE_BYTES", 3_000)
    monkeypatch.setattr("harness.parallel.shards._MIN_SLICE_BYTES", 1_500)
    started: list[DaskExecutor] = []
    local = DaskExecutor.local

    def spy(workers: int) -> DaskExecutor:
        started.append(local(workers))
        return started[-1]

    monkeypatch.setattr(DaskExecutor, "local", staticmethod(spy))
    one = _reports(traces, suite, tmp_path / "one", "--workers", "1")
    on_dask = _reports(traces, suite, tmp_path / "dask", "--executor", "dask", "--workers", "2")
    assert on_dask == one
    (executor,) = started
    assert executor.client.status == "closed"
    assert executor._cluster is not None and executor._cluster.status.name == "closed"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(params=["nothing listens", "accepts, never answers", "no workers"])
def dead_scheduler(request: pytest.FixtureRequest) -> Iterator[str]:
    """A port where nothing listens, a server that accepts and never says a word, or a real
    scheduler without a worker (tasks given to it would wait for ever)."""
    if request.param == "nothing listens":
        yield f"dask://127.0.0.1:{_free_port()}"
    elif request.param == "accepts, never answers":
        with socket.socket() as server:
            server.bind(("127.0.0.1", 0))
            server.listen(8)
            yield f"dask://127.0.0.1:{server.getsockname()[1]}"
    else:
        with distributed.LocalCluster(
            n_workers=0, dashboard_address=":0", scheduler_kwargs={"dashboard": False}
        ) as empty:
            yield _url(empty)


def test_an_unreachable_scheduler_is_one_error_naming_the_url(
    dead_scheduler: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr("harness.parallel.dask.CONNECT_SECONDS", 2.0)
    _, suite = _suite(tmp_path)
    traces = tmp_path / "traces.json"
    traces.write_text("".join(_lines(False)), encoding="utf-8")
    report = tmp_path / "r.json"
    argv = ["eval-traces", str(traces), "--scenarios", str(suite), "--json", str(report)]
    began = time.monotonic()
    assert main([*argv, "--executor", dead_scheduler]) == 2
    # the connect deadline, its grace second, and room for a loaded machine: never a hang
    assert time.monotonic() - began < 2.0 + 1.0 + 20.0
    err = capsys.readouterr().err
    (line,) = [line for line in err.splitlines() if line.strip()]
    assert line.startswith(f"--executor {dead_scheduler}: ")
    assert "no Dask scheduler answered" in line or "has no workers" in line
    assert "within 2s" in line
    assert not report.exists()


@pytest.mark.parametrize("url", ["dask://", "dask://host", "tcp://h:1", "dask://h:99999"])
def test_a_malformed_url_names_the_form_to_give(url: str) -> None:
    with pytest.raises(ExecutorError, match="give dask://HOST:PORT") as caught:
        scheduler_address(url)
    assert caught.value.url == url


def test_a_shard_that_kills_every_worker_it_runs_on_is_named(cluster: Any) -> None:
    client = distributed.Client(cluster, set_as_default=False)
    with DaskExecutor(client, "dask://cluster") as executor:
        session = executor.open(times_ten)
        futures = {shard: session.submit(shard) for shard in range(8)}
        with pytest.raises(WorkerLost) as lost:
            futures[3].result(timeout=120)
        assert lost.value.shard == 3
        assert str(lost.value) == (
            "Dask cluster dask://cluster: shard 3 was not scored: the 2 workers given its task "
            "all died (out of memory or killed: see the workers' logs)"
        )
        # a shard queued beside it on both dying workers may be given up on too, under its own
        # name; every other one is run again elsewhere and gives its result
        for shard, future in futures.items():
            if shard == 3:
                continue
            try:
                assert future.result(timeout=120) == shard * 10
            except WorkerLost as collateral:
                assert collateral.shard == shard and f"shard {shard} was not" in str(collateral)
        session.close()
    cluster.wait_for_workers(2, timeout=60)  # the nannies start new ones


def test_a_worker_that_dies_once_costs_no_result(cluster: Any, tmp_path: Path) -> None:
    client = distributed.Client(cluster, set_as_default=False)
    with DaskExecutor(client, "dask") as executor:
        session = executor.open(DiesOnce(str(tmp_path / "died")))
        futures = [session.submit(shard) for shard in range(8)]
        assert [future.result(timeout=120) for future in futures] == [
            shard * 10 for shard in range(8)
        ]
        session.close()
    assert (tmp_path / "died").exists()  # a worker did die, and its task ran again elsewhere
    cluster.wait_for_workers(2, timeout=60)


def test_scenarios_whose_agent_is_a_file_score_in_fresh_worker_processes(
    cluster: Any, tmp_path: Path
) -> None:
    """The agent factory lives in a module loaded from a file, which a worker process (spawned,
    or restarted by its nanny) does not have: the job must not need it."""
    _, suite = _suite(tmp_path)
    traces = tmp_path / "traces.json"
    traces.write_text("".join(_lines(True)), encoding="utf-8")
    scenarios = list(iter_scenarios(load_paths([suite])))  # runnable: the agent file imported
    assert scenarios[0].agent.factory.__module__.startswith("_harness_agent_")
    client = distributed.Client(cluster, set_as_default=False)
    client.restart(timeout=60)  # fresh processes, whatever earlier tests loaded in them
    seen: list[ScenarioResult] = []
    with DaskExecutor(client, "dask") as executor:
        many = evaluate_traces_in_workers(
            [traces], scenarios, executor=executor, progress=seen.append, slice_bytes=1_500
        )
    alone: list[ScenarioResult] = []
    one = evaluate_traces([traces], scenarios, progress=alone.append)
    assert seen == alone and many.counts == one.counts and many.warnings == one.warnings


def test_a_worker_dying_mid_run_names_the_slice_and_loses_no_trace(
    cluster: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, suite = _suite(tmp_path)
    traces = tmp_path / "traces.json"
    traces.write_text("".join(_lines(False)), encoding="utf-8")
    monkeypatch.setattr("harness.parallel.shards.SLICE_BYTES", 3_000)
    monkeypatch.setattr("harness.parallel.shards._MIN_SLICE_BYTES", 3_000)
    slices = plan_slices([traces], 3_000)
    assert len(slices) > 8
    poison = slices[len(slices) // 2].first_line
    one = _reports(traces, suite, tmp_path / "one", "--workers", "1")
    opened = DaskExecutor.open
    monkeypatch.setattr(
        DaskExecutor, "open", lambda self, job: opened(self, DiesOnSlice(job, poison))
    )
    capsys.readouterr()
    on_dask = _reports(traces, suite, tmp_path / "dask", "--executor", _url(cluster))
    warning = (
        f"the slice of {traces} from line {poison} was not scored: the 2 workers given its "
        "task all died (out of memory or killed: see the workers' logs); that slice was "
        "scored in this process instead, with the same results"
    )
    report, expected = json.loads(on_dask[1]["json"]), json.loads(one[1]["json"])
    # a line per slice given up on (one queued beside it on the dying workers may be too),
    # then the one-process warnings (the file's unreadable line)
    lost = [line for line in report["warnings"] if "was not scored" in line]
    assert any(line.endswith(warning) for line in lost)
    assert report["warnings"] == lost + expected["warnings"] and expected["warnings"]
    assert warning.encode() in on_dask[1]["console"]
    # every trace is reported, as one process reports it; only the warnings tell the difference
    assert on_dask[0] == one[0] == 1  # (the file holds failing traces and a bad line)
    same = {"warnings": [], "summary": ""}
    assert {**report, **same} == {**expected, **same}
    assert report["scenarios"] and report["counts"] == expected["counts"]
    cluster.wait_for_workers(2, timeout=60)


def test_tasks_on_a_cluster_left_without_workers_are_given_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # every worker gone and none restarted: the tasks would wait for ever; the watch gives
    # each up as WorkerLost (the caller then scores its shard itself)
    import harness.parallel.dask as dask_executor

    monkeypatch.setattr(dask_executor, "NO_WORKER_SECONDS", 2.0)
    monkeypatch.setattr(dask_executor, "_WATCH_SECONDS", 0.2)
    local = distributed.LocalCluster(
        n_workers=1,
        processes=True,
        threads_per_worker=1,
        dashboard_address=":0",
        scheduler_kwargs={"dashboard": False},
        host="127.0.0.1",
    )
    try:
        with DaskExecutor.connect(_url(local)) as executor:
            session = executor.open(sleeps)
            future = session.submit(30)
            time.sleep(1.0)
            local.scale(0)
            began = time.monotonic()
            with pytest.raises(WorkerLost) as lost:
                future.result(timeout=60)
            assert time.monotonic() - began < 30  # not the task's 30 s: it never ran again
            assert lost.value.shard == 30
            assert "the cluster had no worker for 2s" in str(lost.value)
            session.close()
    finally:
        local.close()
