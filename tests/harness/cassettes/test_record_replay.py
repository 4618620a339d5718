"""Record and replay: the key, the file, misses, repeat, streaming, concurrency, no secrets.

Recording goes through the real ``langchain-openai`` client against the local stand-in
(``tests/support/openai_server.py``), as ``harness run --record`` in a subprocess — the way a
user records. Replays run in this process with the provider's packages blocked and no API key,
and the stand-in counts that no request reached it.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from harness.cassettes import (
    CassetteStore,
    Request,
    TapeInfo,
    canonical_json,
    dump_cassette,
    load_cassette,
    normalise_messages,
    read_cassette,
)
from harness.cli import main
from harness.demo import build_tool_agent, travel
from harness.errors import CassetteError, CassetteMiss
from harness.models import DemoChatModel, make_model
from harness.models.scripted import ScriptedChatModel
from harness.scenarios import looks_like_suite
from tests.support.openai_server import (
    API_KEY,
    PROMPT,
    TOOL_DOC,
    StandIn,
    record,
    serving,
    write_project,
)
from tests.support.paths import ROOT

pytest.importorskip("langchain_openai")


@pytest.fixture(scope="module")
def standin() -> Iterator[StandIn]:
    """The stand-in server for this module."""
    yield from serving()


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No key, and the provider's packages cannot be imported: replay must not need them."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    for module in [m for m in sys.modules if m.split(".")[0] in ("langchain_openai", "openai")]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, "langchain_openai", None)  # import raises ImportError
    monkeypatch.setitem(sys.modules, "openai", None)


def replay(cwd: Path, *args: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, dict[str, Any]]:
    """``harness run ... --replay`` in this process; (exit code, the JSON report)."""
    monkeypatch.chdir(cwd)
    report = cwd / "replay.json"
    code = main(["run", *args, "--replay", "--json", str(report)])
    return code, json.loads(report.read_text(encoding="utf-8"))


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {f"{s['suite']}::{s['name']}": s["status"] for s in report["scenarios"]}


def errors(report: dict[str, Any]) -> list[str]:
    return [
        run["error"]["message"] for s in report["scenarios"] for run in s["runs"] if run["error"]
    ]


# --- the key -------------------------------------------------------------------------------------


def _conversation(first_id: str, second_id: str) -> list[BaseMessage]:
    return [
        SystemMessage("sys"),
        HumanMessage("Weather in Berlin?", id="msg-1"),
        AIMessage(
            "",
            tool_calls=[{"name": "get_weather", "args": {"city": "Berlin"}, "id": first_id}],
            response_metadata={"model_name": "x", "system_fingerprint": "fp_1"},
            usage_metadata={"input_tokens": 3, "output_tokens": 4, "total_tokens": 7},
            id="run-1",
        ),
        ToolMessage("sunny", tool_call_id=first_id, id="msg-2"),
        HumanMessage("And Oslo?"),
        AIMessage(
            "", tool_calls=[{"name": "get_weather", "args": {"city": "Oslo"}, "id": second_id}]
        ),
        ToolMessage("rain", tool_call_id=second_id, status="error"),
    ]


def _key(messages: list[BaseMessage], model: BaseChatModel | None = None, **kwargs: Any) -> str:
    schema = {"type": "function", "function": {"name": "get_weather", "description": TOOL_DOC}}
    call = {"tools": [schema], **kwargs}
    return Request.of(model or make_model("openai:gpt-4o-mini"), messages, None, call).key


def test_tool_call_ids_become_ordinals() -> None:
    normalised = normalise_messages(_conversation("call_abc", "call_def"))
    assert normalised[2]["tool_calls"] == [
        {"id": "call_1", "name": "get_weather", "args": {"city": "Berlin"}}
    ]
    assert normalised[3] == {
        "role": "tool",
        "text": "sunny",
        "tool_call_id": "call_1",
        "status": "success",
    }
    assert normalised[6]["tool_call_id"] == "call_2" and normalised[6]["status"] == "error"


def test_the_key_ignores_ids_metadata_usage_and_transport() -> None:
    key = _key(_conversation("call_abc", "call_def"))
    assert _key(_conversation("call_zzz", "call_yyy")) == key  # fresh provider ids
    plain = [
        m.model_copy(update={"id": None, "response_metadata": {}, "usage_metadata": None})
        if isinstance(m, AIMessage)
        else m.model_copy(update={"id": None})
        for m in _conversation("call_abc", "call_def")
    ]
    assert _key(plain) == key
    transport = make_model(
        {
            "provider": "openai",
            "model": "gpt-4o-mini",
            "base_url": "http://127.0.0.1:1/v1",
            "api_key": "sk-x",
            "timeout": 3,
            "max_retries": 0,
        }
    )
    assert _key(_conversation("a", "b"), transport) == key


@pytest.mark.parametrize(
    "change",
    ["system prompt", "tool status", "model", "temperature", "tool_choice", "parallel", "stop"],
)
def test_the_key_changes_with_what_changes_an_answer(change: str) -> None:
    messages = _conversation("call_abc", "call_def")
    key = _key(messages)
    model = make_model("openai:gpt-4o-mini")
    kwargs: dict[str, Any] = {}
    if change == "system prompt":
        messages[0] = SystemMessage("sys!")
    elif change == "tool status":
        messages[6] = ToolMessage("rain", tool_call_id="call_def")
    elif change == "model":
        model = make_model("openai:gpt-4o")
    elif change == "temperature":
        model = make_model({"provider": "openai", "model": "gpt-4o-mini", "temperature": 0})
    elif change == "tool_choice":
        kwargs["tool_choice"] = "required"
    elif change == "parallel":
        kwargs["parallel_tool_calls"] = False
    else:
        kwargs["stop"] = ["\n"]
    assert _key(messages, model, **kwargs) != key


def test_the_key_covers_the_full_tool_schema() -> None:
    messages: list[BaseMessage] = [HumanMessage("hi")]
    model = make_model("openai:gpt-4o-mini")
    one = {"type": "function", "function": {"name": "t", "parameters": {"type": "object"}}}
    two = {"type": "function", "function": {"name": "t", "parameters": {"type": "string"}}}
    first = Request.of(model, messages, None, {"tools": [one]}).key
    assert Request.of(model, messages, None, {"tools": [two]}).key != first
    assert canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'


# --- record and replay through the real client ----------------------------------------------


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory, standin: StandIn) -> Path:
    """The weather project recorded once (``harness run --record``, key in the suite file)."""
    where = tmp_path_factory.mktemp("recorded")
    suite = write_project(where, standin.url, more=f", api_key: {API_KEY}")
    done = record(where, str(suite), "--record", "--json", "record.json")
    assert done.returncode == 0, done.stdout + done.stderr
    return where


@pytest.fixture
def project(tmp_path: Path, recorded: Path) -> Path:
    """A copy of the recorded project for one test to change; returns its suite."""
    shutil.copytree(recorded, tmp_path, dirs_exist_ok=True)
    return tmp_path / "weather.yaml"


def test_record_then_replay_offline(
    project: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch, offline: None
) -> None:
    where = project.parent
    files = sorted(p.relative_to(where).as_posix() for p in where.rglob("*.yaml"))
    assert files == [
        "cassettes/weather/weather-in-berlin.yaml",
        "cassettes/weather/weather-in-oslo.yaml",
        "weather.yaml",
    ]
    seen = standin.count()
    code, report = replay(where, str(project), monkeypatch=monkeypatch)
    assert code == 0, errors(report)
    assert standin.count() == seen  # not one request: the replay never reached the network
    before = json.loads((where / "record.json").read_text())
    assert (
        statuses(report)
        == statuses(before)
        == {
            "weather::weather in Berlin": "passed",
            "weather::weather in Oslo": "passed",
        }
    )
    assert report["warnings"] == []


def test_a_cassette_holds_no_key_header_or_url(project: Path, standin: StandIn) -> None:
    sent = [{k.lower(): v for k, v in r["headers"].items()} for r in standin.requests]
    assert {"authorization": f"Bearer {API_KEY}"}.items() <= sent[0].items()  # it was sent ...
    for path in (project.parent / "cassettes").rglob("*.yaml"):
        text = path.read_text(encoding="utf-8")
        for secret in (API_KEY, "Bearer", "Authorization", "127.0.0.1", "http", "base_url"):
            assert secret not in text, f"{secret!r} in {path}"  # ... the cassette has none


def test_the_file_is_small_and_readable(project: Path) -> None:
    path = project.parent / "cassettes" / "weather" / "weather-in-berlin.yaml"
    cassette = read_cassette(path)
    assert cassette.scenario == "weather::weather in Berlin"
    assert cassette.agent == "agent.py:build"
    assert cassette.identity is not None and cassette.identity.label == "openai:gpt-4o-mini"
    assert cassette.identity.params == {}  # api_key, base_url, timeout: transport, not kept
    assert len(cassette.tools) == 1  # the schema once, however many turns bind it
    first, second = cassette.recordings
    assert [m["role"] for m in first.messages] == ["system", "user"]
    (call,) = first.response.tool_calls
    assert call["args"] == {"city": "Berlin"}  # arguments as a mapping, not a JSON string
    assert call["id"] == f"call_{first.key[:12]}_0"  # from the key, not the provider's random id
    assert first.response.finish_reason == "tool_calls" and first.response.usage
    raw = path.read_text(encoding="utf-8")
    assert "keep: 3" in raw  # turn 2 stores only the tool result it adds
    assert [m["role"] for m in second.messages] == ["system", "user", "assistant", "tool"]
    assert load_cassette(dump_cassette(cassette)) == cassette  # the file round-trips
    assert not looks_like_suite(path)  # a cassette under a searched folder is not a suite


def test_a_changed_prompt_or_tool_is_a_named_miss(
    project: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch, offline: None
) -> None:
    where = project.parent
    changed = PROMPT.replace("then answer", "then answer briefly")
    write_project(where, standin.url, prompt=changed, agent="agent_prompt")
    code, report = replay(where, str(project), "-k", "berlin", monkeypatch=monkeypatch)
    assert code == 1
    (message,) = errors(report)
    at = PROMPT.index("then answer") + len("then answer")
    assert message.startswith(
        "no recording for turn 1 of weather::weather in Berlin in "
        "cassettes/weather/weather-in-berlin.yaml: "
        f"message [0] (system) differs at character {at}: recorded "
    )
    assert message.endswith(
        "re-record with `harness run 'weather.yaml::weather in Berlin' --record`"
    )
    assert report["scenarios"][0]["runs"][0]["error"]["type"] == "CassetteMiss"
    assert report["warnings"] == []  # the miss says it all: no "unused recordings" on top

    write_project(where, standin.url, doc="Weather now, for one city.", agent="agent_tool")
    code, report = replay(where, str(project), "-k", "berlin", monkeypatch=monkeypatch)
    (message,) = errors(report)
    assert "bound tools changed: get_weather (description)" in message


def test_unused_and_orphaned_recordings_are_warned(
    project: Path, monkeypatch: pytest.MonkeyPatch, offline: None
) -> None:
    tmp_path, suite = project.parent, project
    # Oslo's scenario is renamed, and Berlin's agent now stops after its first turn
    text = suite.read_text().replace("weather in Oslo", "weather in Oslo, renamed")
    suite.write_text(
        text.replace("input: Weather in Berlin?", "input: Weather in Berlin?\n    timeout: 5")
    )
    berlin = tmp_path / "cassettes" / "weather" / "weather-in-berlin.yaml"
    cassette = read_cassette(berlin)
    from dataclasses import replace as copy

    from harness.cassettes import write_cassette

    extra = copy(cassette.recordings[1], key="f" * 64)
    write_cassette(copy(cassette, recordings=(*cassette.recordings, extra)), berlin)
    code, report = replay(tmp_path, str(suite), "-k", "berlin", monkeypatch=monkeypatch)
    assert code == 0
    warnings = report["warnings"]
    assert any(
        "weather-in-oslo.yaml: a cassette no loaded scenario records to" in w for w in warnings
    )
    assert any(
        "weather-in-berlin.yaml: 1 recorded turn of weather::weather in Berlin not used (key ffff"
        in w
        for w in warnings
    ), warnings


def _same_replay(
    tmp_path: Path, suite: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Record Berlin (subprocess), replay it here: (record report, replay report), same exit."""
    first = record(tmp_path, str(suite), "-k", "berlin", "--record", "--json", "record.json")
    assert first.returncode in (0, 1), first.stdout + first.stderr
    code, report = replay(tmp_path, str(suite), "-k", "berlin", monkeypatch=monkeypatch)
    before = json.loads((tmp_path / "record.json").read_text())
    assert code == first.returncode and errors(report) == []  # a faithful replay, not a miss
    assert statuses(report) == statuses(before)
    assert report["scenarios"][0]["reasons"] == before["scenarios"][0]["reasons"]
    calls = [
        [
            {k: v for k, v in call.items() if k != "duration_ns"}
            for call in s["runs"][0]["tool_calls"]
        ]
        for s in (report["scenarios"][0], before["scenarios"][0])
    ]
    assert calls[0] == calls[1]  # same calls, same (key-derived) ids
    return before, report


def test_a_streamed_recording_replays(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch, offline: None
) -> None:
    # streaming: true makes the client read SSE, argument deltas split across chunks
    suite = write_project(tmp_path, standin.url, more=", streaming: true")
    before, _ = _same_replay(tmp_path, suite, monkeypatch)
    assert before["scenarios"][0]["status"] == "passed"
    assert standin.requests[-1]["body"]["stream"] is True


def test_invalid_tool_calls_replay_faithfully(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch, offline: None
) -> None:
    # 'malformed' answers the first turn with arguments that are not JSON
    suite = write_project(tmp_path, standin.url, model="malformed")
    _same_replay(tmp_path, suite, monkeypatch)
    path = tmp_path / "cassettes" / "weather" / "weather-in-berlin.yaml"
    (turn,) = read_cassette(path).recordings  # the agent stops: nothing valid to call
    (bad,) = turn.response.invalid_tool_calls
    assert bad["name"] == "get_weather" and bad["args"] == '{"city": "Berlin", "day": '
    assert "are not valid JSON" in str(bad["error"])
    message = CassetteStore("replay").wrap(
        make_model({"provider": "openai", "model": "malformed"}),
        TapeInfo(path, "weather::weather in Berlin"),
    )
    prompt = [SystemMessage(PROMPT), HumanMessage("Weather in Berlin?")]
    schema = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": TOOL_DOC,
            "parameters": {
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
                "type": "object",
            },
        },
    }
    replayed = message.bind(tools=[schema]).invoke(prompt)
    assert isinstance(replayed, AIMessage)
    assert replayed.invalid_tool_calls == [dict(bad, type="invalid_tool_call")]


def test_the_shipped_travel_suite_through_the_stand_in(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch, offline: None
) -> None:
    """Same verdicts as the demo model; concurrency 1 and 8 record the same bytes; replay at 8."""
    text = (ROOT / "scenarios" / "travel.yaml").read_text(encoding="utf-8")
    spec = f'{{provider: openai, model: gpt-4o-mini, base_url: "{standin.url}", max_retries: 0}}'
    suite = tmp_path / "travel.yaml"
    suite.write_text(text.replace("model: {provider: demo}", f"model: {spec}", 1))
    one = record(tmp_path, str(suite), "--record", "one", "--concurrency", "1")
    eight = record(tmp_path, str(suite), "--record", "eight", "--concurrency", "8")
    assert one.returncode == eight.returncode == 0, one.stdout[-2000:] + one.stderr[-2000:]
    files = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*.yaml"))
    assert len(files) == 16
    for name in files:  # ids come from keys, turns are in conversation order: identical files
        assert (tmp_path / "one" / name).read_text() == (tmp_path / "eight" / name).read_text()
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(ROOT / "scenarios" / "travel.yaml"), "--json", "demo.json"]) == 0
    code = main(["run", str(suite), "--replay", "eight", "--concurrency", "8", "--json", "r.json"])
    report = json.loads((tmp_path / "r.json").read_text())
    assert code == 0, errors(report)
    assert statuses(report) == statuses(json.loads((tmp_path / "demo.json").read_text()))


# --- replay without a provider: repeat, streaming, record=missing, errors ------------------------


class Counting(BaseChatModel):
    """A real (if tiny) chat model whose answer changes on every call: a stand-in for sampling."""

    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "counting"

    def _generate(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self.calls += 1
        return ChatResult(generations=[ChatGeneration(message=AIMessage(f"answer {self.calls}"))])


def test_repeat_records_samples_and_replays_them_in_turn(tmp_path: Path) -> None:
    info = TapeInfo(tmp_path / "c.yaml", "s::repeat")
    store = CassetteStore("record")
    recording = store.wrap(Counting(), info)
    assert [recording.invoke("hi").content for _ in range(3)] == [
        "answer 1",
        "answer 2",
        "answer 3",
    ]
    store.finish()
    assert len(read_cassette(info.path).recordings) == 3  # three samples of one key
    store = CassetteStore("replay")
    replaying = store.wrap(Counting(), info)
    answers = [replaying.invoke("hi").content for _ in range(4)]
    assert answers == ["answer 1", "answer 2", "answer 3", "answer 1"]  # in turn, then round
    assert store.finish() == []


def test_replay_streams_chunks_through_a_graph(tmp_path: Path) -> None:
    info = TapeInfo(tmp_path / "t.yaml", "travel::two things")
    question = {
        "messages": [("user", "What's the weather in Rome today, and convert 200 EUR to GBP")]
    }
    store = CassetteStore("record")
    recorded = travel.build(model=store.wrap(DemoChatModel(), info)).invoke(question)
    store.finish()
    replaying = CassetteStore("replay").wrap(make_model("openai:gpt-4o-mini"), info)
    with pytest.raises(CassetteMiss, match="model changed: recorded toolcall-harness-demo:demo"):
        travel.build(model=replaying).invoke(question)
    agent = travel.build(model=CassetteStore("replay").wrap(DemoChatModel(), info))
    pieces = [
        chunk
        for chunk, _meta in agent.stream(question, stream_mode="messages")
        if isinstance(chunk, AIMessageChunk)
    ]
    assert len(pieces) > 4  # the answer arrives in several chunks, not one
    calls = [c for piece in pieces for c in piece.tool_call_chunks if c.get("name")]
    assert [c["name"] for c in calls] == ["get_weather", "convert_currency"]
    final = "".join(str(p.content) for p in pieces if p.content)
    assert final == recorded["messages"][-1].content


def test_record_missing_keeps_what_is_there(tmp_path: Path) -> None:
    info = TapeInfo(tmp_path / "c.yaml", "s::missing")
    store = CassetteStore("record")
    store.wrap(Counting(), info).invoke("first")
    store.finish()
    before = info.path.read_text()
    store = CassetteStore("missing")
    model = store.wrap(Counting(), info)
    assert model.invoke("first").content == "answer 1"  # replayed
    assert model.invoke("second").content == "answer 1"  # a new model answered: recorded
    store.finish()
    after = read_cassette(info.path)
    assert [r.messages[-1]["text"] for r in after.recordings] == ["first", "second"]
    assert info.path.read_text().startswith(before.rsplit("turns:", 1)[0])


class _Tokens(BaseCallbackHandler):
    """Collects the streamed tokens a model announces to the run's callbacks."""

    def __init__(self) -> None:
        self.tokens: list[str] = []

    def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
        self.tokens.append(token)


def test_record_missing_streams_each_token_once(tmp_path: Path) -> None:
    # A miss is streamed by the fallback recorder: the replayer announces its chunks itself,
    # so the agent's handlers must see every token once, not once per wrapping layer.
    info = TapeInfo(tmp_path / "c.yaml", "s::stream-missing")
    store = CassetteStore("missing")
    model = store.wrap(ScriptedChatModel([{"content": "hello there"}]), info)
    handler = _Tokens()
    pieces = list(model.stream("hi", config={"callbacks": [handler]}))
    assert "".join(str(p.content) for p in pieces) == "hello there"
    assert handler.tokens == ["hello there"]
    store.finish()
    (recording,) = read_cassette(info.path).recordings
    replayed = CassetteStore("replay").wrap(ScriptedChatModel([{"content": "other"}]), info)
    again = _Tokens()
    assert asyncio.run(_astreamed(replayed, again)) == "hello there"  # from the tape
    assert "".join(again.tokens) == "hello there"  # the tape's chunks, each announced once
    assert recording.response.message("scripted").content == "hello there"


async def _astreamed(model: BaseChatModel, handler: BaseCallbackHandler) -> str:
    return "".join([str(p.content) async for p in model.astream("hi", {"callbacks": [handler]})])


def test_replay_without_a_cassette_names_the_fix(tmp_path: Path) -> None:
    info = TapeInfo(tmp_path / "none.yaml", "s::x", rerecord="re-record with `make it`")
    model = CassetteStore("replay").wrap(make_model("openai:gpt-4o-mini"), info)
    with pytest.raises(CassetteMiss) as miss:
        model.invoke("hi")
    assert str(miss.value) == (
        f"no recording for turn 1 of s::x in {info.path}: no cassette was recorded for this "
        "scenario; re-record with `make it`"
    )
    assert miss.value.turn == 1 and miss.value.scenario == "s::x"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("format: 2\ncassette: s\n", "cassette format 2 is not supported"),
        ("format: 1\n", "cassette: Field required"),
        ("format: 1\ncassette: s\nturns: [{key: abc, response: {}}]\n", "turns.0.key"),
        ("[unclosed", "not valid YAML"),
    ],
)
def test_a_broken_cassette_is_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(CassetteError, match=message):
        load_cassette(text, "c.yaml")


def test_two_scenarios_cannot_share_a_file(tmp_path: Path) -> None:
    store = CassetteStore("record")
    store.wrap(Counting(), TapeInfo(tmp_path / "a.yaml", "s::A b"))
    with pytest.raises(CassetteError, match="would share this cassette"):
        store.wrap(Counting(), TapeInfo(tmp_path / "a.yaml", "s::a-b"))


def test_tools_bound_once_each(tmp_path: Path) -> None:
    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return key

    info = TapeInfo(tmp_path / "b.yaml", "s::bind")
    store = CassetteStore("record")
    agent = build_tool_agent(
        store.wrap(DemoChatModel(), info), [lookup], system_prompt="s", name="a"
    )
    agent.invoke({"messages": [("user", "look up the key alpha")]})
    store.finish()
    cassette = read_cassette(info.path)
    assert list(cassette.tools) == [r.tools[0] for r in cassette.recordings][:1]


# --- the suite's `cassettes:` key, --record=missing on the CLI ------------------------------------


def test_a_suites_cassettes_key_moves_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "suite: s\nagent: harness.demo.travel:build\ncassettes: recorded\nscenarios:\n"
        "  - {name: berlin, input: 'Weather in Berlin tomorrow?'}\n"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(suite), "--record"]) == 0
    assert (tmp_path / "recorded" / "s" / "berlin.yaml").is_file()
    assert not (tmp_path / "cassettes").exists()
    assert main(["run", str(suite), "--replay"]) == 0
    assert main(["run", str(suite), "--replay", "elsewhere"]) == 1  # a folder given wins


def test_record_missing_on_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = (
        "suite: s\nagent: harness.demo.travel:build\nscenarios:\n"
        "  - {name: a, input: 'Weather in Oslo?'}\n"
    )
    suite = tmp_path / "suite.yaml"
    suite.write_text(body)
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(suite), "--record"]) == 0
    first = (tmp_path / "cassettes" / "s" / "a.yaml").read_text()
    suite.write_text(body + "  - {name: b, input: 'Weather in Rome?'}\n")
    assert main(["run", str(suite), "--replay"]) == 1  # b has no cassette: a miss, not a call
    assert main(["run", str(suite), "--record=missing"]) == 0
    assert (tmp_path / "cassettes" / "s" / "a.yaml").read_text() == first
    assert (tmp_path / "cassettes" / "s" / "b.yaml").is_file()
    assert main(["run", str(suite), "--replay"]) == 0


# --- pytest: two real-provider scenarios in one session, record and replay, CI, xdist ---------

pytest_plugins = ["pytester"]

BLOCK_PROVIDER = """
import sys

sys.modules["langchain_openai"] = None  # replay must not need the provider's package
sys.modules["openai"] = None
"""

CLIENT_TEST = """
from harness.assertions import expect_tools
from agent import build


def test_berlin(tool_recorder, harness_model):
    model = harness_model({{"provider": "openai", "model": "gpt-4o-mini", "base_url": "{url}"}})
    question = {{"messages": [("user", "Weather in Berlin?")]}}
    build(model=model).invoke(question, tool_recorder.config)
    expect_tools(tool_recorder).called("get_weather", city="Berlin").accuracy_at_least(1.0)
"""


def test_pytest_records_and_replays_in_one_session(
    pytester: pytest.Pytester, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_project(pytester.path, standin.url)
    pytester.makepyfile(test_client=CLIENT_TEST.format(url=standin.url))
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.delenv("CI", raising=False)
    # live, two real-provider items on one session loop: the second must not see a closed loop
    live = pytester.runpytest_subprocess("--harness-scenarios", "-p", "no:cacheprovider")
    live.assert_outcomes(passed=3)
    recorded = pytester.runpytest_subprocess("--harness-scenarios", "--harness-record")
    recorded.assert_outcomes(passed=3)
    folder = pytester.path / "cassettes"
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.yaml")) == [
        "test-client/test-berlin.yaml",
        "weather/weather-in-berlin.yaml",
        "weather/weather-in-oslo.yaml",
    ]
    seen = standin.count()
    monkeypatch.delenv("OPENAI_API_KEY")
    pytester.makeconftest(BLOCK_PROVIDER)
    monkeypatch.setenv("CI", "true")  # no flag: under CI a test with a cassette replays
    ci = pytester.runpytest_subprocess(
        "--harness-scenarios", "-n", "2"
    )  # (--harness-replay: below)
    assert ci.ret == 0, ci.stdout.str()[-3000:]
    ci.assert_outcomes(passed=3)
    assert standin.count() == seen


def test_pytest_replay_miss_is_the_items_failure(
    pytester: pytest.Pytester, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = write_project(pytester.path, standin.url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    pytester.makeconftest(BLOCK_PROVIDER)
    result = pytester.runpytest_subprocess("--harness-scenarios", "--harness-replay", str(suite))
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        ["*no recording for turn 1 of weather::weather in*no cassette was recorded*"]
    )
    pytester.makeini("[pytest]\nharness_cassettes = sometimes\n")
    bad = pytester.runpytest_subprocess("--harness-scenarios", str(suite))
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
