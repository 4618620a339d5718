"""The recorder's model calls: one ModelCall per model call that ended, with the usage the
provider reported, in start order; the span emitter writes the same figures on chat spans."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from harness.demo import orders
from harness.models.scripted import ScriptedChatModel
from tracing import SpanEmitter
from tracing.langchain.recorder import ToolCallRecorder
from tracing.records import ModelCall


def usage(input_tokens: int, output_tokens: int) -> dict[str, int]:
    return {"input_tokens": input_tokens, "output_tokens": output_tokens}


SCRIPT: list[Any] = [
    {
        "tool_calls": [{"name": "find_customer", "args": {"email": "ada@example.com"}}],
        "usage": usage(120, 15),
    },
    {
        "tool_calls": [{"name": "search_orders", "args": {"customer_id": "C-001"}}],
        "usage": usage(300, 18),
    },
    {"content": "You have three orders.", "usage": usage(700, 9)},
]


def figures(calls: list[ModelCall]) -> list[tuple[Any, ...]]:
    return [(c.input_tokens, c.output_tokens, c.total_tokens, c.turn, c.model) for c in calls]


def run_orders(recorder: ToolCallRecorder, text: str, script: list[Any] = SCRIPT) -> None:
    agent = orders.build(ScriptedChatModel(script))
    agent.invoke({"messages": [("user", text)]}, recorder.config)


def test_one_model_call_per_turn_with_the_reported_usage_the_final_answer_included() -> None:
    recorder = ToolCallRecorder()
    run_orders(recorder, "What are my orders? I'm ada@example.com")
    calls = recorder.model_calls()
    assert figures(calls) == [
        (120, 15, 135, 0, "scripted"),
        (300, 18, 318, 1, "scripted"),
        (700, 9, 709, 2, "scripted"),  # the final answer is a model call too
    ]
    assert [c.name for c in recorder.calls()] == ["find_customer", "search_orders"]
    for call in calls:
        assert call.started_at is not None and call.ended_at is not None
        assert call.started_at <= call.ended_at
    starts = [c.started_at for c in calls]
    assert starts == sorted(starts)
    recorder.reset()
    assert recorder.model_calls() == []


def test_model_calls_per_top_level_run_and_per_turn() -> None:
    recorder = ToolCallRecorder()
    agent = orders.build(ScriptedChatModel(SCRIPT[2:]))  # answers at once: one model call
    with recorder.turn() as first:
        agent.invoke({"messages": [("user", "hello")]}, recorder.config)
    with recorder.turn() as second:
        run_orders(recorder, "What are my orders? I'm ada@example.com")
    assert figures(first.model_calls()) == [(700, 9, 709, 0, "scripted")]
    assert [c.total_tokens for c in second.model_calls()] == [135, 318, 709]
    runs = list(recorder.calls_by_run())
    assert [len(recorder.model_calls(run)) for run in runs] == [1, 3]
    assert recorder.model_calls() == [*first.model_calls(), *second.model_calls()]


class _Broken(BaseChatModel):
    """A provider that fails every request (an outage)."""

    @property
    def _llm_type(self) -> str:
        return "broken"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        raise ConnectionError("provider unavailable")


class _LegacyUsage(BaseChatModel):
    """An integration that reports usage only in ``llm_output["token_usage"]`` (OpenAI's
    prompt/completion names), as older LangChain integrations do; or none at all."""

    report: bool = True

    @property
    def _llm_type(self) -> str:
        return "legacy"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        output = (
            {"token_usage": {"prompt_tokens": 41, "completion_tokens": 7}} if self.report else {}
        )
        generation = ChatGeneration(message=AIMessage("fine"))
        return ChatResult(generations=[generation], llm_output={**output, "model_name": "legacy-1"})


def test_a_model_call_that_raised_is_no_model_call() -> None:
    recorder = ToolCallRecorder()
    model = _Broken().with_fallbacks([ScriptedChatModel([SCRIPT[2]])])
    reply = model.invoke("hi", recorder.config)
    assert reply.content == "You have three orders."
    assert figures(recorder.model_calls()) == [(700, 9, 709, 0, "scripted")]
    with pytest.raises(ConnectionError):
        _Broken().invoke("hi", recorder.config)
    assert len(recorder.model_calls()) == 1


@pytest.fixture
def spans() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def _usage_on_chat_spans(exporter: InMemorySpanExporter) -> list[tuple[Any, Any]]:
    chat = [s for s in exporter.get_finished_spans() if s.name.startswith("chat")]
    chat.sort(key=lambda s: s.start_time or 0)
    return [
        (
            (s.attributes or {}).get("gen_ai.usage.input_tokens"),
            (s.attributes or {}).get("gen_ai.usage.output_tokens"),
        )
        for s in chat
    ]


def test_the_span_emitter_writes_the_figures_the_recorder_keeps(
    spans: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, exporter = spans
    recorder = ToolCallRecorder()
    emitter = SpanEmitter(provider)
    agent = orders.build(ScriptedChatModel(SCRIPT))
    text = "What are my orders? I'm ada@example.com"
    agent.invoke({"messages": [("user", text)]}, {"callbacks": [recorder, emitter]})
    kept = [(c.input_tokens, c.output_tokens) for c in recorder.model_calls()]
    assert kept == [(120, 15), (300, 18), (700, 9)]
    assert _usage_on_chat_spans(exporter) == kept


def test_usage_reported_only_in_llm_output_and_no_usage_at_all(
    spans: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, exporter = spans
    recorder = ToolCallRecorder()
    config = {"callbacks": [recorder, SpanEmitter(provider)]}
    _LegacyUsage().invoke("hi", config)
    _LegacyUsage(report=False).invoke("hi", config)
    expected = [(41, 7, 48, 0, "legacy-1"), (None, None, None, 0, "legacy-1")]
    assert figures(recorder.model_calls()) == expected
    assert _usage_on_chat_spans(exporter) == [(41, 7), (None, None)]


def test_a_sample_from_the_recorder_carries_the_model_calls_to_rules() -> None:
    from harness import Sample
    from harness.rules import Trajectory, evaluate_rules, load_rules

    recorder = ToolCallRecorder()
    run_orders(recorder, "What are my orders? I'm ada@example.com")
    sample = Sample.from_recorder(recorder, input="What are my orders?", metadata={"k": 1})
    trajectory = Trajectory.from_sample(sample)
    assert trajectory.model_calls == tuple(recorder.model_calls())
    assert sample.metadata["k"] == 1
    rules = load_rules([{"name": "tokens", "budget": {"total_tokens": 1000, "model_calls": 3}}])
    [result] = evaluate_rules(rules, trajectory)
    assert (result.passed, result.reason) == (False, "over budget: total_tokens 1,162 > 1,000")
