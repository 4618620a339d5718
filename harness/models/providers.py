"""Real chat models through LangChain's ``init_chat_model`` (optional extra ``providers``).

Nothing here is imported until a scenario asks for a real provider, so the harness runs without
``langchain`` installed; when it is missing, or the provider's package or API key is, the error
says exactly what to install or set.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel

from harness.errors import ModelConfigError

__all__ = ["KEY_ENV", "PACKAGES", "ModelConfigError", "init_provider_model"]


# provider -> (LangChain integration package, environment variable holding the API key)
PACKAGES: dict[str, str] = {
    "openai": "langchain-openai",
    "azure_openai": "langchain-openai",
    "anthropic": "langchain-anthropic",
    "google_genai": "langchain-google-genai",
    "google_vertexai": "langchain-google-vertexai",
    "bedrock": "langchain-aws",
    "bedrock_converse": "langchain-aws",
    "mistralai": "langchain-mistralai",
    "groq": "langchain-groq",
    "cohere": "langchain-cohere",
    "fireworks": "langchain-fireworks",
    "together": "langchain-together",
    "ollama": "langchain-ollama",
    "deepseek": "langchain-deepseek",
    "xai": "langchain-xai",
    "huggingface": "langchain-huggingface",
}
KEY_ENV: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "azure_openai": "AZURE_OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "google_genai": "GOOGLE_API_KEY",
    "mistralai": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "cohere": "COHERE_API_KEY",
    "fireworks": "FIREWORKS_API_KEY",
    "together": "TOGETHER_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "xai": "XAI_API_KEY",
}

InitChatModel = Callable[..., BaseChatModel]


def _load_init_chat_model() -> InitChatModel | None:
    """LangChain's ``init_chat_model``, or None when the ``langchain`` package is not installed."""
    try:
        module = importlib.import_module("langchain.chat_models")
    except ImportError:
        return None
    init: InitChatModel = module.init_chat_model
    return init


def _install_hint(provider: str) -> str:
    package = PACKAGES.get(provider, f"the LangChain package for {provider!r}")
    quoted = package if package.startswith("langchain-") else "<package>"
    return f"pip install 'toolcall-harness[providers]' {quoted}"


def _blank(value: Any) -> bool:
    # a key of spaces is no key: the provider would only fail later, less clearly
    return value is None or not str(value).strip()


def _missing_key(provider: str, options: Mapping[str, Any]) -> str | None:
    """The API-key variable this provider needs and lacks (an ``api_key`` option counts)."""
    env = KEY_ENV.get(provider)
    if env is None:
        return None
    # a given api_key option is what the client uses, even when the variable is set too
    given = options["api_key"] if "api_key" in options else os.environ.get(env)
    return env if _blank(given) else None


def init_provider_model(
    provider: str,
    model: str,
    options: Mapping[str, Any],
    *,
    loader: Callable[[], InitChatModel | None] = _load_init_chat_model,
) -> BaseChatModel:
    """A real chat model for ``provider:model``, or a ModelConfigError saying what is missing."""
    where = f"model {provider}:{model}" if provider else f"model {model!r}"
    key = _missing_key(provider, options)
    key_hint = f" and set {key}" if key else ""
    init = loader()
    if init is None:
        raise ModelConfigError(
            f"{where} needs the 'langchain' package, which is not installed: run "
            f"`{_install_hint(provider)}`{key_hint}. Or use `model: {{provider: demo}}`, "
            "which needs no package and no key."
        )
    if key is not None:
        raise ModelConfigError(
            f"{where} needs an API key: set the {key} environment variable "
            "(or pass api_key in the model options)."
        )
    try:
        return init(model, model_provider=provider or None, **dict(options))
    except ImportError as exc:
        raise ModelConfigError(
            f"{where}: the provider's package is missing ({exc}); run `{_install_hint(provider)}`"
        ) from exc
    except Exception as exc:  # the provider SDK's own validation errors vary by package
        raise ModelConfigError(f"{where} could not be created: {exc}") from exc
