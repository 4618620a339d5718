"""Chat models handed to agents (docs/architecture.md): demo, scripted, or a real provider.

``make_model(spec, script=...)`` is the one entry point the runner uses. ``spec`` is what a
scenario file's ``model:`` holds: nothing or ``"demo"`` (the default), a mapping
``{provider: demo|scripted|<name>, model: ..., **options}``, or a ``"provider:model"`` string.
Kinds live in a registry (``PROVIDERS``). A real provider's model is a
:class:`~harness.models.lazy.ProviderChatModel`, built on its first turn: loading a suite never
needs the provider's package or key. Record and replay wrap whatever model this returns
(``harness.cassettes``); they are chosen by a flag, not by ``model:``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from langchain_core.language_models import BaseChatModel

from harness.models.demo import DemoChatModel
from harness.models.lazy import ProviderChatModel, provider_model
from harness.models.providers import ModelConfigError

__all__ = [
    "PROVIDERS",
    "DemoChatModel",
    "ModelConfigError",
    "ModelProvider",
    "ModelSpec",
    "ProviderChatModel",
    "make_model",
    "register_provider",
]

ModelSpec = str | Mapping[str, Any] | None
"""What ``model:`` may hold in a scenario file."""


class ModelProvider(Protocol):
    """Builds a chat model from a spec's options (``provider`` removed) and the scenario script."""

    def __call__(
        self, options: Mapping[str, Any], script: Sequence[Any] | None
    ) -> BaseChatModel:  # pragma: no cover - protocol
        """Return a chat model, or raise ModelConfigError naming what is wrong."""
        ...


def _demo(options: Mapping[str, Any], script: Sequence[Any] | None) -> BaseChatModel:
    unknown = sorted(set(options) - {"model"})
    if unknown:
        raise ModelConfigError(f"model provider 'demo' takes no options, got {unknown}")
    return DemoChatModel()


def _scripted(options: Mapping[str, Any], script: Sequence[Any] | None) -> BaseChatModel:
    if script is None:
        raise ModelConfigError(
            "model provider 'scripted' needs the scenario's turns: add `script:` to the scenario, "
            "e.g. script: [{tool_calls: [{name: add, args: {a: 2, b: 3}}]}, {content: '5'}]"
        )
    from harness.models.scripted import ScriptedChatModel  # imported only when used

    unknown = sorted(set(options) - {"latency", "model", "final_answer"})
    if unknown:
        raise ModelConfigError(
            f"model provider 'scripted' accepts latency and final_answer, got {unknown}"
        )
    kwargs = {k: v for k, v in options.items() if k in ("latency", "final_answer")}
    try:
        return ScriptedChatModel(list(script), **kwargs)
    except ValueError as exc:
        raise ModelConfigError(f"invalid script: {exc}") from exc


def _replay(options: Mapping[str, Any], script: Sequence[Any] | None) -> BaseChatModel:
    # kept so a file written for the old seam gets a pointer to what replaced it
    raise ModelConfigError(
        "model provider 'replay' is not available yet: record/replay cassettes are chosen on "
        "the command line, not in `model:`. Keep the real model (e.g. 'openai:gpt-4o-mini') "
        "and run `harness run --record` once, then `harness run --replay` "
        "(pytest: --harness-record / --harness-replay)."
    )


PROVIDERS: dict[str, ModelProvider] = {
    "demo": _demo,
    "scripted": _scripted,
    "replay": _replay,
}
"""Model kinds by name; any other name goes to LangChain's ``init_chat_model``."""


def register_provider(name: str, provider: ModelProvider) -> None:
    """Add or replace a model kind."""
    PROVIDERS[name] = provider


def _normalise(spec: ModelSpec) -> tuple[str, dict[str, Any]]:
    """(provider, options) from any accepted spec form."""
    if spec is None:
        return "demo", {}
    if isinstance(spec, str):
        text = spec.strip()
        if not text:
            raise ModelConfigError("model spec is an empty string; use 'demo' or 'provider:model'")
        if text in PROVIDERS:
            return text, {}
        provider, sep, model = text.partition(":")
        return (provider, {"model": model}) if sep else ("", {"model": text})
    if isinstance(spec, Mapping):
        options = dict(spec)
        provider = options.pop("provider", None)
        if provider is None:
            provider = "demo" if "model" not in options else ""
        if not isinstance(provider, str):
            raise ModelConfigError(f"model.provider must be a string, got {provider!r}")
        return provider, options
    raise ModelConfigError(
        f"model must be a mapping like {{provider: demo}} or a 'provider:model' string, "
        f"got {type(spec).__name__} {spec!r}"
    )


def make_model(spec: ModelSpec = None, *, script: Sequence[Any] | None = None) -> BaseChatModel:
    """The chat model a scenario's ``model:`` asks for (default: the demo model)."""
    provider, options = _normalise(spec)
    factory = PROVIDERS.get(provider)
    if factory is not None:
        return factory(options, script)
    model = options.pop("model", None)
    if not isinstance(model, str) or not model:
        known = ", ".join(sorted(PROVIDERS))
        raise ModelConfigError(
            f"model provider {provider!r} needs a model name: {{provider: {provider}, "
            f"model: <name>}} or '{provider}:<name>' (built-in kinds: {known})"
        )
    return provider_model(provider, model, options)
