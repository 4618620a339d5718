"""``harness validate`` finds nested agents' tools: subgraphs, Send workers, agents as tools."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness.cli import main
from harness.demo import supervisor
from harness.models import make_model
from harness.scenarios import agent_tools, check_tools, load_file
from tests.support.paths import ROOT

# Real multi-agent graphs: a parent whose only nodes are subgraphs; a fan-out with Send to a
# worker node that invokes its own agent; both built from the demo tool loop.
AGENTS = '''
import operator
from typing import Annotated, Any

from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Send
from typing_extensions import TypedDict

from harness.demo import build_tool_agent


@tool
def lookup_order(order_id: str) -> str:
    """Look an order up."""
    return "shipped"


@tool
def refund(order_id: str, amount: float) -> str:
    """Refund an order."""
    return "refunded"


def subgraphs(model):
    orders = build_tool_agent(model, [lookup_order], system_prompt="orders", name="orders")
    refunds = build_tool_agent(model, [refund], system_prompt="refunds", name="refunds")
    parent = StateGraph(MessagesState)
    parent.add_node("orders", orders)
    parent.add_node("refunds", refunds)
    parent.add_edge(START, "orders")
    parent.add_edge("orders", "refunds")
    return parent.compile(name="desk")


class Fan(TypedDict):
    items: list[str]
    done: Annotated[list[str], operator.add]


def fan_out(model):
    worker_agent = build_tool_agent(model, [lookup_order], system_prompt="w", name="worker")

    def work(state: dict[str, Any]) -> dict[str, Any]:
        worker_agent.invoke({"messages": [("user", state["item"])]})
        return {"done": [state["item"]]}

    def spread(state: Fan) -> list[Send]:
        return [Send("work", {"item": item}) for item in state["items"]]

    graph = StateGraph(Fan)
    graph.add_node("work", work)
    graph.add_conditional_edges(START, spread, ["work"])
    graph.add_edge("work", END)
    return graph.compile()
'''


def _suite(tmp_path: Path, agent: str, calls: str) -> Path:
    (tmp_path / "nested_agents.py").write_text(AGENTS, encoding="utf-8")
    path = tmp_path / "nested.yaml"
    path.write_text(
        textwrap.dedent(
            f"""\
            agent: {agent}
            scenarios:
              - name: nested
                input: hi
                expect:
                  tool_calls: {calls}
            """
        ),
        encoding="utf-8",
    )
    return path


def test_supervisor_workers_tools_are_found() -> None:
    tools = agent_tools(supervisor.build(make_model("demo")))
    assert tools is not None
    assert sorted(tools) == [
        "ask_currency_agent",
        "ask_weather_agent",
        "convert_currency",
        "get_weather",
    ]


def test_misspelt_tool_and_argument_of_a_worker_are_reported(tmp_path: Path) -> None:
    path = _suite(
        tmp_path,
        "harness.demo.supervisor:build",
        "[{name: get_wether, args: {city: Oslo}}, {name: convert_currency, args: {amout: 3}}]",
    )
    issues = [str(issue) for issue in check_tools([load_file(path)])]
    assert any("unknown tool 'get_wether' — did you mean 'get_weather'?" in i for i in issues)
    assert any(
        "unknown argument 'amout' for tool 'convert_currency' — did you mean 'amount'?" in i
        for i in issues
    ), issues


def test_subgraph_nodes_are_walked(tmp_path: Path) -> None:
    good = _suite(tmp_path, "nested_agents.py:subgraphs", "[lookup_order, refund]")
    assert check_tools([load_file(good)]) == []
    bad = _suite(tmp_path, "nested_agents.py:subgraphs", "[{name: refund, args: {amount: x}}]")
    [issue] = check_tools([load_file(bad)])
    assert "wrong type for argument 'amount' of tool 'refund': expected number" in str(issue)


def test_send_workers_that_invoke_an_agent_are_walked(tmp_path: Path) -> None:
    good = _suite(tmp_path, "nested_agents.py:fan_out", "[lookup_order]")
    assert check_tools([load_file(good)]) == []
    bad = _suite(tmp_path, "nested_agents.py:fan_out", "[lookup_ordr]")
    [issue] = check_tools([load_file(bad)])
    assert "unknown tool 'lookup_ordr' — did you mean 'lookup_order'?" in str(issue)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_langgraph_supervisor_agents_are_walked() -> None:
    langgraph_supervisor = pytest.importorskip("langgraph_supervisor")
    from langchain.agents import create_agent

    from harness.demo.supervisor import _currency_tools, _weather_tools

    model = make_model("demo")
    weather = create_agent(model, _weather_tools(), name="weather_expert")
    money = create_agent(model, _currency_tools(), name="money_expert")
    graph = langgraph_supervisor.create_supervisor([weather, money], model=model).compile()
    tools = agent_tools(graph)
    assert tools is not None
    assert {"get_weather", "convert_currency"} <= set(tools)


def test_validate_cli_accepts_the_shipped_suites(capsys: pytest.CaptureFixture[str]) -> None:
    root = ROOT / "scenarios"
    code = main(["validate", str(root)])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
