"""A starter pytest test of the agent: run it with `pytest`.

``tool_recorder`` and ``harness_model`` are fixtures of the harness's pytest plugin, installed
with toolcall-harness; ``expect_tools`` states what the agent must have called.
"""

from __future__ import annotations

from collections.abc import Callable

from agent import build
from langchain_core.language_models import BaseChatModel

from harness.assertions import expect_tools
from tracing import ToolCallRecorder


def test_agent_looks_the_weather_up(
    tool_recorder: ToolCallRecorder, harness_model: Callable[..., BaseChatModel]
) -> None:
    agent = build(model=harness_model("demo"))  # or the chat model your application uses
    agent.invoke({"messages": [("user", "Weather in Oslo?")]}, tool_recorder.config)

    (
        expect_tools(tool_recorder)
        .called("get_weather", city="Oslo")
        .accuracy_at_least(1.0)
        .no_unexpected_calls()
        .no_errors()
    )
