"""ProviderChatModel: a real provider's chat model, built on its first turn, never before.

Loading a suite, ``harness validate`` and ``pytest --collect-only`` build agents, and agents
bind tools, but none of that needs the provider's package, its API key or the network; only a
turn does. So ``make_model("openai:gpt-4o-mini")`` returns this stand-in, which binds tools as
OpenAI schemas (``harness.models.wrapping``) and builds the real model through
``init_provider_model`` the first time it is asked to answer. Under ``--replay`` it is never
asked, so the provider is never constructed.

A failed call becomes one :class:`~harness.errors.ProviderError` line naming the model, the
endpoint (credentials removed) and the cause; the SDK's exception stays its ``__cause__``.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.base import LangSmithParams
from langchain_core.messages import AIMessage, AIMessageChunk
from pydantic import ConfigDict, Field, PrivateAttr

from harness.errors import HarnessError, ProviderError
from harness.models.providers import KEY_ENV, init_provider_model
from harness.models.wrapping import (
    ToolBindingChatModel,
    Turn,
    as_ai_message,
    ask,
    ask_async,
    ask_stream,
    ask_stream_async,
)
from harness.text import shorten

__all__ = [
    "TRANSPORT_OPTIONS",
    "BuiltOnceChatModel",
    "ProviderChatModel",
    "endpoint_of",
    "without_credentials",
]

TRANSPORT_OPTIONS = frozenset(
    {
        "api_key",
        "openai_api_key",
        "anthropic_api_key",
        "google_api_key",
        "base_url",
        "api_base",
        "openai_api_base",
        "anthropic_api_url",
        "azure_endpoint",
        "endpoint",
        "endpoint_url",
        "organization",
        "openai_organization",
        "openai_proxy",
        "proxy",
        "timeout",
        "request_timeout",
        "max_retries",
        "http_client",
        "http_async_client",
        "default_headers",
        "default_query",
        "streaming",
        "stream_usage",
        "disable_streaming",
        "verbose",
        "callbacks",
        "tags",
        "metadata",
        "cache",
        "rate_limiter",
        "region_name",
        "credentials_profile_name",
        "aws_access_key_id",
        "aws_secret_access_key",
        "aws_session_token",
    }
)
"""Options that say how to reach a model, not what it answers: never in a key or a cassette."""

# Where common LangChain integrations keep their endpoint, in the order they are tried.
_ENDPOINT_ATTRIBUTES = (
    "openai_api_base",
    "base_url",
    "azure_endpoint",
    "anthropic_api_url",
    "api_base",
    "endpoint_url",
    "endpoint",
)


def without_credentials(url: str) -> str:
    """``url`` with any ``user:password@`` and query string removed."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return url.split("?", 1)[0]
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def endpoint_of(model: BaseChatModel) -> str | None:
    """The URL a built provider model talks to, credentials removed (None when it hides it)."""
    for attribute in _ENDPOINT_ATTRIBUTES:
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return without_credentials(value)
    for client_attribute in ("root_client", "client", "root_async_client", "async_client"):
        client = getattr(model, client_attribute, None)
        base = getattr(client, "base_url", None)
        if base is not None and str(base):
            return without_credentials(str(base))
    return None


_USERINFO = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]+@")
_URL_QUERY = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s?'\"]+)\?[^\s'\"]*")


def _cause(exc: BaseException, secrets: Sequence[str]) -> str:
    """``Type: message`` of an SDK error on one short line, credentials taken out."""
    message = " ".join(str(exc).split())
    message = _URL_QUERY.sub(r"\1", _USERINFO.sub(r"\1", message))
    for secret in secrets:
        message = message.replace(secret, "***")
    return shorten(f"{type(exc).__name__}: {message}" if message else type(exc).__name__, 200)


class BuiltOnceChatModel(ToolBindingChatModel):
    """A stand-in for the real chat model its ``options`` describe, made once, on first use."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    options: dict[str, Any] = Field(default_factory=dict)
    _built: BaseChatModel | None = PrivateAttr(default=None)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def built(self) -> bool:
        """Has the real model been made (successfully) yet?"""
        return self._built is not None

    def build(self) -> BaseChatModel:
        """The real chat model, made once (ModelConfigError when it cannot be)."""
        with self._lock:
            if self._built is None:
                self._built = self._make()
            return self._built

    def _make(self) -> BaseChatModel:
        raise NotImplementedError


class ProviderChatModel(BuiltOnceChatModel):
    """A ``provider:model`` chat model built on its first turn (no key needed before that)."""

    provider: str
    model_name: str

    def __repr__(self) -> str:
        # never the options: they may hold an api_key
        return f"ProviderChatModel({self.label!r})"

    @property
    def label(self) -> str:
        """``provider:model`` as a scenario would write it."""
        return f"{self.provider}:{self.model_name}" if self.provider else self.model_name

    @property
    def _llm_type(self) -> str:
        return self.provider or "provider"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name, **self.sampling_options()}

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        params = super()._get_ls_params(stop=stop, **kwargs)
        params["ls_provider"] = self.provider
        params["ls_model_name"] = self.model_name
        return params

    def sampling_options(self) -> dict[str, Any]:
        """The options that change what the model answers (transport settings left out)."""
        return {k: v for k, v in self.options.items() if k not in TRANSPORT_OPTIONS}

    def cassette_identity(self) -> tuple[str, str, dict[str, Any]]:
        """(provider, model, sampling options): what a cassette key names this model by."""
        return self.provider, self.model_name, self.sampling_options()

    def _make(self) -> BaseChatModel:
        # ModelConfigError when the provider's package or key is missing
        return init_provider_model(self.provider, self.model_name, self.options)

    def _secrets(self) -> list[str]:
        """Values that must not reach a message: keys given as options or in the environment."""
        values = [v for k, v in self.options.items() if "key" in k or "secret" in k]
        env = KEY_ENV.get(self.provider)
        values.append(os.environ.get(env, "") if env else "")
        return [str(v) for v in values if isinstance(v, str) and len(v.strip()) >= 4]

    def _failure(self, exc: Exception, model: BaseChatModel) -> ProviderError:
        endpoint = endpoint_of(model)
        where = f" at {endpoint}" if endpoint else ""
        cause = _cause(exc, self._secrets())
        return ProviderError(
            f"model {self.label}{where}: {cause}", model=self.label, endpoint=endpoint
        )

    @contextmanager
    def _reported(self, real: BaseChatModel) -> Iterator[None]:
        """Turn an SDK failure inside the block into one ProviderError (ours pass through)."""
        try:
            yield
        except HarnessError:
            raise
        except Exception as exc:
            raise self._failure(exc, real) from exc

    def _reply(self, turn: Turn) -> AIMessage:
        real = self.build()
        with self._reported(real):
            return as_ai_message(ask(real, turn))

    async def _areply(self, turn: Turn) -> AIMessage:
        real = self.build()
        with self._reported(real):
            return as_ai_message(await ask_async(real, turn))

    def _pieces(self, turn: Turn) -> Iterator[AIMessageChunk]:
        real = self.build()
        with self._reported(real):
            yield from ask_stream(real, turn)

    async def _apieces(self, turn: Turn) -> AsyncIterator[AIMessageChunk]:
        real = self.build()
        with self._reported(real):
            async for piece in ask_stream_async(real, turn):
                yield piece


def provider_model(provider: str, model: str, options: Mapping[str, Any]) -> ProviderChatModel:
    """The lazily built model for ``provider:model`` with these options."""
    return ProviderChatModel(provider=provider, model_name=model, options=dict(options))
