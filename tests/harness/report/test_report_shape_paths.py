"""The shape-specialised renderings of a failing result give what the generic walk gives.

A score's details are rendered straight from their shape (harness/report/view/details.py), a
sample's secrets are searched in one pass, plain numbers skip the walk: every output must be
the generic walk's, byte for byte, and every secret masked by key and by value
(docs/architecture.md, "Redaction").
"""

from __future__ import annotations

import json
import math

import pytest

from harness.expectation import Expectation
from harness.metrics.base import Details, Issue, Pair, Score
from harness.redaction import MASK, Redactor, Scrubber, StreamScrubber, collect_secrets
from harness.report.json_report import scenario_data
from harness.report.view import scenario_view
from harness.report.view.details import details_data
from harness.run.results import RunResult, ScenarioResult
from harness.sample import Sample
from harness.values import ArgDiff
from tracing.records import ToolCall

SECRET = "sk-live-0123456789abcdef"


def _diff(path: str, expected: object, actual: object, message: str = "differs") -> ArgDiff:
    return ArgDiff(path, expected, actual, "wrong_args", message)  # type: ignore[arg-type]


def _details(*diffs: ArgDiff, extra: dict[str, object] | None = None) -> Details:
    return Details(
        pairs=(Pair(0, 0, (), 1.0), Pair(1, 1, diffs, 0.0)),
        unmatched_expected=(2,),
        unmatched_actual=(3,),
        issues=(Issue("missing_call", "expected refund(order_id=7) was not matched", 2, None),),
        extra=dict(extra or {}),
    )


CASES = {
    "plain": _details(_diff("/order_id", 7, 8), extra={"gate": 1.0, "coverage": 0.5}),
    "secret in a diff's values": _details(
        _diff("/auth", {"api_key": SECRET, "user": "bob"}, {"api_key": "other-secret-value"}),
        _diff("/note", f"uses {SECRET}", f'{{"token": "{SECRET}"}}'),
    ),
    "secret in a nested argument": _details(
        _diff("/payload/0", [{"headers": {"Authorization": f"Bearer {SECRET}"}}], None)
    ),
    "secret key in extra": _details(extra={"api_key": SECRET, "nested": {"password": "pw-12345"}}),
    "secret in a message": _details(_diff("/q", "a", "b", f"expected a, got {SECRET}")),
    "odd numbers": _details(
        _diff("/n", math.nan, math.inf), _diff("/b", True, 10**5000), extra={"s": -math.inf}
    ),
    "non-finite values": _details(_diff("/n", math.nan, -math.inf), extra={"s": math.inf}),
    "objects in values": _details(_diff("/o", object(), b"bytes"), _diff("/t", (1, "a"), {1: 2})),
    "non-finite pair score": Details(pairs=(Pair(0, 0, (), math.nan),)),
    "objects": _details(_diff("/o", object(), b"bytes"), extra={1: "int key", (2,): "tuple"}),
    "extra shadows a key": _details(_diff("/x", 1, 2), extra={"issues": "mine", "pairs": []}),
    "past the item limit": Details(
        issues=tuple(Issue("wrong_args", f"issue {i}", i, i) for i in range(1500))
    ),
    "past the character budget": _details(
        *(_diff(f"/k{i}", "x" * 30_000, "y" * 30_000, "m" * 3_000) for i in range(3))
    ),
    "just inside the budget": _details(_diff("/k", "x" * 49_000, "y" * 49_000)),
    "a string that fills the budget": _details(_diff("/k", "x" * 99_990, "z")),
}

NOT_EQUAL_TO_ITSELF = {"odd numbers", "non-finite values", "non-finite pair score", "objects"}
"""nan is not equal to itself, nor is an object's ``repr`` (its address) stable: compared as
JSON text only (the same text, or the same placeholder)."""


def _scrubbers() -> list[Scrubber]:
    return [
        Scrubber(),
        Scrubber(Redactor(), [SECRET, "pw-12345"]),
        Scrubber(Redactor(["code", "user"]), [SECRET]),  # a fixed key that is itself secret
        Scrubber(Redactor(), ["message", "expected"]),  # a fixed key that is scrubbed as text
        Scrubber(Redactor(value_patterns=[r"sk-live-\w+"])),
        Scrubber(Redactor([])),
    ]


@pytest.mark.parametrize("name", list(CASES))
def test_details_render_as_the_generic_walk_does(name: str) -> None:
    details = CASES[name]
    for scrubber in _scrubbers():
        fast = details_data(details, scrubber)
        slow = scrubber.value(details.to_dict())
        assert json.dumps(fast, default=repr) == json.dumps(slow, default=repr)
        assert fast == slow or name in NOT_EQUAL_TO_ITSELF


def test_a_secret_in_a_diff_an_argument_and_a_key_is_masked_in_every_report() -> None:
    expected = [
        Expectation("login", {"auth": {"api_key": "x"}, "note": "n"}),
        Expectation("search", {"payload": [{"headers": {}}]}),
    ]
    calls = [
        ToolCall("login", {"auth": {"api_key": SECRET, "user": "bob"}, "note": f"k={SECRET}"}),
        ToolCall("search", {"payload": [{"headers": {"Authorization": f"Bearer {SECRET}"}}]}),
    ]
    details = _details(
        _diff("/auth", {"api_key": SECRET}, {"api_key": SECRET}, f"got {SECRET}"),
        _diff("/payload", [{"headers": {"Authorization": SECRET}}], None),
        extra={"token": SECRET, "seen": f"saw {SECRET}"},
    )
    score = Score("tool_call_accuracy", 0.0, 1.0, False, f"reason with {SECRET}", details)
    run = RunResult(0, False, Sample(tool_calls=calls, expected_tool_calls=expected), (score,))
    result = ScenarioResult("s", "n", "f.yaml", 1, "failed", (run,))
    stream = StreamScrubber(Redactor())
    assert SECRET in collect_secrets(result.runs, stream.redactor)
    view = scenario_view(result, stream.for_result(result))
    text = json.dumps(scenario_data(view))
    assert SECRET not in text and MASK in text
    shown = view.runs[0].scores[0].details
    assert shown["token"] == MASK
    assert shown["pairs"][1]["diffs"][0]["expected"] == {"api_key": MASK}


def test_one_search_per_sample_finds_what_a_search_per_value_finds() -> None:
    from harness.redaction import secrets_in

    loop: list[object] = []
    loop.append(loop)
    calls = [
        ToolCall("a", {"token": "tok-abc-1", "n": 3}, result='{"password": "pw-xyz-2"}'),
        ToolCall("b", {"deep": [{"secret": 12345}], "loop": loop}, result="plain text"),
        ToolCall("c", {}, result={"api_key": ["k-111", "k-222"]}),
        ToolCall("d", {"x": 1}, result=7),
    ]
    redactor = Redactor()
    one_by_one: set[str] = set()
    for call in calls:
        secrets_in(call.args, redactor, one_by_one)
        secrets_in(call.result, redactor, one_by_one)
    run = RunResult(0, False, Sample(tool_calls=calls))
    found = collect_secrets([run], redactor)
    assert found == one_by_one
    assert {"tok-abc-1", "pw-xyz-2", "12345", "k-111", "k-222"} <= found


def test_plain_numbers_skip_the_walk_and_render_as_it_would() -> None:
    scrubber = Scrubber()
    for value in (0, -7, 10**30, True, False, 1.5, -0.0):
        assert scrubber.value(value) is value
    assert scrubber.value(math.nan) == "nan" and scrubber.value(math.inf) == "inf"
    big = 10**5000
    assert scrubber.value(big).startswith("<unrepresentable: int")


def test_an_expectation_view_is_masked_by_each_scrubber() -> None:
    from harness.report.view import expectation_view

    expectation = Expectation("login", {"user": f"u-{SECRET}", "api_key": SECRET})
    plain, knowing = Scrubber(), Scrubber(Redactor(), [SECRET])
    first = expectation_view(0, expectation, plain)
    assert expectation_view(1, expectation, plain).index == 1
    assert [arg.value for arg in first.args] == [f"u-{SECRET}", MASK]  # masked by key
    known = expectation_view(0, expectation, knowing)
    assert [arg.value for arg in known.args] == [f"u-{MASK}", MASK]  # and by value
    other = Expectation("login", {"user": "bob"})
    assert expectation_view(0, other, plain).args[0].value == "bob"
