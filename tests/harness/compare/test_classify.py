"""Every class from real runs: the demo travel suite before and after one changed file, and a
real agent over a flaky service run 10 times at several failure rates (docs/metrics.md,
"Comparing runs")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.compare import (
    Comparison,
    ScenarioChange,
    compare_reports,
    compare_results,
    compare_views,
    load_report,
)
from harness.compare.text import call_text
from harness.redaction import Scrubber
from harness.report.view import scenario_view
from harness.scenarios import load_paths
from harness.values import ABSENT
from tests.harness.compare.conftest import TravelPair


@pytest.fixture(scope="module")
def travel(travel_pair: TravelPair) -> Comparison:
    return compare_reports(load_report(travel_pair.base), load_report(travel_pair.head))


def _by_name(comparison: Comparison) -> dict[str, ScenarioChange]:
    return {change.scenario.name: change for change in comparison.scenarios}


def test_every_class_of_the_changed_travel_suite(travel: Comparison) -> None:
    kinds = {name: change.kind for name, change in _by_name(travel).items()}
    assert kinds["weather in Berlin tomorrow"] == "regressed"
    assert kinds["book the best rated hotel in Lisbon"] == "regressed"
    assert kinds["currency named in words"] == "fixed"
    assert kinds["weather at the destination, not the origin"] == "still_failing"
    assert kinds["rain this week implies a forecast"] == "still_failing"
    assert kinds["five-day forecast for Tokyo"] == "changed"
    assert kinds["weather in Rome on Sunday"] == "added"
    assert kinds["no budget means no max_price"] == "removed"
    untouched = [name for name, kind in kinds.items() if kind == "unchanged"]
    assert len(untouched) == 9 and "repeated weather lookup" in untouched
    assert travel.counts["regressed"] == 2 and travel.counts["unchanged"] == 9
    assert travel.headline() == (
        "2 regressions, 1 fix, 2 still failing, 1 changed, 1 added, 1 removed, 9 unchanged"
    )
    assert travel.fails("regressions") and travel.fails("any") and not travel.fails("none")


def test_a_regression_shows_the_first_differing_call_and_its_argument(
    travel: Comparison,
) -> None:
    change = _by_name(travel)["weather in Berlin tomorrow"]
    assert change.call is not None
    assert call_text(change.call) == (
        "#1 get_weather(city='Berlin', day='tomorrow') → get_weather(city='Paris', day='tomorrow')"
    )
    ((arg),) = change.call.args
    assert (arg.path, arg.base, arg.head) == ("/city", "Berlin", "Paris")
    assert [(s.name, s.base, s.head, s.delta) for s in change.scores] == [
        ("tool_argument_correctness", 1.0, 0.5, -0.5)
    ]
    assert change.changed == ("status", "reasons", "scores", "calls")


def test_a_call_the_head_no_longer_makes(travel: Comparison) -> None:
    change = _by_name(travel)["book the best rated hotel in Lisbon"]
    assert change.call is not None and change.call.index == 1
    assert change.call.head is None and change.call.args == ()
    assert call_text(change.call).startswith("#2 book_hotel(hotel_id='LIS-01', ")
    assert call_text(change.call).endswith(" → (no call)")


def test_a_fix_and_its_arguments(travel: Comparison) -> None:
    change = _by_name(travel)["currency named in words"]
    assert change.call is not None
    paths = {arg.path: (arg.base, arg.head) for arg in change.call.args}
    assert paths == {"/from_currency": ("EUR", "USD"), "/to_currency": ("USD", "EUR")}
    assert change.reasons_removed and not change.reasons_added


def test_still_failing_says_whether_its_reasons_changed(travel: Comparison) -> None:
    changes = _by_name(travel)
    moved = changes["weather at the destination, not the origin"]
    assert moved.reasons_changed and moved.call is None  # same calls, new metric
    assert moved.reasons_added[0].startswith("no_unexpected_tool_calls 0.00 < 1.00")
    assert moved.reasons_removed[0].startswith("tool_call_accuracy 0.00 < 1.00")
    same = changes["rain this week implies a forecast"]
    assert not same.reasons_changed and same.changed == ()


def test_a_score_that_appears_is_a_change(travel: Comparison) -> None:
    change = _by_name(travel)["five-day forecast for Tokyo"]
    assert change.changed == ("scores",)
    assert [(s.name, s.base, s.head, s.delta) for s in change.scores] == [
        ("tool_call_f1", None, 1.0, None)
    ]


def test_added_and_removed_scenarios_keep_their_side(travel: Comparison) -> None:
    changes = _by_name(travel)
    added, removed = changes["weather in Rome on Sunday"], changes["no budget means no max_price"]
    assert added.base is None and added.head is not None and added.head.status == "passed"
    assert removed.head is None and removed.base is not None
    # head's order first, then what only the base had
    assert travel.scenarios[-1] is removed


def test_identical_reports_are_unchanged(travel_pair: TravelPair) -> None:
    report = load_report(travel_pair.base)
    same = compare_reports(report, report)
    assert same.counts["unchanged"] == 13 and same.counts["still_failing"] == 3
    assert not any(change.moved for change in same.scenarios)
    assert not same.changed and not same.fails("any") and not same.fails("regressions")
    assert same.headline() == "no change: 16 scenarios, 3 still failing"


def test_a_rerun_of_the_same_suite_is_unchanged(tmp_path: Path, travel_pair: TravelPair) -> None:
    """Two real runs of one file differ in timings, ids and traces, never in class."""
    again = tmp_path / "again.json"
    assert main(["run", str(travel_pair.base_suite), "-q", "--json", str(again)]) == 1
    comparison = compare_reports(load_report(travel_pair.base), load_report(again))
    assert comparison.counts["unchanged"] == 13 and not comparison.changed


def test_the_run_results_compare_as_their_own_report(travel_pair: TravelPair) -> None:
    """The ``--baseline`` path: results held in memory are the head side, masked and read as
    the JSON report of the same run would be."""
    from harness.run.runner import RunOptions, run_scenarios

    scenarios = [s for suite in load_paths([travel_pair.head_suite]) for s in suite.scenarios]
    results = run_scenarios(scenarios, RunOptions(concurrency=4)).scenarios
    from_memory = compare_results(load_report(travel_pair.head), results)
    assert from_memory.head == "this run"
    assert not from_memory.changed, [c.id for c in from_memory.scenarios if c.kind != "unchanged"]
    against_base = compare_results(load_report(travel_pair.base), results)
    assert (
        against_base.counts
        == compare_reports(load_report(travel_pair.base), load_report(travel_pair.head)).counts
    )
    # what the reporters are fed: the views of the same results
    scrubber = Scrubber.for_runs(None, [run for result in results for run in result.runs])
    views = [scenario_view(result, scrubber) for result in results]
    assert not compare_views(load_report(travel_pair.head), views).changed


def test_eval_traces_results_match_by_trace(tmp_path: Path, travel_pair: TravelPair) -> None:
    """The same trace file scored with the base and the head suite: each trace is compared
    with itself; passing traces keep no calls (lean), so calls are compared only when both
    sides recorded them."""
    base, head = tmp_path / "base.json", tmp_path / "head.json"
    for suite, report in ((travel_pair.base_suite, base), (travel_pair.head_suite, head)):
        main(
            [
                "eval-traces",
                str(travel_pair.traces),
                "--scenarios",
                str(suite),
                "--json",
                str(report),
            ]
        )
    before, after = load_report(base), load_report(head)
    assert all(s.trace_id for s in before.scenarios)
    assert all(s.key.endswith(f"[{s.trace_id}]") for s in before.scenarios)
    comparison = compare_reports(before, after)
    changes = {change.scenario.name: change for change in comparison.scenarios}
    moved = changes["weather at the destination, not the origin"]
    assert moved.kind == "still_failing" and moved.reasons_changed
    assert changes["weather in Berlin tomorrow"].kind == "unchanged"  # same trace, same verdict
    lean = changes["weather in Berlin tomorrow"].head
    assert lean is not None and lean.calls is None  # a passing trace kept without its calls


# --- repeated runs: a real agent over a flaky service ------------------------------------------


def _flaky(reports: dict[str, Path], base: str, head: str, **options: float) -> ScenarioChange:
    comparison = compare_reports(load_report(reports[base]), load_report(reports[head]), **options)  # type: ignore[arg-type]
    (change,) = comparison.scenarios
    return change


def test_real_pass_rates_come_from_the_flaky_service(flaky_reports: dict[str, Path]) -> None:
    for name, path in flaky_reports.items():
        (scenario,) = load_report(path).scenarios
        assert f"{scenario.passes}/{scenario.runs}" == name


def test_eight_of_ten_to_three_of_ten_regressed(flaky_reports: dict[str, Path]) -> None:
    change = _flaky(flaky_reports, "8/10", "3/10")
    assert change.kind == "regressed" and change.rates is not None
    assert change.rates.p_drop == 6446 / 184756  # 0.0349: see test_stats.py
    assert (change.rates.base.passes, change.rates.head.passes) == (8, 3)
    assert round(change.rates.base.low, 4) == 0.4902


def test_nine_of_ten_to_seven_of_ten_is_not_significant(flaky_reports: dict[str, Path]) -> None:
    change = _flaky(flaky_reports, "9/10", "7/10")
    assert change.base is not None and change.head is not None
    assert (change.base.status, change.head.status) == ("passed", "failed")  # the status flipped
    assert change.kind == "not_significant"
    assert change.rates is not None and round(change.rates.p_drop, 3) == 0.291
    # a looser alpha takes the same drop as a regression
    assert _flaky(flaky_reports, "9/10", "7/10", alpha=0.3).kind == "regressed"


def test_a_significant_rise_is_a_fix(flaky_reports: dict[str, Path]) -> None:
    assert _flaky(flaky_reports, "3/10", "8/10").kind == "fixed"
    assert _flaky(flaky_reports, "7/10", "9/10").kind == "not_significant"


def test_failing_on_both_sides_without_a_significant_move_is_still_failing(
    flaky_reports: dict[str, Path],
) -> None:
    change = _flaky(flaky_reports, "3/10", "1/10")
    assert change.kind == "still_failing" and change.rates is not None
    assert not change.rates.dropped and change.reasons_changed


def test_a_drop_that_keeps_the_status_still_regresses(flaky_reports: dict[str, Path]) -> None:
    # 9/10 passes (pass_rate 0.8) and 1/10 fails: a flip; what matters is the test
    change = _flaky(flaky_reports, "9/10", "1/10")
    assert change.kind == "regressed"
    assert change.rates is not None and change.rates.p_drop < 0.001


def test_a_p_value_equal_to_alpha_counts(flaky_reports: dict[str, Path]) -> None:
    # 3/3 -> 0/3: p = 1/20 exactly, significant at alpha 0.05 (p <= alpha), not below it
    change = _flaky(flaky_reports, "3/3", "0/3")
    assert change.rates is not None and change.rates.p_drop == 0.05
    assert change.kind == "regressed"
    assert _flaky(flaky_reports, "3/3", "0/3", alpha=0.049).kind == "not_significant"


def test_k_gives_pass_at_k_and_pass_hat_k(flaky_reports: dict[str, Path]) -> None:
    default = _flaky(flaky_reports, "8/10", "3/10").rates
    assert default is not None and default.base.k == 10
    assert (default.base.pass_at_k, default.base.pass_hat_k) == (1.0, 0.0)
    at_three = _flaky(flaky_reports, "8/10", "3/10", k=3).rates
    assert at_three is not None
    assert at_three.base.pass_hat_k == 56 / 120  # C(8, 3) / C(10, 3)
    assert at_three.head.pass_at_k == 85 / 120  # 1 - C(7, 3) / C(10, 3) = (120 - 35) / 120


def test_a_base_that_ran_fewer_scenarios_counts_them_added(
    tmp_path: Path, travel_pair: TravelPair
) -> None:
    data = json.loads(travel_pair.base.read_text(encoding="utf-8"))
    data["scenarios"] = data["scenarios"][:4]
    data["interrupted"], data["not_run"] = True, 12
    base = tmp_path / "partial.json"
    base.write_text(json.dumps(data), encoding="utf-8")
    comparison = compare_reports(load_report(base), load_report(travel_pair.base))
    assert comparison.counts["added"] == 12 and comparison.counts["unchanged"] == 4
    assert any("was interrupted" in note for note in comparison.notes)
    assert any("12 scenarios selected but not run" in note for note in comparison.notes)


def test_an_argument_only_one_side_has_is_absent_on_the_other(
    tmp_path: Path, travel_pair: TravelPair
) -> None:
    data = json.loads(travel_pair.head.read_text(encoding="utf-8"))
    call = data["scenarios"][1]["runs"][0]["tool_calls"][0]
    call["args"]["units"] = "metric"
    del call["args"]["day"]
    head = tmp_path / "head.json"
    head.write_text(json.dumps(data), encoding="utf-8")
    change = _by_name(compare_reports(load_report(travel_pair.head), load_report(head)))[
        data["scenarios"][1]["name"]
    ]
    assert change.kind == "changed" and change.call is not None
    sides = {arg.path: (arg.base, arg.head) for arg in change.call.args}
    assert sides == {"/day": ("friday", ABSENT), "/units": (ABSENT, "metric")}


def test_secrets_read_the_same_on_both_sides(tmp_path: Path) -> None:
    """A run compared as it ends masks its results as its JSON report does: a secret argument
    is the mask on both sides (so not a change), and never reaches the comparison."""
    from harness.compare import comparison_json
    from harness.run.runner import run_scenarios
    from tests.support.suites import fixture_suite

    suite = fixture_suite(
        tmp_path,
        """
        - name: lookup with a token
          input: look alpha up
          script:
            - tool_calls: [{name: lookup, args: {key: alpha, token: hunter2-secret}}]
            - content: first
          expect: {tool_calls: [{name: lookup, args: {key: beta}}]}
        """,
    )
    report = tmp_path / "base.json"
    assert main(["run", str(suite), "-q", "--json", str(report)]) == 1
    assert "hunter2-secret" not in report.read_text(encoding="utf-8")
    results = run_scenarios([s for x in load_paths([suite]) for s in x.scenarios]).scenarios
    comparison = compare_results(load_report(report), results)
    assert not comparison.changed  # '***' on both sides
    (change,) = comparison.scenarios
    assert change.head is not None and change.head.calls is not None
    assert dict(change.head.calls[0].args) == {"key": "alpha", "token": "***"}
    assert "hunter2-secret" not in json.dumps(comparison_json(comparison))
