"""Trajectory: everything a rule may look at in one run, and nothing else (docs/metrics.md, Rules).

A rule is a pure function of a :class:`Trajectory`, so the same rule scores a live run, a
recorded trace and a span stream in the app. Live runs build it with
:meth:`Trajectory.from_sample`; a read trace with :meth:`Trajectory.from_trace_run`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.errors import SampleError
from tracing.records import ModelCall, ToolCall, content_text

if TYPE_CHECKING:
    from harness.sample import Sample
    from tracing.otel.trace_run import TraceRun

MODEL_CALLS_KEY = "model_calls"
"""Sample metadata key: the run's model turns, a list of :class:`~tracing.records.ModelCall`
(or mappings of its fields), in start order. Absent: the model turns are not known."""

DURATION_KEY = "duration"
"""Sample metadata key: the run's wall-clock duration in seconds (an int or a float)."""

USER_INPUTS_KEY = "user_inputs"
"""Sample metadata key: every user message of the run as text, in order (a list of str).
Absent: the user's text is read from ``Sample.input``."""

NOT_CAPTURED_KEY = "not_captured"
"""Sample metadata key written by ``harness eval-traces`` (``harness.scoring.NOT_CAPTURED``):
``{"calls": [indices of calls recorded without content], "output": bool}``."""

_USER_ROLES = frozenset(("user", "human"))
_TOKEN_FIELDS = ("input_tokens", "output_tokens", "total_tokens")


@dataclass(frozen=True, slots=True)
class Trajectory:
    """One run as rules see it: the calls in request order, the user's text, the model turns."""

    calls: tuple[ToolCall, ...]
    """Every recorded call, in request order (equal start times keep that order)."""
    user_inputs: tuple[str, ...] | None = ()
    """The user's messages as text (every turn); None: they were not captured."""
    model_calls: tuple[ModelCall, ...] | None = None
    """The model turns, the final answer's included; None: not known (not captured)."""
    duration: float | None = None
    """Seconds, the run's or the trace's root span's; None: not known."""
    output: Any = None
    """The final answer (a sample's; no rule reads it, so a read trace's is left to
    :attr:`~tracing.otel.trace_run.TraceRun.output`, worked out only when asked for)."""
    not_captured: frozenset[int] = frozenset()
    """Indices of calls recorded without content: their arguments and result are unknown."""
    earlier_results: Callable[[], Sequence[str]] | None = None
    """The tool results earlier requests of the conversation returned, as the run's history
    carried them (a read trace's :meth:`~tracing.otel.trace_run.TraceRun.earlier_results`),
    read on demand; None: none beyond the run's own calls."""
    _grounding: Any = field(default=None, init=False, repr=False, compare=False)
    """The grounding index, built on first use by :func:`harness.rules.grounding.index_of`."""
    _counts: Mapping[str, int] | None = field(default=None, init=False, repr=False, compare=False)

    def known(self, position: int) -> bool:
        """Were the arguments (and result) of the call at ``position`` captured?"""
        return position not in self.not_captured

    @property
    def tool_counts(self) -> Mapping[str, int]:
        """How many calls (any status) name each tool; counted on first use and kept."""
        counts = self._counts
        if counts is None:
            counts = Counter(call.name for call in self.calls)
            object.__setattr__(self, "_counts", counts)
        return counts

    @classmethod
    def from_sample(cls, sample: Sample) -> Trajectory:
        """The trajectory of a scored sample; see the module's ``*_KEY`` constants for the
        metadata it reads. SampleError when nothing was recorded or the metadata is malformed."""
        calls = tuple(sample.require_recorded())
        metadata = sample.metadata
        return cls(
            calls=calls,
            user_inputs=_user_inputs(sample.input, metadata),
            model_calls=_model_calls(metadata.get(MODEL_CALLS_KEY)),
            duration=_duration(metadata.get(DURATION_KEY)),
            output=sample.output,
            not_captured=_not_captured(metadata.get(NOT_CAPTURED_KEY), len(calls)),
        )

    @classmethod
    def from_trace_run(cls, run: TraceRun) -> Trajectory:
        """The trajectory of a read trace (:func:`tracing.otel.trace_run.trace_run`): its calls,
        the user messages its model calls received, its model turns and root duration."""
        return cls(
            calls=run.calls,
            user_inputs=run.user_inputs,
            model_calls=run.model_calls,
            duration=run.duration,
            not_captured=run.not_captured,
            earlier_results=run.earlier_results,
        )


def _user_inputs(run_input: Any, metadata: Mapping[str, Any]) -> tuple[str, ...]:
    given = metadata.get(USER_INPUTS_KEY)
    if given is None:
        return tuple(user_texts(run_input))
    if isinstance(given, str) or not isinstance(given, Sequence):
        raise SampleError(f"metadata[{USER_INPUTS_KEY!r}] must be a list of str, got {given!r}")
    if not all(isinstance(text, str) for text in given):
        raise SampleError(f"metadata[{USER_INPUTS_KEY!r}] must hold only str, got {given!r}")
    return tuple(given)


def user_texts(run_input: Any) -> Iterator[str]:
    """The user's text in a run's input: a string itself; the content of each user message of
    a ``{"messages": [...]}`` input or a message list; the string and number leaves of any
    other mapping (numbers as ``str``)."""
    if run_input is None:
        return
    if isinstance(run_input, str):
        yield run_input
        return
    if isinstance(run_input, Mapping):
        if "messages" in run_input:
            yield from _message_texts(run_input["messages"])
        else:
            yield from _leaf_texts(run_input)
        return
    if isinstance(run_input, (list, tuple)):
        yield from _message_texts(run_input)
        return
    yield str(run_input)


def _message_texts(messages: Any) -> Iterator[str]:
    if isinstance(messages, str):
        yield messages
        return
    if not isinstance(messages, (list, tuple)):
        return
    for message in messages:
        role, content = _role_and_content(message)
        if role in _USER_ROLES:
            text = content_text(content)
            if isinstance(text, str):
                yield text


def _role_and_content(message: Any) -> tuple[Any, Any]:
    if isinstance(message, str):
        return "user", message  # a bare string in a message list is a user message
    if isinstance(message, (list, tuple)) and len(message) == 2:
        return message[0], message[1]
    if isinstance(message, Mapping):
        return message.get("role", message.get("type")), message.get("content")
    return getattr(message, "type", None), getattr(message, "content", None)


def _leaf_texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield str(value)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _leaf_texts(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _leaf_texts(item)


def _model_calls(raw: Any) -> tuple[ModelCall, ...] | None:
    if raw is None:
        return None
    if isinstance(raw, (str, Mapping)) or not isinstance(raw, Sequence):
        raise SampleError(f"metadata[{MODEL_CALLS_KEY!r}] must be a list, got {raw!r}")
    out: list[ModelCall] = []
    for position, item in enumerate(raw):
        if isinstance(item, ModelCall):
            out.append(item)
            continue
        if not isinstance(item, Mapping):
            raise SampleError(
                f"metadata[{MODEL_CALLS_KEY!r}][{position}] must be a ModelCall or a mapping "
                f"of its fields, got {item!r}"
            )
        try:
            call = ModelCall(**item)
        except TypeError as exc:
            raise SampleError(f"metadata[{MODEL_CALLS_KEY!r}][{position}]: {exc}") from None
        for key in _TOKEN_FIELDS:
            value = getattr(call, key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise SampleError(
                    f"metadata[{MODEL_CALLS_KEY!r}][{position}].{key} must be an int or null, "
                    f"got {value!r}"
                )
        out.append(call)
    return tuple(out)


def _duration(raw: Any) -> float | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        raise SampleError(f"metadata[{DURATION_KEY!r}] must be seconds as a number, got {raw!r}")
    return float(raw)


def _not_captured(raw: Any, count: int) -> frozenset[int]:
    if not isinstance(raw, Mapping):
        return frozenset()
    calls = raw.get("calls", ())
    if not isinstance(calls, (list, tuple)):
        return frozenset()
    return frozenset(
        i for i in calls if isinstance(i, int) and not isinstance(i, bool) and 0 <= i < count
    )
