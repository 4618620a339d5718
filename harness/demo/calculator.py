"""Calculator agent: arithmetic, statistics over a list, and unit conversion.

Small on purpose: its tools take numbers, lists and a nested options mapping, so the suites
can show the matchers for floats (``$approx``), lists (``$unordered``, ``$contains``) and nested
objects (``$subset``). Stateless, so one build is as good as another.
"""

from __future__ import annotations

import statistics as stats
from collections.abc import Callable
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool, ToolException, tool
from langgraph.graph.state import CompiledStateGraph
from typing_extensions import TypedDict

from harness.demo import build_tool_agent

__all__ = ["build", "make_tools"]

Measure = Literal["min", "max", "mean", "median", "sum"]
Unit = Literal["km", "mile", "kg", "pound", "celsius", "fahrenheit"]
SYSTEM_PROMPT = "You are a careful calculator. Use a tool for every computation."

# unit -> (dimension, factor to the dimension's base unit); temperatures are handled apart.
_LINEAR: dict[str, tuple[str, float]] = {
    "km": ("length", 1000.0),
    "mile": ("length", 1609.344),
    "kg": ("mass", 1.0),
    "pound": ("mass", 0.45359237),
}


class ReportOptions(TypedDict, total=False):
    """How statistics are presented."""

    decimals: int
    unit: str


def _convert(value: float, source: str, target: str) -> float:
    if {source, target} <= {"celsius", "fahrenheit"}:
        if source == target:
            return value
        return value * 9 / 5 + 32 if source == "celsius" else (value - 32) * 5 / 9
    if source in _LINEAR and target in _LINEAR and _LINEAR[source][0] == _LINEAR[target][0]:
        return value * _LINEAR[source][1] / _LINEAR[target][1]
    raise ToolException(f"cannot convert {source} to {target}: different kinds of quantity")


def make_tools() -> list[BaseTool]:
    """The calculator tools."""

    @tool(parse_docstring=True)
    def add(a: float, b: float) -> float:
        """Add two numbers (a plus b, the sum).

        Args:
            a: First number.
            b: Second number.
        """
        return a + b

    @tool(parse_docstring=True)
    def multiply(a: float, b: float) -> float:
        """Multiply two numbers (a times b, the product).

        Args:
            a: First number.
            b: Second number.
        """
        return a * b

    @tool(parse_docstring=True)
    def divide(a: float, b: float) -> float:
        """Divide a by b (a over b, the quotient).

        Args:
            a: Dividend.
            b: Divisor, not zero.
        """
        if b == 0:
            raise ToolException("cannot divide by zero")
        return a / b

    @tool(parse_docstring=True)
    def statistics(
        values: list[float],
        measures: list[Measure] | None = None,
        options: ReportOptions | None = None,
    ) -> dict[str, Any]:
        """Statistics of a list of numbers: min, max, mean, median, sum.

        Args:
            values: The numbers.
            measures: Which statistics to compute (default: mean).
            options: Presentation: decimals (int) and unit (str).
        """
        if not values:
            raise ToolException("values must not be empty")
        opts = options or {}
        decimals = int(opts.get("decimals", 2))
        functions: dict[str, Callable[[list[float]], float]] = {
            "min": min,
            "max": max,
            "mean": stats.fmean,
            "median": stats.median,
            "sum": sum,
        }
        chosen: list[str] = list(measures or ["mean"])
        result = {m: round(float(functions[m](values)), decimals) for m in chosen}
        unit = f" {opts['unit']}" if opts.get("unit") else ""
        text = ", ".join(f"{name} {value}{unit}" for name, value in result.items())
        return {**result, "summary": f"Of {len(values)} values: {text}."}

    @tool(parse_docstring=True)
    def convert_units(value: float, from_unit: Unit, to_unit: Unit) -> dict[str, Any]:
        """Convert a quantity between units of length, mass or temperature.

        Args:
            value: The quantity to convert.
            from_unit: The unit it is in.
            to_unit: The unit wanted.
        """
        converted = round(_convert(value, from_unit, to_unit), 4)
        return {"converted": converted, "summary": f"{value} {from_unit} = {converted} {to_unit}."}

    tools: list[BaseTool] = [add, multiply, divide, statistics, convert_units]
    for t in tools:
        t.handle_tool_error = True
    return tools


def build(model: BaseChatModel) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A calculator agent driven by ``model``."""
    return build_tool_agent(model, make_tools(), system_prompt=SYSTEM_PROMPT, name="calculator")
