"""Concierge agent: LangChain v1 ``create_agent`` with runtime context and structured output.

Written the way the LangChain v1 documentation shows it: a ``context_schema`` (who is asking,
passed per run as ``invoke(..., context=...)``), a middleware that writes the system prompt from
that context, a tool that reads it through ``ToolRuntime``, and a ``response_format`` (a
``ToolStrategy`` over a pydantic model), so the run ends with a ``structured_response``. The
structured-output tool the strategy adds is answered by the agent itself: it is not one of the
agent's tool calls, and the harness does not record it as one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import ModelRequest, dynamic_prompt
from langchain.agents.structured_output import ToolStrategy
from langchain.tools import ToolRuntime
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool, ToolException, tool
from pydantic import BaseModel, Field

__all__ = ["Advice", "Guest", "build", "make_tools"]

_FORECAST = {
    "paris": "18 °C, light rain",
    "lisbon": "26 °C, sunny",
    "oslo": "9 °C, cloudy",
    "rome": "27 °C, sunny",
}


@dataclass(frozen=True)
class Guest:
    """Who is asking: the runtime context of one run."""

    name: str
    home_city: str
    vip: bool = False


class Advice(BaseModel):
    """The concierge's answer, as structured data."""

    city: str = Field(description="the city the advice is about")
    weather: str = Field(description="the forecast, as the weather tool gave it")
    pack_umbrella: bool = Field(description="true when rain is forecast")


def make_tools() -> list[BaseTool]:
    """The concierge's tools: a forecast, and the guest's home city from the runtime context."""

    @tool
    def get_forecast(city: str) -> str:
        """Tomorrow's forecast for a city."""
        forecast = _FORECAST.get(city.strip().lower())
        if forecast is None:
            raise ToolException(f"no forecast for {city!r}; known: {', '.join(_FORECAST)}")
        return forecast

    @tool
    def home_city(runtime: ToolRuntime[Guest]) -> str:
        """The guest's home city (from the guest's profile)."""
        return runtime.context.home_city

    get_forecast.handle_tool_error = True
    return [get_forecast, home_city]


@dynamic_prompt
def _greeting(request: ModelRequest[Guest]) -> str:
    guest = request.runtime.context
    tone = "Be brief and warm; this guest is a VIP." if guest.vip else "Be brief."
    return f"You are a hotel concierge helping {guest.name}. {tone}"


def build(model: BaseChatModel) -> Any:
    """The concierge: context ``Guest``, structured answer ``Advice`` (ToolStrategy)."""
    return create_agent(
        model,
        make_tools(),
        middleware=[_greeting],
        context_schema=Guest,
        response_format=ToolStrategy(Advice),
        name="concierge",
    )
