"""Value equivalence, matchers, pattern compilation and argument diffs (docs/metrics.md)."""

from __future__ import annotations

import math
import pickle
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import MatcherError
from harness.values import (
    ABSENT,
    Absent,
    AnyValue,
    Approx,
    ArgDiff,
    Contains,
    DictPattern,
    ICase,
    ListPattern,
    Matcher,
    OneOf,
    OptionalArg,
    Regex,
    Subset,
    Type,
    Unordered,
    args_equal,
    args_match,
    check_args,
    compile_args,
    compile_pattern,
    describe_pattern,
    equivalent,
    match_value,
    pattern_to_json,
    pointer_token,
)

NAN = float("nan")


def matches(pattern: Any, actual: Any) -> bool:
    """Compile a pattern the way expectations do, then match one top-level value."""
    return match_value(compile_pattern(pattern), actual)


# --------------------------------------------------------------------------- equivalence table


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        (3, 3),
        (3, 3.0),
        (3.0, 3),
        (3, Decimal("3.00")),
        (Decimal("3.00"), 3.0),
        (Fraction(1, 2), 0.5),
        (Decimal("0.5"), Fraction(1, 2)),
        (0.1 + 0.2, 0.1 + 0.2),
        (-0.0, 0.0),
        (True, True),
        (False, False),
        ("Berlin", "Berlin"),
        ("", ""),
        (None, None),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
        ([1, "x", None], [1, "x", None]),
        ([1, 2], (1, 2)),
        ((1, 2), [1, 2]),
        ({"a": [{"b": 1.5}]}, {"a": [{"b": 1.5}]}),
        ({"a": Decimal("1.0")}, {"a": Decimal("1.00")}),
        ([], []),
        ({}, {}),
    ],
)
def test_equivalent_accepts(expected: Any, actual: Any) -> None:
    assert equivalent(expected, actual)


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        (0.1 + 0.2, 0.3),
        (NAN, NAN),
        (NAN, 1.0),
        (1.0, NAN),
        (Decimal("NaN"), Decimal("NaN")),
        (Decimal("sNaN"), 1),
        (1, Decimal("sNaN")),
        (1, True),
        (True, 1),
        (0, False),
        (False, 0),
        (1.0, True),
        (True, "true"),
        ("Berlin", "berlin"),
        ("Berlin", "Berlin "),
        (" Berlin", "Berlin"),
        ("3", 3),
        (3, "3"),
        (None, "None"),
        (None, 0),
        (None, ""),
        ("", None),
        (None, []),
        ({}, None),
        # nested values compare strictly: types must agree
        ({"a": 3}, {"a": 3.0}),
        ({"a": 3.0}, {"a": 3}),
        ([3], [3.0]),
        ({"a": True}, {"a": 1}),
        ([1], [True]),
        ({"a": Decimal("3")}, {"a": 3}),
        ({"a": NAN}, {"a": NAN}),
        ({"a": None}, {}),
        ({}, {"a": None}),
        ({"a": 1}, {"a": 1, "b": 2}),
        ({"a": 1, "b": 2}, {"a": 1}),
        ([1, 2], [2, 1]),
        ([1, 2], [1, 2, 3]),
        ([1, 2], {"0": 1, "1": 2}),
        ({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}}),
        ({"a": "x"}, {"a": "X"}),
    ],
)
def test_equivalent_rejects(expected: Any, actual: Any) -> None:
    assert not equivalent(expected, actual)


def test_nan_does_not_raise_anywhere() -> None:
    assert not matches(NAN, NAN)
    assert not matches({"$approx": 1.0}, NAN)
    assert not matches({"$one_of": [1.0, 2.0]}, NAN)
    assert matches({"$type": "number"}, NAN)


def test_top_level_rules_apply_to_every_argument_not_nested_ones() -> None:
    pattern = compile_args({"n": 3, "flag": True, "obj": {"n": 3}})
    assert args_match(pattern, {"n": 3.0, "flag": True, "obj": {"n": 3}})
    assert not args_match(pattern, {"n": 3.0, "flag": 1, "obj": {"n": 3}})
    assert not args_match(pattern, {"n": 3, "flag": True, "obj": {"n": 3.0}})


# --------------------------------------------------------------------------- matchers


@pytest.mark.parametrize(
    ("pattern", "good", "bad"),
    [
        ({"$any": True}, ["x", None, 0, {}, []], [ABSENT]),
        ({"$absent": True}, [ABSENT], [None, "", 0, False]),
        ({"$regex": "^Ber"}, ["Berlin", "Bern"], ["berlin", "Aberdeen", 3, None, ABSENT]),
        ({"$regex": "lin"}, ["Berlin"], ["Bern"]),
        ({"$contains": "erl"}, ["Berlin", ["erl"]], ["Bern", ["Berlin"], None, ABSENT]),
        ({"$contains": 2}, [[1, 2, 3], (2,), [2.0]], [[1, 3], "2", [True], {"2": 2}, ABSENT]),
        ({"$contains": {"$regex": "^B"}}, [["Aa", "Berlin"]], [["Aa"], "Berlin"]),
        ({"$icase": "berlin"}, ["BERLIN", "Berlin", "berlin"], ["Berlin ", "Bern", 1, ABSENT]),
        ({"$icase": "straße"}, ["STRASSE"], ["strase"]),
        ({"$approx": 3.1, "$tol": 0.01}, [3.1, 3.105, 3.09, Decimal("3.1")], [3.2, "3.1", True]),
        ({"$approx": 100, "$rel": 0.05}, [95, 105, 104.9], [94, 106, ABSENT]),
        ({"$approx": 1.0}, [1.0, 1.0000001], [1.001]),
        ({"$approx": 0, "$tol": 0}, [0, 0.0, -0.0], [1e-300]),
        ({"$approx": math.inf, "$tol": 1}, [math.inf], [-math.inf, 1e308]),
        ({"$one_of": ["tomorrow", "+1"]}, ["tomorrow", "+1"], ["Tomorrow", "", None, ABSENT]),
        ({"$one_of": [1, {"$regex": "^a"}]}, [1.0, Decimal(1), "abc"], ["b", True, 2]),
        ({"$one_of": [None, {"$absent": True}]}, [None, ABSENT], ["x"]),
        ({"$type": "string"}, ["", "x"], [1, None, ABSENT]),
        ({"$type": "integer"}, [0, -3], [True, 1.0, "1", ABSENT]),
        ({"$type": "number"}, [0, 1.5, Decimal("2")], [True, False, "1", None]),
        ({"$type": "boolean"}, [True, False], [0, 1, "true", None]),
        ({"$type": "object"}, [{}, {"a": 1}], [[], None, "{}"]),
        ({"$type": "array"}, [[], [1], (1,)], [{}, "[]", None]),
        ({"$type": "null"}, [None], [ABSENT, "", 0, "null"]),
        ({"$subset": {"a": 1}}, [{"a": 1}, {"a": 1.0, "b": 2}], [{"b": 2}, {"a": 2}, [], ABSENT]),
        (
            {"$subset": {"a": {"b": 1}}},
            [{"a": {"b": 1, "c": 2}, "d": 3}],
            [{"a": {"c": 2}}, {"a": 1}, {"a": {"b": 2}}],
        ),
        ({"$subset": {"a": {"$regex": "^x"}}}, [{"a": "xy", "b": 1}], [{"a": "yx"}]),
        ({"$subset": {"gone": {"$absent": True}}}, [{}, {"a": 1}], [{"gone": None}]),
        ({"$subset": {"a": [1, 2]}}, [{"a": [1, 2]}], [{"a": [2, 1]}, {"a": [1, 2, 3]}]),
        ({"$unordered": [1, 2, 2]}, [[2, 1, 2], [1, 2, 2], (2, 2, 1)], [[1, 2], [1, 1, 2], "122"]),
        ({"$unordered": []}, [[]], [[1], {}, ABSENT]),
        ({"$unordered": [{"a": 1}, {"a": 2}]}, [[{"a": 2}, {"a": 1}]], [[{"a": 2}, {"a": 2}]]),
        ({"$optional": "x"}, [ABSENT, "x"], ["y", None]),
        ({"$optional": {"$type": "integer"}}, [ABSENT, 3], ["3", None, True]),
        ({"$optional": None}, [ABSENT, None], ["None"]),
    ],
)
def test_matcher_truth_table(pattern: Any, good: list[Any], bad: list[Any]) -> None:
    compiled = compile_pattern(pattern)
    assert isinstance(compiled, Matcher)
    for value in good:
        assert match_value(compiled, value), f"{pattern} should match {value!r}"
    for value in bad:
        assert not match_value(compiled, value), f"{pattern} should not match {value!r}"


def test_unordered_needs_a_real_matching_not_a_greedy_scan() -> None:
    # A greedy scan gives "a" to $any first and then finds nothing for the literal "a".
    pattern = compile_pattern({"$unordered": [{"$any": True}, "a"]})
    assert match_value(pattern, ["a", "b"])
    assert match_value(pattern, ["b", "a"])
    assert not match_value(pattern, ["b", "c"])
    regexes = compile_pattern({"$unordered": [{"$regex": "a"}, {"$regex": "^ab$"}]})
    assert match_value(regexes, ["ab", "ba"])
    assert match_value(regexes, ["ba", "ab"])
    assert not match_value(regexes, ["ba", "ca"])


def test_python_matcher_objects_equal_their_dollar_forms() -> None:
    pairs: list[tuple[Matcher, Any]] = [
        (AnyValue(), {"$any": True}),
        (Absent(), {"$absent": True}),
        (Regex("^Ber"), {"$regex": "^Ber"}),
        (Contains("er"), {"$contains": "er"}),
        (ICase("berlin"), {"$icase": "berlin"}),
        (Approx(3.1, tol=0.01), {"$approx": 3.1, "$tol": 0.01}),
        (Approx(3.1, rel=0.05), {"$approx": 3.1, "$rel": 0.05}),
        (OneOf(["a", {"$regex": "b"}]), {"$one_of": ["a", {"$regex": "b"}]}),
        (Type("string"), {"$type": "string"}),
        (Subset({"a": {"b": 1}}), {"$subset": {"a": {"b": 1}}}),
        (Unordered([1, {"k": 2}]), {"$unordered": [1, {"k": 2}]}),
        (OptionalArg(Regex("x")), {"$optional": {"$regex": "x"}}),
    ]
    for obj, spelled in pairs:
        compiled = compile_pattern(spelled)
        assert obj == compiled
        assert hash(obj) == hash(compiled)
        assert compile_pattern(pattern_to_json(obj)) == obj  # round trip through $ form
        assert repr(obj).startswith(type(obj).__name__ + "(")


def test_matchers_are_immutable_and_hashable() -> None:
    matcher = OneOf([{"a": [1, 2]}, "x"])
    assert {matcher: 1}[OneOf([{"a": [1, 2]}, "x"])] == 1
    with pytest.raises(AttributeError):
        matcher.options = ()  # type: ignore[misc]
    assert hash(Subset({"b": 1, "a": 2})) == hash(Subset({"a": 2, "b": 1}))


def test_python_objects_work_inside_literal_args() -> None:
    pattern = compile_args({"filters": {"city": Regex("^Ber"), "n": 3}})
    assert isinstance(pattern["filters"], DictPattern)
    assert args_match(pattern, {"filters": {"n": 3, "city": "Berlin"}})
    assert not args_match(pattern, {"filters": {"n": 3, "city": "Paris"}})


# --------------------------------------------------------------------------- nesting


def test_matchers_nested_in_literal_dict_keep_the_same_key_set() -> None:
    pattern = compile_pattern({"city": {"$regex": "^Ber"}, "n": 3, "opt": {"$optional": 1}})
    assert isinstance(pattern, DictPattern)
    assert match_value(pattern, {"city": "Berlin", "n": 3})
    assert match_value(pattern, {"city": "Berlin", "n": 3, "opt": 1})
    assert not match_value(pattern, {"city": "Berlin", "n": 3, "opt": 2})
    assert not match_value(pattern, {"city": "Berlin", "n": 3, "extra": 0})
    assert not match_value(pattern, {"city": "Berlin"})
    # plain values next to a matcher are still nested, so strict
    assert not match_value(pattern, {"city": "Berlin", "n": 3.0})


def test_matchers_nested_in_literal_list_keep_order() -> None:
    pattern = compile_pattern([{"$any": True}, 2, [{"$type": "string"}]])
    assert isinstance(pattern, ListPattern)
    assert match_value(pattern, [None, 2, ["s"]])
    assert not match_value(pattern, [None, 2.0, ["s"]])
    assert not match_value(pattern, [2, None, ["s"]])
    assert not match_value(pattern, [None, 2])


def test_matchers_nested_deep_inside_matchers() -> None:
    pattern = compile_pattern(
        {
            "$one_of": [
                {"$subset": {"user": {"name": {"$icase": "ada"}}}},
                {"$unordered": [{"$approx": 1, "$tol": 0.1}, {"$type": "null"}]},
            ]
        }
    )
    assert match_value(pattern, {"user": {"name": "ADA", "id": 1}, "x": 2})
    assert match_value(pattern, [None, 1.05])
    assert not match_value(pattern, [None, 1.5])
    assert not match_value(pattern, {"user": {"name": "Bob"}})


def test_one_of_options_use_top_level_rules_but_nested_literals_stay_strict() -> None:
    pattern = compile_pattern({"$one_of": [3, {"n": 3}]})
    assert match_value(pattern, 3.0)
    assert match_value(pattern, {"n": 3})
    assert not match_value(pattern, {"n": 3.0})


def test_literal_mappings_without_dollar_keys_stay_plain_values() -> None:
    value = {"a": [1, {"b": None}], "c": "x"}
    compiled = compile_pattern(value)
    assert type(compiled) is dict
    assert compiled == value
    assert compile_pattern("x") == "x"


def test_compiling_a_compiled_pattern_changes_nothing() -> None:
    raw = {"a": {"$regex": "x"}, "b": {"c": {"$any": True}}, "d": [1, {"$absent": True}], "e": 1}
    once = compile_args(raw)
    assert compile_args(once) == once


def test_literal_escape_for_dollar_keys() -> None:
    pattern = compile_args({"query": {"$literal": {"$gt": 5}}})
    assert args_match(pattern, {"query": {"$gt": 5}})
    assert not args_match(pattern, {"query": {"$gt": 6}})
    assert compile_args(pattern) == pattern


# --------------------------------------------------------------------------- ABSENT vs None


def test_absent_is_not_none() -> None:
    assert not matches(None, ABSENT)
    assert matches(None, None)
    assert not matches({"$absent": True}, None)
    assert matches({"$any": True}, None)
    assert matches({"$type": "null"}, None)
    assert not matches({"$type": "null"}, ABSENT)
    pattern = compile_args({"x": None})
    assert args_match(pattern, {"x": None})
    assert not args_match(pattern, {})


def test_only_absent_and_optional_accept_a_missing_key() -> None:
    accepting = [{"$absent": True}, {"$optional": 1}]
    for spelled in accepting:
        assert matches(spelled, ABSENT)
    rejecting: list[Any] = [
        "x",
        None,
        0,
        {"a": 1},
        [],
        {"$any": True},
        {"$regex": ".*"},
        {"$contains": ""},
        {"$icase": ""},
        {"$approx": 0},
        {"$one_of": [None]},
        {"$type": "null"},
        {"$subset": {}},
        {"$unordered": []},
        {"a": {"$any": True}},
    ]
    for spelled in rejecting:
        assert not matches(spelled, ABSENT), spelled


def test_argument_keys_and_values_are_case_sensitive() -> None:
    pattern = compile_args({"City": "Berlin"})
    assert not args_match(pattern, {"city": "Berlin"})
    assert not args_match(pattern, {"City": "berlin"})
    assert args_match(pattern, {"City": "Berlin"})


# --------------------------------------------------------------------------- args_match


def test_args_match_is_a_subset_match_and_args_equal_is_not() -> None:
    pattern = compile_args({"a": 1})
    assert args_match(pattern, {"a": 1, "b": 2})
    assert not args_equal(pattern, {"a": 1, "b": 2})
    assert args_equal(pattern, {"a": 1.0})
    assert args_match({}, {"anything": 1})
    assert args_equal(compile_args({"a": 1, "z": {"$optional": 1}}), {"a": 1})
    assert not args_match(pattern, {})


def test_args_match_string_fast_path() -> None:
    class Name(str):
        pass

    pattern = compile_args({"city": "Berlin"})
    assert args_match(pattern, {"city": Name("Berlin")})
    assert not args_match(pattern, {"city": b"Berlin"})
    assert not args_match(pattern, {"city": ["Berlin"]})


# --------------------------------------------------------------------------- compile errors


@pytest.mark.parametrize(
    ("args", "path", "fragment"),
    [
        ({"city": {"$regx": "^B"}}, "/city", "unknown matcher '$regx' — did you mean '$regex'?"),
        ({"city": {"$zzzzzz": 1}}, "/city", "valid: $any, $absent"),
        ({"city": {"$regex": "^B", "x": 1}}, "/city", "mixes matcher keys ['$regex']"),
        ({"city": {"$regex": "a", "$icase": "b"}}, "/city", "one matcher per mapping"),
        ({"c": {"$tol": 1}}, "/c", "'$tol' only goes beside '$approx'"),
        ({"c": {"$approx": 1, "$regex": "x"}}, "/c", "only takes '$tol' / '$rel'"),
        ({"c": {"$regex": 3}}, "/c/$regex", "needs a string pattern, got int 3"),
        ({"c": {"$regex": "(ab"}}, "/c/$regex", "missing ), unterminated subpattern"),
        ({"c": {"$icase": 1}}, "/c/$icase", "$icase needs a string"),
        ({"c": {"$approx": "3"}}, "/c/$approx", "$approx needs a number, got str"),
        ({"c": {"$approx": True}}, "/c/$approx", "got bool True"),
        ({"c": {"$approx": NAN}}, "/c/$approx", "needs a number"),
        ({"c": {"$approx": 1, "$tol": -0.1}}, "/c/$tol", "$tol must be >= 0"),
        ({"c": {"$approx": 1, "$rel": "5%"}}, "/c/$rel", "$rel needs a number"),
        ({"c": {"$one_of": "ab"}}, "/c/$one_of", "needs a list of options, got str"),
        ({"c": {"$one_of": []}}, "/c/$one_of", "at least one option"),
        ({"c": {"$one_of": [1, {"$regx": 1}]}}, "/c/$one_of/1", "did you mean '$regex'"),
        ({"c": {"$type": "strng"}}, "/c/$type", "did you mean 'string'"),
        ({"c": {"$type": "float"}}, "/c/$type", "string, integer, number"),
        ({"c": {"$type": 1}}, "/c/$type", "got 1"),
        ({"c": {"$any": "yes"}}, "/c/$any", "$any takes true"),
        ({"c": {"$absent": False}}, "/c/$absent", "$absent takes true"),
        ({"c": {"$subset": [1]}}, "/c/$subset", "$subset needs a mapping"),
        ({"c": {"$subset": {"$regex": "x"}}}, "/c/$subset", "plain mapping"),
        ({"c": {"$subset": {"k": {"j": {"$bad": 1}}}}}, "/c/$subset/k/j", "unknown matcher"),
        ({"c": {"$unordered": "ab"}}, "/c/$unordered", "$unordered needs a list"),
        ({"c": {"$unordered": [{"$regex": 1}]}}, "/c/$unordered/0/$regex", "string pattern"),
        ({"c": {"$optional": {"$type": "x"}}}, "/c/$optional/$type", "$type must be"),
        ({"c": {"$contains": {"$icase": 2}}}, "/c/$contains/$icase", "$icase needs"),
        ({"a/b": {"c~d": [0, {"$x": 1}]}}, "/a~1b/c~0d/1", "unknown matcher '$x'"),
    ],
)
def test_malformed_matchers_name_the_path(args: Any, path: str, fragment: str) -> None:
    with pytest.raises(MatcherError) as info:
        compile_args(args)
    assert info.value.path == path
    assert fragment in str(info.value)
    assert str(info.value).startswith(f"at {path}: ")


def test_python_constructors_validate_too() -> None:
    with pytest.raises(MatcherError, match="not a valid regular expression"):
        Regex("(")
    with pytest.raises(MatcherError, match="did you mean 'integer'"):
        Type("integr")
    with pytest.raises(MatcherError, match=">= 0"):
        Approx(1, rel=-1)
    with pytest.raises(MatcherError, match="needs a list"):
        OneOf(3)  # type: ignore[arg-type]


def test_pointer_token_escapes_rfc6901() -> None:
    assert pointer_token("a/b~c") == "a~1b~0c"
    assert pointer_token("~1") == "~01"


# --------------------------------------------------------------------------- check_args


def test_check_args_counts_and_diffs() -> None:
    pattern = compile_args(
        {"city": "Berlin", "day": "tomorrow", "q": {"$regex": "^Ber"}, "units": "metric"}
    )
    result = check_args(pattern, {"city": "Berlim", "q": "x", "units": "metric", "extra": 1})
    assert (result.correct, result.total) == (1, 4)
    assert not result.ok
    assert result.extra_keys == ("extra",)
    assert result.diffs == (
        ArgDiff("/city", "Berlin", "Berlim", "wrong_args", "city='Berlim', expected 'Berlin'"),
        ArgDiff("/day", "tomorrow", ABSENT, "missing_arg", "missing argument 'day'"),
        ArgDiff("/q", Regex("^Ber"), "x", "wrong_args", "q='x' does not match $regex '^Ber'"),
    )


def test_check_args_all_correct_and_extras_are_not_diffs() -> None:
    result = check_args(compile_args({"a": 1}), {"a": 1.0, "b": 2, "c": 3})
    assert result.ok
    assert (result.correct, result.total) == (1, 1)
    assert result.extra_keys == ("b", "c")
    assert all(d.code != "extra_arg" for d in result.diffs)


def test_check_args_points_at_the_deepest_nested_mismatch() -> None:
    pattern = compile_args({"filters": {"city": "Berlin", "n": 3}, "ids": [1, [2, 3]]})
    result = check_args(pattern, {"filters": {"city": "Berlim", "n": 3}, "ids": [1, [2, 4]]})
    assert (result.correct, result.total) == (0, 2)
    first, second = result.diffs
    assert (first.path, first.expected, first.actual) == ("/filters/city", "Berlin", "Berlim")
    assert first.message == "filters.city='Berlim', expected 'Berlin'"
    assert (second.path, second.expected, second.actual) == ("/ids/1/1", 3, 4)
    assert second.message == "ids[1][1]=4, expected 3"


@pytest.mark.parametrize(
    ("pattern", "actual", "path", "message"),
    [
        ({"f": {"n": 3}}, {"f": {"n": 3.0}}, "/f/n", "f.n=3.0, expected 3 (float, expected int)"),
        ({"f": [True]}, {"f": [1]}, "/f/0", "f[0]=1, expected True (int, expected bool)"),
        ({"f": {"a": 1}}, {"f": {}}, "/f/a", "f.a is missing, expected 1"),
        ({"f": {"a": 1}}, {"f": {"a": 1, "b": 2}}, "/f/b", "f.b=2 is not expected"),
        ({"f": [1, 2]}, {"f": [1, 2, 3]}, "/f", "f has 3 item(s), expected 2"),
        ({"f": {"a": 1}}, {"f": "a"}, "/f", "f='a', expected {'a': 1}"),
        ({"f": {"x/y": {"$regex": "^a"}}}, {"f": {"x/y": "b"}}, "/f/x~1y", "does not match"),
        ({"f": {"$subset": {"u": {"id": 1}}}}, {"f": {"u": {"id": 2}}}, "/f/u/id", "f.u.id=2"),
        ({"f": {"$absent": True}}, {"f": None}, "/f", "f=None is present, expected absent"),
        ({"f": {"$optional": {"a": 1}}}, {"f": {"a": 2}}, "/f/a", "f.a=2, expected 1"),
        ({"f": {"$one_of": [1, 2]}}, {"f": 3}, "/f", "f=3 does not match $one_of [1, 2]"),
        ({"n": 1}, {"n": True}, "/n", "n=True, expected 1 (bool, expected int)"),
    ],
)
def test_check_args_messages(pattern: Any, actual: Any, path: str, message: str) -> None:
    result = check_args(compile_args(pattern), actual)
    assert (result.correct, result.total) == (0, 1)
    (diff,) = result.diffs
    assert diff.path == path
    assert diff.code == "wrong_args"
    assert message in diff.message


def test_check_args_missing_matcher_argument_is_missing_arg() -> None:
    result = check_args(compile_args({"city": {"$regex": "x"}, "o": {"$optional": 1}}), {})
    (diff,) = result.diffs
    assert (diff.path, diff.code, diff.message) == (
        "/city",
        "missing_arg",
        "missing argument 'city'",
    )
    assert (result.correct, result.total) == (1, 2)


def test_check_args_agrees_with_args_match() -> None:
    pattern = compile_args({"a": {"$approx": 1, "$tol": 0.5}, "b": {"c": [1, {"$any": True}]}})
    for actual in ({"a": 1.2, "b": {"c": [1, None]}}, {"a": 2, "b": {"c": [1]}}, {"b": 1}):
        assert check_args(pattern, actual).ok == args_match(pattern, actual)


# --------------------------------------------------------------------------- describe


def test_describe_pattern() -> None:
    assert describe_pattern("Berlin") == "'Berlin'"
    assert describe_pattern(3) == "3"
    assert describe_pattern(Regex("^Ber")) == "$regex '^Ber'"
    assert describe_pattern(compile_pattern({"$any": True})) == "$any"
    assert describe_pattern(Approx(3.1, tol=0.01)) == "$approx 3.1 ±0.01"
    assert describe_pattern(Approx(100, rel=0.05)) == "$approx 100 ±5%"
    assert describe_pattern(OneOf(["a", 1])) == "$one_of ['a', 1]"
    assert describe_pattern(Type("null")) == "$type null"
    assert describe_pattern(OptionalArg(ICase("x"))) == "$optional $icase 'x'"
    assert describe_pattern(compile_pattern({"a": {"$absent": True}})) == "{'a': $absent}"
    assert describe_pattern(Unordered([1, 2])) == "$unordered [1, 2]"
    assert describe_pattern(Subset({"a": 1})) == "$subset {'a': 1}"
    assert describe_pattern(Contains("x")) == "$contains 'x'"


def test_absent_sentinel_survives_pickling() -> None:
    assert pickle.loads(pickle.dumps(ABSENT)) is ABSENT
    assert repr(ABSENT) == "<absent>"


# --------------------------------------------------------------------------- properties

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=12,
)
literal_keys = st.text(max_size=5).filter(lambda k: not k.startswith("$"))
literal_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(literal_keys, children, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=200)
@given(json_values)
def test_equivalence_is_reflexive_for_non_nan_values(value: Any) -> None:
    assert equivalent(value, value)


@settings(max_examples=200)
@given(json_values, json_values)
def test_equivalence_is_symmetric_for_literals(a: Any, b: Any) -> None:
    assert equivalent(a, b) == equivalent(b, a)


@settings(max_examples=200)
@given(literal_values)
def test_a_literal_compiled_as_a_pattern_matches_itself(value: Any) -> None:
    assert match_value(compile_pattern(value), value)
    assert args_match(compile_args({"k": value}), {"k": value})
    assert check_args(compile_args({"k": value}), {"k": value}).ok


@settings(max_examples=200)
@given(st.integers(min_value=-(10**6), max_value=10**6))
def test_numbers_match_across_types_at_top_level_only(n: int) -> None:
    assert equivalent(n, float(n))
    assert equivalent(Decimal(n), n)
    assert not equivalent([n], [float(n)])
