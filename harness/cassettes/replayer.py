"""ReplayChatModel: answers from a tape and never asks the wrapped model.

The wrapped model is kept only for its identity (provider, model, sampling options), which a
lazily built provider model knows without being built: no package, no key, no network. A
request with no recording raises :class:`~harness.errors.CassetteMiss` — unless a fallback
model is given (``--record=missing``), which then answers and records the turn.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import ConfigDict

from harness.cassettes.format import Response
from harness.cassettes.key import Request
from harness.cassettes.tape import Tape
from harness.models.wrapping import ToolBindingChatModel, emit_chunk, emit_chunk_async

__all__ = ["ReplayChatModel"]


class ReplayChatModel(ToolBindingChatModel):
    """Plays recorded answers; a miss is an error, or goes to ``fallback`` when there is one."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: BaseChatModel
    """The scenario's model: its identity is part of every key; it is never invoked."""
    tape: Tape
    fallback: BaseChatModel | None = None
    """Answers (and records) what the tape lacks: a RecordingChatModel for --record=missing."""

    def __repr__(self) -> str:
        return f"ReplayChatModel({self.tape.info.path})"

    @property
    def _llm_type(self) -> str:
        return self.inner._llm_type

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return dict(self.inner._identifying_params)

    def _recorded(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> tuple[Request, Response | None]:
        request = Request.of(self.inner, messages, stop, kwargs)
        return request, self.tape.lookup(request.key)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        request, response = self._recorded(messages, stop, kwargs)
        if response is not None:
            message = response.message(request.identity.model)
            return ChatResult(generations=[ChatGeneration(message=message)])
        if self.fallback is None:
            raise self.tape.miss(request)
        return self.fallback._generate(messages, stop, run_manager, **kwargs)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        request, response = self._recorded(messages, stop, kwargs)
        if response is not None:
            message = response.message(request.identity.model)
            return ChatResult(generations=[ChatGeneration(message=message)])
        if self.fallback is None:
            raise self.tape.miss(request)
        return await self.fallback._agenerate(messages, stop, run_manager, **kwargs)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        request, response = self._recorded(messages, stop, kwargs)
        if response is None:
            if self.fallback is None:
                raise self.tape.miss(request)
            yield from self.fallback._stream(messages, stop, run_manager, **kwargs)
            return
        for piece in response.chunks(request.identity.model):
            yield emit_chunk(piece, run_manager)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        request, response = self._recorded(messages, stop, kwargs)
        if response is None:
            if self.fallback is None:
                raise self.tape.miss(request)
            async for chunk in self.fallback._astream(messages, stop, run_manager, **kwargs):
                yield chunk
            return
        for piece in response.chunks(request.identity.model):
            yield await emit_chunk_async(piece, run_manager)
