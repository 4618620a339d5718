"""Every common producer reads into the same calls: what the tools really executed (issue 27).

Each producer is a real framework with its real instrumentation, run against the local OpenAI
stand-in with scripted model replies (tests/support/producer_frameworks.py), its spans written
through a real SDK pipeline to an OTLP JSON file and to the in-process exporter
(tests/support/producer_run.py, one process per producer: instrumentors patch globally). The
tools count their own executions (tests/support/producer_cases.py), and the test compares:

* the executed calls the reader reads (status ``ok`` / ``error``) with the ledger of
  executions: the same names, arguments, results and failures;
* the calls that never ran (a tool the agent lacks, arguments that are not JSON) with what the
  model asked for: ``requested`` and ``invalid``, in the model's order;
* the OTLP file reader with the in-process exporter, call for call;
* the :class:`~tracing.otel.trace_run.TraceRun` with the run: the user's prompt, one model call
  per request the stand-in served with the usage it reported, the framework's answer, the
  resource's service name, the agent, nothing unread.

What a producer cannot carry is in :data:`KNOWN_LOSSES`, with the reason.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.support.paths import ROOT
from tests.support.producer_cases import CASES, TOOLS, arguments_of
from tests.support.producer_frameworks import AGENT, MODULES, PRODUCERS

pytestmark = pytest.mark.slow

_ADK_DROPS_MALFORMED = (
    "Google ADK discards a call whose arguments are not JSON before any span records it "
    "(it logs 'Discarding tool call'); nothing ran and nothing is in the trace"
)
KNOWN_LOSSES: dict[tuple[str, str], tuple[dict[str, str | None], str]] = {
    # (producer, case) -> ({tool name: the status read instead, or None: not in the trace}, why)
    ("adk", "malformed"): ({"add": None}, _ADK_DROPS_MALFORMED),
    ("adk-schema1", "malformed"): ({"add": None}, _ADK_DROPS_MALFORMED),
    ("adk-schema1", "unknown_tool"): (
        {"teleport": "error"},
        "ADK's schema 1 puts no content on its chat spans, so nothing lists the tools the model "
        "was offered: the tool span ADK starts to refuse an unknown tool reads as a failed call",
    ),
}
NO_CONTENT = {
    "adk-schema1": "ADK's schema 1 writes the messages only in its own call_llm span's "
    "gcp.vertex.agent.llm_request / llm_response, which the reader does not read: the user's "
    "input and the answer are unknown (None), and the calls come from the tool spans alone"
}
NAMED_AGENT = {name for name in PRODUCERS if not name.startswith(("smolagents", "llamaindex"))}
"""Producers whose spans name the agent (smolagents and LlamaIndex name only the run)."""


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _run_producer(producer: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "tests.support.producer_run", producer],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, f"producer_run {producer} failed:\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def producer_runs() -> dict[str, dict[str, dict[str, Any]]]:
    """Every installed producer's runs, by producer and case (three processes at a time)."""
    names = [name for name in PRODUCERS if _has(MODULES[name])]
    with ThreadPoolExecutor(max_workers=3) as pool:
        documents = list(pool.map(_run_producer, names))
    return {doc["producer"]: {run["case"]: run for run in doc["runs"]} for doc in documents}


def _run(runs: dict[str, dict[str, dict[str, Any]]], producer: str, case: str) -> dict[str, Any]:
    if producer not in runs:
        pytest.skip(f"{MODULES[producer]} is not installed (pip install -e . --group dev)")
    return runs[producer][case]


def _plain(value: Any, producer: str) -> Any:
    """A read result as the tool returned it: JSON text decoded (a loop sends the model JSON),
    and Google ADK's ``{"result": value}`` wrapping of a non-dict return taken off."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    if producer.startswith("adk") and isinstance(value, dict) and list(value) == ["result"]:
        return value["result"]
    return value


def _key(name: str, args: dict[str, Any]) -> str:
    return json.dumps([name, args], sort_keys=True)


def _expected_unrun(producer: str, case: str, ledger: list[list[Any]]) -> list[list[Any]]:
    """[name, status] of each scripted call that no tool ran, in the model's order: a tool the
    agent lacks stays ``requested``, arguments that are not JSON ``invalid``."""
    ran = Counter(_key(name, args) for name, args, _, _ in ledger)
    losses = KNOWN_LOSSES.get((producer, case), ({}, ""))[0]
    out = []
    for scripted in CASES[case].scripted_calls():
        args = arguments_of(scripted)
        if args is not None and ran[_key(scripted.name, args)]:
            ran[_key(scripted.name, args)] -= 1
            continue
        status = "invalid" if args is None else "requested"
        if scripted.name not in TOOLS and args is not None:
            status = "requested"
        status = losses.get(scripted.name, status)
        if status is not None:
            out.append([scripted.name, status])
    return out


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("producer", list(PRODUCERS))
def test_reader_recovers_what_the_tools_executed(
    producer_runs: dict[str, dict[str, dict[str, Any]]], producer: str, case: str
) -> None:
    """The executed calls read are the ledger's, result for result; the calls that never ran
    are what the model asked for; everything in the model's order."""
    run = _run(producer_runs, producer, case)
    assert run["traces"] == 1, f"one agent run, one trace: {run['traces']}"
    read = run["reader"]
    losses = KNOWN_LOSSES.get((producer, case), ({}, ""))[0]
    executed = [row for row in read if row[2] in ("ok", "error") and losses.get(row[0]) is None]
    ledger = run["ledger"]
    assert sorted(_key(r[0], r[1]) for r in executed) == sorted(
        _key(name, args) for name, args, _, _ in ledger
    )
    by_key = {_key(name, args): (result, error) for name, args, result, error in ledger}
    for name, args, status, result, error, _ in executed:
        truth_result, truth_error = by_key[_key(name, args)]
        if truth_error is None:
            assert status == "ok", (name, error)
            assert _plain(result, producer) == truth_result
        else:
            assert status == "error" and error, (name, result)
    unrun = [[row[0], row[2]] for row in read if row not in executed]
    assert unrun == _expected_unrun(producer, case, ledger)
    if producer not in NO_CONTENT:  # without requests in the trace: execution order
        scripted = [c.name for c in CASES[case].scripted_calls()]
        assert [row[0] for row in read] == [n for n in scripted if n in {r[0] for r in read}]
    assert run["run"]["not_captured"] == []


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("producer", list(PRODUCERS))
def test_file_reader_and_exporter_agree(
    producer_runs: dict[str, dict[str, dict[str, Any]]], producer: str, case: str
) -> None:
    """The OTLP JSON file read back and the in-process exporter give the same calls and run."""
    run = _run(producer_runs, producer, case)
    assert run["reader"] == run["exporter"]
    assert run["run"] == run["exporter_run"]


def _usage_sums(served: list[dict[str, Any]]) -> tuple[int, int]:
    given = sum(u.get("prompt_tokens", u.get("input_tokens", 0)) for u in served)
    taken = sum(u.get("completion_tokens", u.get("output_tokens", 0)) for u in served)
    return given, taken


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("producer", list(PRODUCERS))
def test_trace_run_is_what_the_run_was(
    producer_runs: dict[str, dict[str, dict[str, Any]]], producer: str, case: str
) -> None:
    """User input, model calls and usage, answer, service, agent: as the run really was."""
    run = _run(producer_runs, producer, case)
    trace = run["run"]
    calls = trace["model_calls"]
    assert len(calls) == run["requests"], "one model call per request the model server got"
    if run["usage"]:
        read = (sum(c[0] for c in calls), sum(c[1] for c in calls))
        assert read == _usage_sums(run["usage"])
        assert all(total == given + taken for given, taken, total in calls)
    else:  # the framework streamed without asking for usage: none was reported
        assert all(figure is None for call in calls for figure in call)
    if producer in NO_CONTENT:
        assert trace["user_inputs"] is None and trace["output"] is None
    else:
        assert any(CASES[case].prompt in text for text in trace["user_inputs"])
        # (LangGraph ends on a reply whose one call was not JSON: empty text, read as no answer)
        answer = (run["answer"] or None) if run["raised"] is None else None
        assert trace["output"] == answer
    assert trace["service"] == f"producers-{producer}"
    if producer in NAMED_AGENT:
        assert trace["agent"] == AGENT
    else:
        assert trace["agent"] == trace["root_name"]
    assert trace["duration"] > 0
    assert trace["unread"] == {}


def test_known_losses_name_real_producers_and_cases() -> None:
    """The loss table cannot rot: each entry names a producer, a case and a reason."""
    for (producer, case), (fields, reason) in KNOWN_LOSSES.items():
        assert producer in PRODUCERS and case in CASES and reason and fields
    assert set(NO_CONTENT) <= set(PRODUCERS)
