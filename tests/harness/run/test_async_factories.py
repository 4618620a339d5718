"""Async agent factories: awaited, their context managers closed after the runs, validated."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from harness.run.results import ScenarioResult
from harness.run.runner import RunOptions, run_scenarios
from harness.scenarios import check_tools, load_file

# Factories in the style of the langchain-mcp-adapters README: an async function that opens a
# session (here a real async resource writing to a log file) before building a real LangGraph
# agent over real tools. The log shows what was opened and closed, and in which order.
AGENTS = '''
import asyncio
import contextlib
import json
import os

from langchain_core.tools import tool

from harness.demo import build_tool_agent

def note(event):
    with open(os.environ["HARNESS_TEST_LOG"], "a", encoding="utf-8") as handle:
        handle.write(json.dumps(event) + "\\n")


class Session:
    """An async resource (think: an MCP client session) the tools need while the agent runs."""

    def __init__(self):
        self.open = False

    async def __aenter__(self):
        await asyncio.sleep(0)
        self.open = True
        note("open")
        return self

    async def __aexit__(self, *exc):
        self.open = False
        note("close")


def tools_over(session):
    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        if not session.open:
            raise RuntimeError("session closed")
        return a + b

    return [add]


async def coroutine_factory(model):
    session = Session()
    await session.__aenter__()  # left open: a plain coroutine factory has nothing to close
    return build_tool_agent(model, tools_over(session), system_prompt="add", name="calc")


async def generator_factory(model):
    async with Session() as session:
        yield build_tool_agent(model, tools_over(session), system_prompt="add", name="calc")


class Managed:
    """What an async factory may return: an async context manager whose value is the agent."""

    def __init__(self, model):
        self.model = model
        self.session = Session()

    async def __aenter__(self):
        await self.session.__aenter__()
        tools = tools_over(self.session)
        return build_tool_agent(self.model, tools, system_prompt="add", name="calc")

    async def __aexit__(self, *exc):
        await self.session.__aexit__(*exc)


async def managed_factory(model):
    return Managed(model)


async def raising_factory(model):
    await asyncio.sleep(0)
    raise ConnectionError("MCP server not reachable")
'''


def _suite(tmp_path: Path, factory: str, *, repeat: int = 1, args: str = "{a: 2, b: 3}") -> Path:
    (tmp_path / "async_agents.py").write_text(AGENTS, encoding="utf-8")
    path = tmp_path / f"{factory}.yaml"
    path.write_text(
        textwrap.dedent(
            f"""\
            agent: async_agents.py:{factory}
            model: {{provider: scripted}}
            scenarios:
              - name: adds
                input: 2 + 3?
                repeat: {repeat}
                script:
                  - tool_calls: [{{name: add, args: {args}}}]
                  - content: "5"
                expect:
                  tool_calls: [{{name: add, args: {args}}}]
                  no_errors: true
            """
        ),
        encoding="utf-8",
    )
    return path


def _run(path: Path) -> ScenarioResult:
    suite = load_file(path)
    [result] = run_scenarios(list(suite.scenarios), RunOptions(concurrency=1)).scenarios
    return result


def _log(path: Path) -> list[str]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file the factories write "open" / "close" to."""
    path = tmp_path / "log.jsonl"
    monkeypatch.setenv("HARNESS_TEST_LOG", str(path))
    return path


def test_coroutine_factory_is_awaited(tmp_path: Path, log: Path) -> None:
    result = _run(_suite(tmp_path, "coroutine_factory"))
    assert result.status == "passed", result.reasons
    assert [(c.name, c.status) for c in result.runs[0].calls] == [("add", "ok")]
    assert _log(log) == ["open"]


def test_async_generator_factory_is_closed_after_all_runs(tmp_path: Path, log: Path) -> None:
    result = _run(_suite(tmp_path, "generator_factory", repeat=2))
    assert result.status == "passed", result.reasons
    assert [run.calls[0].status for run in result.runs] == ["ok", "ok"]
    assert _log(log) == ["open", "close"]  # opened once, closed once, after both runs


def test_returned_async_context_manager_is_entered_and_closed(tmp_path: Path, log: Path) -> None:
    result = _run(_suite(tmp_path, "managed_factory"))
    assert result.status == "passed", result.reasons
    assert _log(log) == ["open", "close"]


def test_async_factory_that_raises_is_a_factory_error(tmp_path: Path, log: Path) -> None:
    result = _run(_suite(tmp_path, "raising_factory"))
    assert result.status == "error"
    error = result.runs[0].error
    assert error is not None and error.phase == "factory"
    assert "MCP server not reachable" in error.message
    assert "never awaited" not in error.message


def test_validate_builds_async_factories_and_closes_them(tmp_path: Path, log: Path) -> None:
    good = load_file(_suite(tmp_path, "generator_factory"))
    assert check_tools([good]) == []
    assert _log(log) == ["open", "close"]
    bad = load_file(_suite(tmp_path, "managed_factory", args="{a: 2, c: 3}"))
    [issue] = check_tools([bad])
    assert "unknown argument 'c' for tool 'add'" in str(issue)
    raising = load_file(_suite(tmp_path, "raising_factory"))
    [issue] = check_tools([raising])
    assert "raised ConnectionError: MCP server not reachable" in str(issue)
