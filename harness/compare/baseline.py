"""A run compared with a baseline report as it ends (``--baseline BASE.json``).

``harness run``, ``eval-traces`` and the pytest plugin hold their results as report views (or
results); these turn them into the head side of a comparison, masked as the JSON report masks
them, so a secret argument reads the same on both sides. :class:`RunBaseline` takes the views
one at a time, as the report feed hands them out, keeping only what a comparison reads of
each (not its runs' detail): ``eval-traces`` streams 100,000s of results.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from harness.compare.classify import DEFAULT_ALPHA, compare_reports
from harness.compare.comparison import Comparison
from harness.compare.load import (
    report_from_results,
    report_from_scenarios,
    report_from_views,
    scenario_from_view,
)
from harness.compare.report import Report, ReportScenario
from harness.errors import ReportError

if TYPE_CHECKING:
    from harness.redaction import Redactor
    from harness.report.view import ScenarioView
    from harness.run.results import ScenarioResult

__all__ = ["RunBaseline", "compare_results", "compare_views"]


class RunBaseline:
    """The baseline report a run is compared with, and what the run gave so far.

    Fed by :class:`~harness.report.base.ReportFeed` (``add`` per view, ``compare`` at the
    end); the ``k`` and ``alpha`` of ``--k`` and ``--alpha``.
    """

    def __init__(
        self,
        report: Report,
        *,
        alpha: float = DEFAULT_ALPHA,
        k: int | None = None,
        source: str = "this run",
    ) -> None:
        """Compare with ``report``; this run is named ``source`` in the comparison."""
        self.report = report
        self.alpha = alpha
        self.k = k
        self.source = source
        self._scenarios: list[ReportScenario] = []
        self.error: ReportError | None = None
        """Why :meth:`compare` gave None."""
        self.comparison: Comparison | None = None
        """What :meth:`compare` gave last."""

    def add(self, view: ScenarioView) -> None:
        """Keep what the comparison reads of one finished scenario."""
        self._scenarios.append(scenario_from_view(view, self.source, len(self._scenarios)))

    def add_result(self, result: ScenarioResult, redactor: Redactor | None = None) -> None:
        """Keep one finished scenario held as a result (the pytest plugin's), masked as the
        JSON report masks it."""
        (scenario,) = report_from_results([result], redactor, self.source).scenarios
        self._scenarios.append(scenario)

    def compare(self) -> Comparison | None:
        """The baseline against the scenarios taken so far; None (why in :attr:`error`) when
        the run cannot be compared: it named a scenario twice."""
        try:
            head = report_from_scenarios(self._scenarios, self.source)
        except ReportError as exc:
            self.error = exc
            return None
        self.comparison = compare_reports(self.report, head, alpha=self.alpha, k=self.k)
        return self.comparison


def compare_views(
    base: Report,
    views: Iterable[ScenarioView],
    *,
    alpha: float = DEFAULT_ALPHA,
    k: int | None = None,
) -> Comparison:
    """``base`` against the run's results as report views (what every reporter is fed)."""
    return compare_reports(base, report_from_views(views), alpha=alpha, k=k)


def compare_results(
    base: Report,
    results: Iterable[ScenarioResult],
    *,
    redactor: Redactor | None = None,
    alpha: float = DEFAULT_ALPHA,
    k: int | None = None,
) -> Comparison:
    """``base`` against the run's results, masked with ``redactor`` (default: the default
    keys) as the JSON report masks them."""
    return compare_reports(base, report_from_results(results, redactor), alpha=alpha, k=k)
