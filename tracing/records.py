"""The record both layers share: one tool call, as the model asked for it or a tool ran it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

CallStatus = Literal["ok", "error", "requested", "interrupted", "invalid"]
"""What became of a call (docs/capture.md; scoring in docs/metrics.md "Call statuses").

``ok``: executed and returned; ``error``: executed and its last attempt failed; ``requested``:
asked for and never executed (an unknown tool, a call a reviewer rejected); ``interrupted``: the
run paused (LangGraph ``interrupt()``) before or while it ran, and was not resumed;
``invalid``: the model's arguments were not a JSON object (``AIMessage.invalid_tool_calls``).
"""

AttemptStatus = Literal["ok", "error"]
"""How one execution of a call ended."""

CallSource = Literal["callback", "otel", "messages", "expected"]
"""Where a record came from."""

_STATUSES = frozenset(("ok", "error", "requested", "interrupted", "invalid"))

RAW_ARGUMENTS_KEY = "__raw__"
"""Key under which arguments that could not be read as a JSON object are kept, as text."""


class InvalidToolCall(ValueError):
    """A tool call that cannot be turned into a record (no name, arguments not a JSON object)."""


def parse_arguments(raw: Any, *, where: str) -> dict[str, Any]:
    """Turn a mapping, a JSON object string or None into a plain dict of arguments."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, (str, bytes, bytearray)):
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InvalidToolCall(
                f"{where}: arguments are not valid JSON ({exc.msg} at position {exc.pos}): "
                f"{_preview(raw)}"
            ) from None
        if not isinstance(parsed, dict):
            raise InvalidToolCall(
                f"{where}: arguments must be a JSON object, got {type(parsed).__name__}: "
                f"{_preview(raw)}"
            )
        return parsed
    raise InvalidToolCall(
        f"{where}: arguments must be a mapping or a JSON object string, "
        f"got {type(raw).__name__}: {_preview(raw)}"
    )


def content_text(content: Any) -> Any:
    """A message's content as text: content blocks (``[{"type": "text", "text": ...}]``) joined.

    Anthropic (and others, when streaming) give the answer as a list of blocks; anything that is
    neither a string nor a list of blocks comes back unchanged.
    """
    if not isinstance(content, list):
        return content
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and block.get("type") == "text":
            text = block.get("text")
            if isinstance(text, str):
                parts.append(text)
    return "".join(parts)


def _preview(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class Attempt:
    """One execution of a call: how it ended, its error text, and when (ns since the epoch)."""

    status: AttemptStatus
    error: str | None = None
    started_at: int | None = None
    ended_at: int | None = None


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call: its name and arguments, plus what is known of its execution."""

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None
    status: CallStatus = "ok"
    result: Any = None
    error: str | None = None
    started_at: int | None = None
    ended_at: int | None = None
    run_id: str | None = None
    parent_run_id: str | None = None
    node: str | None = None
    turn: int = 0
    source: CallSource = "callback"
    attempts: tuple[Attempt, ...] = ()
    """Every execution, in order (a retried call has several); ``status`` is the last one's."""
    agent: str | None = None
    """The path of graphs the call ran in, outermost first: ``supervisor/research_agent``."""

    def __post_init__(self) -> None:
        # Checked here, once, so that every later consumer can rely on the shape. A plain str
        # and a plain dict (what nearly every call holds) pass without the ABC machinery.
        name = self.name
        if (type(name) is not str and not isinstance(name, str)) or not name:
            raise InvalidToolCall(f"tool call needs a non-empty string name, got {self.name!r}")
        if type(self.args) is not dict and not isinstance(self.args, Mapping):
            raise InvalidToolCall(
                f"tool call {self.name!r}: args must be a mapping, "
                f"got {type(self.args).__name__}: {_preview(self.args)}"
            )
        if self.status not in _STATUSES:
            raise InvalidToolCall(
                f"tool call {self.name!r}: status must be one of ok, error, requested, "
                f"interrupted, invalid; got {self.status!r}"
            )

    @classmethod
    def of(cls, name: str, args: Any = None, /, **kwargs: Any) -> ToolCall:
        """Build a call from a name and a mapping, a JSON object string, keywords, or both."""
        merged = parse_arguments(args, where=f"tool call {name!r}")
        merged.update(kwargs)
        return cls(name=name, args=merged)

    @classmethod
    def from_openai(
        cls, call: Mapping[str, Any], *, source: CallSource = "messages", turn: int = 0
    ) -> ToolCall:
        """Build a call from an OpenAI ``tool_calls`` entry (``{"function": {...}}`` or flat)."""
        if not isinstance(call, Mapping):
            raise InvalidToolCall(f"OpenAI tool call must be a mapping, got {_preview(call)}")
        function = call.get("function", call)
        if not isinstance(function, Mapping):
            raise InvalidToolCall(
                f"OpenAI tool call 'function' must be a mapping: {_preview(call)}"
            )
        raw = function.get("arguments", function.get("args"))
        return cls._requested("OpenAI", call, function.get("name"), raw, source, turn)

    @classmethod
    def from_langchain(
        cls, call: Mapping[str, Any], *, source: CallSource = "messages", turn: int = 0
    ) -> ToolCall:
        """Build a call from a LangChain ``ToolCall`` dict (``name``, ``args``, ``id``)."""
        if not isinstance(call, Mapping):
            raise InvalidToolCall(f"LangChain tool call must be a mapping, got {_preview(call)}")
        return cls._requested("LangChain", call, call.get("name"), call.get("args"), source, turn)

    @classmethod
    def _requested(
        cls,
        dialect: str,
        call: Mapping[str, Any],
        name: Any,
        raw: Any,
        source: CallSource,
        turn: int,
    ) -> ToolCall:
        """A requested call from its name and raw arguments, read out of ``call`` (which has
        the id) by either dialect; a missing name or non-object arguments raise."""
        if not isinstance(name, str) or not name:
            raise InvalidToolCall(f"{dialect} tool call without a name: {_preview(call)}")
        call_id = call.get("id")
        where = f"tool call {name!r}" + (f" (id {call_id!r})" if call_id else "")
        return cls(
            name=name,
            args=parse_arguments(raw, where=where),
            id=call_id if isinstance(call_id, str) else None,
            status="requested",
            source=source,
            turn=turn,
        )

    @classmethod
    def invalid(
        cls,
        name: str,
        raw: Any,
        error: str | None,
        *,
        id: str | None = None,
        source: CallSource = "messages",
        turn: int = 0,
    ) -> ToolCall:
        """A call whose arguments were not a JSON object: ``args`` keep the raw text."""
        text = raw if isinstance(raw, str) else json.dumps(raw, default=str)
        return cls(
            name=name,
            args={RAW_ARGUMENTS_KEY: text},
            id=id,
            status="invalid",
            error=error or "arguments are not a JSON object",
            source=source,
            turn=turn,
        )

    @property
    def raw_arguments(self) -> str | None:
        """The model's argument text of an ``invalid`` call (None for any other call)."""
        if self.status != "invalid":
            return None
        raw = self.args.get(RAW_ARGUMENTS_KEY)
        return raw if isinstance(raw, str) else None

    @property
    def failed_attempts(self) -> int:
        """How many executions of this call failed (retries the agent recovered from count)."""
        return sum(1 for attempt in self.attempts if attempt.status == "error")

    @property
    def duration_ns(self) -> int | None:
        """Execution time in nanoseconds, when both ends were seen."""
        if self.started_at is None or self.ended_at is None:
            return None
        return self.ended_at - self.started_at

    def describe(self) -> str:
        """Render as ``name(key=value, ...)`` for reasons and tables."""
        inner = ", ".join(f"{key}={value!r}" for key, value in self.args.items())
        return f"{self.name}({inner})"


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One model turn: its token usage as the provider reported it, and when it ran.

    Usage figures are None when the provider reported none. ``total_tokens`` is the provider's
    total, else input + output when both are known. Times are ns since the epoch.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    started_at: int | None = None
    ended_at: int | None = None
    model: str | None = None
    turn: int = 0
