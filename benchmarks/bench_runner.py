"""Runner throughput: 1,000 scenarios, a model sleeping 50 ms per turn, concurrency 50.

Every scenario runs two model turns (one ``add`` call, then the answer), is recorded with a
ToolCallRecorder and scored with tool_call_accuracy. Three variants:

- ``langgraph``: a real LangGraph ReAct graph (model node + ToolNode) built per scenario by its
  factory, each scenario with its own ScriptedChatModel (so its own model configuration);
- ``langgraph-reuse``: the same graph, but every scenario shares one rule-driven chat model that
  answers from the input ("a + b?" gives an ``add`` call, the tool's result gives the answer),
  and ``agent_reuse`` is on, so the runner compiles the graph once for the whole run;
- ``loop``: the same tool loop written without LangGraph, built per scenario.

For each: the wall time against the ideal (scenarios x turns x latency / concurrency) and their
ratio, the shortest of ``--wall-repeat`` runs taken in turns, in one process (target <= 1.5)
and over ``--workers`` processes with the same total concurrency (``harness run -n N``,
harness/parallel/runs.py; target on 2 cores: <= 1.6). Then, with a zero-latency model, the CPU
time per scenario (``time.process_time``; the worker processes' too for ``-n``) of the agent
runs alone (recorder, no runner) and through the runner; the difference is the runner's own
cost. CPU, not wall time: on a shared machine the wall time of the runs alone grows with
everyone else's load, their CPU time much less. Latency overlaps and CPU does not, so CPU per
scenario / cores is a floor no runner can beat (docs/architecture.md,
"Threading and concurrency contracts").

Each timed run starts as ``harness run`` starts its run, with the cyclic collector set for a
command (``harness.cli.common.collector_for_a_command``: what was loaded frozen, young
collections rarer); the agents-alone runs too, so the two stay like for like.

The machine line prints a calibration: the CPU time of a fixed pure-Python loop. The speed of a
shared virtual CPU drifts (by 40% within minutes here), so compare figures of different runs only
at similar calibrations, and prefer the repeated minimums.

    .venv/bin/python benchmarks/bench_runner.py [--scenarios 1000] [--concurrency 50]
        [--workers 2] [--agent langgraph|langgraph-reuse|loop|all] [--wall-repeat 2] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.tools import BaseTool, tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from harness.cli.common import collector_for_a_command
from harness.expectation import Expectation
from harness.metrics import get_metric
from harness.models.scripted import ScriptedChatModel
from harness.models.wrapping import Turn, TurnChatModel
from harness.parallel.runs import run_scenarios_in_workers
from harness.run.isolation import DaemonExecutor
from harness.run.runner import RunOptions, run_scenarios
from harness.sample import Sample
from harness.scenarios import AgentRef, Scenario
from tracing.langchain.recorder import ToolCallRecorder

TURNS = 2
TARGET_ONE_PROCESS = 1.5
TARGET_WORKERS = 1.6


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


_SUM = re.compile(r"(-?\d+)\s*\+\s*(-?\d+)")


class ArithmeticChatModel(TurnChatModel):
    """Answers from the conversation: "a + b?" asks for ``add(a, b)``, a tool result is the answer.

    It holds no script, so one instance (one model configuration) serves every scenario, as a
    provider model would; the answer depends on the input alone.
    """

    latency: float = 0.0
    """Seconds to wait per turn (``asyncio.sleep``; ``time.sleep`` when called sync)."""

    @property
    def _llm_type(self) -> str:
        return "arithmetic"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind the tools as OpenAI-format schemas, as a provider does."""
        return self.bind(tools=[convert_to_openai_tool(item) for item in tools], **kwargs)

    def _reply(self, turn: Turn) -> AIMessage:
        if self.latency:
            time.sleep(self.latency)
        return arithmetic_reply(turn.messages)

    async def _areply(self, turn: Turn) -> AIMessage:
        if self.latency:
            await asyncio.sleep(self.latency)
        return arithmetic_reply(turn.messages)


def arithmetic_reply(messages: Sequence[BaseMessage]) -> AIMessage:
    """The reply to ``messages``: the last tool result, else an ``add`` call for "a + b"."""
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return AIMessage(content=str(last.content))
    asked = next((m for m in reversed(messages) if isinstance(m, HumanMessage)), None)
    found = _SUM.search(str(asked.content)) if asked is not None else None
    if found is None:
        return AIMessage(content="I can only add two integers.")
    a, b = int(found.group(1)), int(found.group(2))
    call = ToolCall(name="add", args={"a": a, "b": b}, id=f"call_add_{a}_{b}", type="tool_call")
    return AIMessage(content="", tool_calls=[call])


@dataclass(frozen=True, slots=True)
class Variant:
    """How the scenarios of one variant get their agent."""

    factory: Callable[[BaseChatModel], Any]
    shared_model: bool
    """One ArithmeticChatModel for every scenario and ``agent_reuse`` on (else a
    ScriptedChatModel per scenario, each its own model configuration)."""


VARIANTS = {
    "langgraph": Variant(build, shared_model=False),
    "langgraph-reuse": Variant(build, shared_model=True),
    "loop": Variant(build_loop, shared_model=False),
}


def make_scenarios(count: int, latency: float, variant: str = "langgraph") -> list[Scenario]:
    """``count`` scenarios of ``variant``: one add call, then an answer."""
    kind = VARIANTS[variant]
    agent = AgentRef(f"bench_runner:{variant}", kind.factory)
    metric = get_metric("tool_call_accuracy")
    shared = ArithmeticChatModel(latency=latency) if kind.shared_model else None
    out = []
    for index in range(count):
        a, b = index, index + 1
        model: BaseChatModel = shared or ScriptedChatModel(
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
                agent_reuse=kind.shared_model,
                model_config="arithmetic" if kind.shared_model else f"scripted-{index}",
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class Timing:
    """One measured run: wall seconds, CPU seconds of every process, scenarios passed."""

    wall: float
    cpu: float
    passed: int = 0


def _cpu() -> float:
    """CPU seconds of this process and of its reaped children (the ``-n`` workers)."""
    times = os.times()
    return time.process_time() + times.children_user + times.children_system


def measure(count: int, latency: float, concurrency: int, variant: str, workers: int = 1) -> Timing:
    """One run of ``count`` scenarios through the runner (``workers`` > 1: over that many
    processes, as ``harness run -n``)."""
    scenarios = make_scenarios(count, latency, variant)
    options = RunOptions(concurrency=concurrency)
    gc.collect()
    with collector_for_a_command():  # as `harness run` runs its scenarios
        cpu, start = _cpu(), time.perf_counter()
        if workers > 1:
            result = run_scenarios_in_workers(scenarios, options, workers=workers)
        else:
            result = run_scenarios(scenarios, options)
    return Timing(time.perf_counter() - start, _cpu() - cpu, result.counts["passed"])


def bare(count: int, variant: str, concurrency: int) -> Timing:
    """The same agent runs with a recorder but no runner (zero latency), as concurrent as the
    runner's: one after another, every executor hop of a sync tool would leave the loop idle
    and pay a thread wake-up the runner mostly overlaps. A shared-model variant builds its
    agent once, as ``agent_reuse`` does."""
    scenarios = make_scenarios(count, 0.0, variant)
    kind = VARIANTS[variant]
    shared = kind.factory(scenarios[0].model) if kind.shared_model else None

    async def one(scenario: Scenario, slots: asyncio.Semaphore) -> None:
        async with slots:
            agent = shared if shared is not None else kind.factory(scenario.model)
            recorder = ToolCallRecorder()
            await agent.ainvoke(scenario.input, recorder.config)
            Sample.from_recorder(recorder, list(scenario.expected))

    async def go() -> None:
        # the executor run_scenarios gives the loop (sync tools run there): like for like
        asyncio.get_running_loop().set_default_executor(DaemonExecutor())
        slots = asyncio.Semaphore(concurrency)
        await asyncio.gather(*(one(scenario, slots) for scenario in scenarios))

    gc.collect()
    with collector_for_a_command():  # like for like with measure()
        cpu, start = _cpu(), time.perf_counter()
        asyncio.run(go())
    return Timing(time.perf_counter() - start, _cpu() - cpu)


def calibration_ms() -> float:
    """CPU milliseconds of a fixed pure-Python loop (best of 3): this machine's speed now."""
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        sum(i * i for i in range(1_000_000))
        best = min(best, time.process_time() - start)
    return best * 1000


@dataclass(frozen=True, slots=True)
class Summary:
    """One variant's headline figures."""

    variant: str
    ratio: float
    workers_ratio: float | None
    agents_cpu_ms: float
    runner_cpu_ms: float


def _met(ratio: float, target: float) -> str:
    return f"target <= {target}: {'met' if ratio <= target else 'NOT met'}"


def report(args: argparse.Namespace, variant: str) -> Summary:
    """Every measurement of one variant, printed; the headline figures returned."""
    count, latency, concurrency = args.scenarios, args.latency, args.concurrency
    measure(50, 0.0, concurrency, variant)  # warm-up: imports, first graph compile
    bare(50, variant, concurrency)
    ideal = count * TURNS * latency / concurrency
    one, many = _walls(args, variant)
    print(
        f"[{variant}] {count} scenarios x {TURNS} turns x {latency * 1000:.0f} ms, "
        f"concurrency {concurrency}: {one.passed} passed"
    )
    print(
        f"  1 process (best of {args.wall_repeat}): wall {one.wall:.2f} s, ideal {ideal:.2f} s, "
        f"ratio {one.wall / ideal:.2f} "
        f"({_met(one.wall / ideal, TARGET_ONE_PROCESS)}); CPU {one.cpu / count * 1000:.2f} ms "
        "per scenario"
    )
    workers_ratio = None
    if many is not None:
        workers_ratio = many.wall / ideal
        print(
            f"  -n {args.workers} (same total concurrency, best of {args.wall_repeat}): "
            f"{many.passed} passed, wall "
            f"{many.wall:.2f} s, ratio {workers_ratio:.2f} ({_met(workers_ratio, TARGET_WORKERS)}),"
            f" {one.wall / many.wall:.2f}x the 1-process run; CPU of all processes "
            f"{many.cpu / count * 1000:.2f} ms per scenario"
        )
    # zero latency: what is left is CPU; the repeated minimum is the least disturbed figure,
    # and the runs alternate so that a slow phase of the machine falls on both sides
    throughs: list[Timing] = []
    alones: list[Timing] = []
    for _ in range(args.repeat):
        throughs.append(measure(count, 0.0, concurrency, variant))
        alones.append(bare(count, variant, concurrency))
    through = min(throughs, key=lambda timing: timing.cpu)
    alone = min(alones, key=lambda timing: timing.cpu)
    agents_ms = alone.cpu / count * 1000
    runner_ms = (through.cpu - alone.cpu) / count * 1000
    print(
        f"  zero-latency model, CPU per scenario (best of {args.repeat}): agent runs alone "
        f"(recorder, no runner) {agents_ms:.2f} ms, through the runner "
        f"{through.cpu / count * 1000:.2f} ms, so the runner's own {runner_ms:.2f} ms "
        f"(wall: {alone.wall / count * 1000:.2f} and {through.wall / count * 1000:.2f} ms)"
    )
    # a difference of two minimums: below the runs' own spread it says nothing
    spread = max(_spread_ms(throughs, count), _spread_ms(alones, count))
    if runner_ms < spread:
        print(
            f"  (the runner's own cost is within the spread of these runs, {spread:.2f} ms per "
            "scenario: not measurable here)"
        )
    cores = min(max(args.workers, 1), os.cpu_count() or 1)
    floor = max(ideal, through.cpu / cores)
    print(
        f"  CPU floor: {through.cpu:.2f} s of CPU through the runner; on {cores} core(s) no run "
        f"can beat {floor:.2f} s, ratio {floor / ideal:.2f}"
    )
    return Summary(variant, one.wall / ideal, workers_ratio, agents_ms, runner_ms)


def _spread_ms(timings: Sequence[Timing], count: int) -> float:
    """How far apart the CPU times of repeated runs lie, in ms per scenario."""
    cpus = [timing.cpu for timing in timings]
    return (max(cpus) - min(cpus)) / count * 1000


def _walls(args: argparse.Namespace, variant: str) -> tuple[Timing, Timing | None]:
    """The shortest of ``--wall-repeat`` runs in one process and over ``--workers`` processes,
    taken in turns so that a slow phase of the shared machine falls on both."""
    count, latency, concurrency = args.scenarios, args.latency, args.concurrency
    one: Timing | None = None
    many: Timing | None = None
    for _ in range(args.wall_repeat):
        run = measure(count, latency, concurrency, variant)
        one = run if one is None or run.wall < one.wall else one
        if args.workers > 1:
            run = measure(count, latency, concurrency, variant, args.workers)
            many = run if many is None or run.wall < many.wall else many
    assert one is not None
    return one, many


def print_summary(summaries: Sequence[Summary], workers: int) -> None:
    """One line per variant: the ratios and the CPU split."""
    print("summary (ratio to the ideal; CPU ms per scenario at zero latency):")
    print(f"  {'variant':16} {'1 process':>9} {f'-n {workers}':>7} {'agents':>7} {'runner':>7}")
    for s in summaries:
        many = f"{s.workers_ratio:.2f}" if s.workers_ratio is not None else "-"
        print(
            f"  {s.variant:16} {s.ratio:9.2f} {many:>7} {s.agents_cpu_ms:7.2f} "
            f"{s.runner_cpu_ms:7.2f}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the measurements for each variant and print the figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--agent", choices=[*VARIANTS, "all"], default="all")
    parser.add_argument("--quick", action="store_true", help="200 scenarios instead of 1,000")
    parser.add_argument(
        "--workers", type=int, default=2, help="processes of the -n run (1: skip it; default 2)"
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="zero-latency CPU runs per figure (best is kept)"
    )
    parser.add_argument(
        "--wall-repeat",
        type=int,
        default=2,
        help="runs of each wall-time figure, in turns with the -n runs (the shortest is kept)",
    )
    args = parser.parse_args(argv)
    if args.wall_repeat < 1 or args.repeat < 1:
        parser.error("--repeat and --wall-repeat need 1 or more")
    if args.quick:
        args.scenarios = min(args.scenarios, 200)
    print(
        f"cpus: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}, calibration: "
        f"{calibration_ms():.0f} ms CPU for a fixed loop"
    )
    chosen = list(VARIANTS) if args.agent == "all" else [args.agent]
    summaries = [report(args, variant) for variant in chosen]
    print_summary(summaries, args.workers)
    print(
        f"load average at the end: {os.getloadavg()[0]:.2f}, calibration: {calibration_ms():.0f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
