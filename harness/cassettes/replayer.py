"""ReplayChatModel: answers from a tape and never asks the wrapped model.

The wrapped model is kept only for its identity (provider, model, sampling options), which a
lazily built provider model knows without being built: no package, no key, no network. A
request with no recording raises :class:`~harness.errors.CassetteMiss` — unless a fallback
model is given (``--record=missing``), which then answers and records the turn.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk

from harness.cassettes.format import Response
from harness.cassettes.request_key import Request
from harness.cassettes.tape import Tape
from harness.models.wrapping import InnerChatModel, Turn, as_ai_message, as_chunk

__all__ = ["ReplayChatModel"]


class ReplayChatModel(InnerChatModel):
    """Plays recorded answers; a miss is an error, or goes to ``fallback`` when there is one.

    ``inner`` is the scenario's model: its identity is part of every key; it is never invoked.
    """

    tape: Tape
    fallback: BaseChatModel | None = None
    """Answers (and records) what the tape lacks: a RecordingChatModel for --record=missing."""

    def __repr__(self) -> str:
        return f"ReplayChatModel({self.tape.info.path})"

    def _recorded(self, turn: Turn) -> tuple[Request, Response | None]:
        request = Request.of(self.inner, turn.messages, turn.stop, turn.kwargs)
        return request, self.tape.lookup(request.key)

    def _fallback(self, request: Request) -> BaseChatModel:
        """The model that answers a miss (CassetteMiss when there is none)."""
        if self.fallback is None:
            raise self.tape.miss(request)
        return self.fallback

    # The fallback's own entry points are called with no run manager: this model announces
    # the turn's tokens itself (wrapping.StreamingTurnChatModel), so they are reported once.

    def _reply(self, turn: Turn) -> AIMessage:
        request, response = self._recorded(turn)
        if response is not None:
            return response.message(request.identity.model)
        result = self._fallback(request)._generate(turn.messages, turn.stop, None, **turn.kwargs)
        return as_ai_message(result.generations[0].message)

    async def _areply(self, turn: Turn) -> AIMessage:
        request, response = self._recorded(turn)
        if response is not None:
            return response.message(request.identity.model)
        fallback = self._fallback(request)
        result = await fallback._agenerate(turn.messages, turn.stop, None, **turn.kwargs)
        return as_ai_message(result.generations[0].message)

    def _pieces(self, turn: Turn) -> Iterator[AIMessageChunk]:
        request, response = self._recorded(turn)
        if response is not None:
            yield from response.chunks(request.identity.model)
            return
        for piece in self._fallback(request)._stream(turn.messages, turn.stop, None, **turn.kwargs):
            yield as_chunk(piece.message)

    async def _apieces(self, turn: Turn) -> AsyncIterator[AIMessageChunk]:
        request, response = self._recorded(turn)
        if response is not None:
            for chunk in response.chunks(request.identity.model):
                yield chunk
            return
        fallback = self._fallback(request)
        async for piece in fallback._astream(turn.messages, turn.stop, None, **turn.kwargs):
            yield as_chunk(piece.message)
