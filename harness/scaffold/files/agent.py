"""A starter agent: a LangGraph tool loop with two tools. Make it yours.

``build(model)`` is the factory the harness calls, as ``build(model=<chat model>)``: the suite
(``starter.yaml``) passes the built-in demo model, the pytest test (``test_agent.py``) passes
``harness_model("demo")``, and your application passes its real chat model. Swap the tools and
the prompt for your own; keep the factory's shape.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import ToolException, tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

SYSTEM_PROMPT = "You are a helpful assistant. Use a tool whenever one fits the question."

WEATHER = {"berlin": "18 °C, light rain", "lisbon": "26 °C, sunny", "oslo": "9 °C, cloudy"}


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    report = WEATHER.get(city.strip().lower())
    if report is None:
        raise ToolException(f"no weather for {city!r}; known: {', '.join(sorted(WEATHER))}")
    return f"{city}: {report}"


@tool
def add(a: float, b: float) -> float:
    """Add two numbers: a plus b."""
    return a + b


TOOLS = [get_weather, add]


def build(model: BaseChatModel) -> Runnable[Any, Any]:
    """The agent, driven by ``model``: agent -> tools -> agent ... -> END."""
    bound = model.bind_tools(TOOLS)

    def call_model(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        # Passing ``config`` on is what lets the harness's recorder see every call.
        messages = [SystemMessage(SYSTEM_PROMPT), *state["messages"]]
        return {"messages": [bound.invoke(messages, config)]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", call_model)
    graph.add_node("tools", ToolNode(TOOLS, handle_tool_errors=True))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition, ["tools", END])
    graph.add_edge("tools", "agent")
    return graph.compile(name="starter")
