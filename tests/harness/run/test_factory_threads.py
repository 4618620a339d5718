"""Sync agent factories: built on a worker thread (the loop holds briefly), sessions closed."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from langchain_core.language_models import BaseChatModel

from harness.expectation import Expectation
from harness.models.scripted import ScriptedChatModel
from harness.run.runner import FACTORY_HOLD, RunOptions, run_scenarios
from harness.scenarios import AgentRef, Scenario
from harness.scenarios.agents import AgentSession, resolve_agent
from tests.support.paths import FIXTURES

build_tool_agent = resolve_agent(f"{FIXTURES / 'fixture_agent.py'}:build", FIXTURES).factory
"""The fixture suites' ReAct graph with an ``add`` tool, built from ``model``."""

ADD_SCRIPT = [{"tool_calls": [{"name": "add", "args": {"a": 2, "b": 3}}]}, {"content": "5"}]


def scenario(name: str, factory: Callable[..., Any], timeout: float = 10.0) -> Scenario:
    return Scenario(
        suite="threads",
        name=name,
        file="<test>",
        line=None,
        agent=AgentRef(f"test:{name}", factory),
        model=ScriptedChatModel(ADD_SCRIPT),
        input={"messages": [("user", "2 + 3?")]},
        input_text="2 + 3?",
        expected=(Expectation("add", {"a": 2, "b": 3}),),
        timeout=timeout,
    )


def test_a_sync_factory_runs_off_the_loop_thread_and_its_agent_is_scored() -> None:
    threads: list[int] = []

    def build(model: BaseChatModel) -> Any:
        threads.append(threading.get_ident())
        return build_tool_agent(model)

    result = run_scenarios([scenario("adds", build)])
    (only,) = result.scenarios
    assert only.status == "passed", only.reasons
    assert threads and threads[0] != threading.get_ident()


def test_a_hung_sync_factory_times_out_and_does_not_hold_the_others() -> None:
    release = threading.Event()

    def hangs(model: BaseChatModel) -> Any:
        release.wait(30)  # far past the timeout: only the timeout may end this scenario
        return build_tool_agent(model)

    start = time.perf_counter()
    try:
        result = run_scenarios(
            [scenario("hangs", hangs, timeout=0.5), scenario("fine", build_tool_agent)],
            RunOptions(concurrency=2),
        )
    finally:
        release.set()
    elapsed = time.perf_counter() - start
    hung, fine = result.scenarios
    assert hung.status == "error"
    error = hung.runs[0].error
    assert error is not None and error.phase == "timeout"
    assert fine.status == "passed", fine.reasons
    assert elapsed < 5  # the loop held the hung build for FACTORY_HOLD only, not until release
    assert FACTORY_HOLD < 0.05  # well below a heartbeat: a hold is never a loop stall


async def _sync_call(func: Callable[..., Any], **kwargs: Any) -> Any:
    return func(**kwargs)


def test_a_plain_agents_session_has_nothing_to_close() -> None:
    async def go() -> tuple[bool, bool]:
        session = AgentSession(build_tool_agent, ScriptedChatModel(ADD_SCRIPT), _sync_call)
        await session.open()
        await asyncio.sleep(0)  # the owner task ends once the agent is handed over
        before = session.needs_closing
        await session.close()
        return before, session.needs_closing

    assert asyncio.run(go()) == (False, False)


def test_a_context_manager_agents_session_stays_open_until_closed() -> None:
    events: list[str] = []

    @contextlib.contextmanager
    def managed(model: BaseChatModel) -> Iterator[Any]:
        events.append("open")
        yield build_tool_agent(model)
        events.append("close")

    async def go() -> tuple[bool, bool]:
        session = AgentSession(managed, ScriptedChatModel(ADD_SCRIPT), _sync_call)
        await session.open()
        await asyncio.sleep(0)
        before = session.needs_closing
        await session.close()
        return before, session.needs_closing

    assert asyncio.run(go()) == (True, False)
    assert events == ["open", "close"]
