"""Chat models handed to agents (docs/architecture.md): demo, scripted, a provider, or your own.

``make_model(spec, script=...)`` is the one entry point the runner uses. ``spec`` is what a
scenario file's ``model:`` holds: nothing or ``"demo"`` (the default), a mapping
``{provider: demo|scripted|<name>|<module:callable>, model: ..., **options}``, a
``"provider:model"`` string, or ``"module:callable"`` / ``"file.py:callable"`` naming a factory
of the user's own ``BaseChatModel`` (:mod:`harness.models.factory`). Kinds live in a registry
(``PROVIDERS``). A real provider's model is a :class:`~harness.models.lazy.ProviderChatModel`,
built on its first turn: loading a suite never needs the provider's package or key. The option
``max_concurrency: N`` puts any of them behind the gate its config shares
(:mod:`harness.models.limits`). Record and replay wrap whatever model this returns
(``harness.cassettes``); they are chosen by a flag, not by ``model:``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from langchain_core.language_models import BaseChatModel

from harness.models.demo import DemoChatModel
from harness.models.factory import FactoryChatModel, factory_model, is_factory_target
from harness.models.lazy import ProviderChatModel, provider_model
from harness.models.limits import LimitedChatModel, gate_for
from harness.models.providers import PACKAGES, ModelConfigError

__all__ = [
    "PROVIDERS",
    "DemoChatModel",
    "FactoryChatModel",
    "LimitedChatModel",
    "ModelConfigError",
    "ModelProvider",
    "ModelSpec",
    "ProviderChatModel",
    "Resolver",
    "make_model",
    "register_provider",
]

ModelSpec = str | Mapping[str, Any] | None
"""What ``model:`` may hold in a scenario file."""

Resolver = Callable[[str], Callable[..., Any]]
"""Imports a ``module:callable`` / ``file.py:callable`` (ValueError saying what is missing)."""

LIMIT_OPTION = "max_concurrency"


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
        if text in PROVIDERS or is_factory_target(text):
            return text, {}
        provider, sep, model = text.partition(":")
        return (provider, {"model": model}) if sep else ("", {"model": text})
    if isinstance(spec, Mapping):
        options = dict(spec)
        provider = options.pop("provider", None)
        if provider is None:
            provider = "demo" if "model" not in options else ""
        if not isinstance(provider, str):
            raise ModelConfigError(
                f"model.provider must be a string, got {provider!r}", option="provider"
            )
        return provider, options
    raise ModelConfigError(
        f"model must be a mapping like {{provider: demo}} or a 'provider:model' string, "
        f"got {type(spec).__name__} {spec!r}"
    )


def _limit(value: Any) -> int:
    """``max_concurrency``: a positive whole number."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ModelConfigError(
            f"max_concurrency must be a whole number >= 1 (how many calls of this model may "
            f"run at once in the whole run), got {value!r}",
            option=LIMIT_OPTION,
        )
    return value


def _import_here(target: str) -> Callable[..., Any]:
    from harness.scenarios.agents import resolve_callable  # the loader's importer, did-you-mean

    return resolve_callable(target, Path.cwd(), role=_FACTORY_ROLE)


_FACTORY_ROLE = "a model factory must be callable and return a BaseChatModel"


def _factory(target: str, options: Mapping[str, Any], resolve: Resolver | None) -> BaseChatModel:
    head = target.partition(":")[0]
    if head in PROVIDERS or head in PACKAGES:
        name = target.partition(":")[2]
        raise ModelConfigError(
            f"model.provider {target!r} names a provider and a model in one: write "
            f"{{provider: {head}, model: {name}}} or '{target}' as the whole model",
            option="provider",
        )
    try:
        factory = (resolve or _import_here)(target)
    except ValueError as exc:
        raise ModelConfigError(f"model factory {target}: {exc}", option="provider") from None
    return factory_model(target, factory, options)


def _build(
    provider: str,
    options: dict[str, Any],
    script: Sequence[Any] | None,
    resolve: Resolver | None,
) -> BaseChatModel:
    kind = PROVIDERS.get(provider)
    if kind is not None:
        return kind(options, script)
    if ":" in provider:
        return _factory(provider, options, resolve)
    model = options.pop("model", None)
    if not isinstance(model, str) or not model:
        known = ", ".join(sorted(PROVIDERS))
        raise ModelConfigError(
            f"model provider {provider!r} needs a model name: {{provider: {provider}, "
            f"model: <name>}} or '{provider}:<name>' (built-in kinds: {known})"
        )
    return provider_model(provider, model, options)


def make_model(
    spec: ModelSpec = None,
    *,
    script: Sequence[Any] | None = None,
    resolve: Resolver | None = None,
) -> BaseChatModel:
    """The chat model a scenario's ``model:`` asks for (default: the demo model).

    ``resolve`` imports a factory the spec names (the loader's, relative to the suite file);
    without it, the current directory's.
    """
    provider, options = _normalise(spec)
    limited = LIMIT_OPTION in options
    value = options.pop(LIMIT_OPTION, None)
    built = _build(provider, dict(options), script, resolve)  # what the model is: said first
    if not limited:
        return built
    limit = _limit(value)
    # the whole config but the script: every scenario (every suite) writing it shares the gate;
    # a factory counts by what it is, however a suite's path names it
    owner: Any = built.factory if isinstance(built, FactoryChatModel) else provider
    key = (owner, json.dumps(options, sort_keys=True, default=repr), limit)
    return LimitedChatModel(inner=built, gate=gate_for(key, _label(provider, options), limit))


def _label(provider: str, options: Mapping[str, Any]) -> str:
    """How a message names the model: ``openai:gpt-4o-mini``, ``scripted``, ``pkg.mod:make``."""
    model = options.get("model")
    if ":" in provider or not isinstance(model, str) or not model:
        return provider or "model"
    return f"{provider}:{model}" if provider else model
