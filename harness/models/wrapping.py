"""What every chat model that stands in front of another one shares (docs/architecture.md).

The provider model built on first use, the cassette recorder and the cassette replayer all bind
tools the same way — as OpenAI-format schemas kept in the call's keyword arguments, which is
what a cassette key hashes — and hand a turn to an inner model without letting that model's own
callback events reach the agent's handlers (the outer model already reports the turn once; a
second report would record every requested tool call twice). Handlers come two ways: the
config's callbacks (an explicit empty list hides the enclosing run's) and LangChain's configure
hooks — ContextVars such as the one ``capture_tool_calls()`` and ``harness run`` set, read each
time a run is configured. The inner call runs with every hook variable cleared
(:func:`hooks_off`), else a captured run would record the inner model's turn as a second,
top-level run of its own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar, Token
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.language_models.base import LangSmithParams
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableBinding, RunnableConfig
from langchain_core.tools import BaseTool
from langchain_core.tracers import context as tracer_context
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict

__all__ = [
    "TOOL_KWARGS",
    "InnerChatModel",
    "StreamingTurnChatModel",
    "ToolBindingChatModel",
    "Turn",
    "TurnChatModel",
    "as_ai_message",
    "as_chunk",
    "ask",
    "ask_async",
    "ask_stream",
    "ask_stream_async",
    "bound_to",
    "chunk_text",
    "emit_chunk",
    "emit_chunk_async",
    "hooks_off",
    "quiet_config",
]

TOOL_KWARGS = ("tool_choice", "parallel_tool_calls", "strict")
"""Call options that belong to ``bind_tools`` rather than to the request itself."""


def quiet_config() -> RunnableConfig:
    """A config whose explicit empty callback list hides an inner model's events."""
    # An explicit [] overrides the callbacks inherited from the enclosing graph node.
    return RunnableConfig(callbacks=[])


@contextmanager
def hooks_off() -> Iterator[None]:
    """Clear every configure-hook variable for the block (this thread or task only)."""
    # LangChain keeps its hook registry private; without it there is nothing to clear
    hooks: list[tuple[ContextVar[Any], Any, Any, Any]] = getattr(
        tracer_context, "_configure_hooks", []
    )
    tokens: list[tuple[ContextVar[Any], Token[Any]]] = [
        (hook[0], hook[0].set(None)) for hook in hooks if hook[0].get() is not None
    ]
    try:
        yield
    finally:
        for var, token in reversed(tokens):
            var.reset(token)


@dataclass(frozen=True, slots=True)
class Turn:
    """One call to a chat model: the conversation, the stop words and the call options."""

    messages: list[BaseMessage]
    stop: list[str] | None
    kwargs: dict[str, Any]


class TurnChatModel(BaseChatModel):
    """A chat model that answers a whole :class:`Turn` with one AIMessage (no streaming).

    LangChain's ``_generate``/``_agenerate`` are written here once; a model writes ``_reply``
    (and ``_areply`` when its async answer differs from calling ``_reply``, e.g. to await).
    """

    def _reply(self, turn: Turn) -> AIMessage:
        """The answer to ``turn``."""
        raise NotImplementedError

    async def _areply(self, turn: Turn) -> AIMessage:
        """The answer to ``turn``, async (pure models need no thread hop: the sync one)."""
        return self._reply(turn)

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        params = super()._get_ls_params(stop=stop, **kwargs)
        # Spans (gen_ai.provider.name) name the provider as cassettes do, by ``_llm_type``,
        # not by LangChain's guess from the class name ("demochatmodel").
        params["ls_provider"] = self._llm_type
        return params

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        reply = self._reply(Turn(messages, stop, kwargs))
        return ChatResult(generations=[ChatGeneration(message=reply)])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        reply = await self._areply(Turn(messages, stop, kwargs))
        return ChatResult(generations=[ChatGeneration(message=reply)])


class StreamingTurnChatModel(TurnChatModel):
    """A :class:`TurnChatModel` that also streams a turn as AIMessageChunks.

    A separate class, not a default: LangChain (and LangGraph's "messages" stream mode) stream a
    model whenever its class defines ``_stream``, so only a model that really streams may have it.
    ``_stream``/``_astream`` announce each piece as a new token here, once.
    """

    def _pieces(self, turn: Turn) -> Iterator[AIMessageChunk]:
        """The answer to ``turn`` piece by piece."""
        raise NotImplementedError

    def _apieces(self, turn: Turn) -> AsyncIterator[AIMessageChunk]:
        """The answer to ``turn`` piece by piece, async."""
        raise NotImplementedError

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for piece in self._pieces(Turn(messages, stop, kwargs)):
            yield emit_chunk(piece, run_manager)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        async for piece in self._apieces(Turn(messages, stop, kwargs)):
            yield await emit_chunk_async(piece, run_manager)


class ToolBindingChatModel(StreamingTurnChatModel):
    """A streaming chat model that binds tools as OpenAI-format schemas in its call kwargs."""

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | dict[str, Any] | bool | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools like a provider: schemas under ``tools``, ``tool_choice`` when given."""
        schemas = [convert_to_openai_tool(tool) for tool in tools]
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=schemas, **kwargs)


class InnerChatModel(ToolBindingChatModel):
    """A chat model in front of ``inner``: it takes the inner model's type and identity."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: BaseChatModel

    @property
    def _llm_type(self) -> str:
        return self.inner._llm_type

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return dict(self.inner._identifying_params)

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        # The run's metadata names the model that answers, so the spans of a run under
        # --record or --replay say `openai`, as the live run's do, not the wrapper's class.
        return self.inner._get_ls_params(stop=stop, **kwargs)


def bound_to(
    inner: BaseChatModel, kwargs: Mapping[str, Any]
) -> tuple[Runnable[LanguageModelInput, BaseMessage], dict[str, Any]]:
    """``inner`` with the call's tools bound its own way, and the call options left over."""
    rest = dict(kwargs)
    tools = rest.pop("tools", None)
    tool_options = {key: rest.pop(key) for key in TOOL_KWARGS if key in rest}
    if not tools:
        return inner, rest
    runnable: Runnable[LanguageModelInput, BaseMessage] = inner.bind_tools(tools, **tool_options)
    # Call the model itself, not its binding: a binding merges in the enclosing node's
    # callbacks (from the context), which would undo the empty list of quiet_config().
    while isinstance(runnable, RunnableBinding):
        rest = {**runnable.kwargs, **rest}
        runnable = runnable.bound
    return runnable, rest


def ask(inner: BaseChatModel, turn: Turn) -> BaseMessage:
    """``inner``'s answer to ``turn``, its tools bound its own way, its events kept quiet."""
    runnable, rest = bound_to(inner, turn.kwargs)
    with hooks_off():
        return runnable.invoke(turn.messages, quiet_config(), stop=turn.stop, **rest)


async def ask_async(inner: BaseChatModel, turn: Turn) -> BaseMessage:
    """``inner``'s answer to ``turn`` (async), its tools bound its own way, events quiet."""
    runnable, rest = bound_to(inner, turn.kwargs)
    with hooks_off():
        return await runnable.ainvoke(turn.messages, quiet_config(), stop=turn.stop, **rest)


def ask_stream(inner: BaseChatModel, turn: Turn) -> Iterator[AIMessageChunk]:
    """``inner``'s streamed answer to ``turn``, piece by piece, its events kept quiet."""
    runnable, rest = bound_to(inner, turn.kwargs)
    pieces = iter(runnable.stream(turn.messages, quiet_config(), stop=turn.stop, **rest))
    # hooks off for each step only: between steps the caller runs, with its own hooks
    while True:
        with hooks_off():
            piece = next(pieces, None)
        if piece is None:
            return
        yield as_chunk(piece)


async def ask_stream_async(inner: BaseChatModel, turn: Turn) -> AsyncIterator[AIMessageChunk]:
    """``inner``'s streamed answer to ``turn`` (async), piece by piece, events quiet."""
    runnable, rest = bound_to(inner, turn.kwargs)
    pieces = runnable.astream(turn.messages, quiet_config(), stop=turn.stop, **rest)
    try:
        while True:
            with hooks_off():
                try:
                    piece = await pieces.__anext__()
                except StopAsyncIteration:
                    return
            yield as_chunk(piece)
    finally:
        close = getattr(pieces, "aclose", None)  # an async generator: end it here, not at GC
        if close is not None:
            with hooks_off():
                await close()


def chunk_text(chunk: BaseMessage) -> str:
    """The text a streamed chunk adds (content blocks keep their text parts)."""
    content = chunk.content
    if isinstance(content, str):
        return content
    return "".join(
        part if isinstance(part, str) else str(part.get("text", ""))
        for part in content
        if isinstance(part, (str, Mapping))
    )


def emit_chunk(
    message: AIMessageChunk, run_manager: CallbackManagerForLLMRun | None
) -> ChatGenerationChunk:
    """A generation chunk for ``message``, announced as a new token (sync)."""
    chunk = ChatGenerationChunk(message=message)
    if run_manager is not None:
        run_manager.on_llm_new_token(chunk_text(message), chunk=chunk)
    return chunk


async def emit_chunk_async(
    message: AIMessageChunk, run_manager: AsyncCallbackManagerForLLMRun | None
) -> ChatGenerationChunk:
    """A generation chunk for ``message``, announced as a new token (async)."""
    chunk = ChatGenerationChunk(message=message)
    if run_manager is not None:
        await run_manager.on_llm_new_token(chunk_text(message), chunk=chunk)
    return chunk


def as_ai_message(reply: BaseMessage) -> AIMessage:
    """An inner model's answer as an ``AIMessage`` (it already is one, usually)."""
    return reply if isinstance(reply, AIMessage) else AIMessage(content=reply.content)


def as_chunk(message: BaseMessage) -> AIMessageChunk:
    """An inner model's streamed piece as an ``AIMessageChunk`` (it already is one, usually)."""
    if isinstance(message, AIMessageChunk):
        return message
    return AIMessageChunk(content=message.content, id=message.id)


StreamIter = Iterator[ChatGenerationChunk]
AsyncStreamIter = AsyncIterator[ChatGenerationChunk]
