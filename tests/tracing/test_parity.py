"""Parity: one agent run gives the same tool calls through the recorder and every span convention.

Captures compared, each on every case agent of ``tests/support/agents.py`` in every invoke mode:

* ``ToolCallRecorder`` (LangChain callbacks), checked against the case's expected list, and a
  second recorder attached by ``capture_tool_calls()`` (no config), which must agree with it;
* ``SpanEmitter`` (GenAI semconv, content capture on) -> ``ToolCallSpanExporter``;
* OpenInference's ``LangChainInstrumentor`` -> ``ToolCallSpanExporter``;
* Traceloop's ``LangchainInstrumentor`` (``opentelemetry-instrumentation-langchain``) -> exporter;
* the official OpenTelemetry GenAI instrumentor (``opentelemetry-instrumentation-genai-langchain``,
  import path ``opentelemetry.instrumentation.genai.langchain``, so it installs beside Traceloop's;
  content capture on via ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY``);
* the same spans written to an OTLP JSON file and read back trace by trace (``iter_trace_calls``,
  what ``harness eval-traces`` reads), which must agree with the exporter on every case whose
  run is one trace. NOT POSSIBLE for a run of several traces (a paused thread and its resume,
  LangChain's tool-calling loop written by hand, each model and tool call a trace of its own):
  the reader streams one trace at a time and never holds a finished one for a later trace to
  join, so those runs read as their traces' calls apart (README "Capture"; inside one enclosing
  span, as ``harness run`` writes them, such a loop is one trace and reads right:
  tests/tracing/test_fidelity.py).

Instrumentors patch LangChain globally, so each capture runs in its own process
(``tests/support/parity_run.py``), with a recorder attached to the same runs: call ids are fresh
per run, so ids are compared between the recorder and the exporter of the same run.

What the conventions lose, and what the exporter recovers from the requested calls of the trace:

* OpenInference puts no call id on a tool span and writes a single string argument as its bare
  value (``input.value = "alpha"``). The id is read back from the returned ``ToolMessage`` in
  ``output.value``, or, when the tool raised (no output), from the requested call it is joined
  to by name and order; the parameter name comes from that requested call. Both recovered.
* Traceloop keeps the structured inputs and ``tool_call_id`` in ``traceloop.entity.input``.
  Nothing lost.
* A call to a tool the agent lacks never starts a tool span in any convention: it comes out of
  the chat span as ``requested``. The recorder also keeps the error text of the ToolMessage the
  agent got back; no span convention carries that on the request, so the exporter's ``error`` is
  empty there (not compared below).
* A call whose arguments were not JSON: OpenInference lists a reply's calls from its raw
  ``additional_kwargs``, which a streamed reply (or langchain-openai 1.x) lacks; the reader
  also takes LangChain's ``invalid_tool_calls`` from the chat span's ``output.value``.
  Recovered.
* NOT RECOVERABLE: the official GenAI instrumentor ends the span of a tool that returned an error
  ``ToolMessage`` (a handled ``ToolException``) as a success: no ``error.type``, no error status,
  and the ``tool_call_response`` part of the next chat input carries no status either. Status
  ``error`` cannot be recovered; that capture reports ``ok`` (pinned below, so a fix upstream
  shows up as a failure to update this table).
* Structured output (``ToolStrategy``): the structured-output call is bookkeeping, left out when
  the graph's state says it was answered by the agent itself, not by a tool. SpanEmitter notes
  those calls in a ``harness.structured_output`` event; OpenInference (the root span's
  ``output.value``) and Traceloop (the workflow span's ``traceloop.entity.output``) write the
  returned state itself. NOT RECOVERABLE from the official GenAI instrumentor, which writes no
  state: its trace shows a call that no tool ran, like a call to a missing tool
  (:data:`KNOWN_EXTRAS`).
* The tool-calling loop written by hand (``tool_loop``): every capture joins the runs by call
  id, the only request waiting with it; SpanEmitter also writes where each run started
  (``harness.run.origin``), which settles reused ids as the recorder does.

The agent shapes of ``tests/support/parity_agents.py`` (pause and resume on one thread, id-less
tool nodes, malformed calls, ``Command`` errors, retries, sub-agents) run through the same
captures; what a convention cannot carry there is in :data:`KNOWN_LOSSES` with its reason.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from typing import Any

import pytest

from tests.support.agents import CASES, MODES
from tests.support.parity_agents import SHAPES
from tests.support.parity_run import ALL_CASES
from tests.support.paths import ROOT

CAPTURE_MODULES = {
    "spanemitter": "tracing.otel.emitter",
    "openinference": "openinference.instrumentation.langchain",
    "traceloop": "opentelemetry.instrumentation.langchain",
    "genai": "opentelemetry.instrumentation.genai.langchain",
}

_NO_NODE_SPANS = (
    "the official GenAI instrumentor writes no span for a graph node, so a pause in a node "
    "(HumanInTheLoopMiddleware.after_model) leaves no trace: the waiting calls read as requested"
)
_NO_INVALID_CALLS = (
    "{capture}'s chat span lists AIMessage.tool_calls only, not invalid_tool_calls: the malformed "
    "call is not in the trace at all"
)
_NO_NAMESPACE = (
    "the official GenAI instrumentor records no LangGraph namespace on a span, so a subgraph's "
    "calls read as the top-level agent's"
)

Loss = tuple[dict[int, dict[str, Any] | None], str]

KNOWN_LOSSES: dict[tuple[str, str] | tuple[str, str, str], Loss] = {
    # (capture, case[, mode]) -> ({position in the expected list: the fields this capture
    # reports instead, or None when the call is not in its spans at all}, why)
    ("genai", "tool_exception"): (
        {0: {"status": "ok"}},
        "an error ToolMessage ends the official GenAI tool span as a success",
    ),
    ("genai", "hitl_paused"): (
        {0: {"status": "requested"}, 1: {"status": "requested"}},
        _NO_NODE_SPANS,
    ),
    ("genai", "invalid_args"): ({1: None}, _NO_INVALID_CALLS.format(capture="genai")),
    ("traceloop", "invalid_args"): ({1: None}, _NO_INVALID_CALLS.format(capture="traceloop")),
    ("genai", "supervisor"): (
        {1: {"agent": "supervisor"}, 2: {"agent": "supervisor"}, 0: {"agent": "supervisor"}},
        _NO_NAMESPACE,
    ),
}
"""What a convention cannot carry (see the module docstring), pinned per capture and case."""

KNOWN_EXTRAS: dict[tuple[str, str], tuple[list[list[Any]], str]] = {
    # (capture, case) -> ([name, args, status] of each call the capture reports beyond the
    # truth, in its order], why)
    ("genai", "structured_output"): (
        [["WeatherReport", {"city": "Paris", "conditions": "sunny"}, "requested"]],
        "the official GenAI instrumentor writes no graph state, so nothing on its spans tells "
        "the structured-output call (answered by the agent itself) from a call no tool ran",
    ),
}
"""Calls a convention cannot leave out (see the module docstring), pinned per capture and case."""

pytestmark = pytest.mark.slow


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


@pytest.fixture(scope="module")
def capture_runs() -> dict[str, dict[tuple[str, str], dict[str, Any]]]:
    """Run parity_run.py once per capture (in parallel processes); index runs by case and mode."""
    procs = {}
    for capture, module in CAPTURE_MODULES.items():
        if not _has(module):
            continue
        procs[capture] = subprocess.Popen(
            [sys.executable, "-m", "tests.support.parity_run", capture],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    out: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
    for capture, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=600)
        assert proc.returncode == 0, f"parity_run {capture} failed:\n{stderr[-3000:]}"
        document = json.loads(stdout.strip().splitlines()[-1])
        out[capture] = {(run["case"], run["mode"]): run for run in document["runs"]}
    return out


def _truth(case: str) -> list[list[Any]]:
    """[name, args, status, agent, attempts] of every expected call of a case or shape."""
    if case in SHAPES:
        shape = SHAPES[case]()
        return [
            [name, args, status, agent, attempts]
            for (name, args, status), agent, attempts in zip(
                shape.expected, shape.agents, shape.attempt_counts(), strict=True
            )
        ]
    return [[name, args, status, None, None] for name, args, status in CASES[case]().expected]


_FIELDS = {"name": 0, "args": 1, "status": 2, "agent": 3, "attempts": 4}


def _losses(capture: str, case: str, mode: str) -> dict[int, dict[str, Any] | None]:
    """What this capture loses of this case in this mode (module docstring, KNOWN_LOSSES)."""
    found = KNOWN_LOSSES.get((capture, case, mode)) or KNOWN_LOSSES.get((capture, case))
    return found[0] if found else {}


def _kept(capture: str, case: str, mode: str) -> list[int]:
    """The positions of the expected calls this capture's spans carry at all."""
    losses = _losses(capture, case, mode)
    return [i for i in range(len(_truth(case))) if not (i in losses and losses[i] is None)]


def _expected(capture: str, case: str, mode: str) -> list[list[Any]]:
    rows = _truth(case)
    for position, fields in _losses(capture, case, mode).items():
        for key, value in (fields or {}).items():
            rows[position][_FIELDS[key]] = value
    return [rows[i] for i in _kept(capture, case, mode)]


def _raises(case: str) -> bool:
    return case in CASES and CASES[case]().raises is not None


def _run(
    capture_runs: dict[str, dict[tuple[str, str], dict[str, Any]]], capture: str, key: Any
) -> dict[str, Any]:
    if capture not in capture_runs:
        pytest.skip(f"{CAPTURE_MODULES[capture]} is not installed (pip install -e '.[dev]')")
    return capture_runs[capture][key]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", ALL_CASES)
def test_recorder_gives_the_expected_calls_in_every_process(
    capture_runs: dict[str, dict[tuple[str, str], dict[str, Any]]], case: str, mode: str
) -> None:
    """The recorder's (name, args, status) list is the case's, whichever instrumentor is on."""
    truth = _truth(case)
    assert capture_runs, "no capture could run"
    for capture, runs in capture_runs.items():
        run = runs[(case, mode)]
        assert [row[:3] for row in run["recorder"]] == [row[:3] for row in truth], capture
        executed = [row for row in run["recorder"] if row[2] not in ("requested", "invalid")]
        assert all(row[3] for row in executed), f"{capture}: executed call without an id"
        if case in SHAPES:
            assert [row[4:6] for row in run["recorder"]] == [row[3:5] for row in truth], capture


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", ALL_CASES)
@pytest.mark.parametrize("capture", list(CAPTURE_MODULES))
def test_exporter_matches_recorder(
    capture_runs: dict[str, dict[tuple[str, str], dict[str, Any]]],
    capture: str,
    case: str,
    mode: str,
) -> None:
    """Spans of each convention -> the same calls, order, ids, agents and attempts as the
    recorder of that run, but for the known losses."""
    run = _run(capture_runs, capture, (case, mode))
    assert run["traces"] == _traces(case), f"runs and traces differ: {run['traces']}"
    exporter = _without_extras(capture, case, run["exporter"])
    expected = _expected(capture, case, mode)
    assert [row[:3] for row in exporter] == [row[:3] for row in expected]
    recorder = [run["recorder"][i] for i in _kept(capture, case, mode)]
    # Every convention carries the call id, directly or through recovery (module docstring).
    assert [row[3] for row in exporter] == [row[3] for row in recorder]
    # Agents and attempts: the recorder's, but where this capture cannot carry them.
    expected_where = [
        [truth_row[3] if loss_agent else rec[4], rec[5]]
        for rec, truth_row, loss_agent in zip(
            recorder, expected, _agent_lost(capture, case, mode), strict=True
        )
    ]
    assert [row[4:6] for row in exporter] == expected_where
    assert (run["raised"] is not None) == _raises(case)


def _traces(case: str) -> int:
    """How many traces (top-level runs) one run of the case writes."""
    return SHAPES[case]().trace_count() if case in SHAPES else 1


def _without_extras(capture: str, case: str, rows: list[list[Any]]) -> list[list[Any]]:
    """The exporter's rows less the calls this capture cannot leave out, which must be there."""
    extras, _ = KNOWN_EXTRAS.get((capture, case), ([], ""))
    kept = list(rows)
    for extra in extras:
        found = next((row for row in kept if row[:3] == extra), None)
        assert found is not None, f"{capture} no longer reports {extra}: update KNOWN_EXTRAS"
        kept.remove(found)
    return kept


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", ALL_CASES)
def test_capture_tool_calls_records_what_the_config_recorder_records(
    capture_runs: dict[str, dict[tuple[str, str], dict[str, Any]]], case: str, mode: str
) -> None:
    """A recorder attached by ``capture_tool_calls()`` (no config) gives every field of every
    call the config's recorder gives, under every capture."""
    assert capture_runs, "no capture could run"
    for capture, runs in capture_runs.items():
        run = runs[(case, mode)]
        assert run["captured"] == run["recorder"], capture


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", ALL_CASES)
@pytest.mark.parametrize("capture", list(CAPTURE_MODULES))
def test_otlp_file_reader_matches_exporter(
    capture_runs: dict[str, dict[tuple[str, str], dict[str, Any]]],
    capture: str,
    case: str,
    mode: str,
) -> None:
    """The calls read back from the OTLP JSON file, trace by trace, are the exporter's, on
    every run that is one trace (a run of several cannot be joined there: module docstring)."""
    run = _run(capture_runs, capture, (case, mode))
    if _traces(case) > 1:
        pytest.skip("the OTLP file reader joins no traces: this run is several")
    assert run["reader"] == run["exporter"]


def _agent_lost(capture: str, case: str, mode: str) -> list[bool]:
    losses = _losses(capture, case, mode)
    return [
        bool(losses.get(i) and "agent" in (losses[i] or {})) for i in _kept(capture, case, mode)
    ]


def test_known_losses_are_real_cases() -> None:
    """The loss table names captures and cases that exist (so it cannot silently rot)."""
    for key, (fields, reason) in KNOWN_LOSSES.items():
        capture, case = key[0], key[1]
        assert capture in CAPTURE_MODULES
        assert case in ALL_CASES
        assert key[2:] == () or key[2] in MODES
        assert reason
        assert all(0 <= position < len(_truth(case)) for position in fields)
    for (capture, case), (extras, reason) in KNOWN_EXTRAS.items():
        assert capture in CAPTURE_MODULES and case in ALL_CASES and reason
        assert all(extra not in [row[:3] for row in _truth(case)] for extra in extras)
