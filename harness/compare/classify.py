"""Classify every scenario of two reports: regressed, fixed, still failing, changed, ...

The rules are docs/metrics.md, "Comparing runs". In short: scenarios are matched by
``suite::name`` (and trace); one that ran once on both sides is classified by its status — a
passing verdict (passed, xpassed) turning into a failing one (failed, error) regressed, the
reverse is fixed; one that ran more than once on either side and whose status or pass rate
moved is classified by a one-sided Fisher exact test of the two rates at ``alpha``, so noise
is ``changed (not significant)`` and a significant drop is ``regressed`` even when the status
held.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from harness.compare.calls import first_difference
from harness.compare.comparison import (
    CallChange,
    Comparison,
    Kind,
    RateChange,
    ScenarioChange,
    ScoreChange,
)
from harness.compare.report import Report, ReportScenario
from harness.compare.stats import fisher_drop, fisher_rise, rate
from harness.text import plural

__all__ = ["DEFAULT_ALPHA", "classify", "compare_reports"]

DEFAULT_ALPHA = 0.05
"""The significance level of ``--alpha``."""

_SCORE_TOLERANCE = 1e-9
"""Score means closer than this are equal (the same values summed in another order)."""


def compare_reports(
    base: Report, head: Report, *, alpha: float = DEFAULT_ALPHA, k: int | None = None
) -> Comparison:
    """Every scenario of ``base`` and ``head``, classified; ``k``: the K of pass@K and pass^K
    (None: each side's run count)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1 (exclusive), got {alpha}")
    if k is not None and k < 1:
        raise ValueError(f"k must be 1 or more, got {k}")
    before = base.by_key()
    after = head.by_key()
    changes = [classify(before.get(key), scenario, alpha, k) for key, scenario in after.items()]
    changes += [
        classify(scenario, None, alpha, k) for key, scenario in before.items() if key not in after
    ]
    return Comparison(
        base=base.source,
        head=head.source,
        scenarios=tuple(changes),
        alpha=alpha,
        k=k,
        notes=tuple(_notes(base, head)),
    )


def classify(
    base: ReportScenario | None,
    head: ReportScenario | None,
    alpha: float = DEFAULT_ALPHA,
    k: int | None = None,
) -> ScenarioChange:
    """One scenario's class and what changed (``None``: the side does not have it)."""
    if base is None:
        assert head is not None, "a scenario of neither report"
        return ScenarioChange("added", None, head)
    if head is None:
        return ScenarioChange("removed", base, None)
    scores = _score_changes(base, head)
    added = tuple(reason for reason in head.reasons if reason not in base.reasons)
    removed = tuple(reason for reason in base.reasons if reason not in head.reasons)
    call = _call_change(base, head)
    repeated = base.runs > 1 or head.runs > 1
    changed = tuple(
        aspect
        for aspect, differs in (
            ("status", base.status != head.status),
            # run once on both sides, the status says it all
            ("pass rate", repeated and (base.passes, base.runs) != (head.passes, head.runs)),
            ("reasons", bool(added or removed)),
            ("scores", bool(scores)),
            ("calls", call is not None),
        )
        if differs
    )
    rates = _rates(base, head, alpha, k) if repeated else None
    return ScenarioChange(
        kind=_kind(base, head, rates, changed),
        base=base,
        head=head,
        changed=changed,
        rates=rates,
        scores=scores,
        reasons_added=added,
        reasons_removed=removed,
        call=call,
    )


def _kind(
    base: ReportScenario, head: ReportScenario, rates: RateChange | None, changed: tuple[str, ...]
) -> Kind:
    if rates is not None and ("status" in changed or rates.direction):
        return _by_rates(base, head, rates)
    if head.failing:
        # failing before too (an xfailed one has failing runs): its xfail mark was dropped
        return "still_failing" if base.failing or base.status == "xfailed" else "regressed"
    if (base.failing or base.status == "xfailed") and head.status in ("passed", "xpassed"):
        return "fixed"
    return "changed" if changed else "unchanged"


def _by_rates(base: ReportScenario, head: ReportScenario, rates: RateChange) -> Kind:
    """A repeated scenario whose status or pass rate moved: the test decides, not the flip."""
    if rates.direction < 0 and rates.dropped:
        return "regressed"
    if rates.direction > 0 and rates.rose:
        return "fixed"
    return "still_failing" if base.failing and head.failing else "not_significant"


def _rates(base: ReportScenario, head: ReportScenario, alpha: float, k: int | None) -> RateChange:
    before = (base.passes, base.runs)
    after = (head.passes, head.runs)
    return RateChange(
        base=rate(base.passes, base.runs, k),
        head=rate(head.passes, head.runs, k),
        p_drop=fisher_drop(before, after),
        p_rise=fisher_rise(before, after),
        alpha=alpha,
    )


def _score_changes(base: ReportScenario, head: ReportScenario) -> tuple[ScoreChange, ...]:
    before = base.score_map
    after = head.score_map
    names = list(before) + [name for name in after if name not in before]
    changes = []
    for name in names:
        old, new = before.get(name), after.get(name)
        if name in before and name in after and _same_value(old, new):
            continue
        changes.append(ScoreChange(name, old, new))
    return tuple(changes)


def _same_value(old: float | None, new: float | None) -> bool:
    if old is None or new is None:
        return old is new
    return math.isclose(old, new, rel_tol=0.0, abs_tol=_SCORE_TOLERANCE)


def _call_change(base: ReportScenario, head: ReportScenario) -> CallChange | None:
    """The first differing call of the shown runs; None when they agree or one side recorded
    nothing (a lean passing trace has no calls to compare, which is not "no calls")."""
    if base.calls is None or head.calls is None:
        return None
    return first_difference(base.calls, head.calls)


def _notes(base: Report, head: Report) -> Iterator[str]:
    """What the inputs leave out, which a reader must know to trust the classes."""
    for report, kind in ((base, "added"), (head, "removed")):
        if report.interrupted:
            yield f"{report.source} was interrupted: what it did not run counts as {kind}"
        if report.not_run:
            yield (
                f"{report.source}: {plural(report.not_run, 'scenario')} selected but not run "
                f"(they count as {kind} where the other side ran them)"
            )
