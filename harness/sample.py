"""Sample: what the agent did (tool calls, answer) next to what a test expects of it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.errors import SampleError
from harness.expectation import Expectation
from harness.labels import check_labels
from tracing.records import InvalidToolCall, ToolCall, content_text

ExpectationLike = Expectation | ToolCall | Mapping[str, Any]


class Recorded(Protocol):
    """What :meth:`Sample.from_recorder` reads: ``ToolCallRecorder``, ``RecorderTurn``, or yours."""

    def calls(self) -> list[ToolCall]:
        """The recorded calls, in request order."""
        ...

    def last_output(self) -> Any:
        """The final answer of the last run that finished (None when there is none)."""
        ...


def _coerce_expectations(items: Iterable[ExpectationLike] | None) -> list[Expectation]:
    if items is None:
        return []
    if isinstance(items, (str, bytes, Mapping)):
        raise SampleError(
            f"expected_tool_calls must be a list of expectations, got {type(items).__name__}"
        )
    out: list[Expectation] = []
    for position, item in enumerate(items):
        try:
            out.append(Expectation.coerce(item))
        except (InvalidToolCall, ValueError, TypeError) as exc:
            raise SampleError(f"expected_tool_calls[{position}]: {exc}") from None
    check_labels(out)  # labels unique, `after` and `$ref` naming known ones, no cycle
    return out


def _coerce_calls(items: Iterable[ToolCall | Mapping[str, Any]] | None) -> list[ToolCall] | None:
    if items is None:
        return None
    out: list[ToolCall] = []
    for position, item in enumerate(items):
        if isinstance(item, ToolCall):
            out.append(item)
            continue
        try:
            out.append(_call_from_mapping(item))
        except InvalidToolCall as exc:
            raise SampleError(f"tool_calls[{position}]: {exc}") from None
    return out


def _call_from_mapping(item: Any) -> ToolCall:
    if not isinstance(item, Mapping):
        raise InvalidToolCall(f"a tool call must be a ToolCall or a mapping, got {item!r}")
    if "function" in item:
        return ToolCall.from_openai(item)
    return ToolCall.from_langchain(item)


@dataclass(slots=True)
class Sample:
    """One scored unit: the calls the agent made, the calls a test expects, and context."""

    input: Any = None
    tool_calls: list[ToolCall] | None = None
    expected_tool_calls: list[Expectation] = field(default_factory=list)
    output: Any = None
    metadata: dict[str, Any] = field(default_factory=dict)
    trace_id: str | None = None

    def __init__(
        self,
        input: Any = None,
        tool_calls: Iterable[ToolCall | Mapping[str, Any]] | None = None,
        expected_tool_calls: Iterable[ExpectationLike] | None = None,
        output: Any = None,
        metadata: Mapping[str, Any] | None = None,
        trace_id: str | None = None,
    ) -> None:
        self.input = input
        self.tool_calls = _coerce_calls(tool_calls)
        self.expected_tool_calls = _coerce_expectations(expected_tool_calls)
        self.output = output
        self.metadata = dict(metadata or {})
        self.trace_id = trace_id

    def require_recorded(self) -> list[ToolCall]:
        """The recorded calls, or a SampleError when nothing was recorded at all."""
        if self.tool_calls is None:
            raise SampleError(
                "sample.tool_calls is None: nothing was recorded. Attach a ToolCallRecorder "
                "(or pass tool_calls=[] if the agent really called no tool)."
            )
        return self.tool_calls

    @classmethod
    def from_messages(
        cls,
        messages: Sequence[Any],
        expected_tool_calls: Iterable[ExpectationLike] | None = None,
        **kwargs: Any,
    ) -> Sample:
        """Collect every AI message's tool calls, in message order (LangChain or OpenAI dicts)."""
        calls: list[ToolCall] = []
        turn = 0
        for position, message in enumerate(messages):
            requested = _requested_calls(message)
            if requested is None:
                continue
            for call in requested:
                try:
                    if isinstance(call, Mapping) and "function" in call:
                        record = ToolCall.from_openai(call, turn=turn)
                    else:
                        record = ToolCall.from_langchain(call, turn=turn)
                except InvalidToolCall as exc:
                    raise SampleError(f"messages[{position}]: {exc}") from None
                calls.append(record)
            turn += 1
        output = kwargs.pop("output", _final_answer(messages))
        return cls(
            tool_calls=calls,
            expected_tool_calls=expected_tool_calls,
            output=output,
            **kwargs,
        )

    @classmethod
    def from_recorder(
        cls,
        recorder: Recorded,
        expected_tool_calls: Iterable[ExpectationLike] | None = None,
        *,
        output: Any = None,
        **kwargs: Any,
    ) -> Sample:
        """The calls a recorder (or one of its turns) saw, in request order, and its model calls
        when it keeps them (under ``metadata["model_calls"]``, where rules read them:
        ``harness.rules.Trajectory``); ``output`` defaults to its last finished run's answer."""
        from harness.rules.trajectory import MODEL_CALLS_KEY

        metadata = dict(kwargs.pop("metadata", None) or {})
        model_calls = getattr(recorder, "model_calls", None)
        if model_calls is not None:
            metadata.setdefault(MODEL_CALLS_KEY, model_calls())
        return cls(
            tool_calls=recorder.calls(),
            expected_tool_calls=expected_tool_calls,
            output=recorder.last_output() if output is None else output,
            metadata=metadata,
            **kwargs,
        )


def _message_role(message: Any) -> str | None:
    if isinstance(message, Mapping):
        role = message.get("role") or message.get("type")
        return role if isinstance(role, str) else None
    role = getattr(message, "type", None)
    return role if isinstance(role, str) else None


def _requested_calls(message: Any) -> list[Any] | None:
    """The tool calls an assistant message requested, or None for any other message."""
    if _message_role(message) not in ("ai", "assistant", "AIMessageChunk"):
        return None
    if isinstance(message, Mapping):
        calls = message.get("tool_calls")
    else:
        calls = getattr(message, "tool_calls", None)
    if not calls:
        return None
    return list(calls)


def _final_answer(messages: Sequence[Any]) -> Any:
    """The content of the last assistant message that asked for no tool (blocks as text)."""
    for message in reversed(messages):
        if _message_role(message) not in ("ai", "assistant"):
            continue
        if _requested_calls(message):
            return None
        if isinstance(message, Mapping):
            return content_text(message.get("content"))
        return content_text(getattr(message, "content", None))
    return None
