"""Values that used to lose the whole run: every report renders any value, one bad value costs
only its own scenario.

Cycles, 10,000-deep nesting, lone surrogates, numpy arrays (or an ``__array__`` object that acts
like one), objects whose ``repr`` raises and ints past Python's 4,300-digit limit go through
every report (JSON, JUnit, HTML, console) and the trace file; a 10 MB string and a
million-element list must cost seconds, not minutes.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from rich.console import Console

from harness.redaction import CYCLE, TOO_DEEP, Redactor, Scrubber, jsonable, safe_repr
from harness.report.base import ReportFeed
from harness.report.console import ConsoleReporter
from harness.report.html import HtmlReporter
from harness.report.json_report import JsonReporter, render_json
from harness.report.junit import JunitReporter
from harness.run.results import RunResult, ScenarioResult, SuiteResult
from harness.sample import Sample
from tests.support.paths import ROOT
from tracing.records import ToolCall

HARNESS = Path(sys.executable).parent / "harness"


class BadRepr:
    """An object whose repr and str raise."""

    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")

    __str__ = __repr__


class Ambiguous:
    """What numpy's elementwise ``==`` gives: a value whose truth raises."""

    def __bool__(self) -> bool:
        raise ValueError("The truth value of an array with more than one element is ambiguous")


class ArrayLike:
    """An ``__array__`` object with numpy's comparison semantics (numpy may not be installed)."""

    def __init__(self, values: list[int]) -> None:
        self.values = values

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        raise RuntimeError("numpy is not installed")

    def __eq__(self, other: object) -> Any:
        return Ambiguous()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"array({self.values})"


def array(values: list[int]) -> Any:
    """A numpy array when numpy is importable, else the look-alike."""
    try:
        import numpy
    except ImportError:
        return ArrayLike(values)
    return numpy.array(values)


def cyclic() -> dict[str, Any]:
    items: list[Any] = [1]
    items.append(items)
    mapping: dict[str, Any] = {"k": 1}
    mapping["self"] = mapping
    return {"list": items, "dict": mapping}


def deep(levels: int = 10_000) -> Any:
    value: Any = 0
    for _ in range(levels):
        value = [value]
    return value


HOSTILE: dict[str, Any] = {
    "cycle": cyclic(),
    "deep": deep(),
    "surrogate": "half \udc80 a pair \ud800",
    "badrepr": {"x": BadRepr()},
    "bigint": 10**5000,
    "array": array([1, 2, 3]),
}


def _result(kind: str, value: Any) -> ScenarioResult:
    """A failed scenario carrying ``value`` as an argument, a result and the final answer."""
    call = ToolCall("produce", {"kind": kind, "value": value}, result=value)
    sample = Sample(tool_calls=[call], output=value)
    run = RunResult(0, False, sample)
    return ScenarioResult("hostile", kind, "hostile.yaml", 3, "failed", (run,), reasons=("failed",))


def _fine() -> ScenarioResult:
    call = ToolCall("lookup", {"key": "alpha"}, result="first")
    run = RunResult(0, True, Sample(tool_calls=[call], output="the answer is first"))
    return ScenarioResult("hostile", "fine", "hostile.yaml", 1, "passed", (run,))


def _suite() -> SuiteResult:
    return SuiteResult(scenarios=(_fine(), *(_result(k, v) for k, v in HOSTILE.items())))


def _all_reports(result: SuiteResult, folder: Path) -> str:
    """Write JSON, JUnit and HTML through one feed; return the console's text."""
    buffer = io.StringIO()
    console = ConsoleReporter(Console(file=buffer, width=120, color_system=None))
    reporters = [
        console,
        JsonReporter(folder / "r.json"),
        JunitReporter(folder / "r.xml"),
        HtmlReporter(folder / "r.html"),
    ]
    ReportFeed.for_suite(reporters, result, Redactor()).run(result)
    return buffer.getvalue()


def test_every_report_renders_every_hostile_value(tmp_path: Path) -> None:
    console = _all_reports(_suite(), tmp_path)
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    by_name = {s["name"]: s for s in data["scenarios"]}
    assert set(by_name) == {"fine", *HOSTILE}
    # the passing scenario is whole
    fine = by_name["fine"]
    assert fine["status"] == "passed"
    assert fine["runs"][0]["output"] == "the answer is first"
    assert fine["runs"][0]["tool_calls"][0]["result"] == "first"

    def run(kind: str) -> dict[str, Any]:
        return by_name[kind]["runs"][0]  # type: ignore[no-any-return]

    cyc = run("cycle")["output"]
    assert cyc == {"list": [1, CYCLE], "dict": {"k": 1, "self": CYCLE}}
    assert run("cycle")["tool_calls"][0]["args"]["value"] == cyc
    # 10,000 levels: cut, with the marker where the cut is
    nested = run("deep")["tool_calls"][0]["result"]
    depth = 0
    while isinstance(nested, list):
        nested, depth = nested[0], depth + 1
    assert nested == TOO_DEEP and depth < 100
    assert run("badrepr")["output"]["x"].startswith("<unrepresentable: BadRepr (RuntimeError")
    assert run("bigint")["output"].startswith("<unrepresentable: int with about 5,001 digits")
    assert run("surrogate")["output"] == "half \udc80 a pair \ud800"  # escaped in the file
    assert b"\\udc80" in (tmp_path / "r.json").read_bytes()
    assert run("array")["output"] in ([1, 2, 3], "array([1, 2, 3])")
    # JUnit: a valid document with every testcase
    cases = ET.parse(tmp_path / "r.xml").getroot().iter("testcase")
    assert {case.get("name") for case in cases} == {"fine", *HOSTILE}
    # HTML: written whole, encodable, the surrogate replaced
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert page.rstrip().endswith("</html>") and "\ud800" not in page
    # console: every failure printed, the surrogate as its escape
    for kind in HOSTILE:
        assert f"hostile::{kind}" in console
    assert "\\udc80" in console
    console.encode("utf-8")


def test_render_json_and_the_value_helpers_never_raise() -> None:
    text = render_json(_suite())
    json.loads(text.encode("utf-8", "backslashreplace"))
    for value in HOSTILE.values():
        json.dumps(jsonable(value))
        assert isinstance(safe_repr(value), str)
        assert len(safe_repr(value, 200)) < 300
    assert safe_repr(BadRepr()).startswith("<unrepresentable: BadRepr")
    assert safe_repr(cyclic()) == "{'list': [1, '<cycle>'], 'dict': {'k': 1, 'self': '<cycle>'}}"


class BrokenMapping(Mapping[str, Any]):
    """Arguments nothing can read (a broken recorder or agent): every access raises."""

    def __getitem__(self, key: str) -> Any:
        raise RuntimeError("broken mapping")

    def __iter__(self) -> Iterator[str]:
        raise RuntimeError("broken mapping")

    def __len__(self) -> int:
        return 1


def test_a_run_whose_details_cannot_be_rendered_costs_only_its_scenario(tmp_path: Path) -> None:
    """Its verdict and reasons are reported, with why the details are missing; the other
    scenarios are whole."""
    call = ToolCall("produce", BrokenMapping())
    odd = ScenarioResult(
        "s", "odd", "f", 1, "failed", (RunResult(0, False, Sample(tool_calls=[call])),)
    )
    result = SuiteResult(scenarios=(_fine(), odd))
    _all_reports(result, tmp_path)
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert [s["name"] for s in data["scenarios"]] == ["fine", "odd"]
    assert data["scenarios"][0]["runs"][0]["output"] == "the answer is first"
    assert data["scenarios"][1]["status"] == "failed"
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "could not be rendered" in page and "broken mapping" in page


def test_a_value_no_matcher_can_compare_still_gets_its_match_table(tmp_path: Path) -> None:
    """numpy's ambiguous truth value: the argument check says wrong, nothing raises."""
    from harness.expectation import Expectation

    expectation = Expectation.of("produce", {"value": [1, 2]})
    call = ToolCall("produce", {"value": array([1, 2])})
    sample = Sample(tool_calls=[call], expected_tool_calls=[expectation], output="x")
    odd = ScenarioResult("s", "odd", "f", 1, "failed", (RunResult(0, False, sample),))
    _all_reports(SuiteResult(scenarios=(odd,)), tmp_path)
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert data["scenarios"][0]["runs"][0]["tool_calls"][0]["args"]["value"] in (
        [1, 2],
        "array([1, 2])",
    )


# --- end to end: real LangGraph agents, the CLI, every report and the trace file ----------------

AGENT_MODULE = '''
from typing import Any
from langchain_core.tools import tool
from tests.support.agents import build_react_graph
from tests.harness.report.test_hostile_values import HOSTILE


@tool
def produce(kind: str) -> str:
    """Say which value the answer will be."""
    return kind


class Answers:
    """A real ReAct graph whose final state carries a hostile structured response."""

    def __init__(self, model: Any, kind: str) -> None:
        self.graph = build_react_graph(model, [produce])
        self.kind = kind

    def invoke(self, payload: Any, config: Any = None) -> Any:
        state = self.graph.invoke(payload, config=config)
        return {**state, "structured_response": HOSTILE[self.kind]}


def build(model):
    return build_react_graph(model, [produce])


for _kind in HOSTILE:
    globals()["answer_" + _kind] = (lambda k: (lambda model: Answers(model, k)))(_kind)
'''


def _hostile_project(tmp_path: Path) -> Path:
    (tmp_path / "hostile_agent.py").write_text(AGENT_MODULE, encoding="utf-8")
    lines = [
        "suite: hostile",
        "agent: hostile_agent.py:build",
        "model: {provider: scripted}",
        "scenarios:",
        "  - name: fine",
        "    input: x",
        "    script: [{tool_calls: [{name: produce, args: {kind: fine}}]}, {content: done}]",
        "    expect: {tool_calls: [produce], output: done}",
    ]
    for kind in HOSTILE:
        lines += [
            f"  - name: answer {kind}",
            f"    agent: hostile_agent.py:answer_{kind}",
            "    input: x",
            f"    script: [{{tool_calls: [{{name: produce, args: {{kind: {kind}}}}}]}}, "
            "{content: done}]",
            "    expect: {tool_calls: [produce], output: {$contains: never}}",
        ]
    suite = tmp_path / "hostile.yaml"
    suite.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return suite


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def test_cli_run_with_hostile_answers_writes_every_report_and_the_trace_file(
    tmp_path: Path,
) -> None:
    suite = _hostile_project(tmp_path)
    out = {name: tmp_path / name for name in ("r.json", "r.xml", "r.html", "t.json")}
    proc = subprocess.run(
        [
            str(HARNESS),
            "run",
            str(suite),
            "--json",
            str(out["r.json"]),
            "--junit-xml",
            str(out["r.xml"]),
            "--html",
            str(out["r.html"]),
            "--trace-file",
            str(out["t.json"]),
            "--capture-content",
        ],
        capture_output=True,
        text=True,
        errors="backslashreplace",
        timeout=300,
        cwd=tmp_path,
        env=_env(),
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    data = json.loads(out["r.json"].read_text(encoding="utf-8"))
    statuses = {s["name"]: s["status"] for s in data["scenarios"]}
    assert statuses == {"fine": "passed", **{f"answer {k}": "failed" for k in HOSTILE}}
    answers = {s["name"]: s["runs"][0]["output"] for s in data["scenarios"]}
    assert answers["answer cycle"] == {"list": [1, CYCLE], "dict": {"k": 1, "self": CYCLE}}
    ET.parse(out["r.xml"])
    assert out["r.html"].read_text(encoding="utf-8").rstrip().endswith("</html>")
    # the trace file: every line whole JSON, every run's root span in it
    lines = out["t.json"].read_bytes().splitlines()
    spans = [
        span
        for line in lines
        for rs in json.loads(line)["resourceSpans"]
        for ss in rs["scopeSpans"]
        for span in ss["spans"]
    ]
    roots = [s for s in spans if "parentSpanId" not in s]
    assert len(roots) == 1 + len(HOSTILE)
    # and it can be scored offline
    proc = subprocess.run(
        [str(HARNESS), "eval-traces", str(out["t.json"]), "--scenarios", str(suite)],
        capture_output=True,
        text=True,
        errors="backslashreplace",
        timeout=120,
        cwd=tmp_path,
        env=_env(),
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert "1 passed" in proc.stdout


# --- size: a 10 MB string and a million-element list cost seconds ------------------------------


def test_huge_values_are_rendered_in_seconds_and_cut_in_the_view(tmp_path: Path) -> None:
    big = {
        "bigstr": "x" * 10_000_000,
        "biglist": list(range(1_000_000)),
        "blocks": [{"type": "text", "text": "x"} for _ in range(1_000_000)],
    }
    scenarios = []
    for kind, value in big.items():
        call = ToolCall("produce", {"kind": kind, "api_key": "sk-secret-123"}, result=value)
        sample = Sample(tool_calls=[call], output=value)
        run = RunResult(0, False, sample)
        scenarios.append(ScenarioResult("big", kind, "big.yaml", 1, "failed", (run,)))
    result = SuiteResult(scenarios=tuple(scenarios))
    start = time.perf_counter()
    for scenario in scenarios:  # the progress line's and the root span's scrubbers
        Scrubber.for_runs(Redactor(), scenario.runs)
    _all_reports(result, tmp_path)
    elapsed = time.perf_counter() - start
    assert elapsed < 30, f"{elapsed:.1f}s"  # it was 47 s on the same machine before the cut
    assert (tmp_path / "r.json").stat().st_size < 5_000_000
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    runs = {s["name"]: s["runs"][0] for s in data["scenarios"]}
    text = runs["bigstr"]["output"]
    assert text.startswith("xxx") and text.endswith("more characters>")
    items = runs["biglist"]["tool_calls"][0]["result"]
    assert items[:3] == [0, 1, 2] and items[-1] == "<999,000 more items>"


def test_secrets_in_hostile_values_are_still_found() -> None:
    """The search survives cycles and depth, and still finds what sits under a secret key."""
    value = cyclic()
    value["dict"]["password"] = "hunter22"
    value["deep"] = deep()
    call = ToolCall("login", value, result={"token": BadRepr()})
    run = RunResult(0, False, Sample(tool_calls=[call]))
    scrubber = Scrubber.for_runs(Redactor(), [run])
    assert "hunter22" in scrubber.secrets
    assert scrubber.text("said hunter22") == "said ***"


def test_scenario_with_a_hostile_name_and_reasons_still_reports(tmp_path: Path) -> None:
    run = RunResult(0, False, Sample(output="x"))
    odd = ScenarioResult(
        "s\udc80", "name \ud800", "f", 1, "failed", (run,), reasons=("why \udc81" * 3,)
    )
    console = _all_reports(SuiteResult(scenarios=(odd, _fine())), tmp_path)
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert [s["status"] for s in data["scenarios"]] == ["failed", "passed"]
    assert "name \\ud800" in console
