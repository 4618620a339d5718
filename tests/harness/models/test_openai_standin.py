"""The real ``langchain-openai`` client against the local stand-in: lazy models, errors, streams.

Every model here comes from ``make_model("openai:...")`` — the lazily built
``ProviderChatModel`` — so these tests cover what a user with ``model: "openai:gpt-4o-mini"``
gets: the same tool calls as the demo model, streamed arguments assembled, malformed arguments
as invalid tool calls, and 429 / 500 / a hang / a non-JSON body as one clear line.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessageChunk, HumanMessage

from harness.demo import travel
from harness.errors import ModelConfigError, ProviderError
from harness.models import DemoChatModel, ProviderChatModel, make_model
from harness.models.lazy import without_credentials
from tests.support.openai_server import API_KEY, StandIn, serving

pytest.importorskip("langchain_openai")

TWO_THINGS = "What's the weather in Rome today, and convert 200 EUR to GBP"


@pytest.fixture(scope="module")
def openai_standin() -> Iterator[StandIn]:
    """The stand-in server for this module's tests."""
    yield from serving()


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """OPENAI_API_KEY set to the stand-in's key for one test."""
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    yield


def openai(standin: StandIn, name: str = "gpt-4o-mini", **options: Any) -> Any:
    spec = {"provider": "openai", "model": name, "base_url": standin.url, "max_retries": 0}
    return make_model({**spec, **options})


def tools() -> list[Any]:
    return travel.make_tools(travel.TravelDesk())


# --- built lazily -----------------------------------------------------------------------------


def test_a_provider_model_is_not_built_until_its_first_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = make_model("openai:gpt-4o-mini")
    assert isinstance(model, ProviderChatModel) and not model.built
    travel.build(model=model)  # an agent binds tools: still no key needed
    assert not model.built
    with pytest.raises(ModelConfigError, match="set the OPENAI_API_KEY environment variable"):
        model.invoke([HumanMessage("hi")])


def test_a_blank_key_counts_as_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", " ")
    with pytest.raises(ModelConfigError, match="needs an API key"):
        make_model("openai:gpt-4o-mini").invoke([HumanMessage("hi")])
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real")
    with pytest.raises(ModelConfigError, match="needs an API key"):
        local = "http://127.0.0.1:9/v1"  # never reached: the key check comes first
        make_model({"provider": "openai", "model": "m", "api_key": "  ", "base_url": local}).invoke(
            "hi"
        )


def test_repr_never_shows_the_options() -> None:
    model = make_model({"provider": "openai", "model": "gpt-4o-mini", "api_key": "sk-secret"})
    assert "sk-secret" not in repr(model) and "openai:gpt-4o-mini" in repr(model)


# --- answers ------------------------------------------------------------------------------------


def test_same_tool_calls_as_the_demo_model(openai_standin: StandIn, keyed: None) -> None:
    reply = openai(openai_standin).bind_tools(tools()).invoke(TWO_THINGS)
    demo = DemoChatModel().bind_tools(tools()).invoke(TWO_THINGS)
    assert [(c["name"], c["args"]) for c in reply.tool_calls] == [
        (c["name"], c["args"]) for c in demo.tool_calls
    ]
    assert len(reply.tool_calls) == 2  # parallel calls in one reply
    assert reply.response_metadata["finish_reason"] == "tool_calls"
    assert reply.usage_metadata is not None and reply.usage_metadata["total_tokens"] > 0


def test_streamed_argument_deltas_are_assembled(openai_standin: StandIn, keyed: None) -> None:
    chunks = list(openai(openai_standin).bind_tools(tools()).stream(TWO_THINGS))
    assert len(chunks) > 5  # deltas arrive as separate chunks
    whole = chunks[0]
    for chunk in chunks[1:]:
        whole = whole + chunk
    assert isinstance(whole, AIMessageChunk)
    assert [(c["name"], c["args"]) for c in whole.tool_calls] == [
        ("get_weather", {"city": "Rome", "day": "today"}),
        ("convert_currency", {"amount": 200.0, "from_currency": "EUR", "to_currency": "GBP"}),
    ]
    assert not whole.invalid_tool_calls


def test_async_streaming_too(openai_standin: StandIn, keyed: None) -> None:
    async def collect() -> list[Any]:
        model = openai(openai_standin).bind_tools(tools())
        return [chunk async for chunk in model.astream("Weather in Oslo?")]

    chunks = asyncio.run(collect())
    whole = chunks[0]
    for chunk in chunks[1:]:
        whole = whole + chunk
    assert [c["name"] for c in whole.tool_calls] == ["get_weather"]


def test_malformed_arguments_are_an_invalid_tool_call(openai_standin: StandIn, keyed: None) -> None:
    reply = openai(openai_standin, "malformed").bind_tools(tools()).invoke("Weather in Berlin?")
    assert reply.tool_calls == []
    (bad,) = reply.invalid_tool_calls
    assert bad["name"] == "get_weather" and bad["args"] == '{"city": "Berlin", "day": '


# --- failures: one line naming the model, the endpoint and the cause ------------------------------


@pytest.mark.parametrize(
    ("name", "cause"),
    [
        ("rate-limited", "429 - Rate limit reached"),
        ("broken", "500 - The server had an error"),
        ("garbage", "JSONDecodeError"),
        ("hang", "timed out"),
    ],
)
def test_provider_errors_are_one_clear_line(
    openai_standin: StandIn, keyed: None, name: str, cause: str
) -> None:
    model = openai(openai_standin, name, timeout=0.5)
    with pytest.raises(ProviderError) as info:
        model.invoke([HumanMessage("hi")])
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"model openai:{name} at {openai_standin.url}: ")
    assert cause in message
    assert info.value.endpoint == openai_standin.url and info.value.model == f"openai:{name}"
    assert info.value.__cause__ is not None  # the SDK's traceback is kept, not printed


def test_the_endpoint_is_named_without_credentials(openai_standin: StandIn, keyed: None) -> None:
    host = openai_standin.url.replace("http://", "http://user:hunter2@")
    model = make_model(
        {"provider": "openai", "model": "broken", "base_url": host, "max_retries": 0}
    )
    with pytest.raises(ProviderError) as info:
        model.invoke([HumanMessage("hi")])
    assert "hunter2" not in str(info.value) and API_KEY not in str(info.value)
    assert f"at {openai_standin.url}: " in str(info.value)


def test_connection_refused_names_the_endpoint(keyed: None) -> None:
    closed = StandIn()  # bound, never started, then closed: nothing listens on the port
    url = closed.url
    closed.stop()
    model = make_model(
        {"provider": "openai", "model": "m", "base_url": url, "max_retries": 0, "timeout": 2}
    )
    with pytest.raises(ProviderError, match=rf"^model openai:m at {url}: .*Connection error"):
        model.invoke([HumanMessage("hi")])


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://u:p@api.example.com/v1/?token=x", "https://api.example.com/v1"),
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
        ("api.example.com/v1?key=1", "api.example.com/v1"),
    ],
)
def test_without_credentials(url: str, shown: str) -> None:
    assert without_credentials(url) == shown
