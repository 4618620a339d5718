"""``model: module:callable`` / ``file.py:callable``: a chat model of the user's own.

A team that ships its own ``BaseChatModel`` subclass (a local engine, an in-house gateway) names
a factory that returns it; the ``model:`` mapping's other keys are its keyword arguments::

    model: {provider: my_models.local:build, path: models/qwen.gguf, max_concurrency: 1}

The factory is imported when the suite loads (a wrong name is a ``file:line: model...`` error
with a did-you-mean), but called on the model's first turn, as a provider model is built
(:mod:`harness.models.lazy`): ``harness validate``, ``pytest --collect-only`` and ``--replay``
never start the engine. One :class:`FactoryChatModel` serves every scenario of the same
(factory, options) in the process, so the engine is built once. A factory that raises, or
returns something that is not a ``BaseChatModel``, fails that turn: the scenario's error, named.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.base import LangSmithParams
from langchain_core.messages import AIMessage, AIMessageChunk

from harness.errors import ModelConfigError
from harness.models.lazy import TRANSPORT_OPTIONS, BuiltOnceChatModel
from harness.models.wrapping import (
    Turn,
    as_ai_message,
    ask,
    ask_async,
    ask_stream,
    ask_stream_async,
)

__all__ = ["FactoryChatModel", "factory_model", "is_factory_target"]


def is_factory_target(text: str) -> bool:
    """Does ``text`` name a ``module:callable`` / ``file.py:callable`` rather than a provider?

    Before its first ``:``, a provider is a bare name (``openai``, ``ollama:llama3.2:latest``);
    a factory's module is dotted (``my_models.local``) or a ``.py`` file path.
    """
    head, sep, tail = text.partition(":")
    if not sep or not tail:
        return False
    return head.endswith(".py") or "." in head or "/" in head or "\\" in head


class FactoryChatModel(BuiltOnceChatModel):
    """The chat model ``target`` returns, built on the first turn from ``options``."""

    target: str
    """The factory as the suite names it (``module:callable`` or ``file.py:callable``)."""
    factory: Callable[..., Any]

    def __repr__(self) -> str:
        # never the options: they may hold a key
        return f"FactoryChatModel({self.target!r})"

    @property
    def _llm_type(self) -> str:
        return self.target

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name, **self.sampling_options()}

    @property
    def model_name(self) -> str:
        """The ``model`` option when given (what the factory is asked for), else ''."""
        name = self.options.get("model")
        return str(name) if name is not None else ""

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        params = super()._get_ls_params(stop=stop, **kwargs)
        params["ls_provider"] = self.target
        params["ls_model_name"] = self.model_name or self.target
        return params

    def sampling_options(self) -> dict[str, Any]:
        """The options that may change what the model answers (transport settings left out)."""
        return {
            k: v for k, v in self.options.items() if k != "model" and k not in TRANSPORT_OPTIONS
        }

    def cassette_identity(self) -> tuple[str, str, dict[str, Any]]:
        """(factory, model option, other options): a cassette key names the model by its spec,
        so ``--replay`` finds the turns without building it."""
        return self.target, self.model_name, self.sampling_options()

    def _make(self) -> BaseChatModel:
        """The factory's model; ModelConfigError when it raises or gives no model."""
        try:
            made = self.factory(**self.options)
        except Exception as exc:
            raise ModelConfigError(
                f"model factory {self.target} raised {type(exc).__name__}: {exc}",
                provider=self.target,
            ) from exc
        if not isinstance(made, BaseChatModel):
            raise ModelConfigError(
                f"model factory {self.target} returned {_describe(made)}, not a LangChain chat "
                "model: return an instance of a BaseChatModel subclass (e.g. ChatOllama(...))",
                provider=self.target,
            )
        return made

    async def _abuild(self) -> BaseChatModel:
        if self._built is not None:
            return self._built
        # a factory may load an engine: never on the event loop
        return await asyncio.to_thread(self.build)

    def _reply(self, turn: Turn) -> AIMessage:
        return as_ai_message(ask(self.build(), turn))

    async def _areply(self, turn: Turn) -> AIMessage:
        return as_ai_message(await ask_async(await self._abuild(), turn))

    def _pieces(self, turn: Turn) -> Iterator[AIMessageChunk]:
        yield from ask_stream(self.build(), turn)

    async def _apieces(self, turn: Turn) -> AsyncIterator[AIMessageChunk]:
        async for piece in ask_stream_async(await self._abuild(), turn):
            yield piece


def _describe(value: Any) -> str:
    kind = type(value)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
    shown = repr(value)
    return f"{name} {shown[:60] + '…' if len(shown) > 60 else shown}"


_made: dict[tuple[Callable[..., Any], str], FactoryChatModel] = {}
_made_lock = threading.Lock()


def factory_model(
    target: str, factory: Callable[..., Any], options: Mapping[str, Any]
) -> FactoryChatModel:
    """The one model of (``factory``, ``options``) in this process, made on first use."""
    key = (factory, json.dumps(dict(options), sort_keys=True, default=repr))
    with _made_lock:
        model = _made.get(key)
        if model is None:
            model = _made[key] = FactoryChatModel(
                target=target, factory=factory, options=dict(options)
            )
        return model
