"""The cassette file: one YAML file per scenario, small and readable in review.

::

    format: 1
    cassette: travel::weather in Berlin tomorrow     # the scenario recorded
    agent: harness.demo.travel:build
    model: {provider: openai, model: gpt-4o-mini}
    tools:                                  # every bound schema once, by hash
      3f0a9c61d2b4: {type: function, function: {name: get_weather, ...}}
    turns:
    - key: 9b1c...                          # sha256 of the request (harness.cassettes.request_key)
      tools: [3f0a9c61d2b4]
      messages:                             # the messages added since the previous turn
      - {role: system, text: You are a travel assistant...}
      - {role: user, text: Weather in Berlin tomorrow?}
      response:
        tool_calls:
        - {id: call_9b1c..._0, name: get_weather, args: {city: Berlin, day: tomorrow}}
        usage: {input_tokens: 210, output_tokens: 18, total_tokens: 228}
        finish_reason: tool_calls
    - key: 40e2...
      tools: [3f0a9c61d2b4]
      keep: 3                               # messages shared with the previous turn + its reply
      messages:
      - {role: tool, text: '{"city": "Berlin", ...}', tool_call_id: call_1, status: success}
      response: {content: 'Berlin on Saturday ...', finish_reason: stop}

Nothing about transport is ever written: no headers, URLs, API keys or provider ids. The
pydantic models below are the file's edge; the rest of the package works on the frozen
dataclasses :class:`Response`, :class:`Recording` and :class:`Cassette`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import yaml
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import invalid_tool_call, tool_call, tool_call_chunk
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.cassettes.request_key import Identity, text_and_blocks, tool_hash
from harness.errors import CassetteError

__all__ = [
    "FORMAT_VERSION",
    "Cassette",
    "Recording",
    "Response",
    "common_prefix",
    "dump_cassette",
    "load_cassette",
    "read_cassette",
    "write_cassette",
]

FORMAT_VERSION = 1

_ORDINAL = re.compile(r"^call_(\d+)$")


# --- the hot-path values ----------------------------------------------------------------------


def recorded_call_id(key: str, index: int) -> str:
    """The id of a recorded tool call: from the key, so a re-record changes only what changed."""
    return f"call_{key[:12]}_{index}"


@dataclass(frozen=True, slots=True)
class Response:
    """A model's answer as recorded: content, tool calls, invalid tool calls, usage, finish."""

    content: Any = ""
    tool_calls: tuple[Mapping[str, Any], ...] = ()
    invalid_tool_calls: tuple[Mapping[str, Any], ...] = ()
    usage: Mapping[str, Any] | None = None
    finish_reason: str | None = None

    @classmethod
    def of(cls, message: BaseMessage, key: str) -> Response:
        """What ``message`` answered, its tool-call ids derived from the request's key."""
        calls = list(getattr(message, "tool_calls", ()) or ())
        invalid = list(getattr(message, "invalid_tool_calls", ()) or ())
        metadata = getattr(message, "response_metadata", {}) or {}
        finish = metadata.get("finish_reason") or metadata.get("stop_reason")
        usage = getattr(message, "usage_metadata", None)

        def call_id(given: Any, index: int) -> str:
            # a streamed recording already numbered its calls by their stream index
            mine = isinstance(given, str) and given.startswith(recorded_call_id(key, 0)[:-1])
            return given if mine else recorded_call_id(key, index)

        return cls(
            content=message.content,
            tool_calls=tuple(
                {"id": call_id(c.get("id"), i), "name": c["name"], "args": dict(c["args"])}
                for i, c in enumerate(calls)
            ),
            invalid_tool_calls=tuple(
                {
                    "id": call_id(c.get("id"), len(calls) + i),
                    "name": c.get("name"),
                    "args": c.get("args"),
                    "error": c.get("error"),
                }
                for i, c in enumerate(invalid)
            ),
            usage=dict(usage) if usage else None,
            finish_reason=str(finish) if finish is not None else None,
        )

    def _metadata(self, model_name: str) -> dict[str, Any]:
        metadata: dict[str, Any] = {"model_name": model_name}
        if self.finish_reason is not None:
            metadata["finish_reason"] = self.finish_reason
        return metadata

    def _usage(self) -> UsageMetadata | None:
        if not self.usage:
            return None
        usage: dict[str, Any] = {
            "input_tokens": int(self.usage.get("input_tokens", 0)),
            "output_tokens": int(self.usage.get("output_tokens", 0)),
            "total_tokens": int(self.usage.get("total_tokens", 0)),
        }
        for detail in ("input_token_details", "output_token_details"):
            if isinstance(self.usage.get(detail), Mapping):
                usage[detail] = dict(self.usage[detail])
        return cast(UsageMetadata, usage)

    def message(self, model_name: str) -> AIMessage:
        """The answer as the ``AIMessage`` the provider gave (invalid calls included)."""
        return AIMessage(
            content=self.content,
            tool_calls=[
                tool_call(name=c["name"], args=dict(c["args"]), id=c.get("id"))
                for c in self.tool_calls
            ],
            invalid_tool_calls=[
                invalid_tool_call(
                    name=c.get("name"), args=c.get("args"), id=c.get("id"), error=c.get("error")
                )
                for c in self.invalid_tool_calls
            ],
            usage_metadata=self._usage(),
            response_metadata=self._metadata(model_name),
        )

    def chunks(self, model_name: str) -> list[AIMessageChunk]:
        """The answer as a stream: text a few words at a time, each call's arguments in parts."""
        pieces: list[AIMessageChunk] = []
        text = self.content if isinstance(self.content, str) else None
        if text:
            pieces.extend(AIMessageChunk(content=part) for part in _text_parts(text))
        elif self.content:
            pieces.append(AIMessageChunk(content=self.content))
        calls = [(c, _json(c["args"])) for c in self.tool_calls]
        calls += [(c, c.get("args") or "") for c in self.invalid_tool_calls]
        for index, (call, arguments) in enumerate(calls):
            half = len(arguments) // 2
            first = tool_call_chunk(
                name=call.get("name"), args=arguments[:half], id=call.get("id"), index=index
            )
            rest = tool_call_chunk(name=None, args=arguments[half:], id=None, index=index)
            pieces.append(AIMessageChunk(content="", tool_call_chunks=[first]))
            pieces.append(AIMessageChunk(content="", tool_call_chunks=[rest]))
        pieces.append(
            AIMessageChunk(
                content="",
                usage_metadata=self._usage(),
                response_metadata=self._metadata(model_name),
                chunk_position="last",
            )
        )
        return pieces

    def entry(self, first_ordinal: int) -> dict[str, Any]:
        """The answer as a normalised assistant message, its calls numbered from ``first``."""
        text, blocks = text_and_blocks(self.content)
        entry: dict[str, Any] = {"role": "assistant", "text": text}
        if blocks:
            entry["blocks"] = blocks
        ordinal = first_ordinal
        if self.tool_calls:
            entry["tool_calls"] = []
            for call in self.tool_calls:
                entry["tool_calls"].append(
                    {"id": f"call_{ordinal}", "name": call["name"], "args": dict(call["args"])}
                )
                ordinal += 1
        if self.invalid_tool_calls:
            entry["invalid_tool_calls"] = []
            for call in self.invalid_tool_calls:
                entry["invalid_tool_calls"].append(
                    {"id": f"call_{ordinal}", "name": call.get("name"), "args": call.get("args")}
                )
                ordinal += 1
        return entry


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def _text_parts(text: str) -> list[str]:
    """Three words per piece (whitespace kept), so a stream has several chunks."""
    words = re.findall(r"\S+\s*|\s+", text)
    return ["".join(words[i : i + 3]) for i in range(0, len(words), 3)] or [text]


def next_ordinal(messages: Sequence[Mapping[str, Any]]) -> int:
    """The ordinal the next tool call of this normalised conversation gets."""
    highest = 0
    for message in messages:
        ids = [message.get("tool_call_id")]
        for group in ("tool_calls", "invalid_tool_calls"):
            ids.extend(call.get("id") for call in message.get(group) or ())
        for call_id in ids:
            match = _ORDINAL.match(str(call_id)) if call_id is not None else None
            if match:
                highest = max(highest, int(match.group(1)))
    return highest + 1


@dataclass(frozen=True, slots=True)
class Recording:
    """One recorded model turn: its key, request (tools by hash, options, messages), answer."""

    key: str
    identity: Identity
    tools: tuple[str, ...]
    params: Mapping[str, Any]
    messages: tuple[Mapping[str, Any], ...]
    response: Response

    def context(self) -> list[Mapping[str, Any]]:
        """This turn's messages plus its answer: what the next turn of the conversation extends."""
        return [*self.messages, self.response.entry(next_ordinal(self.messages))]


@dataclass(frozen=True, slots=True)
class Cassette:
    """A scenario's recordings, in the order they were made, and the tool schemas they bound."""

    scenario: str
    identity: Identity | None = None
    agent: str | None = None
    tools: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    recordings: tuple[Recording, ...] = ()


# --- the file's edge ----------------------------------------------------------------------------


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _ToolCallEntry(_Entry):
    id: str | None = None
    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class _InvalidCallEntry(_Entry):
    id: str | None = None
    name: str | None = None
    args: str | None = None
    error: str | None = None


class _ResponseEntry(_Entry):
    content: str | list[Any] = ""
    tool_calls: list[_ToolCallEntry] = Field(default_factory=list)
    invalid_tool_calls: list[_InvalidCallEntry] = Field(default_factory=list)
    usage: dict[str, Any] | None = None
    finish_reason: str | None = None


class _ModelEntry(_Entry):
    provider: str
    model: str = ""
    params: dict[str, Any] = Field(default_factory=dict)


class _TurnEntry(_Entry):
    key: str = Field(pattern=r"^[0-9a-f]{64}$")
    model: _ModelEntry | None = None
    tools: list[str] = Field(default_factory=list)
    call: dict[str, Any] = Field(default_factory=dict)
    keep: int = Field(default=0, ge=0)
    messages: list[dict[str, Any]] = Field(default_factory=list)
    response: _ResponseEntry


class _CassetteFile(_Entry):
    format: Literal[1]
    cassette: str
    """The scenario (``suite::name``) or test id recorded: not named ``scenario``, so that a
    suite search (harness.scenarios.looks_like_suite) never takes a cassette for a suite."""
    agent: str | None = None
    model: _ModelEntry | None = None
    tools: dict[str, dict[str, Any]] = Field(default_factory=dict)
    turns: list[_TurnEntry] = Field(default_factory=list)


def _identity(entry: _ModelEntry | None) -> Identity | None:
    return None if entry is None else Identity(entry.provider, entry.model, dict(entry.params))


def _response(entry: _ResponseEntry) -> Response:
    return Response(
        content=entry.content,
        tool_calls=tuple(c.model_dump() for c in entry.tool_calls),
        invalid_tool_calls=tuple(c.model_dump() for c in entry.invalid_tool_calls),
        usage=entry.usage,
        finish_reason=entry.finish_reason,
    )


def _from_file(data: _CassetteFile, where: str) -> Cassette:
    identity = _identity(data.model)
    recordings: list[Recording] = []
    previous: list[Mapping[str, Any]] = []
    for index, turn in enumerate(data.turns):
        if turn.keep > len(previous):
            raise CassetteError(
                f"{where}: turns[{index}] keeps {turn.keep} messages, but the previous turn "
                f"has only {len(previous)}",
                path=where,
            )
        unknown = [h for h in turn.tools if h not in data.tools]
        if unknown:
            raise CassetteError(
                f"{where}: turns[{index}] binds tools {unknown} that `tools:` does not define",
                path=where,
            )
        turn_identity = _identity(turn.model) or identity
        if turn_identity is None:
            raise CassetteError(f"{where}: no `model:` for turns[{index}]", path=where)
        recording = Recording(
            key=turn.key,
            identity=turn_identity,
            tools=tuple(turn.tools),
            params=dict(turn.call),
            messages=(*previous[: turn.keep], *turn.messages),
            response=_response(turn.response),
        )
        recordings.append(recording)
        previous = recording.context()
    return Cassette(data.cassette, identity, data.agent, dict(data.tools), tuple(recordings))


def load_cassette(text: str, where: str = "<cassette>") -> Cassette:
    """A cassette from YAML text; CassetteError names the file and the field at fault."""
    try:
        raw = yaml.load(text, Loader=_LOADER)  # a safe loader (libyaml when available)
    except yaml.YAMLError as exc:
        raise CassetteError(f"{where}: not valid YAML: {exc}", path=where) from None
    if not isinstance(raw, Mapping):
        raise CassetteError(f"{where}: expected a cassette mapping (format: 1, ...)", path=where)
    if raw.get("format") != FORMAT_VERSION:
        raise CassetteError(
            f"{where}: cassette format {raw.get('format')!r} is not supported (this harness "
            f"reads format {FORMAT_VERSION}); re-record it with --record",
            path=where,
        )
    try:
        data = _CassetteFile.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(part) for part in first["loc"])
        raise CassetteError(f"{where}: {loc}: {first['msg']}", path=where) from None
    return _from_file(data, where)


def read_cassette(path: Path) -> Cassette:
    """The cassette stored at ``path``."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CassetteError(f"{path}: cannot read: {exc.strerror}", path=str(path)) from None
    return load_cassette(text, str(path))


def common_prefix(a: Sequence[Any], b: Sequence[Any]) -> int:
    """How many leading items ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _file_data(cassette: Cassette) -> dict[str, Any]:
    data: dict[str, Any] = {"format": FORMAT_VERSION, "cassette": cassette.scenario}
    if cassette.agent:
        data["agent"] = cassette.agent
    identity = cassette.identity or (
        cassette.recordings[0].identity if cassette.recordings else None
    )
    if identity is not None:
        data["model"] = identity.as_dict()
    used = {h for r in cassette.recordings for h in r.tools}
    data["tools"] = {h: dict(s) for h, s in cassette.tools.items() if h in used}
    turns: list[dict[str, Any]] = []
    previous: list[Mapping[str, Any]] = []
    for recording in cassette.recordings:
        turn: dict[str, Any] = {"key": recording.key}
        if identity is not None and recording.identity != identity:
            turn["model"] = recording.identity.as_dict()
        if recording.tools:
            turn["tools"] = list(recording.tools)
        if recording.params:
            turn["call"] = dict(recording.params)
        keep = common_prefix(previous, recording.messages)
        if keep:
            turn["keep"] = keep
        turn["messages"] = [dict(m) for m in recording.messages[keep:]]
        turn["response"] = _response_data(recording.response)
        turns.append(turn)
        previous = recording.context()
    data["turns"] = turns
    return data


def _response_data(response: Response) -> dict[str, Any]:
    data: dict[str, Any] = {}
    if response.content or not (response.tool_calls or response.invalid_tool_calls):
        data["content"] = response.content
    if response.tool_calls:
        data["tool_calls"] = [dict(c) for c in response.tool_calls]
    if response.invalid_tool_calls:
        data["invalid_tool_calls"] = [dict(c) for c in response.invalid_tool_calls]
    if response.usage:
        data["usage"] = dict(response.usage)
    if response.finish_reason is not None:
        data["finish_reason"] = response.finish_reason
    return data


# libyaml's loader and dumper when PyYAML was built with it: ~10x faster on big cassettes
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BASE_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_BASE_DUMPER):  # type: ignore[misc]
    """Block scalars for multi-line text, so prompts read as they were written."""


def _represent_str(dumper: Any, value: str) -> yaml.ScalarNode:
    block = "\n" in value and not any(c in value for c in "\r\t") and value == value.rstrip(" ")
    node: yaml.ScalarNode = dumper.represent_scalar(
        "tag:yaml.org,2002:str", value, style="|" if block else None
    )
    return node


def _represent_list(dumper: Any, value: list[Any]) -> yaml.SequenceNode:
    # a turn's tool hashes on one line: [fd786da6b7b5, e7bc2c74a707]
    flow = bool(value) and all(isinstance(v, str) and len(v) <= 16 for v in value)
    node: yaml.SequenceNode = dumper.represent_sequence(
        "tag:yaml.org,2002:seq", value, flow_style=flow
    )
    return node


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(list, _represent_list)

_HEADER = (
    "# toolcall-harness cassette: the recorded model turns of one scenario.\n"
    "# Written by `harness run --record`; replayed by `--replay` (docs/record-replay.md).\n"
    "# Re-record rather than edit: each turn's key hashes its request.\n"
)


def dump_cassette(cassette: Cassette) -> str:
    """The YAML text of a cassette (header comment, then the data)."""
    body = yaml.dump(
        _file_data(cassette),
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
        default_flow_style=False,
    )
    return _HEADER + body


def write_cassette(cassette: Cassette, path: Path) -> None:
    """Write atomically (a crash never leaves half a cassette)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        temporary.write_text(dump_cassette(cassette), encoding="utf-8")
        temporary.replace(path)
    except OSError as exc:
        raise CassetteError(f"{path}: cannot write: {exc.strerror}", path=str(path)) from None


def schemas_by_hash(tools: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Each schema under its hash, in binding order."""
    return {tool_hash(schema): schema for schema in tools}
