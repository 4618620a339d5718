"""Reports: the Reporter protocol (``base``), the view model they render (``view``), the reporters.

Modules, each importing only those before it: ``files`` (atomic file output), ``view`` (the
redacted view model), ``text`` (plain-text renderings shared by console and JUnit), ``links``
(``--trace-url``), ``base`` (the :class:`~harness.report.base.Reporter` protocol and the feed),
then one module per reporter: ``console``, ``json_report``, ``junit``, ``html``, ``markdown``,
``github``. See docs/architecture.md, "Reporter".

The functions here take results (not views) for callers outside the reports — the pytest
plugin and the assertion API — and build the view on the spot with a scrubber over the runs
concerned (``redactor``: default key list; or a ready ``scrubber``).
"""

from __future__ import annotations

from harness.expectation import Expectation
from harness.redaction import Redactor, Scrubber
from harness.report import text
from harness.report.view import (
    MatchRow,
    RowVerdict,
    expectation_view,
    run_view,
    scenario_view,
    scrubber_for,
)
from harness.report.view import call_view as _call_view
from harness.run.results import RunResult, ScenarioResult
from tracing.records import ToolCall

__all__ = [
    "MatchRow",
    "RowVerdict",
    "describe_call",
    "describe_expectation",
    "failure_text",
    "match_rows",
    "render_match_table",
    "scores_text",
]


def describe_call(
    call: ToolCall, *, redactor: Redactor | None = None, scrubber: Scrubber | None = None
) -> str:
    """``name(key='value', ...)`` with secret-named arguments masked."""
    scrub = scrubber if scrubber is not None else Scrubber(redactor)
    return text.call_text(_call_view(0, call, scrub))


def describe_expectation(
    expectation: Expectation,
    *,
    redactor: Redactor | None = None,
    scrubber: Scrubber | None = None,
) -> str:
    """``name(key=pattern, ...)`` with secret-named arguments masked."""
    scrub = scrubber if scrubber is not None else Scrubber(redactor)
    return text.expectation_text(expectation_view(0, expectation, scrub))


def match_rows(
    run: RunResult, *, redactor: Redactor | None = None, scrubber: Scrubber | None = None
) -> list[MatchRow]:
    """The rows of a run's match table: every expected call, then every other call made."""
    return list(run_view(run, scrubber_for((run,), redactor, scrubber)).rows)


def render_match_table(
    run: RunResult, *, redactor: Redactor | None = None, scrubber: Scrubber | None = None
) -> str:
    """The plain-text match table of one run (empty string when nothing was expected or done)."""
    return text.match_table(run_view(run, scrubber_for((run,), redactor, scrubber)))


def failure_text(
    result: ScenarioResult,
    *,
    traceback: bool = True,
    verbose: bool = False,
    redactor: Redactor | None = None,
    scrubber: Scrubber | None = None,
) -> str:
    """Everything a reader needs about a scenario that did not pass, as plain text.

    A provider failure or a cassette miss is one line; ``verbose`` adds its traceback.
    """
    view = scenario_view(result, scrubber_for(result.runs, redactor, scrubber))
    return text.failure_text(view, traceback=traceback, verbose=verbose)


def scores_text(result: ScenarioResult) -> str:
    """``metric 1.00 ✓, metric 0.50 ✗`` for the run a report shows (checks included)."""
    run = result.first_failing_run()
    return text.scores_line(run.scores, run.checks) if run is not None else ""
