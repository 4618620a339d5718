"""``harness eval-traces --from phoenix://``: the demo suites' traces pulled back from a real
Phoenix score as the trace file of the same run does.

``harness run`` exports to Phoenix (OTLP/HTTP) and writes ``--trace-file`` at once; the pull
goes through arize-phoenix-client page by page. Phoenix keeps times to the microsecond (start
and end each rounded), so the calls' durations are compared to within 2 µs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from harness.cli import main
from tests.integration.phoenix import PhoenixServer
from tests.support.paths import SCENARIOS
from tracing.otlp.file_format import OtlpJsonReader
from tracing.otlp.phoenix import PhoenixSource

HARNESS = Path(sys.executable).parent / "harness"


def _results(report: Path) -> dict[str, Any]:
    data = json.loads(report.read_text(encoding="utf-8"))
    assert not data["warnings"], data["warnings"]
    out = {}
    for scenario in data["scenarios"]:
        for key in ("source", "duration"):
            scenario.pop(key)
        for run in scenario["runs"]:
            run.pop("duration")
        out[scenario["trace_id"]] = scenario
    return out


def _durations(results: dict[str, Any]) -> list[int]:
    """The calls' durations, taken out of the results (Phoenix keeps microseconds, rounded)."""
    out = []
    for trace_id in sorted(results):
        for run in results[trace_id]["runs"]:
            for call in run.get("tool_calls") or ():
                out.append(call.pop("duration_ns"))
    return out


def _calls(source: Any) -> tuple[dict[str, list[Any]], list[str]]:
    reader = OtlpJsonReader(source)
    traces = reader.iter_traces()
    calls = {t.trace_id: [(c.name, c.args, c.status) for c in t.calls()] for t in traces}
    return calls, [str(error) for error in reader.errors]


def test_pulled_traces_score_as_the_trace_file(
    phoenix: PhoenixServer, phoenix_project: str, phoenix_env: dict[str, str], tmp_path: Path
) -> None:
    trace_file = tmp_path / "run.jsonl"
    command = [str(HARNESS), "run", str(SCENARIOS), "--trace-file", str(trace_file)]
    command += ["--otlp-endpoint", phoenix.otlp_http_endpoint, "--capture-content"]
    done = subprocess.run(command, env=phoenix_env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    url = f"phoenix://127.0.0.1:{phoenix.http_port}/{phoenix_project}"
    expected, errors = _calls(trace_file)
    assert not errors
    deadline = time.monotonic() + 60
    while True:  # Phoenix ingests asynchronously: wait (bounded) until every span is there
        pulled, errors = _calls(PhoenixSource(url, page=7))  # small pages: many of them
        if (pulled, errors) == (expected, []) or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert not errors
    assert pulled == expected
    base, pull = tmp_path / "base.json", tmp_path / "pull.json"
    scenarios = ["--scenarios", str(SCENARIOS)]
    assert main(["eval-traces", str(trace_file), *scenarios, "--json", str(base)]) == 0
    assert (
        main(["eval-traces", "--from", url, "--since", "1h", *scenarios, "--json", str(pull)]) == 0
    )
    pulled_results, base_results = _results(pull), _results(base)
    for got, want in zip(_durations(pulled_results), _durations(base_results), strict=True):
        assert abs(got - want) <= 2000
    assert pulled_results == base_results
    # a window before the run holds none of its traces
    early = tmp_path / "early.json"
    argv = ["eval-traces", "--from", url, "--until", "2h", *scenarios, "--json", str(early)]
    assert main(argv) == 1  # no traces found
