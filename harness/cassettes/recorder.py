"""RecordingChatModel: asks the real model and writes down each answer on a tape.

It binds tools as OpenAI schemas (so the key sees the full schemas), hands each turn to the
wrapped model with its own tool binding, and returns the answer as recorded — tool-call ids
derived from the request's key — so the conversation that continues is the one a replay gives.
Streaming streams: the wrapped model's chunks pass through as they come, ids rewritten.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage

from harness.cassettes.format import Response, recorded_call_id
from harness.cassettes.request_key import Request
from harness.cassettes.tape import Tape
from harness.models.wrapping import (
    InnerChatModel,
    Turn,
    ask,
    ask_async,
    ask_stream,
    ask_stream_async,
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


@dataclass(slots=True)
class _Streamed:
    """One streamed turn being recorded: its ids rewritten as they pass, the whole kept."""

    tape: Tape
    request: Request
    key: str = field(init=False)
    whole: AIMessageChunk | None = None

    def __post_init__(self) -> None:
        # Request.key hashes the whole conversation: once per turn, not once per chunk.
        self.key = self.request.key

    def passing(self, piece: AIMessageChunk) -> AIMessageChunk:
        """``piece`` as the agent sees it (recorded ids), added to the whole answer."""
        chunk = _with_recorded_ids(piece, self.key)
        self.whole = chunk if self.whole is None else self.whole + chunk
        return chunk

    def record(self) -> None:
        """Write the whole streamed answer on the tape (an empty one when nothing came)."""
        response = Response.of(self.whole or AIMessageChunk(content=""), self.key)
        self.tape.record(self.request, self.key, response)


class RecordingChatModel(InnerChatModel):
    """Answers with the wrapped model and records every turn on ``tape``."""

    tape: Tape

    def __repr__(self) -> str:
        return f"RecordingChatModel({self.inner!r} -> {self.tape.info.path})"

    def _request(self, turn: Turn) -> Request:
        return Request.of(self.inner, turn.messages, turn.stop, turn.kwargs)

    def _answer(self, request: Request, reply: BaseMessage) -> AIMessage:
        key = request.key
        response = Response.of(reply, key)
        self.tape.record(request, key, response)
        return response.message(request.identity.model)

    def _reply(self, turn: Turn) -> AIMessage:
        return self._answer(self._request(turn), ask(self.inner, turn))

    async def _areply(self, turn: Turn) -> AIMessage:
        return self._answer(self._request(turn), await ask_async(self.inner, turn))

    def _pieces(self, turn: Turn) -> Iterator[AIMessageChunk]:
        streamed = _Streamed(self.tape, self._request(turn))
        for piece in ask_stream(self.inner, turn):
            yield streamed.passing(piece)
        streamed.record()

    async def _apieces(self, turn: Turn) -> AsyncIterator[AIMessageChunk]:
        streamed = _Streamed(self.tape, self._request(turn))
        async for piece in ask_stream_async(self.inner, turn):
            yield streamed.passing(piece)
        streamed.record()
