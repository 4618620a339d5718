"""Spans with malformed attributes: the span tree of a real orders-agent run (SpanEmitter,
content captured), replayed through the SDK with hypothesis-chosen values in place of the
attributes the reader reads. The app's thread never sees an exception, every trace still gets
one result per rule, and nothing is counted as an error of the reader."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.trace import set_span_in_context

from harness.online import TraceResult
from tests.harness.online.support import RULES, Pipelines, RulesPolicy, run_orders
from tests.harness.online.test_processor import LOOKUP, REFUND


@dataclass(frozen=True)
class _Span:
    name: str
    attributes: dict[str, Any]
    children: tuple[_Span, ...]


def _template() -> _Span:
    pipes = Pipelines()
    try:
        run_orders(pipes.tracer_provider, "Refund 10 EUR on ORD-1042", LOOKUP, REFUND)
        spans = sorted(pipes.spans.get_finished_spans(), key=lambda s: s.start_time or 0)
    finally:
        pipes.close()
    kids: dict[int | None, list[Any]] = {}
    for span in spans:
        kids.setdefault(span.parent.span_id if span.parent else None, []).append(span)

    def tree(span: Any) -> _Span:
        children = tuple(tree(child) for child in kids.get(span.context.span_id, []))
        return _Span(span.name, dict(span.attributes or {}), children)

    (root,) = kids[None]
    return tree(root)


def _flat(span: _Span) -> list[_Span]:
    return [span, *(s for child in span.children for s in _flat(child))]


JSONISH = st.sampled_from(
    ["{", "[]", "null", '{"a": 1}', '[{"role": 5}]', '[{"role": "user", "parts": 7}]', ""]
)
VALUES = st.one_of(
    JSONISH,
    st.text(max_size=12),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True),
    st.booleans(),
    st.lists(st.text(max_size=4), max_size=3),
    st.lists(st.integers(), max_size=3),
)


def _replay(
    tracer: Any, span: _Span, changes: dict[int, dict[str, Any]], index: list[int], context: Any
) -> None:
    position = index[0]
    index[0] += 1
    attributes = {**span.attributes, **changes.get(position, {})}
    live = tracer.start_span(span.name, context=context, attributes=attributes)
    inner = set_span_in_context(live)
    for child in span.children:
        _replay(tracer, child, changes, index, inner)
    live.end()


@pytest.fixture(scope="module")
def template() -> _Span:
    return _template()


def _changes(data: st.DataObject, template: _Span) -> dict[int, dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    for position, span in enumerate(_flat(template)):
        keys = sorted(span.attributes)
        chosen = data.draw(st.lists(st.sampled_from(keys), max_size=4, unique=True)) if keys else []
        out[position] = {key: data.draw(VALUES) for key in chosen}
    return out


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_malformed_attributes_are_read_never_raised(template: _Span, data: st.DataObject) -> None:
    changes = _changes(data, template)
    pipes = Pipelines()
    seen: list[TraceResult] = []
    try:
        processor = pipes.processor([RulesPolicy("support")], on_result=seen.append)
        _replay(pipes.tracer_provider.get_tracer("app"), template, changes, [0], None)
        assert processor.force_flush(10_000)
        assert pipes.counts("harness.rule.errors") == {}
        assert len(seen) == len(RULES)
        assert len(pipes.events()) == len(RULES)
    finally:
        pipes.close()


def test_a_token_count_of_unicode_digits_reads_as_unknown(template: _Span) -> None:
    """Found by the property above: ``'¹'.isdigit()`` is true, ``int('¹')`` raises."""
    pipes = Pipelines()
    seen: list[TraceResult] = []
    try:
        processor = pipes.processor([RulesPolicy("support")], on_result=seen.append)
        changes = {1: {"gen_ai.usage.input_tokens": "¹", "gen_ai.usage.output_tokens": "²"}}
        _replay(pipes.tracer_provider.get_tracer("app"), template, changes, [0], None)
        assert processor.force_flush(10_000)
        assert pipes.counts("harness.rule.errors") == {}
        assert len(seen) == len(RULES)
    finally:
        pipes.close()
