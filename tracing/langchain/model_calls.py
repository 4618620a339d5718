"""Model calls as the recorder keeps them: one :class:`~tracing.records.ModelCall` per model run
that ended, in start order, with the token usage the provider reported.

Usage is read where LangChain puts it (docs/capture.md, "What it records"): the reply's
``usage_metadata`` (``input_tokens``, ``output_tokens``, ``total_tokens``), else the result's
``llm_output["token_usage"]`` (or ``["usage"]``; OpenAI's ``prompt_tokens`` /
``completion_tokens`` names too), which older integrations and completion models fill. A figure
that is not a non-negative int is not known (None). ``total_tokens`` is the provider's, else
input + output when both are known. The span emitter writes the same figures as
``gen_ai.usage.*`` (:func:`usage_of` is shared), so the two capture paths agree.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from time import time_ns
from typing import Any
from uuid import UUID

from langchain_core.messages import AIMessage
from langchain_core.outputs import LLMResult

from tracing.records import ModelCall

__all__ = ["ModelCallLog", "Usage", "usage_of"]

Usage = tuple[int | None, int | None, int | None]
"""(input_tokens, output_tokens, total_tokens), each None when not reported."""

_NO_USAGE: Usage = (None, None, None)
_INPUT_KEYS = ("input_tokens", "prompt_tokens")
_OUTPUT_KEYS = ("output_tokens", "completion_tokens")


def _count(source: Mapping[str, Any], keys: tuple[str, ...]) -> int | None:
    for key in keys:
        value = source.get(key)
        if type(value) is int and value >= 0:  # not a bool, not a float: a token count
            return value
    return None


def _figures(source: Mapping[str, Any]) -> Usage:
    given = _count(source, ("total_tokens",))
    input_tokens = _count(source, _INPUT_KEYS)
    output_tokens = _count(source, _OUTPUT_KEYS)
    if given is None and input_tokens is not None and output_tokens is not None:
        given = input_tokens + output_tokens
    return input_tokens, output_tokens, given


def usage_of(response: LLMResult, reply: AIMessage | None) -> Usage:
    """The token usage of one model call, as the provider reported it (see the module)."""
    usage = reply.usage_metadata if reply is not None else None
    if usage:
        return _figures(usage)
    output = response.llm_output
    if not isinstance(output, Mapping):
        return _NO_USAGE
    for key in ("token_usage", "usage"):
        found = output.get(key)
        if isinstance(found, Mapping) and found:
            return _figures(found)
    return _NO_USAGE


def response_model(reply: AIMessage | None) -> str | None:
    """The model name the provider answered with (``response_metadata``), if any."""
    metadata = reply.response_metadata if reply is not None else None
    if not metadata:
        return None
    name = metadata.get("model_name") or metadata.get("model")
    return name if isinstance(name, str) and name else None


@dataclass(slots=True)
class _Started:
    order: int
    root: str
    started_at: int
    model: str | None


class ModelCallLog:
    """The model runs of one recorder: opened at start (their order), closed with their usage.

    Not thread-safe on its own: the recorder calls it under its lock. A model run that raised
    produced no turn and is dropped; one still open is not listed.
    """

    __slots__ = ("_ended", "_open", "_started")

    def __init__(self) -> None:
        """An empty log."""
        self._open: dict[UUID, _Started] = {}
        self._ended: list[tuple[int, str, ModelCall]] = []
        self._started = 0

    def start(self, run_id: UUID, root: str, model: str | None) -> None:
        """A model run began in the top-level run ``root`` (its requested ``model``)."""
        self._open[run_id] = _Started(self._started, root, time_ns(), model)
        self._started += 1

    def end(self, run_id: UUID, response: LLMResult, reply: AIMessage | None, turn: int) -> None:
        """A model run ended: keep it, with its usage, as model turn ``turn`` of its scope."""
        started = self._open.pop(run_id, None)
        if started is None:
            return
        input_tokens, output_tokens, total_tokens = usage_of(response, reply)
        call = ModelCall(
            input_tokens,
            output_tokens,
            total_tokens,
            started.started_at,
            time_ns(),
            response_model(reply) or started.model,
            turn,
        )
        self._ended.append((started.order, started.root, call))

    def drop(self, run_id: UUID) -> None:
        """A model run raised: it produced no turn."""
        self._open.pop(run_id, None)

    def calls(self, roots: Collection[str] | None = None) -> list[ModelCall]:
        """The ended model calls in start order; with ``roots``, those of these top-level runs."""
        ended = sorted(self._ended, key=lambda item: item[0])
        return [call for _, root, call in ended if roots is None or root in roots]

    def clear(self) -> None:
        """Forget everything (runs still open are forgotten too)."""
        self._open.clear()
        self._ended.clear()
