"""What changed between two runs: ``harness compare`` and ``--baseline`` (docs/metrics.md,
"Comparing runs").

Modules, each importing only those before it:

* :mod:`~harness.compare.stats` — pass-rate statistics as plain functions of counts: the Wilson
  interval, pass@k, pass^k, the one-sided Fisher exact tests (also for the per-run reports);
* :mod:`~harness.compare.report` — a JSON report as a comparison reads it (data only);
* :mod:`~harness.compare.load` — reading one: checked, upgraded, clear errors;
* :mod:`~harness.compare.comparison` — the :class:`Comparison` value every renderer reads;
* :mod:`~harness.compare.calls` — the first differing call and its argument diff;
* :mod:`~harness.compare.classify` — regressed, fixed, still failing, ... per scenario;
* :mod:`~harness.compare.baseline` — a run's own results as the head side;
* :mod:`~harness.compare.text`, :mod:`~harness.compare.console`,
  :mod:`~harness.compare.sections` — the console block, the JSON section, Markdown, GitHub.

Nothing here imports LangChain: ``harness compare`` reads two files and prints.
"""

from __future__ import annotations

from harness.compare.baseline import RunBaseline, compare_results, compare_views
from harness.compare.classify import DEFAULT_ALPHA, classify, compare_reports
from harness.compare.comparison import (
    FAIL_ON,
    KINDS,
    LABELS,
    ArgChange,
    CallChange,
    Comparison,
    FailOn,
    Kind,
    RateChange,
    ScenarioChange,
    ScoreChange,
)
from harness.compare.console import console_block, summary_rule
from harness.compare.load import load_report, parse_report, report_from_results, report_from_views
from harness.compare.report import Call, Report, ReportScenario
from harness.compare.sections import comparison_json, github_annotations, markdown_lines
from harness.compare.stats import (
    Rate,
    fisher_drop,
    fisher_rise,
    pass_at_k,
    pass_hat_k,
    rate,
    wilson_interval,
)

__all__ = [
    "DEFAULT_ALPHA",
    "FAIL_ON",
    "KINDS",
    "LABELS",
    "ArgChange",
    "Call",
    "CallChange",
    "Comparison",
    "FailOn",
    "Kind",
    "Rate",
    "RateChange",
    "Report",
    "ReportScenario",
    "RunBaseline",
    "ScenarioChange",
    "ScoreChange",
    "classify",
    "compare_reports",
    "compare_results",
    "compare_views",
    "comparison_json",
    "console_block",
    "fisher_drop",
    "fisher_rise",
    "github_annotations",
    "load_report",
    "markdown_lines",
    "parse_report",
    "pass_at_k",
    "pass_hat_k",
    "rate",
    "report_from_results",
    "report_from_views",
    "summary_rule",
    "wilson_interval",
]
