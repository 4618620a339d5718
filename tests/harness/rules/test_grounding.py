"""``grounded`` against a naive reference written plainly from docs/metrics.md ("grounded").

The reference reads every source afresh for every value, finds tokens by trying every position
and numbers by trying every substring: no regular expression, no index. Generated runs mix ids
that are prefixes and suffixes of each other (ORD-7 / ORD-77), ids inside longer words, JSON
string results, nested lists and dicts, numbers written several ways, and booleans.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.rules import RuleResult, Trajectory, load_rules
from tracing.records import ToolCall

DIGITS = "0123456789"


def is_word(char: str) -> bool:
    return char.isalnum() or char in "_-"


def token_in(value: str, text: str) -> bool:
    """Does ``value`` occur in ``text`` with no word character right before or after?"""
    for start in range(len(text) - len(value) + 1):
        if text[start : start + len(value)] != value:
            continue
        end = start + len(value)
        if start > 0 and is_word(text[start - 1]):
            continue
        if end < len(text) and is_word(text[end]):
            continue
        return True
    return False


def number_form(text: str) -> bool:
    """``-``? then digits or 1-3 digits followed by ,ddd groups, then optionally .digits."""
    body = text[1:] if text.startswith("-") else text
    whole, dot, fraction = body.partition(".")
    if dot and (not fraction or any(c not in DIGITS for c in fraction)):
        return False
    groups = whole.split(",")
    if any(not g or any(c not in DIGITS for c in g) for g in groups):
        return False
    if len(groups) == 1:
        return True
    return len(groups[0]) <= 3 and all(len(g) == 3 for g in groups[1:])


def numbers_in(text: str) -> list[float | int]:
    found: list[float | int] = []
    for start in range(len(text)):
        for end in range(start + 1, len(text) + 1):
            piece = text[start:end]
            if not number_form(piece):
                continue
            before = text[start - 1] if start > 0 else ""
            after = text[end] if end < len(text) else ""
            following = text[end + 1] if end + 1 < len(text) else ""
            if before and (is_word(before) or before in ".,"):
                continue
            if after and (is_word(after) or (after in ".," and following in DIGITS and following)):
                continue
            plain = piece.replace(",", "")
            found.append(float(plain) if "." in plain else int(plain))
    return found


def read(result: Any) -> tuple[list[str], list[float | int]]:
    """A source's texts and structure numbers."""
    if isinstance(result, str):
        stripped = result.lstrip()
        if stripped[:1] in ("{", "["):
            try:
                parsed = json.loads(result)
            except ValueError:
                parsed = None
            if isinstance(parsed, (dict, list)):
                return read(parsed)
        return [result], []
    texts: list[str] = []
    numbers: list[float | int] = []

    def walk(item: Any) -> None:
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, bool) or item is None:
            pass
        elif isinstance(item, (int, float)):
            numbers.append(item)
        elif isinstance(item, dict):
            for key, inner in item.items():
                walk(key)
                walk(inner)
        elif isinstance(item, list):
            for inner in item:
                walk(inner)

    walk(result)
    return texts, numbers


def seen(value: Any, sources: list[Any], user: list[str]) -> bool:
    if isinstance(value, bool) or value is None or value == "":
        return True
    texts = list(user)
    numbers: list[float | int] = []
    for source in sources:
        more_texts, more_numbers = read(source)
        texts += more_texts
        numbers += more_numbers
    if isinstance(value, str):
        return any(token_in(value, text) for text in texts)
    if value != value:
        return False
    return any(value == n for n in numbers) or any(
        value == n for text in texts for n in numbers_in(text)
    )


def leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for inner in value.values() for leaf in leaves(inner)]
    if isinstance(value, list):
        return [leaf for inner in value for leaf in leaves(inner)]
    return [value]


def reference(trajectory: Trajectory) -> tuple[str, tuple[int, ...]]:
    """('pass' | 'fail' | 'unevaluable', offending calls) for grounded {tool: use, args: [v]}."""
    violating: list[int] = []
    unknown = False
    for c, call in enumerate(trajectory.calls):
        if call.name != "use" or call.status == "invalid":
            continue
        if c in trajectory.not_captured:
            unknown = True
            continue
        if "v" not in call.args:
            continue
        sources = [
            earlier.result
            for j, earlier in enumerate(trajectory.calls[:c])
            if earlier.status == "ok" and j not in trajectory.not_captured
        ]
        user = list(trajectory.user_inputs or ())
        if all(seen(leaf, sources, user) for leaf in leaves(call.args["v"])):
            continue
        complete = trajectory.user_inputs is not None and not any(
            j in trajectory.not_captured for j in range(c)
        )
        if complete:
            violating.append(c)
        else:
            unknown = True
    if violating:
        return "fail", tuple(violating)
    return ("unevaluable" if unknown else "pass"), ()


(GROUNDED,) = load_rules([{"name": "g", "grounded": {"tool": "use", "args": ["v"]}}])


def verdict(result: RuleResult) -> tuple[str, tuple[int, ...]]:
    if result.error:
        assert result.code == "unevaluable", result.reason
        return "unevaluable", ()
    return ("pass" if result.passed else "fail"), result.calls


# --- generated runs -------------------------------------------------------------------------

IDS = ["ORD-7", "ORD-77", "ORD-7-B", "7", "77", "ORD", "A_1", "x", "ada@example.com", "New York"]
IDS += ["Zürich", "C-001", "-5", "ORD.7", "", "ü"]
NUMBERS: list[Any] = [0, 7, 77, 42, 1050, -5, 0.5, 12.5, 89.9, 7.0, 1e-7, float("nan"), True]
WRITTEN = ["7", "77", "7.0", "07", "89.90", "12.5", "1,050", "1,05", "-5", "5-10", "1.2.3", "42."]
GLUE = [" ", "", "-", "_", ".", ",", '"', "'", "(", ")", "@", "é", "\n", "/", ":"]

BOUNDARY = [*GLUE, "a", "7", "_", "-", "é", "Z"]


@st.composite
def runs(draw: st.DrawFn) -> Trajectory:
    # a few ids and numbers per run, so that values, results and the user's text collide often
    ids = draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=3, unique=True))
    numbers = draw(st.lists(st.sampled_from(NUMBERS), min_size=1, max_size=3))
    written = [*ids, *draw(st.lists(st.sampled_from(WRITTEN), max_size=3)), *map(str, numbers)]
    scalars = st.one_of(st.sampled_from(ids), st.sampled_from(numbers), st.booleans(), st.none())
    structures = st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(st.sampled_from([*ids, "order_id", "n"]), inner, max_size=3),
        ),
        max_leaves=5,
    )
    texts = st.lists(
        st.one_of(st.sampled_from(written), st.sampled_from(BOUNDARY)), max_size=7
    ).map("".join)
    results = st.one_of(
        texts,
        structures,
        structures.map(lambda value: json.dumps(value, ensure_ascii=False)),
        structures.map(lambda value: " " + json.dumps(value)),
    )
    calls: list[ToolCall] = []
    for _ in range(draw(st.integers(0, 6))):
        if draw(st.booleans()):
            status = draw(st.sampled_from(["ok", "ok", "error", "requested"]))
            calls.append(ToolCall(name="src", status=status, result=draw(results)))
        elif draw(st.integers(0, 9)) == 0:
            calls.append(ToolCall.invalid("use", '{"v": "ORD-7"', None))
        else:
            args = draw(st.dictionaries(st.sampled_from(["v", "w"]), structures, max_size=2))
            status = draw(st.sampled_from(["ok", "requested"]))
            calls.append(ToolCall(name="use", args=args, status=status))
    user = draw(st.one_of(st.none(), st.lists(texts, max_size=2).map(tuple)))
    gaps: set[int] = set()
    if calls and draw(st.integers(0, 3)) == 0:
        gaps = draw(st.sets(st.integers(0, len(calls) - 1), max_size=2))
    return Trajectory(calls=tuple(calls), user_inputs=user, not_captured=frozenset(gaps))


@settings(max_examples=500, deadline=None)
@given(runs())
def test_grounded_agrees_with_the_naive_reference(trajectory: Trajectory) -> None:
    assert verdict(GROUNDED.evaluate(trajectory)) == reference(trajectory)


ASKED = [value for value in [*IDS, *NUMBERS] if not isinstance(value, bool)]
"""The values ``grounded`` asks about (booleans and null are never asked: always grounded)."""


@settings(max_examples=300, deadline=None)
@given(
    runs(),
    st.lists(st.tuples(st.sampled_from([*ASKED, "ORD-7 x"]), st.integers(0, 7)), max_size=8),
)
def test_the_index_answers_in_any_order_as_the_naive_reference(
    trajectory: Trajectory, questions: list[tuple[Any, int]]
) -> None:
    """The index reads results only as far as a question needs: asked in any order (a late
    call first, then an early one), it answers as the reference reading every earlier source."""
    from harness.rules.grounding import GroundingIndex

    index = GroundingIndex(trajectory)
    user = list(trajectory.user_inputs or ())
    for value, before in questions:
        sources = [
            call.result
            for j, call in enumerate(trajectory.calls[: max(before, 0)])
            if call.status == "ok" and j not in trajectory.not_captured
        ]
        expected = seen(value, sources, user)
        assert index.seen(value, before) == expected, (value, before)


def test_numbers_in_texts_read_later_are_found() -> None:
    from harness.rules.grounding import GroundingIndex

    calls = tuple(ToolCall(name="src", result=text) for text in ("7 apples", "order 42", "ORD-9"))
    index = GroundingIndex(Trajectory(calls=calls, user_inputs=("hi",)))
    assert [index.seen(7, 1), index.seen(42, 1), index.seen(42, 2), index.seen("ORD-9", 2)] == [
        True,
        False,
        True,
        False,
    ]
    assert index.seen("ORD-9", 3) and not index.seen(7, 0)


EDGES = ["", *BOUNDARY, "5.", "5,", ".5", ",5", ",050", "-5"]


def test_every_value_next_to_every_boundary_agrees_with_the_reference() -> None:
    # exhaustive over (value, what precedes it, what follows it): every boundary rule is hit
    for value in [*IDS, *NUMBERS, 1, 5]:
        written = value if isinstance(value, str) else str(value)
        for before in EDGES:
            for after in EDGES:
                text = before + written + after
                run = Trajectory(
                    calls=(
                        ToolCall(name="src", result=text),
                        ToolCall(name="use", args={"v": value}),
                    ),
                )
                assert verdict(GROUNDED.evaluate(run)) == reference(run), (value, text)


# --- the traps, spelled out ---------------------------------------------------------------------


def grounded_by(result: Any, value: Any, user: tuple[str, ...] = ()) -> bool:
    run = Trajectory(
        calls=(ToolCall(name="src", result=result), ToolCall(name="use", args={"v": value})),
        user_inputs=user,
    )
    return GROUNDED.evaluate(run).passed


def test_prefix_and_suffix_ids_do_not_ground_each_other() -> None:
    assert not grounded_by("ORD-77 shipped", "ORD-7")
    assert not grounded_by("XORD-7", "ORD-7")
    assert not grounded_by('{"ids": ["ORD-77"]}', "ORD-7")
    assert not grounded_by("see ORD-7", "ORD-77")
    assert grounded_by("order ORD-7.", "ORD-7")
    assert grounded_by('["ORD-7"]', "ORD-7")
    assert not grounded_by("keyboard", "key")
    assert not grounded_by("x", "ORD-7", user=("ORD-77",))


def test_json_results_are_read_as_structures() -> None:
    nested = json.dumps({"data": {"items": [{"sku": "SKU-9", "price": 12.5}]}})
    assert grounded_by(nested, "SKU-9")
    assert grounded_by(nested, 12.5)
    assert grounded_by(nested, "items")  # keys are texts too
    assert grounded_by({"Zürich": 1}, "Zürich")
    escaped = json.dumps({"city": "Zürich"})  # ensure_ascii: \u00fc in the raw text
    assert "Zürich" not in escaped and grounded_by(escaped, "Zürich")
    assert grounded_by(json.dumps(["Zürich"]), "Zürich")
    assert grounded_by(json.dumps([1e-7]), 1e-7)  # the text "1e-07" holds no number
    assert not grounded_by("1e-07", 1e-7)
    assert not grounded_by('{"broken": "Z\\u00fcrich"', "Zürich")  # not JSON: read as text


def test_numbers_and_booleans() -> None:
    assert grounded_by({"n": 7}, 7.0)
    assert not grounded_by({"flag": True}, 1)
    assert grounded_by({"flag": False}, True)  # a boolean is never invented
    assert not grounded_by({"n": 42}, "42")
    assert grounded_by({"n": "42"}, 42)
    assert not grounded_by("ORD-1042", 1042)
    assert grounded_by("total 1,050 EUR", 1050)
    assert not grounded_by("version 1.2.3", 2)
    assert not grounded_by({"n": float("nan")}, float("nan"))
    assert grounded_by("lost", 42, user=("I am 42 years old",))


class Receipt:
    """A result a tool returns as an object: read as its text."""

    def __str__(self) -> str:
        return "Receipt for ORD-7: 12.50 EUR"


class Label(str):
    """A str subclass inside a result."""


def test_results_that_are_not_plain_json_values() -> None:
    from decimal import Decimal
    from types import MappingProxyType

    assert grounded_by(Receipt(), "ORD-7")
    assert grounded_by(Receipt(), 12.5)
    assert grounded_by(("ORD-7", 3), 3)
    assert grounded_by({"amount": Decimal("12.50")}, 12.5)
    assert grounded_by(MappingProxyType({"id": Label("ORD-7")}), "ORD-7")
    assert not grounded_by(MappingProxyType({"id": Label("ORD-77")}), "ORD-7")
    assert grounded_by("x", Decimal("7"), user=("order 7",))


def test_results_and_arguments_that_hold_themselves_do_not_hang() -> None:
    loop: list[Any] = ["ORD-7"]
    loop.append(loop)
    wrapped: tuple[Any, ...] = ([],)
    wrapped[0].append(wrapped)
    wrapped[0].append(12.5)
    assert grounded_by(loop, "ORD-7")
    assert grounded_by(wrapped, 12.5)
    assert not grounded_by(wrapped, "ORD-7")
    argument: dict[str, Any] = {"id": "ORD-7"}
    argument["self"] = argument
    assert grounded_by("ORD-7", argument)
