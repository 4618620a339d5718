"""Trajectory.from_sample: the metadata keys it reads, the user's text it finds, bad metadata."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from harness import Sample, SampleError
from harness.rules import Trajectory
from harness.rules.trajectory import (
    DURATION_KEY,
    MODEL_CALLS_KEY,
    NOT_CAPTURED_KEY,
    USER_INPUTS_KEY,
    user_texts,
)
from harness.scoring import NOT_CAPTURED
from tracing.records import ModelCall, ToolCall

CALLS = [ToolCall(name="a"), ToolCall(name="b")]


def test_every_metadata_key_is_read() -> None:
    sample = Sample(
        input="hello",
        tool_calls=CALLS,
        output="bye",
        metadata={
            MODEL_CALLS_KEY: [ModelCall(10, 2, 12), {"input_tokens": 5, "model": "m"}],
            DURATION_KEY: 3,
            USER_INPUTS_KEY: ["first turn", "second turn"],
            NOT_CAPTURED_KEY: {"calls": [1, 7, True, "x"], "output": True},
        },
    )
    trajectory = Trajectory.from_sample(sample)
    assert trajectory == Trajectory(
        calls=tuple(CALLS),
        user_inputs=("first turn", "second turn"),
        model_calls=(ModelCall(10, 2, 12), ModelCall(input_tokens=5, model="m")),
        duration=3.0,
        output="bye",
        not_captured=frozenset({1}),
    )
    assert not trajectory.known(1) and trajectory.known(0)
    assert NOT_CAPTURED_KEY == NOT_CAPTURED  # the key eval-traces writes


def test_without_metadata_nothing_is_known_beyond_the_calls_and_input() -> None:
    trajectory = Trajectory.from_sample(Sample(input="hi", tool_calls=[]))
    assert (trajectory.user_inputs, trajectory.model_calls, trajectory.duration) == (
        ("hi",),
        None,
        None,
    )


@pytest.mark.parametrize(
    ("run_input", "texts"),
    [
        (None, []),
        ("just text", ["just text"]),
        ({"messages": [("user", "a"), ("assistant", "b"), ("human", "c")]}, ["a", "c"]),
        (
            {"messages": [HumanMessage("x"), AIMessage("y"), {"role": "user", "content": "z"}]},
            ["x", "z"],
        ),
        ([{"type": "human", "content": [{"type": "text", "text": "blocks"}]}], ["blocks"]),
        (
            {"question": "why", "n": 3, "flag": True, "nested": {"id": ["ORD-1"]}},
            ["why", "3", "ORD-1"],
        ),
        (["bare string message"], ["bare string message"]),
        (42, ["42"]),
    ],
)
def test_the_user_text_of_each_input_shape(run_input: Any, texts: list[str]) -> None:
    assert list(user_texts(run_input)) == texts


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({MODEL_CALLS_KEY: "x"}, r"metadata\['model_calls'\] must be a list, got 'x'"),
        (
            {MODEL_CALLS_KEY: [1]},
            r"metadata\['model_calls'\]\[0\] must be a ModelCall or a mapping",
        ),
        ({MODEL_CALLS_KEY: [{"tokens": 1}]}, r"metadata\['model_calls'\]\[0\]: .*tokens"),
        ({MODEL_CALLS_KEY: [{"input_tokens": "9"}]}, r"input_tokens must be an int or null"),
        ({DURATION_KEY: True}, "must be seconds as a number"),
        ({USER_INPUTS_KEY: "text"}, "must be a list of str"),
        ({USER_INPUTS_KEY: ["a", 1]}, "must hold only str"),
    ],
)
def test_malformed_metadata_is_a_sample_error(metadata: dict[str, Any], message: str) -> None:
    with pytest.raises(SampleError, match=message):
        Trajectory.from_sample(Sample(tool_calls=[], metadata=metadata))


def test_nothing_recorded_is_a_sample_error() -> None:
    with pytest.raises(SampleError, match="nothing was recorded"):
        Trajectory.from_sample(Sample(tool_calls=None))


def test_the_grounding_index_is_built_once_and_kept_out_of_equality() -> None:
    from harness.rules.grounding import index_of

    trajectory = Trajectory(calls=(ToolCall(name="a", result="x"),))
    index = index_of(trajectory)
    assert index_of(trajectory) is index
    assert trajectory == Trajectory(calls=(ToolCall(name="a", result="x"),))
