"""Runner throughput: 1,000 scenarios, a scripted model sleeping 50 ms per turn, concurrency 50.

Each scenario builds its agent with its factory — a real LangGraph ReAct graph (model node +
ToolNode), or the same tool loop written without LangGraph — runs two model turns (one tool
call, then the answer), is recorded with a ToolCallRecorder and scored with tool_call_accuracy.
Prints the wall time, the ideal (scenarios x turns x latency / concurrency) and their ratio
(DESIGN §11 target: <= 1.5), then the runner's own cost per scenario with a zero-latency model
(runner time minus the same agent runs done one after another without the runner). Then the
same run over ``--workers`` processes (``harness run -n N``, harness/run_workers.py) with the same
total concurrency: its ratio against the ideal (issue target on 2 cores: <= 1.6) and its speed-up
over the one-process run measured just before.

    .venv/bin/python benchmarks/bench_runner.py [--scenarios 1000] [--concurrency 50] [--workers 2]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import time
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from harness.expectation import Expectation
from harness.metrics import get_metric
from harness.models.scripted import ScriptedChatModel
from harness.run_workers import run_scenarios_in_workers
from harness.runner import RunOptions, run_scenarios
from harness.scenarios import AgentRef, Scenario
from tracing.callback import ToolCallRecorder

TURNS = 2


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def build(model: BaseChatModel) -> Any:
    """The classic ReAct graph with the tool bound."""
    bound = model.bind_tools([add])

    def call(state: MessagesState, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        return {"messages": [bound.invoke(state["messages"], config)]}

    async def acall(state: MessagesState, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        return {"messages": [await bound.ainvoke(state["messages"], config)]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", RunnableLambda(call, afunc=acall, name="agent"))
    builder.add_node("tools", ToolNode([add]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile()


class LoopAgent:
    """The same tool loop without LangGraph: model turn, run the tools, repeat until answered.

    Model and tool are invoked with the run's config, so the recorder sees every call exactly
    as in the graph; what is left out is LangGraph's own per-step machinery.
    """

    def __init__(self, model: BaseChatModel) -> None:
        """Bind the tool once, as a real agent would at build time."""
        self.bound = model.bind_tools([add])
        self.tools = {"add": add}

    async def ainvoke(self, payload: dict[str, Any], config: RunnableConfig | None = None) -> Any:
        """Run the loop; returns ``{"messages": [...]}`` like the graph."""
        messages: list[Any] = list(payload["messages"])
        while True:
            reply = await self.bound.ainvoke(messages, config)
            messages.append(reply)
            if not reply.tool_calls:
                return {"messages": messages}
            for call in reply.tool_calls:
                messages.append(await self.tools[call["name"]].ainvoke(call, config))


def build_loop(model: BaseChatModel) -> Any:
    """Factory of the LangGraph-free loop agent."""
    return LoopAgent(model)


FACTORIES = {"langgraph": build, "loop": build_loop}


def make_scenarios(count: int, latency: float, agent_kind: str = "langgraph") -> list[Scenario]:
    """``count`` scenarios: one add call then an answer, each with its own scripted model."""
    agent = AgentRef(f"bench_runner:{agent_kind}", FACTORIES[agent_kind])
    metric = get_metric("tool_call_accuracy")
    out = []
    for index in range(count):
        a, b = index, index + 1
        model = ScriptedChatModel(
            [{"tool_calls": [{"name": "add", "args": {"a": a, "b": b}}]}, {"content": "done"}],
            latency=latency,
        )
        out.append(
            Scenario(
                suite="bench",
                name=f"s{index}",
                file="<bench>",
                line=None,
                agent=agent,
                model=model,
                input={"messages": [("user", f"{a} + {b}?")]},
                input_text=f"{a} + {b}?",
                expected=(Expectation("add", {"a": a, "b": b}),),
                metrics=(metric,),
            )
        )
    return out


def measure(
    count: int, latency: float, concurrency: int, agent: str, workers: int = 1
) -> tuple[float, int]:
    """Wall seconds for one run of ``count`` scenarios, and how many passed (``workers`` > 1:
    over that many processes, as ``harness run -n``)."""
    scenarios = make_scenarios(count, latency, agent)
    gc.collect()
    start = time.perf_counter()
    options = RunOptions(concurrency=concurrency)
    if workers > 1:
        result = run_scenarios_in_workers(scenarios, options, workers=workers)
    else:
        result = run_scenarios(scenarios, options)
    wall = time.perf_counter() - start
    return wall, result.counts["passed"]


def bare(count: int, agent: str) -> float:
    """Seconds for the same agent runs, one after another, with a recorder but no runner."""
    scenarios = make_scenarios(count, 0.0, agent)
    factory = FACTORIES[agent]

    async def go() -> None:
        for scenario in scenarios:
            recorder = ToolCallRecorder()
            await factory(scenario.model).ainvoke(scenario.input, recorder.config)
            recorder.sample(expected=list(scenario.expected))

    gc.collect()
    start = time.perf_counter()
    asyncio.run(go())
    return time.perf_counter() - start


def report(args: argparse.Namespace, agent: str) -> None:
    """Both measurements for one agent kind."""
    measure(50, 0.0, args.concurrency, agent)  # warm-up: imports, first graph compile
    wall, passed = measure(args.scenarios, args.latency, args.concurrency, agent)
    ideal = args.scenarios * TURNS * args.latency / args.concurrency
    ratio = wall / ideal
    print(
        f"[{agent}] {args.scenarios} scenarios x {TURNS} turns x {args.latency * 1000:.0f} ms, "
        f"concurrency {args.concurrency}: {passed} passed"
    )
    print(
        f"  wall time {wall:.2f} s, ideal {ideal:.2f} s, ratio {ratio:.2f} "
        f"(target <= 1.5: {'met' if ratio <= 1.5 else 'NOT met'})"
    )
    if args.workers > 1:
        many, many_passed = measure(
            args.scenarios, args.latency, args.concurrency, agent, args.workers
        )
        many_ratio = many / ideal
        print(
            f"  -n {args.workers} (same total concurrency): {many_passed} passed, wall time "
            f"{many:.2f} s, ratio {many_ratio:.2f} (target <= 1.6: "
            f"{'met' if many_ratio <= 1.6 else 'NOT met'}), {wall / many:.2f}x the 1-process run"
        )
    zero_wall, _ = measure(args.scenarios, 0.0, args.concurrency, agent)
    alone = bare(args.scenarios, agent)
    per = zero_wall / args.scenarios * 1000
    own = (zero_wall - alone) / args.scenarios * 1000
    print(
        f"  zero-latency model: {per:.2f} ms per scenario through the runner; the same agent "
        f"runs alone (recorder, no runner): {alone / args.scenarios * 1000:.2f} ms; runner's "
        f"own cost: {own:.2f} ms per scenario"
    )
    # The agents' own CPU time is a floor no runner in one process can beat: latency overlaps,
    # CPU does not (one GIL). Printing it shows how much of the ratio is the runner's.
    floor = max(ideal, alone)
    print(
        f"  CPU floor: the agent runs alone need {alone:.2f} s of CPU in one process, so the best "
        f"a single-process runner can do is {floor:.2f} s, ratio {floor / ideal:.2f}; "
        f"measured/floor {wall / floor:.2f}"
    )


def main() -> None:
    """Run the measurements for each agent kind and print the figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--agent", choices=[*FACTORIES, "both"], default="both")
    parser.add_argument("--quick", action="store_true", help="200 scenarios instead of 1,000")
    parser.add_argument(
        "--workers", type=int, default=2, help="processes of the -n run (1: skip it; default 2)"
    )
    args = parser.parse_args()
    if args.quick:
        args.scenarios = min(args.scenarios, 200)
    print(f"cpus: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}")
    for agent in FACTORIES if args.agent == "both" else [args.agent]:
        report(args, agent)


if __name__ == "__main__":
    main()
