"""harness.text: the one truncator, suggestion builder and counter every message uses."""

from __future__ import annotations

import pytest

from harness.text import did_you_mean, plural, shorten


@pytest.mark.parametrize(
    ("text", "width", "expected"),
    [
        ("short", 10, "short"),
        ("exactly10!", 10, "exactly10!"),
        ("eleven chars", 10, "eleven ch…"),
        ("a  b   c", 5, "a  b…"),  # whitespace kept, unlike textwrap.shorten
        ("", 0, ""),
        ("abc", 0, "…"),
    ],
)
def test_shorten_keeps_text_that_fits_and_cuts_to_width(
    text: str, width: int, expected: str
) -> None:
    assert shorten(text, width) == expected
    assert len(shorten(text, width)) <= max(width, 1)


def test_shorten_with_another_placeholder_still_fits_the_width() -> None:
    assert shorten("x" * 200, 160, placeholder="...") == "x" * 157 + "..."


def test_did_you_mean_names_the_nearest_candidates() -> None:
    names = ["tool_call_accuracy", "tool_call_order", "tool_call_f1"]
    assert did_you_mean("tool_call_acuracy", names) == "did you mean 'tool_call_accuracy'?"
    assert did_you_mean("bleu", names) == ""
    two = did_you_mean("tool_call_", names, limit=2, cutoff=0.5)
    assert two.startswith("did you mean 'tool_call_") and " or 'tool_call_" in two


def test_did_you_mean_takes_any_iterable_once() -> None:
    assert did_you_mean("strct", iter(["strict", "flexible"])) == "did you mean 'strict'?"


def test_plural_counts_the_noun() -> None:
    assert plural(1, "call") == "1 call"
    assert plural(0, "call") == "0 calls"
    assert plural(3, "configuration error") == "3 configuration errors"
    assert plural(2, "match", "matches") == "2 matches"
