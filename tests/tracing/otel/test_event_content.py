"""Content written as events, read as chat-span attributes (tracing/otel/event_content.py).

The real producers' events are read end to end in tests/tracing/otlp/test_logs.py; here, what
any event can hold: whatever its body, the reading never raises and only writes JSON text a span
could carry (a details event's text as it is), and never replaces what the span has.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tracing.otel.event_content import CONTENT_KEYS, DETAILS_EVENT, content_attributes
from tracing.otel.span_view import SpanEvent

_NAMES = st.sampled_from(
    [
        DETAILS_EVENT,
        "gen_ai.system.message",
        "gen_ai.user.message",
        "gen_ai.assistant.message",
        "gen_ai.tool.message",
        "gen_ai.choice",
        "exception",
    ]
)
_LEAF = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
_VALUE = st.recursive(
    _LEAF,
    lambda inner: (
        st.lists(inner, max_size=3).map(tuple)
        | st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["content", "tool_calls", "id", "function", "name", "arguments"]),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)
_ATTRIBUTES = st.dictionaries(st.sampled_from([*CONTENT_KEYS, "body", "other"]), _VALUE, max_size=4)


@given(st.lists(st.tuples(_NAMES, _ATTRIBUTES), max_size=6), st.sampled_from(CONTENT_KEYS))
def test_any_events_read_as_json_text_and_never_replace_the_spans_own(
    events: list[tuple[str, dict[str, Any]]], own: str
) -> None:
    views = [SpanEvent(name, attributes, index) for index, (name, attributes) in enumerate(events)]
    found = content_attributes(views, {own: "[]"})
    assert own not in found
    verbatim = {v for _, attributes in events for v in attributes.values() if isinstance(v, str)}
    for key, value in found.items():
        assert key in CONTENT_KEYS and isinstance(value, str)
        if value not in verbatim:  # a details event's text is the span's, as it was written
            json.loads(value)


def test_an_id_less_tool_message_answers_the_earliest_waiting_call() -> None:
    def call(call_id: str) -> dict[str, Any]:
        return {"id": call_id, "function": {"name": "add", "arguments": {"a": 1}}}

    events = [
        SpanEvent("gen_ai.user.message", {"body": {"content": "add twice"}}, 1),
        SpanEvent("gen_ai.assistant.message", {"body": {"tool_calls": (call("a"), call("b"))}}, 2),
        SpanEvent("gen_ai.tool.message", {"body": {"content": "1"}}, 3),
        SpanEvent("gen_ai.tool.message", {"body": {"content": "2", "id": "b"}}, 4),
        SpanEvent("gen_ai.choice", {"body": {"message": {"content": "done"}}}, 5),
    ]
    found = content_attributes(events, {})
    inputs = json.loads(found["gen_ai.input.messages"])
    answered = [p["id"] for m in inputs for p in m["parts"] if p["type"] == "tool_call_response"]
    assert answered == ["a", "b"]
    assert inputs[0] == {"role": "user", "parts": [{"type": "text", "content": "add twice"}]}
    output = json.loads(found["gen_ai.output.messages"])
    assert output == [{"role": "assistant", "parts": [{"type": "text", "content": "done"}]}]
