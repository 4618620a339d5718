"""RecordingChatModel: asks the real model and writes down each answer on a tape.

It binds tools as OpenAI schemas (so the key sees the full schemas), hands each turn to the
wrapped model with its own tool binding, and returns the answer as recorded — tool-call ids
derived from the request's key — so the conversation that continues is the one a replay gives.
Streaming streams: the wrapped model's chunks pass through as they come, ids rewritten.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import ConfigDict

from harness.cassettes.format import Response, recorded_call_id
from harness.cassettes.key import Request
from harness.cassettes.tape import Tape
from harness.models.wrapping import (
    ToolBindingChatModel,
    as_chunk,
    bound_to,
    emit_chunk,
    emit_chunk_async,
    quiet_config,
)

__all__ = ["RecordingChatModel"]


def _with_recorded_ids(chunk: AIMessageChunk, key: str) -> AIMessageChunk:
    """The chunk with each tool-call id replaced by the key-derived one of its stream index."""
    if not chunk.tool_call_chunks:
        return chunk
    pieces = [
        {**piece, "id": recorded_call_id(key, int(piece.get("index") or 0))}
        if piece.get("id") is not None
        else piece
        for piece in chunk.tool_call_chunks
    ]
    return chunk.model_copy(
        update={"tool_call_chunks": pieces, "tool_calls": [], "invalid_tool_calls": []}
    )


class RecordingChatModel(ToolBindingChatModel):
    """Answers with the wrapped model and records every turn on ``tape``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: BaseChatModel
    tape: Tape

    def __repr__(self) -> str:
        return f"RecordingChatModel({self.inner!r} -> {self.tape.info.path})"

    @property
    def _llm_type(self) -> str:
        return self.inner._llm_type

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return dict(self.inner._identifying_params)

    def _request(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> tuple[Request, str]:
        request = Request.of(self.inner, messages, stop, kwargs)
        return request, request.key

    def _answer(self, request: Request, key: str, reply: BaseMessage) -> ChatResult:
        response = Response.of(reply, key)
        self.tape.record(request, key, response)
        message = response.message(request.identity.model)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        request, key = self._request(messages, stop, kwargs)
        runnable, rest = bound_to(self.inner, kwargs)
        reply = runnable.invoke(messages, quiet_config(), stop=stop, **rest)
        return self._answer(request, key, reply)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        request, key = self._request(messages, stop, kwargs)
        runnable, rest = bound_to(self.inner, kwargs)
        reply = await runnable.ainvoke(messages, quiet_config(), stop=stop, **rest)
        return self._answer(request, key, reply)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        request, key = self._request(messages, stop, kwargs)
        runnable, rest = bound_to(self.inner, kwargs)
        whole: AIMessageChunk | None = None
        for piece in runnable.stream(messages, quiet_config(), stop=stop, **rest):
            chunk = _with_recorded_ids(as_chunk(piece), key)
            whole = chunk if whole is None else whole + chunk
            yield emit_chunk(chunk, run_manager)
        self.tape.record(request, key, Response.of(whole or AIMessageChunk(content=""), key))

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        request, key = self._request(messages, stop, kwargs)
        runnable, rest = bound_to(self.inner, kwargs)
        whole: AIMessageChunk | None = None
        async for piece in runnable.astream(messages, quiet_config(), stop=stop, **rest):
            chunk = _with_recorded_ids(as_chunk(piece), key)
            whole = chunk if whole is None else whole + chunk
            yield await emit_chunk_async(chunk, run_manager)
        self.tape.record(request, key, Response.of(whole or AIMessageChunk(content=""), key))
