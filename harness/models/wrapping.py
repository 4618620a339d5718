"""What every chat model that stands in front of another one shares (docs/architecture.md).

The provider model built on first use, the cassette recorder and the cassette replayer all bind
tools the same way — as OpenAI-format schemas kept in the call's keyword arguments, which is
what a cassette key hashes — and hand a turn to an inner model without letting that model's own
callback events reach the agent's handlers (the outer model already reports the turn once; a
second report would record every requested tool call twice).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.runnables import Runnable, RunnableBinding, RunnableConfig
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

__all__ = [
    "TOOL_KWARGS",
    "ToolBindingChatModel",
    "bound_to",
    "chunk_text",
    "emit_chunk",
    "emit_chunk_async",
    "quiet_config",
]

TOOL_KWARGS = ("tool_choice", "parallel_tool_calls", "strict")
"""Call options that belong to ``bind_tools`` rather than to the request itself."""


def quiet_config() -> RunnableConfig:
    """A config whose explicit empty callback list hides an inner model's events."""
    # An explicit [] overrides the callbacks inherited from the enclosing graph node.
    return RunnableConfig(callbacks=[])


class ToolBindingChatModel(BaseChatModel):
    """A chat model that binds tools as OpenAI-format schemas in its call kwargs."""

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


def as_chunk(message: BaseMessage) -> AIMessageChunk:
    """An inner model's streamed piece as an ``AIMessageChunk`` (it already is one, usually)."""
    if isinstance(message, AIMessageChunk):
        return message
    return AIMessageChunk(content=message.content, id=message.id)


StreamIter = Iterator[ChatGenerationChunk]
AsyncStreamIter = AsyncIterator[ChatGenerationChunk]
