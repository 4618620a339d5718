"""One final-answer rule: ``harness run`` and ``eval-traces`` agree on what the agent answered."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from pydantic import BaseModel

from harness.cli import main
from harness.run.output_attribute import OUTPUT_ATTRIBUTE, encode_output, read_output
from harness.traces.evaluate import iter_recorded_traces
from tracing.langchain.final_answer import final_answer


class Report(BaseModel):
    city: str
    degrees: int


@dataclass
class Pair:
    left: int
    right: int


def test_the_rule() -> None:
    ai = AIMessage(content="from the model")
    tool = ToolMessage(content="from a return_direct tool", tool_call_id="1")
    assert final_answer({"messages": [HumanMessage("q"), ai]}) == "from the model"
    assert final_answer({"messages": [ai, tool]}) == "from a return_direct tool"
    assert final_answer(
        {"messages": [ai], "structured_response": Report(city="Rome", degrees=3)}
    ) == {
        "city": "Rome",
        "degrees": 3,
    }
    assert final_answer({"structured_response": Pair(1, 2)}) == {"left": 1, "right": 2}
    assert final_answer({"messages": [ai], "structured_response": None}) == "from the model"
    assert final_answer({"output": 7}) == 7
    assert final_answer(AIMessage(content=[{"type": "text", "text": "a"}, "b"])) == "ab"


def test_output_attribute_round_trip_is_redacted() -> None:
    encoded = encode_output({"city": "Rome", "api_key": "sk-123"})
    assert "sk-123" not in encoded
    assert read_output({OUTPUT_ATTRIBUTE: encoded}) == (True, {"api_key": "***", "city": "Rome"})
    assert read_output({}) == (False, None)


# A real graph whose last message is not the model's: a finishing node writes the answer.
AGENT = '''
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langchain_core.tools import tool

from harness.demo import build_tool_agent


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def build(model):
    inner = build_tool_agent(model, [add], system_prompt="add", name="calc")

    def finish(state: MessagesState):
        return {"messages": [AIMessage(content="Final: " + str(state["messages"][-1].content))]}

    graph = StateGraph(MessagesState)
    graph.add_node("calc", inner)
    graph.add_node("finish", finish)
    graph.add_edge(START, "calc")
    graph.add_edge("calc", "finish")
    graph.add_edge("finish", END)
    return graph.compile(name="finisher")
'''


def test_run_and_eval_traces_agree_on_a_finishing_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "finisher.py").write_text(AGENT, encoding="utf-8")
    suite = tmp_path / "finish.yaml"
    suite.write_text(
        textwrap.dedent(
            """\
            suite: finish
            agent: finisher.py:build
            model: {provider: scripted}
            scenarios:
              - name: finished by a node
                input: 2 + 3?
                script:
                  - tool_calls: [{name: add, args: {a: 2, b: 3}}]
                  - content: "5"
                expect:
                  tool_calls: [{name: add, args: {a: 2, b: 3}}]
                  output: "Final: 5"
            """
        ),
        encoding="utf-8",
    )
    traces = tmp_path / "traces.json"
    live = tmp_path / "live.json"
    assert (
        main(
            [
                "run",
                str(suite),
                "--capture-content",
                "--trace-file",
                str(traces),
                "--json",
                str(live),
            ]
        )
        == 0
    ), capsys.readouterr().out
    assert (
        main(
            [
                "eval-traces",
                str(traces),
                "--scenarios",
                str(suite),
                "--junit-xml",
                str(tmp_path / "offline.xml"),
            ]
        )
        == 0
    ), capsys.readouterr().out

    report = json.loads(live.read_text(encoding="utf-8"))
    assert [run["output"] for run in report["scenarios"][0]["runs"]] == ["Final: 5"]
    # offline, the answer comes from the root span, not from the last chat span ("5"): the
    # output check above passed in both
    assert [trace.output for trace in iter_recorded_traces(traces)] == ["Final: 5"]
