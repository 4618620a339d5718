"""Resolving a sample before scoring (harness/resolve.py, harness/labels.py): ``$ref`` layers,
values, unresolved refs, absent optional calls, and the label checks."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import Expectation, Sample, SampleError, ToolCall
from harness.errors import RefError
from harness.labels import label_problems, order_edges, ref_layers
from harness.metrics import (
    NoUnexpectedToolCalls,
    ToolArgumentCorrectness,
    ToolCallAccuracy,
    ToolCallF1,
)
from harness.resolve import resolve_expectations, resolve_sample
from harness.values import Resolved, Unresolved


def ref(target: str) -> dict[str, str]:
    return {"$ref": target}


FIND = ToolCall(
    "find_order", {"email": "ada@example.com"}, result=json.dumps({"order_id": "ORD-7"})
)


def test_a_sample_without_refs_or_optional_calls_is_left_as_it_is() -> None:
    expected = [Expectation("a", {"x": 1}, label="a"), Expectation("b", after="a")]
    assert resolve_expectations(expected, [ToolCall("a")]) is expected
    sample = Sample(tool_calls=[ToolCall("a")], expected_tool_calls=expected)
    assert resolve_sample(sample) is sample


def test_a_result_ref_takes_the_value_the_paired_call_returned() -> None:
    expected = [
        Expectation("find_order", label="find"),
        Expectation("refund_order", {"order_id": ref("find.result.order_id")}),
    ]
    calls = [FIND, ToolCall("refund_order", {"order_id": "ORD-7"})]
    resolved = resolve_expectations(expected, calls)
    value = resolved[1].args["order_id"]
    assert isinstance(value, Resolved) and (value.value, value.call) == ("ORD-7", 0)
    assert (
        ToolCallAccuracy().evaluate(Sample(tool_calls=calls, expected_tool_calls=resolved)).value
        == 1.0
    )
    wrong = [FIND, ToolCall("refund_order", {"order_id": "ORD-1050"})]
    score = ToolCallAccuracy().evaluate(
        resolve_sample(Sample(tool_calls=wrong, expected_tool_calls=expected))
    )
    assert score.value == 0.5
    (issue,) = [i for i in score.details.issues if i.code == "wrong_args"]
    assert "order_id='ORD-1050'" in issue.message and "'ORD-7'" in issue.message


def test_args_refs_and_list_paths() -> None:
    search = ToolCall("search", {"q": "cable"}, result=[{"sku": "S-1"}, {"sku": "S-2"}])
    expected = [
        Expectation("search", label="s"),
        Expectation("buy", {"sku": ref("s.result.1.sku"), "note": ref("s.args.q")}),
    ]
    calls = [search, ToolCall("buy", {"sku": "S-2", "note": "cable"})]
    assert (
        ToolCallAccuracy()
        .evaluate(resolve_sample(Sample(tool_calls=calls, expected_tool_calls=expected)))
        .value
        == 1.0
    )


def test_layers_follow_the_refs() -> None:
    expected = [
        Expectation("c", {"v": ref("b.result")}),
        Expectation("b", {"v": ref("a.result")}, label="b"),
        Expectation("a", label="a"),
        Expectation("d"),
    ]
    assert ref_layers(expected) == [[2, 3], [1], [0]]
    calls = [
        ToolCall("a", result="1"),
        ToolCall("b", {"v": 1}, result="2"),
        ToolCall("c", {"v": "2"}),
    ]
    resolved = resolve_sample(Sample(tool_calls=calls, expected_tool_calls=expected[:3]))
    assert ToolCallAccuracy().evaluate(resolved).value == 1.0  # "1" stands for 1 and "1"


def test_a_ref_to_a_label_paired_with_no_call_fails_that_argument() -> None:
    expected = [
        Expectation("find_order", {"email": "x"}, label="find"),
        Expectation("refund", {"id": ref("find.result.order_id")}),
    ]
    sample = resolve_sample(
        Sample(tool_calls=[FIND, ToolCall("refund", {"id": "ORD-7"})], expected_tool_calls=expected)
    )
    value = sample.expected_tool_calls[1].args["id"]
    assert isinstance(value, Unresolved) and value.why == "no call was paired with 'find'"
    score = ToolCallAccuracy().evaluate(sample)
    assert "unresolved_ref" in score.codes
    assert any(
        "$ref find.result.order_id is unresolved: no call was paired with 'find'" in i.message
        for i in score.details.issues
    )


@pytest.mark.parametrize(
    ("source", "why"),
    [
        (
            ToolCall("find_order", result='{"id": 1}'),
            "the result of call #1 find_order has no 'order_id'",
        ),
        (ToolCall("find_order", status="error", error="boom"), "call #1 find_order failed: boom"),
        (
            ToolCall("find_order", status="requested"),
            "call #1 find_order was requested but never executed",
        ),
        (
            ToolCall("find_order", status="interrupted"),
            "call #1 find_order was interrupted before it returned",
        ),
    ],
)
def test_a_source_call_without_the_value_leaves_the_ref_unresolved(
    source: ToolCall, why: str
) -> None:
    expected = [
        Expectation("find_order", label="find"),
        Expectation("refund", {"id": ref("find.result.order_id")}),
    ]
    resolved = resolve_expectations(expected, [source, ToolCall("refund", {"id": 1})])
    value = resolved[1].args["id"]
    assert isinstance(value, Unresolved) and value.why == why


def test_a_path_into_a_result_that_is_not_json_is_an_error_naming_it() -> None:
    expected = [
        Expectation("lookup", label="look"),
        Expectation("add", {"a": ref("look.result.value")}),
    ]
    calls = [ToolCall("lookup", result="first"), ToolCall("add", {"a": 1})]
    with pytest.raises(RefError) as info:
        resolve_expectations(expected, calls)
    assert str(info.value) == (
        "$ref look.result.value: the result of call #1 lookup (paired with 'look') is not a JSON "
        "object or array, so it has no value: 'first'"
    )
    assert (info.value.label, info.value.path, info.value.result) == (
        "look",
        "look.result.value",
        "first",
    )


def test_the_whole_result_is_its_text_when_it_is_not_json() -> None:
    expected = [
        Expectation("lookup", label="look"),
        Expectation("say", {"text": ref("look.result")}),
    ]
    calls = [ToolCall("lookup", result="first"), ToolCall("say", {"text": "first"})]
    assert (
        ToolCallAccuracy()
        .evaluate(resolve_sample(Sample(tool_calls=calls, expected_tool_calls=expected)))
        .value
        == 1.0
    )


def test_resolution_is_idempotent() -> None:
    expected = [
        Expectation("find_order", label="find"),
        Expectation("refund", {"id": ref("find.result.order_id")}, optional=True),
    ]
    calls = [FIND, ToolCall("refund", {"id": "ORD-7"})]
    once = resolve_expectations(expected, calls)
    assert resolve_expectations(once, calls) == once


# --- optional expectations -----------------------------------------------------------------


def test_an_absent_optional_call_costs_nothing_and_a_present_one_counts() -> None:
    expected = [Expectation("search"), Expectation("notify", optional=True)]
    absent = resolve_sample(Sample(tool_calls=[ToolCall("search")], expected_tool_calls=expected))
    assert [e.name for e in absent.expected_tool_calls] == ["search"]
    for metric in (
        ToolCallAccuracy(),
        ToolCallF1(),
        NoUnexpectedToolCalls(),
        ToolArgumentCorrectness(),
    ):
        assert metric.evaluate(absent).value == 1.0, metric.name
    present = resolve_sample(
        Sample(tool_calls=[ToolCall("search"), ToolCall("notify")], expected_tool_calls=expected)
    )
    assert [e.name for e in present.expected_tool_calls] == ["search", "notify"]
    assert ToolCallAccuracy().evaluate(present).value == 1.0


def test_a_required_expectation_wins_a_call_an_optional_one_also_accepts() -> None:
    expected = [Expectation("f", optional=True), Expectation("f", {"x": 1})]
    sample = resolve_sample(
        Sample(tool_calls=[ToolCall("f", {"x": 1})], expected_tool_calls=expected)
    )
    assert [dict(e.args) for e in sample.expected_tool_calls] == [{"x": 1}]
    assert ToolCallAccuracy().evaluate(sample).value == 1.0


def test_dropping_keeps_the_order_through_the_dropped_call() -> None:
    expected = [
        Expectation("a", label="a"),
        Expectation("o", label="o", after="a", optional=True),
        Expectation("p", label="p", after="o", optional=True),
        Expectation("b", after=["p", "o"]),
    ]
    resolved = resolve_expectations(expected, [ToolCall("a"), ToolCall("b")])
    assert [(e.name, e.after) for e in resolved] == [("a", ()), ("b", ("a",))]


@st.composite
def optional_samples(draw: st.DrawFn) -> tuple[list[Expectation], list[ToolCall]]:
    n = draw(st.integers(1, 5))
    expected = [
        Expectation(
            draw(st.sampled_from("ab")),
            {} if (x := draw(st.sampled_from([None, 1, 2]))) is None else {"x": x},
            optional=draw(st.booleans()),
        )
        for _ in range(n)
    ]
    calls = [
        ToolCall(draw(st.sampled_from("ab")), {"x": draw(st.sampled_from([1, 2]))})
        for _ in range(draw(st.integers(0, 5)))
    ]
    return expected, calls


@settings(max_examples=300, deadline=None)
@given(optional_samples())
def test_absent_means_left_out_by_a_matching_pairing_the_most_required_calls(
    sample: tuple[list[Expectation], list[ToolCall]],
) -> None:
    expected, calls = sample
    best_required = best_total = 0
    options = [[None, *[j for j, c in enumerate(calls) if e.accepts(c)]] for e in expected]
    for choice in itertools.product(*options):
        taken = [j for j in choice if j is not None]
        if len(taken) == len(set(taken)):
            required = sum(
                1 for e, j in zip(expected, choice, strict=True) if j is not None and not e.optional
            )
            best_required = max(best_required, required)
            best_total = max(best_total, len(taken))
    kept = resolve_expectations(expected, calls)
    assert [e for e in expected if not e.optional] == [e for e in kept if not e.optional]
    present = [e for e in kept if e.optional]
    matched = (
        ToolCallAccuracy().evaluate(Sample(tool_calls=calls, expected_tool_calls=kept)).value
        * len(kept)
        if kept
        else 0
    )
    assert round(matched) == best_required + len(present)  # every present optional is matched ...
    assert best_required + len(present) == best_total  # ... by a maximum matching


# --- labels -----------------------------------------------------------------------------------


def messages(expected: list[Expectation]) -> list[tuple[int, str, str, str]]:
    return [
        (p.index, p.field, p.pointer, p.message)
        for p in label_problems(expected, name="tool_calls")
    ]


def test_label_problems_are_located_and_suggest_the_nearest_label() -> None:
    expected = [
        Expectation("a", label="stock"),
        Expectation("b", label="stock"),
        Expectation("c", after=["stok", "zzz"]),
        Expectation("d", {"q": ref("stok.result")}, label="d"),
        Expectation("e", after="e", label="e"),
        Expectation("f", {"q": {"k": ref("f.args.q")}}, label="f"),
    ]
    assert messages(expected) == [
        (1, "id", "", "duplicate label 'stock' (first given to tool_calls[0])"),
        (2, "after", "", "unknown label 'stok' — did you mean 'stock'?"),
        (2, "after", "", "unknown label 'zzz' (labels here: d, e, f, stock)"),
        (3, "args", "/q", "$ref stok.result: unknown label 'stok' — did you mean 'stock'?"),
        (4, "after", "", "an expected call cannot come after itself ('e')"),
        (5, "args", "/q/k", "$ref f.args.q: an expected call cannot take a value from itself"),
    ]


def test_cycles_are_problems() -> None:
    after = [
        Expectation("a", label="x", after="z"),
        Expectation("b", label="y", after="x"),
        Expectation("c", label="z", after="y"),
    ]
    ((index, field, _, message),) = messages(after)
    assert (index, field) == (0, "after")
    assert message == "cycle 'x' → 'y' → 'z' → 'x': no order of the calls can keep it"
    refs = [
        Expectation("a", {"v": ref("y.result")}, label="x"),
        Expectation("b", {"v": ref("x.result")}, label="y"),
    ]
    assert messages(refs) == [
        (
            0,
            "args",
            "/v",
            "$ref y.result: cycle 'x' → 'y' → 'x': each value needs the other call first",
        )
    ]


def test_a_sample_refuses_bad_labels() -> None:
    with pytest.raises(
        SampleError,
        match=r"expected_tool_calls\[1\]\.after: unknown label 'stok' — did you mean 'stock'\?",
    ):
        Sample(
            tool_calls=[],
            expected_tool_calls=[Expectation("a", label="stock"), Expectation("b", after="stok")],
        )


def test_order_edges_are_sorted_and_unique() -> None:
    expected = [
        Expectation("a", label="a"),
        Expectation("b", label="b", after=["a", "a"]),
        Expectation("c", after=["b", "a"]),
    ]
    assert order_edges(expected) == [(0, 1), (0, 2), (1, 2)]
