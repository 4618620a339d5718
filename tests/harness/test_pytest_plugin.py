"""The pytest plugin, driven through pytester: scenario items, fixtures, JUnit XML and xdist."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

# A real LangGraph ReAct loop over real tools; the scenario files drive it with the scripted
# model. ``build_flaky`` skips its tools on every second run, for repeat/pass_rate.
AGENT = '''
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def lookup(key: str) -> str:
    """Look a key up in a small table."""
    return {"alpha": "first"}.get(key, "unknown")


@tool
def explode(reason: str) -> str:
    """Always fails."""
    raise ValueError("exploded: " + reason)


TOOLS = [add, lookup, explode]


def build(model):
    bound = model.bind_tools(TOOLS)

    def call(state, config: RunnableConfig):
        return {"messages": [bound.invoke(state["messages"], config)]}

    async def acall(state, config: RunnableConfig):
        return {"messages": [await bound.ainvoke(state["messages"], config)]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", RunnableLambda(call, afunc=acall, name="agent"))
    graph.add_node("tools", ToolNode(TOOLS, handle_tool_errors=True))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile()


class _Flaky:
    def __init__(self, graph):
        self.graph = graph
        self.runs = 0

    def invoke(self, payload, config=None):
        self.runs += 1
        if self.runs % 2 == 0:
            return {"messages": [AIMessage("skipped the tools this time")]}
        return self.graph.invoke(payload, config)


def build_flaky(model):
    return _Flaky(build(model))


def build_broken(model):
    raise RuntimeError("factory is broken on purpose")
'''

SUITE = """\
suite: calc
agent: agent.py:build
model: {provider: scripted}
defaults:
  timeout: 10
scenarios:
  - name: adds
    input: "What is 2 + 3?"
    script:
      - tool_calls: [{name: add, args: {a: 2, b: 3}}]
      - content: "The answer is 5"
    expect:
      tool_calls:
        - {name: add, args: {a: 2, b: {$one_of: [3, 4]}}}
      output: {$contains: "5"}
  - name: wrong args
    input: "What is 2 + 3?"
    script:
      - tool_calls: [{name: add, args: {a: 2, b: 4}}, {name: explode, args: {reason: boom}}]
      - content: "6"
    expect:
      tool_calls:
        - {name: add, args: {a: 2, b: 3}}
        - lookup
      forbid: [explode]
  - name: known bug
    xfail: "adds the wrong numbers"
    input: "What is 2 + 3?"
    script:
      - tool_calls: [{name: add, args: {a: 2, b: 9}}]
      - content: "11"
    expect:
      tool_calls: [{name: add, args: {a: 2, b: 3}}]
  - name: fixed bug
    xfail: "was wrong once"
    input: "What is 2 + 3?"
    script:
      - tool_calls: [{name: add, args: {a: 2, b: 3}}]
      - content: "5"
    expect:
      tool_calls: [{name: add, args: {a: 2, b: 3}}]
"""

FLAKY = """\
suite: flaky
agent: agent.py:build_flaky
model: {provider: scripted}
scenarios:
  - name: half the time is enough
    input: "look alpha up"
    script:
      - tool_calls: [{name: lookup, args: {key: alpha}}]
      - content: "first"
    expect: {tool_calls: [{name: lookup, args: {key: alpha}}]}
    repeat: 4
    pass_rate: 0.5
  - name: three of four needed
    input: "look alpha up"
    script:
      - tool_calls: [{name: lookup, args: {key: alpha}}]
      - content: "first"
    expect: {tool_calls: [{name: lookup, args: {key: alpha}}]}
    repeat: 4
    pass_rate: 0.75
"""


INI = "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"


@pytest.fixture(scope="module", autouse=True)
def _warm_imports() -> None:
    """Import and run everything the inner runs use, once, in this process.

    In-process pytester runs drop the modules first imported during the run; a LangGraph or
    LangChain module imported anew in a later run would then meet classes from the dropped
    copy. Running the agent here keeps one copy of every module for all runs.
    """
    import asyncio

    import harness.report
    import harness.run.runner
    import harness.scenarios
    from harness.models import make_model

    namespace: dict[str, object] = {}
    exec(compile(AGENT, "agent_warmup", "exec"), namespace)
    build = namespace["build"]
    script = [{"tool_calls": [{"name": "add", "args": {"a": 1, "b": 2}}]}, {"content": "3"}]
    graph = build(make_model({"provider": "scripted"}, script=script))  # type: ignore[operator]
    question = {"messages": [("user", "1 + 2?")]}
    graph.invoke(question)
    asyncio.run(graph.ainvoke(question))
    make_model("demo")
    del harness


@pytest.fixture(autouse=True)
def _ini(pytester: pytest.Pytester) -> None:
    """Every inner run gets the project's asyncio settings (and no warning about them)."""
    pytester.makeini(INI)


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester folder with the agent module and the ``calc`` suite."""
    pytester.makepyfile(agent=AGENT)
    pytester.makefile(".yaml", suite=SUITE)
    return pytester


# --- switch and collection ------------------------------------------------------------------


def test_scenario_files_are_not_collected_without_the_switch(project: pytest.Pytester) -> None:
    result = project.runpytest("--collect-only", "-q")
    assert "suite.yaml" not in result.stdout.str()
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_flag_collects_one_item_per_scenario_named_file_suite_scenario(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest("--harness-scenarios", "--collect-only", "-q")
    result.stdout.fnmatch_lines(
        [
            "suite.yaml::calc::adds",
            "suite.yaml::calc::wrong args",
            "suite.yaml::calc::known bug",
            "suite.yaml::calc::fixed bug",
        ]
    )


def test_ini_option_switches_collection_on(project: pytest.Pytester) -> None:
    project.makeini(INI + "harness_scenarios = true\n")
    result = project.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(["suite.yaml::calc::adds", "*4 tests collected*"])


def test_yaml_without_a_scenarios_key_is_left_alone(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yml", compose="services:\n  web:\n    image: nginx\n")
    pytester.makefile(".yaml", broken="key: [unclosed\n")
    result = pytester.runpytest("--harness-scenarios", "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert "error" not in result.stdout.str().lower()


def test_config_error_is_a_collection_error_naming_file_and_line(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(agent=AGENT)
    pytester.makefile(
        ".yaml",
        bad=textwrap.dedent(
            """\
            agent: agent.py:build
            model: {provider: scripted}
            scenarios:
              - name: typo
                input: hi
                expekt: {tool_calls: [add]}
            """
        ),
    )
    result = pytester.runpytest("--harness-scenarios")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*ERROR collecting bad.yaml*", "*bad.yaml:6: *expekt*"])
    # the loader's own traceback is not shown, only the message
    assert "harness/scenarios" not in result.stdout.str()  # the package, any module


# --- running scenario items -----------------------------------------------------------------


def test_passing_failing_and_xfail_items(project: pytest.Pytester) -> None:
    result = project.runpytest("--harness-scenarios", "-rxX")
    result.assert_outcomes(passed=1, failed=1, xfailed=1, xpassed=1)
    result.stdout.fnmatch_lines(
        [
            "*XFAIL suite.yaml::calc::known bug*adds the wrong numbers*",
            "*XPASS suite.yaml::calc::fixed bug*was wrong once*",
        ]
    )


def test_failure_shows_the_reasons_and_match_table_not_a_traceback(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest("--harness-scenarios", "-k", "wrong")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ calc::wrong args _*",
            "calc::wrong args (suite.yaml:16): failed",
            "  tool_call_accuracy 0.00 < 1.00: 0/2 expected calls matched; missing: "
            "add(a=2, b=3), lookup()",
            "  forbidden tool called: #2 explode(reason='boom')",
            "calls:",
            "    #  expected*actual*verdict",
            "    1  add(a=2, b=3)*add(a=2, b=4)*wrong args",
            "         /b: b=4, expected 3",
            "    2  lookup()*missing*MISSING",
            "    -  (not expected)*explode(reason='boom') [[]error[]]*not expected",
            "         error: ValueError: exploded: boom",
        ]
    )
    text = result.stdout.str()
    assert "runner.py" not in text
    assert "Traceback" not in text


def test_k_selects_scenarios_by_name(project: pytest.Pytester) -> None:
    result = project.runpytest("--harness-scenarios", "-k", "adds", "-v")
    result.assert_outcomes(passed=1, deselected=3)
    result.stdout.fnmatch_lines(["*suite.yaml::calc::adds PASSED*"])


def test_node_id_selects_one_scenario(project: pytest.Pytester) -> None:
    result = project.runpytest("--harness-scenarios", "suite.yaml::calc::adds")
    result.assert_outcomes(passed=1)


def test_repeat_and_pass_rate_gate_the_verdict(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(agent=AGENT)
    pytester.makefile(".yaml", flaky=FLAKY)
    result = pytester.runpytest("--harness-scenarios", "-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*flaky.yaml::flaky::half the time is enough PASSED*",
            "*flaky.yaml::flaky::three of four needed FAILED*",
            "*[[]runs 2, 4[]] tool_call_accuracy 0.00 < 1.00*",
            "*passed 2 of 4 runs (50%), below pass_rate 75% (needs 3)*",
            "run 2 of 4:",
        ]
    )


def test_agent_factory_error_fails_the_item_with_the_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(agent=AGENT)
    pytester.makefile(
        ".yaml",
        broken=textwrap.dedent(
            """\
            agent: agent.py:build_broken
            scenarios:
              - {name: never runs, input: hi, expect: {tool_calls: [add]}}
            """
        ),
    )
    result = pytester.runpytest("--harness-scenarios")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*never runs*: error*", "*error (factory): RuntimeError: *factory is broken on purpose*"]
    )


def test_junit_xml_carries_the_reasons(project: pytest.Pytester) -> None:
    xml_path = project.path / "junit.xml"
    project.runpytest("--harness-scenarios", f"--junitxml={xml_path}")
    cases = {case.get("name"): case for case in ET.parse(xml_path).iter("testcase")}
    failure = cases["wrong args"].find("failure")
    assert failure is not None
    for text in (failure.get("message", ""), failure.text or ""):
        assert "tool_call_accuracy 0.00 < 1.00" in text
        assert "forbidden tool called: #2 explode(reason='boom')" in text
    assert "/b: b=4, expected 3" in (failure.text or "")
    skipped = cases["known bug"].find("skipped")
    assert skipped is not None
    assert skipped.get("message") == "adds the wrong numbers"
    assert cases["adds"].find("failure") is None


# Allure's rule (and pytest-rerunfailures' ``--only-rerun AssertionError``): a test that raised
# an AssertionError failed; any other exception means the test itself is broken.
KIND_BY_CLASS = """
import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if call.when == "call" and call.excinfo is not None:
        kind = "failed" if call.excinfo.errisinstance(AssertionError) else "broken"
        item.user_properties.append(("kind", kind))
    return report
"""


def test_a_failing_scenario_is_a_failed_test_not_a_broken_one(project: pytest.Pytester) -> None:
    project.makeconftest(KIND_BY_CLASS)
    xml_path = project.path / "junit.xml"
    result = project.runpytest("--harness-scenarios", "-k", "wrong", f"--junitxml={xml_path}")
    result.assert_outcomes(failed=1, errors=0)
    (case,) = ET.parse(xml_path).iter("testcase")
    assert [child.tag for child in case if child.tag in ("failure", "error")] == ["failure"]
    kinds = [p.get("value") for p in case.iter("property") if p.get("name") == "kind"]
    assert kinds == ["failed"]


def _outcomes(xml_path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for case in ET.parse(xml_path).iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        out[f"{case.get('classname')}::{case.get('name')}"] = kinds[0] if kinds else "passed"
    return out


@pytest.mark.slow
def test_xdist_gives_the_same_results_as_one_process(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(agent=AGENT)
    pytester.makefile(".yaml", suite=SUITE, flaky=FLAKY)
    # a second copy of the suite in a subfolder, so the workers have files to share out
    sub = pytester.mkdir("more")
    (sub / "agent.py").write_text(AGENT)
    (sub / "suite.yaml").write_text(SUITE.replace("suite: calc", "suite: calc2"))
    serial = pytester.runpytest_subprocess("--harness-scenarios", "--junitxml=serial.xml")
    spread = pytester.runpytest_subprocess("--harness-scenarios", "-n", "2", "--junitxml=xdist.xml")
    serial.assert_outcomes(passed=3, failed=3, xfailed=2, xpassed=2)
    spread.assert_outcomes(passed=3, failed=3, xfailed=2, xpassed=2)
    assert "2 workers" in spread.stdout.str()
    assert _outcomes(pytester.path / "serial.xml") == _outcomes(pytester.path / "xdist.xml")
    assert len(_outcomes(pytester.path / "serial.xml")) == 10


# --- fixtures -------------------------------------------------------------------------------


def test_fixtures_in_sync_async_and_anyio_tests(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(agent=AGENT)
    pytester.makepyfile(
        test_fixtures="""
        import pytest
        from langchain_core.language_models import BaseChatModel

        from agent import build
        from harness.assertions import expect_tools

        SCRIPT = [{"tool_calls": [{"name": "add", "args": {"a": 2, "b": 3}}]}, {"content": "5"}]
        QUESTION = {"messages": [("user", "What is 2 + 3?")]}


        def test_sync(tool_recorder, harness_model):
            assert tool_recorder.calls() == []
            build(harness_model(script=SCRIPT)).invoke(QUESTION, tool_recorder.config)
            expect_tools(tool_recorder).called("add", a=2, b=3).accuracy_at_least(1.0)


        def test_recorder_is_fresh_per_test(tool_recorder):
            assert tool_recorder.calls() == []


        async def test_async(tool_recorder, harness_model):
            await build(harness_model(script=SCRIPT)).ainvoke(QUESTION, tool_recorder.config)
            expect_tools(tool_recorder).called("add", a=2, b=3).no_unexpected_calls()
            assert tool_recorder.last_output() == "5"


        @pytest.mark.anyio
        async def test_anyio(tool_recorder, harness_model):
            await build(harness_model(script=SCRIPT)).ainvoke(QUESTION, tool_recorder.config)
            assert [c.name for c in tool_recorder.calls()] == ["add"]


        def test_demo_model(harness_model):
            assert isinstance(harness_model(), BaseChatModel)
            assert type(harness_model("demo")).__name__ == "DemoChatModel"
            assert type(harness_model(script=SCRIPT)).__name__ == "ScriptedChatModel"
        """
    )
    result = pytester.runpytest("-p", "anyio", "-v")
    result.assert_outcomes(passed=5)


def test_failed_test_using_the_recorder_lists_the_recorded_calls(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(agent=AGENT)
    pytester.makepyfile(
        test_fail="""
        from agent import build

        def test_it(tool_recorder, harness_model):
            script = [{"tool_calls": [{"name": "explode", "args": {"reason": "x"}}]}]
            build(harness_model(script=script)).invoke({"messages": [("user", "go")]},
                                                       tool_recorder.config)
            assert False, "on purpose"
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*harness: recorded tool calls*", "1. explode(reason='x') [[]error: *exploded: x*[]]"]
    )


def test_plugin_is_loaded_through_the_entry_point(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--help")
    result.stdout.fnmatch_lines(["*--harness-scenarios*"])
    assert "harness_scenarios" in result.stdout.str()


def test_loading_the_plugin_imports_none_of_the_heavy_modules() -> None:
    code = (
        "import sys, harness.pytest_plugin\n"
        "heavy = ['harness.scenarios', 'harness.run.runner', 'harness.report', 'harness.models',"
        " 'harness.metrics', 'langgraph', 'yaml', 'rich']\n"
        "print([m for m in heavy if m in sys.modules])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
