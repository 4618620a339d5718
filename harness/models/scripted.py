"""ScriptedChatModel: a real LangChain chat model that plays back scripted turns.

It emits real ``AIMessage.tool_calls`` and supports ``bind_tools``, so a LangGraph agent driven
by it runs its real tool loop. It is stateless: the turn it plays is the number of AI messages
already in its input, so one instance is safe under any number of concurrent runs.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import Any, cast

from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.base import LangSmithParams
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ToolCall,
    ToolCallChunk,
)
from langchain_core.messages.ai import UsageMetadata
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field, field_validator

from harness.errors import ScriptError as ScriptError  # re-exported: callers import it here
from harness.models.wrapping import StreamingTurnChatModel, Turn

TurnSpec = AIMessage | Mapping[str, Any]
"""One scripted turn: an ``AIMessage`` or ``{"tool_calls": [...], "content": "...", "usage":
{"input_tokens": N, "output_tokens": N}}`` (usage: the token figures the reply reports)."""

DEFAULT_FINAL_ANSWER = "Done."


def _tool_call_from_spec(spec: Any, *, where: str) -> ToolCall:
    """Turn ``{"name", "args", "id"?}`` into a LangChain ``ToolCall`` (id kept or None)."""
    if not isinstance(spec, Mapping):
        raise ScriptError(f"{where}: a tool call must be a mapping, got {spec!r}", where=where)
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        raise ScriptError(
            f"{where}: a tool call needs a non-empty 'name', got {spec!r}", where=where
        )
    args = spec.get("args", {})
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError as exc:
            raise ScriptError(
                f"{where}: 'args' of {name!r} is not valid JSON: {exc.msg}", where=where
            ) from None
    if not isinstance(args, Mapping):
        raise ScriptError(
            f"{where}: 'args' of {name!r} must be a mapping, got {type(args).__name__}",
            where=where,
        )
    call_id = spec.get("id")
    if call_id is not None and not isinstance(call_id, str):
        raise ScriptError(
            f"{where}: 'id' of {name!r} must be a string, got {call_id!r}", where=where
        )
    return ToolCall(name=name, args=dict(args), id=call_id, type="tool_call")


def _normalise_turn(turn: Any, position: int) -> AIMessage:
    """Validate one scripted turn up front, so a bad script fails at construction time."""
    where = f"ScriptedChatModel turns[{position}]"
    if isinstance(turn, AIMessage):
        return turn
    if not isinstance(turn, Mapping):
        raise ScriptError(
            f"{where}: expected an AIMessage or a mapping with 'tool_calls'/'content', "
            f"got {type(turn).__name__}",
            where=where,
        )
    unknown = set(turn) - {"tool_calls", "content", "usage"}
    if unknown:
        raise ScriptError(
            f"{where}: unknown keys {sorted(unknown)}; allowed keys are 'tool_calls', 'content' "
            "and 'usage'",
            where=where,
        )
    raw_calls = turn.get("tool_calls") or []
    if not isinstance(raw_calls, Sequence) or isinstance(raw_calls, (str, bytes)):
        raise ScriptError(
            f"{where}: 'tool_calls' must be a list, got {type(raw_calls).__name__}", where=where
        )
    calls = [
        _tool_call_from_spec(spec, where=f"{where}.tool_calls[{index}]")
        for index, spec in enumerate(raw_calls)
    ]
    content = turn.get("content", "")
    if not isinstance(content, str):
        raise ScriptError(
            f"{where}: 'content' must be a string, got {type(content).__name__}", where=where
        )
    usage = _scripted_usage(turn["usage"], where) if "usage" in turn else None
    return AIMessage(content=content, tool_calls=calls, usage_metadata=usage)


def _scripted_usage(raw: Any, where: str) -> UsageMetadata:
    """``usage: {input_tokens, output_tokens}`` (``total_tokens`` defaults to their sum)."""
    keys = ("input_tokens", "output_tokens", "total_tokens")
    if not isinstance(raw, Mapping) or not {"input_tokens", "output_tokens"} <= set(raw):
        raise ScriptError(
            f"{where}: 'usage' must be a mapping with input_tokens and output_tokens "
            f"(and optionally total_tokens), got {raw!r}",
            where=where,
        )
    unknown = sorted(set(raw) - set(keys), key=str)
    if unknown:
        raise ScriptError(
            f"{where}: unknown usage keys {unknown}; allowed keys are {', '.join(keys)}",
            where=where,
        )
    for key in keys:
        value = raw.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ScriptError(
                f"{where}: usage {key} must be an integer >= 0, got {value!r}", where=where
            )
    total = raw.get("total_tokens", raw["input_tokens"] + raw["output_tokens"])
    usage = {"input_tokens": raw["input_tokens"], "output_tokens": raw["output_tokens"]}
    return cast(UsageMetadata, {**usage, "total_tokens": total})


def _fresh_id() -> str:
    # Shaped like real provider ids; unique per generation, as a provider's would be.
    return f"call_{uuid.uuid4().hex[:24]}"


def _usage(messages: Sequence[BaseMessage], reply: AIMessage) -> UsageMetadata:
    """Deterministic token counts (characters / 4) so usage attributes have something real."""
    prompt_chars = sum(len(str(message.content)) for message in messages)
    reply_chars = len(str(reply.content)) + sum(
        len(call["name"]) + len(json.dumps(call["args"])) for call in reply.tool_calls
    )
    input_tokens = prompt_chars // 4 + 1
    output_tokens = reply_chars // 4 + 1
    usage = {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "total_tokens": input_tokens + output_tokens,
    }
    return cast(UsageMetadata, usage)


class ScriptedChatModel(StreamingTurnChatModel):
    """A chat model that plays scripted turns: turn k = number of AI messages in the input."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    turns: list[AIMessage] = Field(default_factory=list)
    """The scripted replies, in order. Past the last one the model gives ``final_answer``."""
    final_answer: str = DEFAULT_FINAL_ANSWER
    latency: float = 0.0
    """Seconds to wait per call (``time.sleep`` sync, ``asyncio.sleep`` async)."""
    model_name: str = "scripted"
    bound_tool_names: tuple[str, ...] = ()
    """Names of the tools given to the last ``bind_tools`` that produced this copy."""

    def __init__(self, turns: Sequence[TurnSpec] = (), /, **kwargs: Any) -> None:
        """Build from a list of turns (``AIMessage`` or ``{"tool_calls": [...], "content"}``)."""
        if "turns" in kwargs:
            turns = kwargs.pop("turns")
        kwargs["turns"] = [_normalise_turn(turn, index) for index, turn in enumerate(turns)]
        super().__init__(**kwargs)

    @field_validator("latency")
    @classmethod
    def _non_negative_latency(cls, value: float) -> float:
        if value < 0:
            raise ValueError(f"latency must be >= 0 seconds, got {value}")
        return value

    def __repr__(self) -> str:
        # LangChain puts repr(model) into every chat-model start event; pydantic's default repr
        # of every scripted turn cost milliseconds per run (measured in bench_runner).
        return f"ScriptedChatModel(turns={len(self.turns)}, latency={self.latency})"

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name}

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        params = super()._get_ls_params(stop=stop, **kwargs)
        params["ls_provider"] = "scripted"
        params["ls_model_name"] = self.model_name
        return params

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools like a real provider: OpenAI-format schemas passed as ``tools``."""
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        names = tuple(spec["function"]["name"] for spec in formatted)
        copy = self.model_copy(update={"bound_tool_names": names})
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return copy.bind(tools=formatted, **kwargs)

    def reply_for(self, messages: Sequence[BaseMessage]) -> AIMessage:
        """The reply this script gives to ``messages`` (pure apart from fresh tool-call ids)."""
        turn = sum(1 for message in messages if isinstance(message, AIMessage))
        usage: UsageMetadata | None = None
        if turn >= len(self.turns):
            reply = AIMessage(content=self.final_answer)
        else:
            scripted = self.turns[turn]
            calls = [
                ToolCall(
                    name=call["name"],
                    args=dict(call["args"]),
                    id=call.get("id") or _fresh_id(),
                    type="tool_call",
                )
                for call in scripted.tool_calls
            ]
            reply = AIMessage(content=scripted.content, tool_calls=calls)
            usage = scripted.usage_metadata
        # the script's figures when it gives them, else deterministic ones (characters / 4)
        reply.usage_metadata = (
            cast(UsageMetadata, dict(usage)) if usage else _usage(messages, reply)
        )
        reply.response_metadata = {"model_name": self.model_name, "finish_reason": _finish(reply)}
        return reply

    def _reply(self, turn: Turn) -> AIMessage:
        if self.latency:
            time.sleep(self.latency)
        return self.reply_for(turn.messages)

    async def _areply(self, turn: Turn) -> AIMessage:
        if self.latency:
            await asyncio.sleep(self.latency)
        return self.reply_for(turn.messages)

    def _pieces(self, turn: Turn) -> Iterator[AIMessageChunk]:
        yield _as_chunk(self._reply(turn))

    async def _apieces(self, turn: Turn) -> AsyncIterator[AIMessageChunk]:
        yield _as_chunk(await self._areply(turn))


def _finish(reply: AIMessage) -> str:
    return "tool_calls" if reply.tool_calls else "stop"


def _as_chunk(reply: AIMessage) -> AIMessageChunk:
    """The whole reply as one streamed chunk, tool calls as JSON-string chunks like providers."""
    chunks = [
        ToolCallChunk(
            name=call["name"],
            args=json.dumps(call["args"]),
            id=call["id"],
            index=index,
            type="tool_call_chunk",
        )
        for index, call in enumerate(reply.tool_calls)
    ]
    return AIMessageChunk(
        content=reply.content,
        tool_call_chunks=chunks,
        usage_metadata=reply.usage_metadata,
        response_metadata=reply.response_metadata,
        chunk_position="last",
    )
