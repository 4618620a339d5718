"""make_model for every spec form and error; DemoChatModel's choices on representative sentences."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from harness.demo import calculator, orders, travel
from harness.errors import HarnessError
from harness.models import (
    PROVIDERS,
    DemoChatModel,
    ModelConfigError,
    make_model,
    register_provider,
)
from harness.models.demo import decide, tool_specs
from harness.models.providers import init_provider_model
from harness.models.scripted import ScriptedChatModel

# --------------------------------------------------------------------------- make_model


@pytest.mark.parametrize("spec", [None, "demo", {"provider": "demo"}, {}])
def test_demo_is_the_default(spec: Any) -> None:
    assert isinstance(make_model(spec), DemoChatModel)


def test_scripted_plays_the_script() -> None:
    model = make_model({"provider": "scripted", "latency": 0}, script=[{"content": "hi"}])
    assert isinstance(model, ScriptedChatModel)
    assert model.invoke([HumanMessage("x")]).content == "hi"


def test_scripted_string_form() -> None:
    assert isinstance(make_model("scripted", script=[]), ScriptedChatModel)


def test_scripted_without_script_is_a_config_error() -> None:
    with pytest.raises(ModelConfigError, match=r"needs the scenario's turns: add `script:`"):
        make_model({"provider": "scripted"})


def test_bad_script_is_a_config_error() -> None:
    with pytest.raises(ModelConfigError, match="invalid script"):
        make_model("scripted", script=[{"tool_calls": "add"}])


def test_model_config_error_kinds() -> None:
    assert issubclass(ModelConfigError, HarnessError)
    assert issubclass(ModelConfigError, ValueError)


def test_replay_is_a_planned_seam() -> None:
    with pytest.raises(ModelConfigError, match="not available yet: record/replay cassettes"):
        make_model({"provider": "replay", "cassette": "x.json"})


def test_registry_accepts_a_new_kind() -> None:
    def fake(options: Any, script: Any) -> BaseChatModel:
        return DemoChatModel()

    register_provider("test-kind", fake)
    try:
        assert isinstance(make_model("test-kind"), DemoChatModel)
        assert isinstance(make_model({"provider": "test-kind"}), DemoChatModel)
    finally:
        del PROVIDERS["test-kind"]


@pytest.mark.parametrize("spec", [42, ["demo"], ""])
def test_malformed_specs(spec: Any) -> None:
    with pytest.raises(ModelConfigError, match="model"):
        make_model(spec)


def test_provider_without_model_name() -> None:
    with pytest.raises(ModelConfigError, match=r"'anthropic' needs a model name"):
        make_model({"provider": "anthropic"})


def test_demo_rejects_options() -> None:
    with pytest.raises(ModelConfigError, match=r"takes no options, got \['temperature'\]"):
        make_model({"provider": "demo", "temperature": 0.2})


def test_missing_langchain_names_package_and_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelConfigError) as info:
        init_provider_model("openai", "gpt-4o-mini", {}, loader=lambda: None)
    message = str(info.value)
    assert "pip install 'toolcall-harness[providers]' langchain-openai" in message
    assert "OPENAI_API_KEY" in message


def test_missing_langchain_through_make_model(monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        import langchain.chat_models  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("langchain is installed here: the real init_chat_model path is taken")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    with pytest.raises(ModelConfigError, match="langchain-anthropic") as info:
        make_model("anthropic:claude-x").invoke("hi")  # built on its first turn
    assert "ANTHROPIC_API_KEY" not in str(info.value)  # the key is set, so it is not blamed


def test_missing_key_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GROQ_API_KEY", raising=False)

    def init(*args: Any, **kwargs: Any) -> BaseChatModel:
        raise AssertionError("must not be called without a key")

    with pytest.raises(ModelConfigError, match="set the GROQ_API_KEY environment variable"):
        init_provider_model("groq", "llama", {}, loader=lambda: init)


def test_init_chat_model_receives_provider_and_options(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def init(model: str, **kwargs: Any) -> BaseChatModel:
        seen.update(model=model, **kwargs)
        return DemoChatModel()

    model = init_provider_model("ollama", "llama3", {"temperature": 0}, loader=lambda: init)
    assert isinstance(model, DemoChatModel)
    assert seen == {"model": "llama3", "model_provider": "ollama", "temperature": 0}


def test_provider_package_missing_is_wrapped() -> None:
    def init(model: str, **kwargs: Any) -> BaseChatModel:
        raise ImportError("No module named 'langchain_mistralai'")

    with pytest.raises(ModelConfigError, match="langchain-mistralai"):
        init_provider_model("mistralai", "m", {"api_key": "k"}, loader=lambda: init)


# --------------------------------------------------------------------------- DemoChatModel


TRAVEL = tool_specs(travel.make_tools(travel.TravelDesk()))
ORDERS = tool_specs(orders.make_tools(orders.OrderStore()))
CALC = tool_specs(calculator.make_tools())


def first_calls(text: str, tools: Any) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls the demo model makes on its first turn."""
    reply = decide([HumanMessage(text)], tools)
    return [(c["name"], c["args"]) for c in reply.tool_calls]


@pytest.mark.parametrize(
    ("text", "tools", "expected"),
    [
        (
            "What's the weather in Berlin tomorrow?",
            TRAVEL,
            [("get_weather", {"city": "Berlin", "day": "tomorrow"})],
        ),
        (
            "Weather in New York on 2025-06-04",
            TRAVEL,
            [("get_weather", {"city": "New York", "day": "2025-06-04"})],
        ),
        (
            "Give me the forecast for Tokyo for the next 5 days",
            TRAVEL,
            [("get_forecast", {"city": "Tokyo", "days": 5})],
        ),
        (
            "Convert 100 EUR to USD",
            TRAVEL,
            [("convert_currency", {"amount": 100.0, "from_currency": "EUR", "to_currency": "USD"})],
        ),
        (
            "Find hotels in Porto under 115 EUR for 3 nights from friday",
            TRAVEL,
            [
                (
                    "search_hotels",
                    {"city": "Porto", "check_in": "friday", "nights": 3, "max_price": 115.0},
                )
            ],
        ),
        ("Where is my order ORD-1042?", ORDERS, [("get_order", {"order_id": "ORD-1042"})]),
        (
            "Find the customer with email grace@example.com",
            ORDERS,
            [("find_customer", {"email": "grace@example.com"})],
        ),
        ("What is 2.5 times 4?", CALC, [("multiply", {"a": 2.5, "b": 4.0})]),
        (
            "What are the mean and max of 4, 8, 15 and 16?",
            CALC,
            [("statistics", {"values": [4.0, 8.0, 15.0, 16.0], "measures": ["mean", "max"]})],
        ),
        (
            "Convert 10 km to miles",
            CALC,
            [("convert_units", {"value": 10.0, "from_unit": "km", "to_unit": "mile"})],
        ),
    ],
)
def test_demo_picks_tools_and_arguments(text: str, tools: Any, expected: Any) -> None:
    assert first_calls(text, tools) == expected


def test_demo_calls_two_tools_for_two_requests() -> None:
    calls = first_calls("What's the weather in Rome today, and convert 200 EUR to GBP", TRAVEL)
    assert sorted(name for name, _ in calls) == ["convert_currency", "get_weather"]


def test_demo_is_imperfect_with_two_cities() -> None:
    calls = first_calls("I'm flying from Madrid to Lisbon, what's the weather on Friday?", TRAVEL)
    assert calls == [("get_weather", {"city": "Madrid", "day": "friday"})]


def test_demo_asks_when_a_required_argument_is_missing() -> None:
    reply = decide([HumanMessage("What's the weather tomorrow?")], TRAVEL)
    assert reply.tool_calls == []
    assert "need the city" in str(reply.content)


def test_demo_without_matching_tool_answers_in_words() -> None:
    reply = decide([HumanMessage("Tell me a joke")], TRAVEL)
    assert reply.tool_calls == []
    assert "get_weather" in str(reply.content)


def _tool_result(
    reply: AIMessage, index: int, content: str, status: str = "success"
) -> ToolMessage:
    call = reply.tool_calls[index]
    return ToolMessage(content, tool_call_id=str(call["id"]), name=call["name"], status=status)


def test_demo_chains_follow_up_calls_from_results() -> None:
    history: list[BaseMessage] = [HumanMessage("Cancel my most recent order, I'm ada@example.com")]
    step1 = decide(history, ORDERS)
    assert [(c["name"], c["args"]) for c in step1.tool_calls] == [
        ("find_customer", {"email": "ada@example.com"})
    ]
    history += [step1, _tool_result(step1, 0, '{"customer_id": "C-001", "name": "Ada"}')]
    step2 = decide(history, ORDERS)
    assert [(c["name"], c["args"]) for c in step2.tool_calls] == [
        ("search_orders", {"customer_id": "C-001"})
    ]
    orders_json = '[{"order_id": "ORD-1050", "status": "open"}, {"order_id": "ORD-1043"}]'
    history += [step2, _tool_result(step2, 0, orders_json)]
    step3 = decide(history, ORDERS)
    assert [(c["name"], c["args"]) for c in step3.tool_calls] == [
        ("cancel_order", {"order_id": "ORD-1050"})
    ]
    history += [step3, _tool_result(step3, 0, '{"summary": "Cancelled order ORD-1050."}')]
    final = decide(history, ORDERS)
    assert final.tool_calls == []
    assert "Cancelled order ORD-1050." in str(final.content)
    # Call ids are unique across the conversation.
    ids = [c["id"] for step in (step1, step2, step3) for c in step.tool_calls]
    assert len(set(ids)) == len(ids)


def test_demo_reports_tool_errors_in_its_answer() -> None:
    history: list[BaseMessage] = [HumanMessage("Cancel order ORD-1042")]
    step = decide(history, ORDERS)
    history += [step, _tool_result(step, 0, "order ORD-1042 is delivered", status="error")]
    final = decide(history, ORDERS)
    assert final.tool_calls == []
    assert str(final.content) == "Sorry, cancel_order failed: order ORD-1042 is delivered"


def test_demo_does_not_repeat_a_call() -> None:
    history: list[BaseMessage] = [HumanMessage("Where is my order ORD-1042?")]
    step = decide(history, ORDERS)
    history += [step, _tool_result(step, 0, '{"summary": "delivered"}')]
    assert decide(history, ORDERS).tool_calls == []


def test_demo_uses_earlier_user_messages_for_arguments() -> None:
    history: list[BaseMessage] = [
        HumanMessage("Hi, I'm grace@example.com"),
        AIMessage("Hello! How can I help?"),
        HumanMessage("List my orders please"),
    ]
    step = decide(history, ORDERS)
    assert [(c["name"], c["args"]) for c in step.tool_calls] == [
        ("find_customer", {"email": "grace@example.com"})
    ]


def test_demo_chat_model_binds_tools_and_is_deterministic() -> None:
    @tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return "sunny"

    bound = DemoChatModel().bind_tools([get_weather])
    first = bound.invoke("What's the weather in Berlin?")
    second = bound.invoke("What's the weather in Berlin?")
    assert isinstance(first, AIMessage)
    assert first.tool_calls == second.tool_calls
    assert first.tool_calls[0]["args"] == {"city": "Berlin"}


async def test_demo_chat_model_async() -> None:
    @tool
    def add(a: float, b: float) -> float:
        """Add two numbers."""
        return a + b

    reply = await DemoChatModel().bind_tools([add]).ainvoke("Add 2 and 3")
    assert isinstance(reply, AIMessage)
    assert reply.tool_calls[0]["args"] == {"a": 2.0, "b": 3.0}


def test_demo_without_tools_still_answers() -> None:
    reply = DemoChatModel().invoke("hello")
    assert isinstance(reply, AIMessage)
    assert reply.tool_calls == []
    assert reply.content


# --------------------------------------------------------------------------- models in front


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _front_models() -> list[BaseChatModel]:
    """A model in front of another, each kind: a limit, a cassette recorder."""
    from harness.cassettes import CassetteStore
    from harness.cassettes.tape import TapeInfo

    def inner() -> BaseChatModel:
        return ScriptedChatModel(
            [{"tool_calls": [{"name": "add", "args": {"a": 2, "b": 3}}]}, {"content": "5"}]
        )

    limited = make_model({"provider": "scripted", "max_concurrency": 2}, script=[])
    limited = limited.model_copy(update={"inner": inner()})
    recorder = CassetteStore("record").wrap(inner(), TapeInfo(Path("unused.yaml"), "s::x"))
    return [limited, recorder]


@pytest.mark.parametrize("mode", ["invoke", "ainvoke", "stream", "astream"])
@pytest.mark.parametrize("front", range(2), ids=["limited", "recording"])
def test_a_captured_agent_over_a_front_model_records_each_call_once(mode: str, front: int) -> None:
    from langchain.agents import create_agent

    from tracing.langchain.capture import capture_tool_calls

    agent = create_agent(_front_models()[front], [add])
    payload = {"messages": [("user", "2 + 3?")]}

    async def drive() -> None:
        if mode == "ainvoke":
            await agent.ainvoke(payload)
        else:  # token by token: the front model's _astream asks the inner one piece by piece
            async for _ in agent.astream(payload, stream_mode="messages"):
                pass

    with capture_tool_calls() as recorder:
        if mode == "invoke":
            agent.invoke(payload)
        elif mode == "stream":
            for _ in agent.stream(payload, stream_mode="messages"):
                pass
        else:
            asyncio.run(drive())
    # without the hooks cleared, the inner model's turn was a second run: a phantom request
    assert [(c.name, c.args, c.status) for c in recorder.calls()] == [
        ("add", {"a": 2, "b": 3}, "ok")
    ]
    assert len(recorder.calls_by_run()) == 1
