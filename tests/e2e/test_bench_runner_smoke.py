"""The runner benchmark runs end to end on a few scenarios (its figures come from `make bench`)."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from benchmarks.bench_runner import ArithmeticChatModel, arithmetic_reply, main


def test_arithmetic_model_asks_for_add_then_answers_with_the_result() -> None:
    asked = arithmetic_reply([HumanMessage("12 + 30?")])
    assert [(call["name"], call["args"]) for call in asked.tool_calls] == [
        ("add", {"a": 12, "b": 30})
    ]
    result = ToolMessage("42", tool_call_id=asked.tool_calls[0]["id"])
    assert arithmetic_reply([HumanMessage("12 + 30?"), asked, result]).content == "42"
    reply = ArithmeticChatModel().invoke([HumanMessage("1 + 2?")])
    assert isinstance(reply, AIMessage) and reply.tool_calls[0]["args"] == {"a": 1, "b": 2}


def test_bench_runner_quick_run_prints_every_variant(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--scenarios", "60", "--latency", "0.01", "--repeat", "1", "--wall-repeat", "1"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    for variant in ("[langgraph]", "[langgraph-reuse]", "[loop]"):
        assert f"{variant} 60 scenarios" in out
    assert out.count("concurrency 50: 60 passed") == 3  # the 1-process runs
    assert out.count("(same total concurrency, best of 1): 60 passed") == 3  # the -n 2 runs
    assert "the runner's own" in out
    assert "langgraph-reuse" in out.split("summary")[1]


def test_bench_runner_refuses_no_repeats(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--wall-repeat", "0"])
    assert "--wall-repeat need 1 or more" in capsys.readouterr().err
