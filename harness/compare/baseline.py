"""A run compared with a baseline report as it ends (``--baseline BASE.json``).

``harness run``, ``eval-traces`` and the pytest plugin hold their results as report views (or
results); these turn them into the head side of a comparison, masked as the JSON report masks
them, so a secret argument reads the same on both sides.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from harness.compare.classify import DEFAULT_ALPHA, compare_reports
from harness.compare.comparison import Comparison
from harness.compare.load import report_from_results, report_from_views
from harness.compare.report import Report

if TYPE_CHECKING:
    from harness.redaction import Redactor
    from harness.report.view import ScenarioView
    from harness.run.results import ScenarioResult

__all__ = ["compare_results", "compare_views"]


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
