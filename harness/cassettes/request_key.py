"""The cassette key: what a model turn is asked, normalised, and its sha256 (docs/architecture.md).

A key covers what changes an answer — provider, model, sampling parameters, the full tool
schemas, ``tool_choice`` / ``parallel_tool_calls`` / ``stop``, and the messages — and nothing
that does not: message ids, response metadata, usage and transport settings are left out
(each of those has made a peer's cache miss on every turn). Tool-call ids are replaced by their
ordinal in the conversation (``call_1``, ``call_2``, ...), and a tool message names the ordinal
of the call it answers, so a provider's fresh random ids never change a key.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from harness.models.lazy import TRANSPORT_OPTIONS

__all__ = [
    "KEY_VERSION",
    "Identity",
    "Request",
    "call_params",
    "canonical_json",
    "identity_of",
    "normalise_messages",
    "text_and_blocks",
    "tool_hash",
    "turn_number",
]

KEY_VERSION = 1
"""Bumped when the key's payload changes shape (every recording would then miss)."""

_ROLES = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}

# Call options that say how the answer travels, not what it is.
_TRANSPORT_CALL_OPTIONS = frozenset({"stream", "stream_options", "timeout", "extra_headers"})


def canonical_json(value: Any) -> str:
    """One spelling per value: sorted keys, no spaces, UTF-8 kept (``default=str`` for the rest)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def tool_hash(schema: Mapping[str, Any]) -> str:
    """A short, stable name for one tool schema (how a cassette stores each schema once)."""
    return _sha256(canonical_json(schema))[:12]


@dataclass(frozen=True, slots=True)
class Identity:
    """Which model answers: provider, model name and the options that change its answers."""

    provider: str
    model: str
    params: Mapping[str, Any]

    @property
    def label(self) -> str:
        """``provider:model``."""
        return f"{self.provider}:{self.model}" if self.model else self.provider

    def as_dict(self) -> dict[str, Any]:
        """The identity as the key and the cassette file write it."""
        data: dict[str, Any] = {"provider": self.provider, "model": self.model}
        if self.params:
            data["params"] = dict(self.params)
        return data


def identity_of(model: BaseChatModel) -> Identity:
    """The identity of any chat model (a lazily built provider model names its own spec)."""
    own = getattr(model, "cassette_identity", None)
    if callable(own):
        provider, name, params = own()
        return Identity(str(provider), str(name), dict(params))
    params = dict(model._identifying_params)
    name = params.pop("model_name", None) or params.pop("model", None) or ""
    kept = {k: v for k, v in params.items() if k not in TRANSPORT_OPTIONS and v is not None}
    return Identity(model._llm_type, str(name), kept)


def text_and_blocks(content: Any) -> tuple[str, list[Any]]:
    """The text of a message and, apart, any non-text content blocks (images, ...)."""
    if isinstance(content, str):
        return content, []
    texts: list[str] = []
    blocks: list[Any] = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, Mapping) and part.get("type") in ("text", None) and "text" in part:
            texts.append(str(part["text"]))
        elif isinstance(part, Mapping):
            blocks.append({k: v for k, v in part.items() if k != "id"})
        else:
            blocks.append(str(part))
    return "".join(texts), blocks


class _Ordinals:
    """Tool-call ids replaced by ``call_<n>`` in the order the conversation first uses them."""

    def __init__(self) -> None:
        self.by_id: dict[str, str] = {}

    def new(self, call_id: Any) -> str:
        ordinal = f"call_{len(self.by_id) + 1}"
        self.by_id[str(call_id) if call_id is not None else f"<none {ordinal}>"] = ordinal
        return ordinal

    def of(self, call_id: Any) -> str:
        known = self.by_id.get(str(call_id))
        return known if known is not None else self.new(call_id)


def normalise_messages(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """Role, text, tool calls with ordinal ids, tool status: what a key sees of each message."""
    ordinals = _Ordinals()
    out: list[dict[str, Any]] = []
    for message in messages:
        role = _ROLES.get(message.type, message.type)
        text, blocks = text_and_blocks(message.content)
        entry: dict[str, Any] = {"role": role, "text": text}
        if blocks:
            entry["blocks"] = blocks
        if isinstance(message, AIMessage):
            calls = [
                {"id": ordinals.new(c.get("id")), "name": c["name"], "args": dict(c["args"])}
                for c in message.tool_calls
            ]
            if calls:
                entry["tool_calls"] = calls
            invalid = [
                {"id": ordinals.new(c.get("id")), "name": c.get("name"), "args": c.get("args")}
                for c in message.invalid_tool_calls
            ]
            if invalid:
                entry["invalid_tool_calls"] = invalid
        elif isinstance(message, ToolMessage):
            entry["tool_call_id"] = ordinals.of(message.tool_call_id)
            entry["status"] = message.status
        out.append(entry)
    return out


def turn_number(messages: Sequence[Mapping[str, Any]]) -> int:
    """The 1-based model turn these (normalised) messages ask for."""
    return 1 + sum(1 for m in messages if m.get("role") == "assistant")


def call_params(kwargs: Mapping[str, Any], stop: Sequence[str] | None) -> dict[str, Any]:
    """The call's options a key covers: tool_choice, parallel_tool_calls, stop and the rest."""
    params = {
        k: v
        for k, v in kwargs.items()
        if k != "tools" and k not in _TRANSPORT_CALL_OPTIONS and v is not None
    }
    if stop:
        params["stop"] = list(stop)
    return params


@dataclass(frozen=True, slots=True)
class Request:
    """One model turn as a key sees it: who answers, with which tools and options, to what."""

    identity: Identity
    tools: tuple[Mapping[str, Any], ...]
    params: Mapping[str, Any]
    messages: tuple[Mapping[str, Any], ...]

    @classmethod
    def of(
        cls,
        model: BaseChatModel,
        messages: Sequence[BaseMessage],
        stop: Sequence[str] | None,
        kwargs: Mapping[str, Any],
    ) -> Request:
        """The request a wrapped model is making (its bound tools are in ``kwargs``)."""
        return cls(
            identity=identity_of(model),
            tools=tuple(kwargs.get("tools") or ()),
            params=call_params(kwargs, stop),
            messages=tuple(normalise_messages(messages)),
        )

    @property
    def key(self) -> str:
        """sha256 of the canonical JSON of everything above."""
        payload = {
            "v": KEY_VERSION,
            **self.identity.as_dict(),
            "tools": list(self.tools),
            "call": dict(self.params),
            "messages": list(self.messages),
        }
        return _sha256(canonical_json(payload))

    @property
    def turn(self) -> int:
        """The 1-based model turn of the conversation."""
        return turn_number(self.messages)
