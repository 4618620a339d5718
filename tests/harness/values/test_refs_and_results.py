"""``$ref`` syntax and its resolved forms, results read as values, and ``result:`` on an
expectation (docs/metrics.md, "Data flow" and "Results")."""

from __future__ import annotations

import json

import pytest

from harness import Expectation, MatcherError, ToolCall
from harness.errors import RefError
from harness.values import (
    ABSENT,
    OneOf,
    Ref,
    Resolved,
    Unresolved,
    check_args,
    compile_pattern,
    refs_in,
    result_forms,
    substitute,
)


@pytest.mark.parametrize(
    ("target", "label", "source", "path"),
    [
        ("find.result", "find", "result", ()),
        ("find.result.order_id", "find", "result", ("order_id",)),
        ("search.result.items.0.sku", "search", "result", ("items", "0", "sku")),
        ("look_up-2.args.customer_id", "look_up-2", "args", ("customer_id",)),
    ],
)
def test_a_ref_parses_label_source_and_path(
    target: str, label: str, source: str, path: tuple[str, ...]
) -> None:
    ref = compile_pattern({"$ref": target})
    assert isinstance(ref, Ref)
    assert (ref.label, ref.source, ref.path) == (label, source, path)
    assert ref.describe() == f"$ref {target}" and ref.to_json() == {"$ref": target}


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("find", "must start with an expected call's label"),
        ("1find.result", "must start with an expected call's label"),
        ("find.output.x", "after the label comes 'args' or 'result', found 'output'"),
        ("find.args", "names no argument: write find.args.<argument>"),
        ("find.result..id", "has an empty part"),
        ("find.result.", "has an empty part"),
        (3, "$ref takes a string"),
    ],
)
def test_a_malformed_ref_is_a_matcher_error_at_its_path(target: object, message: str) -> None:
    with pytest.raises(MatcherError, match=message.replace("$", r"\$").replace(".", r"\.")) as info:
        compile_pattern({"id": {"$ref": target}})
    assert info.value.path == "/id/$ref"


def test_a_ref_beside_another_key_is_refused() -> None:
    with pytest.raises(MatcherError, match="one matcher per mapping"):
        compile_pattern({"$ref": "a.result", "$regex": "x"})


def test_an_unresolved_ref_refuses_to_match() -> None:
    with pytest.raises(RefError, match=r"\$ref a\.result was not resolved"):
        compile_pattern({"$ref": "a.result"}).matches("x")


def test_refs_are_found_at_any_depth_and_substituted() -> None:
    pattern = compile_pattern(
        {
            "order": {"id": {"$ref": "a.result.id"}},
            "tags": [{"$one_of": [{"$ref": "b.result"}, "x"]}],
        }
    )
    found = [(where, ref.target) for where, ref in refs_in(pattern)]
    assert found == [("/order/id", "a.result.id"), ("/tags/0/$one_of/0", "b.result")]
    resolved = substitute(pattern, lambda ref: Resolved(ref, ref.label.upper()))
    assert resolved.matches({"order": {"id": "A"}, "tags": ["B"]})
    assert resolved.matches({"order": {"id": "A"}, "tags": ["x"]})
    assert not resolved.matches({"order": {"id": "B"}, "tags": ["B"]})
    assert list(refs_in(resolved)) == []
    plain = compile_pattern({"$one_of": ["x", "y"]})
    assert substitute(plain, lambda ref: Resolved(ref, 1)) is plain  # nothing to rebuild


def test_resolved_and_unresolved_diffs() -> None:
    ref = Ref("find.result.order_id")
    resolved = check_args({"order_id": Resolved(ref, "ORD-1")}, {"order_id": "ORD-2"})
    (diff,) = resolved.diffs
    assert (diff.code, diff.expected, diff.actual) == ("wrong_args", "ORD-1", "ORD-2")
    assert diff.message == "order_id='ORD-2', expected 'ORD-1' ($ref find.result.order_id)"
    why = "no call was paired with 'find'"
    (diff,) = check_args({"order_id": Unresolved(ref, why)}, {"order_id": "ORD-1"}).diffs
    assert diff.code == "unresolved_ref"
    assert diff.message == (
        "order_id: $ref find.result.order_id is unresolved: no call was paired with 'find'"
    )


@pytest.mark.parametrize(
    ("result", "forms"),
    [
        ('{"id": 1}', ({"id": 1},)),
        ('  [1, "a"]', ([1, "a"],)),
        ("3", ("3", 3)),
        ("-2.5", ("-2.5", -2.5)),
        ("true", ("true", True)),
        ("null", ("null", None)),
        ("ORD-1", ("ORD-1",)),
        ('"quoted"', ('"quoted"',)),
        ("{not json", ("{not json",)),
        ({"id": 1}, ({"id": 1},)),
        (None, (None,)),
    ],
)
def test_a_result_is_read_as_its_structure_or_its_text_and_number(
    result: object, forms: tuple[object, ...]
) -> None:
    assert result_forms(result) == forms


def call(result: object, **kwargs: object) -> ToolCall:
    return ToolCall("get_order", {"order_id": "ORD-1"}, result=result, **kwargs)  # type: ignore[arg-type]


def test_an_expected_result_is_part_of_whether_a_call_matches() -> None:
    shipped = Expectation(
        "get_order", {"order_id": "ORD-1"}, result={"$subset": {"status": "shipped"}}
    )
    assert shipped.accepts(call(json.dumps({"status": "shipped", "item": "cable"})))
    assert not shipped.accepts(call(json.dumps({"status": "open"})))
    assert shipped.scoped and shipped.exact is None  # never settled by argument bytes alone
    assert Expectation("add", result=3).accepts(ToolCall("add", result="3"))  # ToolNode's text
    assert Expectation("add", result="3").accepts(ToolCall("add", result="3"))
    assert not Expectation("add", result=4).accepts(ToolCall("add", result="3"))


def test_a_wrong_result_is_a_wrong_result_diff_under_the_arguments() -> None:
    exp = Expectation("get_order", {"order_id": "ORD-1"}, result={"$subset": {"status": "shipped"}})
    check = exp.check(call('{"status": "open"}'))
    (diff,) = check.diffs
    assert (check.correct, check.total) == (1, 1)  # the result is not an argument
    assert (diff.path, diff.code) == ("result/status", "wrong_result")
    assert diff.message == "result.status='open', expected 'shipped'"
    assert not exp.check(call('{"status": "shipped"}')).diffs


def test_the_new_fields_are_keyword_only_and_checked() -> None:
    exp = Expectation("a", label="find", after="look", optional=True, result=ABSENT)
    assert (exp.label, exp.after, exp.optional) == ("find", ("look",), True)
    assert Expectation("a").extra is None  # a plain call carries nothing more
    for bad, message in [
        ({"label": "has.dot"}, "label must be"),
        ({"after": [3]}, "after names labels"),
        ({"after": {"a": 1}}, "after takes a label or a list"),
        ({"optional": "yes"}, "optional must be true or false"),
    ]:
        with pytest.raises(ValueError, match=message):
            Expectation("a", **bad)  # type: ignore[arg-type]


def test_evolve_keeps_what_it_is_not_told_to_change() -> None:
    exp = Expectation("a", {"x": 1}, label="l", after="m", optional=True, result=2)
    copy = exp.evolve(after=())
    assert (copy.label, copy.after, copy.optional, copy.result, dict(copy.args)) == (
        "l",
        (),
        True,
        2,
        {"x": 1},
    )


def test_to_dict_round_trips_through_the_mapping_form() -> None:
    exp = Expectation(
        "a",
        {"x": {"$ref": "m.result.x"}},
        label="l",
        after=["m"],
        optional=True,
        result={"$any": True},
    )
    assert Expectation.coerce(exp.to_dict()) == exp
    # a LangChain call's `id` is its call id, not a label
    assert Expectation.coerce({"name": "a", "args": {}, "id": "call_1"}).label is None


def test_one_of_holding_a_ref_describes_it() -> None:
    pattern = OneOf([{"$ref": "a.result"}, "x"])
    assert pattern.describe() == "$one_of [$ref a.result, 'x']"


def test_the_result_is_a_pairing_condition_in_every_metric_that_pairs_by_it() -> None:
    from harness import Sample
    from harness.metrics import (
        NoUnexpectedToolCalls,
        ToolArgumentCorrectness,
        ToolCallAccuracy,
        ToolCallF1,
        ToolCallOrder,
        ToolCallSequenceAccuracy,
    )

    expected = [Expectation("get", {"id": 1}, result={"$subset": {"status": "shipped"}})]
    right = [ToolCall("get", {"id": 1}, result='{"status": "shipped"}')]
    wrong = [ToolCall("get", {"id": 1}, result='{"status": "open"}')]
    metrics = [
        ToolCallAccuracy(),
        NoUnexpectedToolCalls(),
        ToolCallOrder(),
        ToolCallF1(),
        ToolArgumentCorrectness(),
        ToolCallSequenceAccuracy(order="flexible"),
    ]
    for metric in metrics:
        assert metric.evaluate(Sample(tool_calls=right, expected_tool_calls=expected)).value == 1.0
        assert metric.evaluate(Sample(tool_calls=wrong, expected_tool_calls=expected)).value == 0.0
