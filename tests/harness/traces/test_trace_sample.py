"""The sample ``harness eval-traces`` scores a trace on is the one ``Sample(...)`` would build."""

from __future__ import annotations

from pathlib import Path

from harness.sample import Sample
from harness.scenarios import iter_scenarios
from harness.scenarios.discovery import load_paths
from harness.scoring import NOT_CAPTURED
from harness.traces.evaluate import RecordedTrace, _trace_sample
from tracing.records import ToolCall

SUITE = """suite: s
agent: {agent}:build
model: {{provider: demo}}
scenarios:
  - name: weather
    input: weather in Berlin
    expect:
      tool_calls: [{{name: get_weather, args: {{city: Berlin}}}}, get_time]
"""


def test_trace_sample_equals_the_constructed_sample(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text("def build(model):\n    return None\n", encoding="utf-8")
    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE.format(agent=agent), encoding="utf-8")
    (scenario,) = iter_scenarios(load_paths([str(suite)]))
    calls = [ToolCall("get_weather", {"city": "Berlin"}), ToolCall("get_time", {})]
    for uncaptured, captured in (((), True), ((1,), False)):
        trace = RecordedTrace("ab" * 16, calls, None, "sunny", "f.json", 3, uncaptured, captured)
        built = _trace_sample(scenario, trace)
        metadata: dict[str, object] = {"scenario": scenario.id, "trace": trace.trace_id}
        if uncaptured or not captured:
            metadata[NOT_CAPTURED] = {"calls": list(uncaptured), "output": not captured}
        expected = Sample(
            input=scenario.input_text,
            tool_calls=calls,
            expected_tool_calls=list(scenario.expected),
            output="sunny",
            metadata=metadata,
            trace_id=trace.trace_id,
        )
        assert built == expected
        assert built.tool_calls is not calls  # the sample owns its lists, as Sample(...) does
        assert built.expected_tool_calls is not scenario.expected
