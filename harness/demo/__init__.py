"""Demo agents: small real LangGraph agents with real tools over bundled data.

Each module exposes ``build(model) -> compiled graph``; the harness passes the chat model as
``model=``, so the same agent runs under the demo, scripted or a real provider's model. They ship
in the package (data as package data) so the documented examples and ``harness init`` run from a
plain install; the example suites in the repository's ``scenarios/`` name them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition

__all__ = ["build_tool_agent"]


def build_tool_agent(
    model: BaseChatModel, tools: Sequence[BaseTool], *, system_prompt: str, name: str
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The classic tool loop as an explicit graph: agent -> tools -> agent ... -> END."""
    bound = model.bind_tools(list(tools))

    def prompt(state: MessagesState) -> list[BaseMessage]:
        return [SystemMessage(system_prompt), *state["messages"]]

    def call_model(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [bound.invoke(prompt(state), config)]}

    async def acall_model(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(prompt(state), config)]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", RunnableLambda(call_model, afunc=acall_model, name="agent"))
    graph.add_node("tools", ToolNode(list(tools)))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition, ["tools", END])
    graph.add_edge("tools", "agent")
    return graph.compile(name=name)
