"""The reader's cheaper paths give what the plain ones give: same values, same errors.

* ``span_fields`` with the ids of a line remembered reads each span as it reads it alone;
* a line read in one pass (every span good) or span by span (some bad) gives the spans and
  errors that one span per line gives;
* the joiner's test for its single pass answers as the scope finder does.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.tracing.otel.test_joining_single_pass import PARENTS, _traces
from tracing.otel.conventions import classify
from tracing.otel.joining import _all_top_level_successes, _gather, _scope_finder
from tracing.otel.span_view import SpanView
from tracing.otlp.decode import BadSpan, span_fields
from tracing.otlp.reader import OtlpJsonReader

# --- ids remembered per line -------------------------------------------------------------------


def _id(draw: Any, size: int) -> Any:
    raw = draw(st.binary(min_size=size, max_size=size))
    return draw(
        st.sampled_from(
            [
                raw.hex(),
                raw.hex().upper(),
                base64.b64encode(raw).decode(),
                "0x" + raw.hex()[2:],
                raw.hex()[:-1] + "z",
                raw.hex()[:6],
                "",
                None,
                7,
                [raw.hex()],
            ]
        )
    )


@st.composite
def _spans(draw: Any) -> list[Any]:
    """Spans whose ids repeat (a trace id, a parent's id) in every spelling, some wrong."""
    trace_ids = [_id(draw, 16) for _ in range(2)]
    span_ids = [_id(draw, 8) for _ in range(4)]
    spans: list[Any] = []
    for _ in range(draw(st.integers(1, 8))):
        span: dict[str, Any] = {
            "traceId": draw(st.sampled_from(trace_ids)),
            "spanId": draw(st.sampled_from([*span_ids, trace_ids[0]])),  # a trace id: wrong
            "name": "s",
            "startTimeUnixNano": draw(st.sampled_from(["1", "x", 2])),
            "attributes": [{"key": "k", "value": {"stringValue": "v"}}],
        }
        if draw(st.booleans()):
            span["parentSpanId"] = draw(st.sampled_from(span_ids))
        spans.append(span)
    return spans


def _read(span: Any, trace_ids: dict[str, str], span_ids: dict[str, str]) -> Any:
    try:
        return span_fields(span, trace_ids, span_ids)
    except (BadSpan, ValueError, TypeError) as exc:
        return type(exc), str(exc)


@settings(max_examples=300, deadline=None)
@given(_spans())
def test_remembered_ids_read_as_each_span_alone(spans: list[Any]) -> None:
    """The same fields, or the same error, as a span read with nothing remembered."""
    trace_ids: dict[str, str] = {}
    span_ids: dict[str, str] = {}
    for span in spans:
        assert _read(span, trace_ids, span_ids) == _read(span, {}, {})
    assert all(len(key) in (24, 32) for key in trace_ids)  # good trace ids only
    assert all(len(key) in (12, 16) for key in span_ids)


def _write_lines(path: Path, lines: list[list[Any]]) -> None:
    text = "".join(
        json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n"
        for spans in lines
    )
    path.write_text(text)


@settings(max_examples=150, deadline=None)
@given(_spans())
def test_a_line_reads_as_its_spans_one_per_line(tmp_path_factory: Any, spans: list[Any]) -> None:
    """One pass when every span is good, span by span otherwise: the views and the errors
    are those of the same spans written one per line."""
    folder = tmp_path_factory.mktemp("lines")
    together, apart = folder / "together.jsonl", folder / "apart.jsonl"
    _write_lines(together, [spans])
    _write_lines(apart, [[span] for span in spans])
    one, each = OtlpJsonReader(together), OtlpJsonReader(apart)
    assert list(one.iter_spans()) == list(each.iter_spans())
    # "path:N: span 0 skipped: why" one per line is "path:1: span N-1 skipped: why" together
    assert [(e.line, e.message) for e in one.errors] == [
        (1, e.message.replace("span 0 ", f"span {e.line - 1} ", 1)) for e in each.errors
    ]


# --- the joiner's single pass ------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(_traces())
def test_the_single_pass_test_answers_as_the_scope_finder(spans: list[SpanView]) -> None:
    _, executions, links, _ = _gather([(s, classify(s.attributes)) for s in spans], PARENTS)
    scope_of = _scope_finder({e.span.span_id: e for e in executions}, links)
    expected = all(e.status == "ok" and scope_of(e.span) is None for e in executions)
    assert _all_top_level_successes(executions, links) is expected
