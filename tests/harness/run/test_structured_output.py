"""Structured output: the ToolStrategy call is no tool call; the answer is structured_response."""

from __future__ import annotations

import textwrap
from pathlib import Path

from harness.assertions import expect_tools
from harness.demo.concierge import Advice, Guest, build
from harness.models import make_model
from harness.run.runner import RunOptions, final_output, run_scenarios
from harness.scenarios import load_file
from tests.support.paths import ROOT
from tracing.langchain.final_answer import structured_call_ids, without_structured_calls
from tracing.langchain.recorder import ToolCallRecorder

SCRIPT = [
    {"tool_calls": [{"name": "get_forecast", "args": {"city": "Oslo"}}]},
    {
        "tool_calls": [
            {
                "name": "Advice",
                "args": {"city": "Oslo", "weather": "9 °C, cloudy", "pack_umbrella": False},
            }
        ]
    },
]


def test_shipped_concierge_suite_passes() -> None:
    suite = load_file(ROOT / "scenarios" / "concierge.yaml")
    result = run_scenarios(list(suite.scenarios), RunOptions(concurrency=2))
    assert [s.status for s in result.scenarios] == ["passed", "passed"], [
        s.reasons for s in result.scenarios
    ]
    first = result.scenarios[0].runs[0]
    assert [call.name for call in first.calls] == ["get_forecast"]  # no 'Advice' call
    assert first.output == {"city": "Paris", "weather": "18 °C, light rain", "pack_umbrella": True}


def test_structured_call_is_left_out_and_the_answer_is_structured() -> None:
    agent = build(make_model({"provider": "scripted"}, script=SCRIPT))
    recorder = ToolCallRecorder()
    state = agent.invoke(
        {"messages": [("user", "Umbrella in Oslo?")]}, recorder.config, context=Guest("Ann", "Rome")
    )
    assert isinstance(state["structured_response"], Advice)
    # the model requested 'Advice', which the agent answered itself: not a tool call
    assert [(c.name, c.status) for c in recorder.calls()] == [("get_forecast", "ok")]
    expect_tools(recorder).called("get_forecast", city="Oslo").no_unexpected_calls()
    [advice] = [c for c in state["messages"][-2].tool_calls if c["name"] == "Advice"]
    ids = structured_call_ids(state)  # every answered call: the executed ones are kept below
    assert advice["id"] in ids
    kept = without_structured_calls(recorder.calls(), ids)
    assert [c.name for c in kept] == ["get_forecast"]
    expected = {"city": "Oslo", "weather": "9 °C, cloudy", "pack_umbrella": False}
    assert final_output(state) == expected
    assert recorder.last_output() == expected


def test_output_matcher_on_a_structured_answer_fails_with_the_fields(tmp_path: Path) -> None:
    path = tmp_path / "advice.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            agent: harness.demo.concierge:build
            model: {provider: scripted}
            scenarios:
              - name: wrong umbrella
                context: {name: Ann, home_city: Rome}
                input: Umbrella in Oslo?
                script:
                  - tool_calls: [{name: get_forecast, args: {city: Oslo}}]
                  - tool_calls:
                      - {name: Advice, args: {city: Oslo, weather: "9 °C", pack_umbrella: false}}
                expect:
                  tool_calls: []                     # nothing but the forecast is allowed
                  output: {$subset: {pack_umbrella: true}}
                metrics:
                  tool_call_accuracy: false
                  no_unexpected_tool_calls: {}
            """
        ),
        encoding="utf-8",
    )
    [result] = run_scenarios(list(load_file(path).scenarios)).scenarios
    assert result.status == "failed"
    assert result.reasons == (
        # the forecast is unexpected here; the structured-output call is not counted at all
        "no_unexpected_tool_calls 0.00 < 1.00: 1 unexpected call: get_forecast(city='Oslo')",
        "final answer {'city': 'Oslo', 'weather': '9 °C', 'pack_umbrella': False} does not "
        "match $subset {'pack_umbrella': True}",
    )
