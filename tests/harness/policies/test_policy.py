"""Policy, Selector and PolicyReport on real traces (the demo agents' runs, conftest.py)."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.policies import Policy, PolicyReport, Selector, iter_trace_runs
from harness.rules import Forbid, MaxRepeats, Rule, RuleOutcome, Trajectory
from harness.rules.patterns import CallPattern
from harness.values import compile_pattern
from tests.harness.policies.conftest import Recorded
from tracing.otel.trace_run import TraceRun


def _runs(*recorded: Recorded) -> list[tuple[TraceRun, str]]:
    warnings: list[str] = []
    runs = [item for r in recorded for item in iter_trace_runs(r.path, warnings)]
    assert not warnings
    return runs


@dataclass(frozen=True)
class Exploding:
    """A rule kind whose own code fails on every trace (a bug in a rule)."""

    PASSED = RuleOutcome(True, None, "never")

    def passes_by_names(self, counts: Mapping[str, int]) -> bool:
        return False

    def evaluate(self, trajectory: Trajectory) -> RuleOutcome:
        raise ZeroDivisionError("boom")


def test_a_raising_rule_is_that_rules_result_and_the_others_still_run(shop: Recorded) -> None:
    (run, _), *_ = _runs(shop)
    policy = Policy(
        "p",
        Selector(),
        (
            Rule("bad", Exploding()),  # type: ignore[arg-type]
            Rule("no calls at all", Forbid(CallPattern("*"))),
        ),
    )
    bad, forbid = policy.evaluate(run)
    assert (bad.rule, bad.passed, bad.code, bad.error, bad.policy) == (
        "bad",
        False,
        "rule_error",
        True,
        "p",
    )
    assert "ZeroDivisionError: boom" in bad.reason
    assert (forbid.passed, forbid.code, forbid.policy) == (False, "forbidden_call", "p")
    report = PolicyReport([policy])
    report.add(run)
    bad_stats, forbid_stats = report.policies[0].rules
    assert (bad_stats.unevaluable, bad_stats.evaluated, bad_stats.violations) == (1, 0, 0)
    assert (forbid_stats.evaluated, forbid_stats.violations) == (1, 1)
    assert report.failed and not bad_stats.failed


def test_the_trajectory_of_a_trace_is_what_the_live_run_recorded(shop: Recorded) -> None:
    for run, _ in _runs(shop):
        trajectory = Trajectory.from_trace_run(run)
        assert [call.name for call in trajectory.calls] == shop.tools[run.trace_id]
        assert trajectory.user_inputs and trajectory.model_calls
        assert trajectory.duration is not None and trajectory.duration > 0


def test_merged_halves_report_what_one_pass_reports(shop: Recorded, calc: Recorded) -> None:
    runs = _runs(shop, calc)
    policies = [
        Policy(
            "shop", Selector(service="shop"), (Rule("no cancel", Forbid(CallPattern("cancel_*"))),)
        ),
        Policy(
            "all",
            Selector(),
            (Rule("repeats", MaxRepeats(1)), Rule("any", Forbid(CallPattern("*")), "warn")),
        ),
    ]
    whole = PolicyReport(policies, examples=2)
    for run, source in runs:
        whole.add(run, source)
    for cut in (0, 3, len(runs) // 2, len(runs)):
        first, second = PolicyReport(policies, examples=2), PolicyReport(policies, examples=2)
        for run, source in runs[:cut]:
            first.add(run, source)
        for run, source in runs[cut:]:
            second.add(run, source)
        first.merge(second)
        assert first.to_json() == whole.to_json()


def _reference(selector: dict[str, Any], run: TraceRun) -> bool:
    """What a selector means, said the plain way."""

    def glob(pattern: str, value: str | None) -> bool:
        return value is not None and fnmatch.fnmatchcase(value, pattern)

    if "service" in selector and not glob(selector["service"], run.service):
        return False
    if "agent" in selector and not glob(selector["agent"], run.agent):
        return False
    if "root" in selector and not glob(selector["root"], run.root_name):
        return False
    for key, value in selector.get("attributes", {}).items():
        found = run.root_attributes.get(key, run.resource.get(key, "(absent)"))
        if found != value:
            return False
    if "uses_tool" in selector:
        names = {call.name for call in run.calls}
        return any(glob(g, n) for g in selector["uses_tool"] for n in names)
    return True


NAMES = ["shop", "calc", "orders", "calculator", "sh*", "*", "c?lc", "[sc]*", "scenario *", "x"]
TOOLS = ["cancel_order", "get_*", "add", "*_order", "multiply", "nothing", "[am]*"]
ATTRIBUTES = {
    "harness.suite": ["orders", "calculator", "x"],
    "service.name": ["shop", "calc"],
    "missing.key": ["x"],
}


@st.composite
def selectors(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("service", "agent", "root"):
        if draw(st.booleans()):
            out[key] = draw(st.sampled_from(NAMES))
    if draw(st.booleans()):
        keys = draw(st.lists(st.sampled_from(sorted(ATTRIBUTES)), max_size=2, unique=True))
        out["attributes"] = {k: draw(st.sampled_from(ATTRIBUTES[k])) for k in keys}
    if draw(st.booleans()):
        out["uses_tool"] = draw(st.lists(st.sampled_from(TOOLS), min_size=1, max_size=3))
    return out


@pytest.fixture(scope="module")
def every_run(shop: Recorded, calc: Recorded) -> list[TraceRun]:
    """The demo runs, and copies of a few differing from them in one key a selector reads
    (so a verdict kept per key is asked about runs that share all but one)."""
    runs = [run for run, _ in _runs(shop, calc)]
    names = ["shop", "calc", "orders", "calculator", "scenario x", None]
    copies = [
        replace(run, **{key: name})
        for run in runs[:3]
        for key in ("service", "agent", "root_name")
        for name in names
    ]
    copies += [replace(run, calls=other.calls) for run in runs[:4] for other in runs[:8]]
    return runs + copies


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(selector=selectors())
def test_a_selector_takes_exactly_the_traces_its_keys_describe(
    every_run: list[TraceRun], selector: dict[str, Any]
) -> None:
    built = Selector(
        selector.get("service"),
        selector.get("agent"),
        selector.get("root"),
        tuple((k, compile_pattern(v)) for k, v in selector.get("attributes", {}).items()),
        tuple(selector.get("uses_tool", ())),
    )
    for _ in range(2):  # the second time, the verdicts it kept per key answer
        for run in every_run:
            assert built.selects(run) == _reference(selector, run), (selector, run.trace_id)
