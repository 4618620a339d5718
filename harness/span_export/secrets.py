"""By-value secret watching: the secret values of a run's tool calls, noted as they happen.

:func:`configure_export` gives each provider it builds a :class:`~harness.redaction.SecretBook`;
the runner puts a :class:`SecretWatcher` on it (:func:`secret_watchers`) before its SpanEmitter,
and the redacting exporter scrubs the noted values out of every span.
"""

from __future__ import annotations

import weakref
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from opentelemetry.sdk.trace import TracerProvider

from harness.redaction import SecretBook

__all__ = ["SecretWatcher", "secret_watchers"]


class SecretWatcher(BaseCallbackHandler):
    """Notes the secret values of a run's tool calls in a SecretBook as they happen.

    A LangChain callback handler the runner puts before its SpanEmitter (:func:`secret_watchers`):
    a tool's arguments are noted when it starts, so by the time its span ends (and is
    exported) a password its exception quotes is known, with or without content capture.
    """

    run_inline = True  # before the emitter's own handling of the same event, on its thread
    raise_error = False

    def __init__(self, book: SecretBook) -> None:
        """Note into ``book``."""
        super().__init__()
        self.book = book

    def on_tool_start(
        self, serialized: Any, input_str: str, *, inputs: Any = None, **kwargs: Any
    ) -> None:
        """The call's arguments."""
        self.book.note(inputs if inputs is not None else input_str)

    def on_tool_end(self, output: Any, **kwargs: Any) -> None:
        """The call's result (a ToolMessage's content)."""
        self.book.note(getattr(output, "content", output))

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        """The calls a model asked for (also those it never gets to run)."""
        for generations in getattr(response, "generations", ()):
            for generation in generations:
                message = getattr(generation, "message", None)
                for call in getattr(message, "tool_calls", None) or ():
                    self.book.note(call.get("args"))
                for call in getattr(message, "invalid_tool_calls", None) or ():
                    self.book.note(call.get("args"))


_BOOKS: weakref.WeakKeyDictionary[TracerProvider, SecretBook] = weakref.WeakKeyDictionary()
"""The SecretBook of each provider :func:`configure_export` built."""


def secret_watchers(provider: object) -> list[BaseCallbackHandler]:
    """The callback handlers to run before the SpanEmitter on ``provider`` (empty for a provider
    :func:`configure_export` did not build)."""
    book = _BOOKS.get(provider) if isinstance(provider, TracerProvider) else None
    return [] if book is None else [SecretWatcher(book)]
