"""The renderings of a real comparison: console block, JSON section, Markdown, annotations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from harness.compare import (
    Comparison,
    compare_reports,
    comparison_json,
    console_block,
    github_annotations,
    load_report,
    markdown_lines,
    summary_rule,
)
from tests.harness.compare.conftest import TravelPair


@pytest.fixture(scope="module")
def travel(travel_pair: TravelPair) -> Comparison:
    return compare_reports(load_report(travel_pair.base), load_report(travel_pair.head))


def _printed(*renderables: Any, width: int = 200) -> str:
    console = Console(width=width, record=True, color_system=None, file=open("/dev/null", "w"))  # noqa: SIM115
    for renderable in renderables:
        console.print(renderable)
    text = console.export_text()
    console.file.close()
    return text


def test_console_block_lists_changes_then_details(travel: Comparison) -> None:
    text = _printed(console_block(travel))
    lines = text.splitlines()
    assert "Compared with baseline" in lines[0]
    table = text[: text.index("_ travel::")]
    order = [
        kind for kind in ("REGRESSED", "FIXED", "STILL FAILING", "CHANGED", "ADDED", "REMOVED")
    ]
    positions = [table.index(kind) for kind in order]
    assert positions == sorted(positions)  # the worst news first
    assert "UNCHANGED" not in table
    assert (
        "calls #1 get_weather(city='Berlin', day='tomorrow') → get_weather(city='Paris', "
        "day='tomorrow')" in text
    )
    assert "  /city: 'Berlin' → 'Paris'" in text
    assert "score tool_argument_correctness 1.00 → 0.50 (−0.50)" in text
    assert "same reasons: tool_call_accuracy 0.00 < 1.00" in text
    assert lines[-1].strip("= ") == travel.headline()


def test_verbose_lists_the_unchanged_too(travel: Comparison) -> None:
    assert "UNCHANGED" in _printed(console_block(travel, verbose=True))


def test_the_summary_rule_is_the_headline(travel: Comparison) -> None:
    assert _printed(summary_rule(travel)).strip("= \n") == travel.headline()


def test_rates_are_shown_with_interval_test_and_pass_k(flaky_reports: dict[str, Path]) -> None:
    comparison = compare_reports(
        load_report(flaky_reports["8/10"]), load_report(flaky_reports["3/10"])
    )
    text = _printed(console_block(comparison))
    assert (
        "pass rate 8/10 (80%, 95% CI 49%–94%) → 3/10 (30%, 95% CI 11%–60%): drop p = 0.035 ≤ "
        "α 0.05, significant" in text
    )
    assert "pass@1 0.80 → 0.30, pass@10 1.00 → 1.00, pass^10 0.00 → 0.00" in text
    assert "8/10 → 3/10, p = 0.035" in text  # the table's cell


def test_terminal_controls_in_a_name_are_shown_not_sent(
    tmp_path: Path, travel_pair: TravelPair
) -> None:
    data = json.loads(travel_pair.head.read_text(encoding="utf-8"))
    data["scenarios"][0]["name"] = "weather \x1b[2J\u202eevil"
    head = tmp_path / "hostile.json"
    head.write_text(json.dumps(data), encoding="utf-8")
    text = _printed(
        console_block(compare_reports(load_report(travel_pair.base), load_report(head)))
    )
    assert "\x1b" not in text and "\u202e" not in text
    assert "weather \\x1b[2J\\u202eevil" in text


def test_the_json_section(travel: Comparison) -> None:
    section = comparison_json(travel)
    json.dumps(section)  # plain JSON
    assert section["summary"] == travel.headline()
    assert section["counts"]["regressed"] == 2 and sum(section["counts"].values()) == 17
    listed = {item["name"]: item for item in section["scenarios"]}
    assert len(listed) == 17 - section["counts"]["unchanged"]
    regressed = listed["weather in Berlin tomorrow"]
    assert regressed["change"] == "regressed" and regressed["line"] == 22
    assert regressed["base"] == {"status": "passed", "runs": 1, "passes": 1}
    assert regressed["first_call"] == {
        "position": 1,
        "base": {"name": "get_weather", "args": {"city": "Berlin", "day": "tomorrow"}, "turn": 0},
        "head": {"name": "get_weather", "args": {"city": "Paris", "day": "tomorrow"}, "turn": 0},
        "args": [{"path": "/city", "base": "Berlin", "head": "Paris"}],
    }
    assert listed["book the best rated hotel in Lisbon"]["first_call"]["head"] is None
    assert listed["weather in Rome on Sunday"]["base"] is None
    assert listed["weather at the destination, not the origin"]["reasons"]["added"]


def test_the_json_section_of_repeated_runs(flaky_reports: dict[str, Path]) -> None:
    comparison = compare_reports(
        load_report(flaky_reports["9/10"]), load_report(flaky_reports["7/10"]), k=3
    )
    (item,) = comparison_json(comparison)["scenarios"]
    assert item["change"] == "not_significant"
    rates = item["rates"]
    assert rates["significant"] is False and round(rates["p_drop"], 3) == 0.291
    assert rates["base"]["k"] == 3 and rates["base"]["pass_at_1"] == 0.9
    assert rates["head"]["pass_hat_k"] == 35 / 120  # C(7, 3) / C(10, 3)
    assert rates["base"]["interval"][0] < 0.9 < rates["base"]["interval"][1]


def test_markdown_leads_with_the_headline(travel: Comparison) -> None:
    lines = markdown_lines(travel)
    assert lines[0] == "### Compared with baseline: " + travel.headline()
    assert lines[0].startswith("### Compared with baseline: 2 regressions, 1 fix")
    rows = [line for line in lines if line.startswith("| 🔴 regressed")]
    assert len(rows) == 2
    assert "<code>travel::weather in Berlin tomorrow</code>" in rows[0]
    assert "<summary>travel::weather in Berlin tomorrow</summary>" in "\n".join(lines)


def test_markdown_escapes_what_a_report_holds(tmp_path: Path, travel_pair: TravelPair) -> None:
    data = json.loads(travel_pair.head.read_text(encoding="utf-8"))
    data["scenarios"][0]["name"] = "a | b <img src=x onerror=alert(1)>"
    head = tmp_path / "hostile.json"
    head.write_text(json.dumps(data), encoding="utf-8")
    text = "\n".join(
        markdown_lines(compare_reports(load_report(travel_pair.base), load_report(head)))
    )
    assert "<img" not in text and "a &#124; b &lt;img src=x onerror=alert(1)&gt;" in text


def test_github_annotations_point_at_each_regression(
    travel: Comparison, travel_pair: TravelPair
) -> None:
    annotations = github_annotations(travel)
    assert len(annotations) == 2
    head_file = str(travel_pair.head_suite).replace(":", "%3A").replace(",", "%2C")
    assert annotations[0].startswith(
        f"::error file={head_file},line=22,title=REGRESSED travel%3A%3Aweather in Berlin tomorrow::"
    )
    assert "get_weather(city='Paris', day='tomorrow')" in annotations[0]
    assert "%0A" in annotations[0] and "\n" not in annotations[0]


def test_the_documented_output_is_what_the_command_prints(travel: Comparison) -> None:
    """docs/cli.md shows `harness compare` on the same pair of runs as ``travel_pair``: its
    headline and every fact of its sections are what the comparison renders today."""
    from tests.support.paths import DOCS

    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    block = page[page.index("$ harness compare main.json pr.json\n") :]
    block = block[: block.index("```")]
    assert travel.headline() in block
    printed = _printed(console_block(travel), width=100)
    for line in printed.splitlines():
        if line.startswith(("score ", "calls ", "  /", "same reasons: ")):
            assert line.rstrip() in block, line
