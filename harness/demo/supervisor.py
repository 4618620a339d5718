"""Two-agent supervisor: a router agent that delegates to a weather agent and a currency agent.

The LangChain v1 "subagents as tools" pattern: each worker is a ``create_agent`` graph of its
own, and the supervisor calls it through a tool (``ask_weather_agent``, ``ask_currency_agent``).
The harness records the supervisor's calls and, nested under each delegation, the worker's own
calls (``agent`` is ``supervisor/ask_weather_agent``); ``harness validate`` finds the workers'
tools by walking into the delegating tools' agents.
"""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool, ToolException, tool

__all__ = ["build", "make_tools"]

_WEATHER = {"berlin": "21 °C, sunny", "madrid": "31 °C, clear", "oslo": "9 °C, cloudy"}
_EUR_RATES = {"USD": 1.08, "GBP": 0.85, "JPY": 169.0, "EUR": 1.0}


def _weather_tools() -> list[BaseTool]:
    @tool
    def get_weather(city: str) -> str:
        """Today's weather in a city."""
        found = _WEATHER.get(city.strip().lower())
        if found is None:
            raise ToolException(f"no weather for {city!r}")
        return f"{city}: {found}"

    get_weather.handle_tool_error = True
    return [get_weather]


def _currency_tools() -> list[BaseTool]:
    @tool
    def convert_currency(amount: float, from_currency: str, to_currency: str) -> str:
        """Convert an amount of money between two currencies (ISO codes such as EUR, USD)."""
        source, target = from_currency.upper(), to_currency.upper()
        if source not in _EUR_RATES or target not in _EUR_RATES:
            raise ToolException(f"unknown currency in {source}->{target}")
        value = amount / _EUR_RATES[source] * _EUR_RATES[target]
        return f"{amount:g} {source} = {value:.2f} {target}"

    convert_currency.handle_tool_error = True
    return [convert_currency]


def make_tools(workers: BaseChatModel) -> list[BaseTool]:
    """The supervisor's delegation tools, each over its own worker agent on ``workers``."""
    weather_agent = create_agent(workers, _weather_tools(), name="weather_agent")
    currency_agent = create_agent(workers, _currency_tools(), name="currency_agent")

    @tool
    def ask_weather_agent(city: str) -> str:
        """Ask the weather agent for today's weather in a city."""
        state = weather_agent.invoke({"messages": [("user", f"Weather in {city} today?")]})
        return str(state["messages"][-1].content)

    @tool
    def ask_currency_agent(amount: float, from_currency: str, to_currency: str) -> str:
        """Ask the currency agent to convert an amount between currencies (EUR, USD, ...)."""
        request = f"Convert {amount:g} {from_currency} to {to_currency}"
        state = currency_agent.invoke({"messages": [("user", request)]})
        return str(state["messages"][-1].content)

    return [ask_weather_agent, ask_currency_agent]


def build(model: BaseChatModel, worker_model: BaseChatModel | None = None) -> Any:
    """The supervisor graph; its workers run on ``worker_model`` (default: the same model; a
    scripted supervisor needs another one, its script holding only the supervisor's turns)."""
    return create_agent(
        model,
        make_tools(worker_model or model),
        system_prompt="You route each request to the right specialist agent.",
        name="supervisor",
    )
