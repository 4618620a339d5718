"""The OTLP JSON reader's fast paths give what the plain ones gave: same values, same errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracing.otel.span_reading import json_value
from tracing.otlp.file_format import OtlpJsonReader

TRICKY_TEXTS = [
    '{"n": 123456789012345678901234567890}',  # past 64 bits: orjson would give a float
    '{"n": -9223372036854775808, "m": 18446744073709551615}',
    '{"s": "1234567890123456789012"}',
    '{"x": NaN, "y": Infinity, "z": -Infinity}',
    '{"big": 1e999}',
    '{"s": "\\ud800"}',  # a lone surrogate escape
    '{"f": 0.1, "g": -0.0, "h": 1E5}',
    "[" * 900 + "]" * 900,
    '{"a": 1, "a": 2}',
    ' {"pad": true} ',
]
BAD_TEXTS = ['{"a": 1,}', "", "{", '"a\x01b"', "[" * 1030 + "]" * 1030]


@pytest.mark.parametrize("text", TRICKY_TEXTS)
def test_json_value_is_json_loads(text: str) -> None:
    """Every value, with its types (int, not float), is what the standard parser gives."""
    assert repr(json_value(text)) == repr(json.loads(text))


@pytest.mark.parametrize("text", BAD_TEXTS)
def test_json_value_fails_as_json_loads(text: str) -> None:
    """Bad or too deep JSON raises the standard parser's error, with its message."""
    with pytest.raises((ValueError, RecursionError)) as expected:
        json.loads(text)
    with pytest.raises(expected.type) as got:
        json_value(text)
    assert str(got.value) == str(expected.value)


_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_VALUES)
def test_json_value_matches_json_loads_on_any_document(value: Any) -> None:
    """Integers of any size, floats and escapes read back exactly as json.loads reads them."""
    text = json.dumps(value)
    assert repr(json_value(text)) == repr(json.loads(text))


def _span(span_id: str, parent: str | None, attributes: dict[str, str], **ids: str) -> Any:
    span: dict[str, Any] = {
        "traceId": ids.get("trace_id", "ab" * 16),
        "spanId": span_id,
        "name": "execute_tool lookup",
        "startTimeUnixNano": "10",
        "endTimeUnixNano": "20",
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()],
        "status": {},
    }
    if parent is not None:
        span["parentSpanId"] = parent
    return span


def _write(path: Path, spans: list[Any]) -> None:
    request = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    path.write_text(json.dumps(request) + "\n")


def test_escaped_tool_message_result_is_still_read(tmp_path: Path) -> None:
    """A GenAI result spelling ``"tool"`` with an escape is decoded, not kept as text."""
    path = tmp_path / "t.jsonl"
    # every "tool" spelled with escapes: no "ool" in the text
    result = r'{"type": "t\u006f\u006fl", "t\u006f\u006fl_call_id": "c9", "content": "esc", '
    result += r'"status": "error"}'
    assert "ool" not in result
    tool = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "lookup",
        "gen_ai.tool.call.arguments": '{"q": 12345678901234567890123}',
        "gen_ai.tool.call.result": result,
    }
    plain = {
        **tool,
        "gen_ai.tool.call.arguments": '{"q": 1}',  # not a retry of the failed call
        "gen_ai.tool.call.result": '{"ok": true, "detail": "no message"}',
    }
    _write(
        path,
        [
            _span("00000000000000a1", "00000000000000f0", tool),
            _span("00000000000000a2", "00000000000000f0", plain),
            _span("00000000000000f0", None, {"gen_ai.agent.name": "top"}),
        ],
    )
    [(_, calls)] = list(OtlpJsonReader(path).iter_trace_calls())
    escaped, kept = calls
    assert (escaped.result, escaped.id, escaped.status, escaped.error) == (
        "esc",
        "c9",
        "error",
        "esc",
    )
    assert escaped.args == {"q": 12345678901234567890123}
    assert type(escaped.args["q"]) is int
    assert kept.result == '{"ok": true, "detail": "no message"}' and kept.status == "ok"
    assert {call.agent for call in calls} == {"top"}


def test_ids_in_every_accepted_spelling(tmp_path: Path) -> None:
    """Upper-case hex and base64 ids read as lowercase hex; a malformed id is named."""
    path = tmp_path / "t.jsonl"
    _write(
        path,
        [
            _span("00000000000000AB", None, {}, trace_id="CD" * 16),
            _span("AAAAAAAAAKs=", None, {}),  # base64 of 0x00000000000000ab
            _span("0x000000000000ab", None, {}),  # int(..., 16) reads it: lowercased as ever
            _span("00000000000000zz", None, {}),
        ],
    )
    reader = OtlpJsonReader(path)
    views = list(reader.iter_spans())
    assert [(v.trace_id, v.span_id) for v in views] == [
        ("cd" * 16, "00000000000000ab"),
        ("ab" * 16, "00000000000000ab"),
        ("ab" * 16, "0x000000000000ab"),
    ]
    [error] = reader.errors
    assert "span 3 skipped: spanId '00000000000000zz' is neither 16 hex digits" in error.message
