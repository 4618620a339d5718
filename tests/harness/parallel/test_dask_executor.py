"""eval-traces on a real Dask cluster gives what one process gives (harness/parallel/dask.py).

A ``distributed.LocalCluster`` of two worker processes is started and stopped here; the traces
come from a real run of the demo agents (``harness run scenarios/ --trace-file``) and from the
benchmark's generator cut into many slices with traces straddling the cuts.
"""

from __future__ import annotations

import contextlib
import io
import os
import socket
import threading
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
from tests.support.paths import ROOT  # noqa: E402


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """Two single-threaded worker processes; a task whose worker dies fails at once (so the
    test of a lost worker needs one death, not four)."""
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        local = distributed.LocalCluster(
            n_workers=2,
            processes=True,
            threads_per_worker=1,
            dashboard_address=None,
            host="127.0.0.1",
        )
    try:
        yield local
    finally:
        local.close()


def _url(cluster: Any) -> str:
    return cluster.scheduler_address.replace("tcp://", "dask://")


@pytest.fixture(scope="module")
def demo_traces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The spans of a real run of the demo agents over the example scenarios."""
    traces = tmp_path_factory.mktemp("demo") / "spans.jsonl"
    with contextlib.redirect_stdout(io.StringIO()):
        main(["run", str(ROOT / "scenarios"), "--trace-file", str(traces), "-q"])
    assert traces.stat().st_size > 100_000
    return traces


def _reports(traces: Path, suite: Path, folder: Path, *extra: str) -> tuple[int, dict[str, bytes]]:
    folder.mkdir()
    paths = {"json": folder / "r.json", "junit-xml": folder / "r.xml", "html": folder / "r.html"}
    flags = [arg for name, path in paths.items() for arg in (f"--{name}", str(path))]
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["eval-traces", str(traces), "--scenarios", str(suite), *flags, *extra])
    return code, {name: _unclocked(path.read_bytes()) for name, path in paths.items()}


def test_the_demo_agents_traces_give_the_one_process_reports(
    cluster: Any, demo_traces: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("harness.parallel.shards.SLICE_BYTES", 200_000)
    monkeypatch.setattr("harness.parallel.shards._MIN_SLICE_BYTES", 100_000)
    suite = ROOT / "scenarios"
    one = _reports(demo_traces, suite, tmp_path / "one", "--workers", "1")
    assert one[0] == 1  # the demo suites hold failing scenarios
    assert one[1]["json"].count(b'"trace_id"') > 50
    on_dask = _reports(demo_traces, suite, tmp_path / "dask", "--executor", _url(cluster))
    assert on_dask == one


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


@pytest.fixture(params=["nothing listens", "accepts, never answers"])
def dead_scheduler(request: pytest.FixtureRequest) -> Iterator[str]:
    """A port where nothing listens, or a server that accepts and never says a word."""
    if request.param == "nothing listens":
        yield f"dask://127.0.0.1:{_free_port()}"
        return
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield f"dask://127.0.0.1:{server.getsockname()[1]}"


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
    assert main([*argv, "--executor", dead_scheduler]) == 2
    err = capsys.readouterr().err
    assert f"--executor {dead_scheduler}: no Dask scheduler answered" in err
    assert "within 2s" in err and "Traceback" not in err
    assert not report.exists()


@pytest.mark.parametrize("url", ["dask://", "dask://host", "tcp://h:1", "dask://h:99999"])
def test_a_malformed_url_names_the_form_to_give(url: str) -> None:
    with pytest.raises(ExecutorError, match="give dask://HOST:PORT") as caught:
        scheduler_address(url)
    assert caught.value.url == url


def _exit_on_three(shard: int, channel: Any) -> int:
    """A job whose worker process dies on shard 3 (as the out-of-memory killer ends one)."""
    if shard == 3:
        os._exit(1)
    return shard * 10


def test_a_shard_whose_worker_dies_gives_worker_lost_naming_it(cluster: Any) -> None:
    with DaskExecutor(distributed.Client(cluster, set_as_default=False), "dask") as executor:
        session = executor.open(_exit_on_three)
        futures = {shard: session.submit(shard) for shard in range(6)}
        with pytest.raises(WorkerLost, match="its worker died while scoring shard 3") as lost:
            futures[3].result(timeout=60)
        assert lost.value.shard == 3
        others = {shard: f.result(timeout=60) for shard, f in futures.items() if shard != 3}
        assert others == {0: 0, 1: 10, 2: 20, 4: 40, 5: 50}
        session.close()
    cluster.wait_for_workers(2, timeout=60)  # the nanny starts a new one


def test_a_worker_killed_mid_run_leaves_the_one_process_results(
    cluster: Any, tmp_path: Path
) -> None:
    _, suite = _suite(tmp_path)
    traces = tmp_path / "traces.json"
    traces.write_text("".join(_lines(False)), encoding="utf-8")
    scenarios = list(iter_scenarios(load_paths([suite])))
    client = distributed.Client(cluster, set_as_default=False)
    killed = threading.Event()
    seen: list[ScenarioResult] = []

    def kill_a_busy_worker(result: ScenarioResult) -> None:
        seen.append(result)
        if killed.is_set():
            return
        for address, tasks in client.processing().items():
            if tasks:
                (pid,) = client.run(os.getpid, workers=[address]).values()
                os.kill(pid, 9)
                killed.set()
                return

    with DaskExecutor(client, "dask") as executor:
        many = evaluate_traces_in_workers(
            [traces], scenarios, executor=executor, progress=kill_a_busy_worker, slice_bytes=1_500
        )
    alone: list[ScenarioResult] = []
    one = evaluate_traces([traces], scenarios, progress=alone.append)
    assert killed.is_set()
    assert [(r.trace_id, r.status, r.source) for r in seen] == [
        (r.trace_id, r.status, r.source) for r in alone
    ]
    assert many.counts == one.counts
    died = [w for w in many.warnings if "Dask cluster" in w]
    assert len(died) <= 1  # none when the task was done before the signal landed
    for warning in died:
        assert f"the slice of {traces} from line" in warning
        assert "scored in this process instead" in warning
    cluster.wait_for_workers(2, timeout=60)
