"""The Reporter protocol, and the feed that builds each view once and hands it to every reporter.

A reporter has the streaming shape pytest's terminal and junitxml plugins share: ``add`` one
finished result at a time, then ``close`` with the summary (or ``abort``). ``harness run`` and
``harness eval-traces`` feed the same list of reporters (``harness.cli.build_reporters``)
through one :class:`ReportFeed`; adding an output is one module plus one line in that list.
See docs/architecture.md, "Reporter".
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from harness.redaction import Redactor, Scrubber, StreamScrubber
from harness.report.links import with_trace_url
from harness.report.view import ScenarioView, SuiteView, scenario_view, suite_view
from harness.run.results import ScenarioResult, SuiteResult

if TYPE_CHECKING:
    from harness.compare import Comparison

__all__ = [
    "Baseline",
    "FeedWriter",
    "ReportFeed",
    "Reporter",
    "ResultWriter",
    "ScrubPolicy",
    "write_whole",
]


class Reporter(Protocol):
    """Renders results as they finish, then the summary.

    Contract (what the feed guarantees, so a reporter needs no locking):

    - Every call comes from one thread, one at a time; ``add`` gets the results in the order
      they finished (``harness run``: the suite's order once the run is over; ``harness
      eval-traces``: file order, as each trace is scored).
    - ``add`` is called zero or more times, then exactly one of ``close`` or ``abort``; nothing
      after that. ``abort`` means interrupted or failed: leave no partial output behind.
    - The views are immutable and already masked and scrubbed (:mod:`harness.report.view`): a
      reporter does no redaction and recomputes no pairing. It may keep views, but one that
      serves ``eval-traces`` keeps a bounded number (memory stays flat over 100,000 traces):
      stream them to disk, or keep a :class:`~harness.run.results.ResultSample`.
    - ``close`` receives the summary (counts of every result, also those the summary does not
      keep) and returns the file it wrote, or None (the console).
    - A reporter may raise ``OSError`` (cannot create or write its file) from any call; the feed
      reports it once, aborts that reporter and carries on with the others.
    """

    def add(self, result: ScenarioView) -> None:
        """Take one finished scenario."""

    def close(self, summary: SuiteView) -> Path | None:
        """Finish the output with the summary; return the file written, if any."""

    def abort(self) -> None:
        """Drop what was produced so far."""


class ScrubPolicy(Protocol):
    """Which scrubber masks each result and the summary (one redactor throughout).

    A :class:`~harness.redaction.Scrubber` built over a whole suite is its own policy;
    :class:`~harness.redaction.StreamScrubber` is the one for a stream.
    """

    @property
    def redactor(self) -> Redactor:
        """The key list every view is masked with."""

    def for_result(self, result: ScenarioResult) -> Scrubber:
        """The scrubber for one result."""

    def for_summary(self, summary: SuiteResult) -> Scrubber:
        """The scrubber for the summary's own text (its warnings)."""


class Baseline(Protocol):
    """``--baseline``: takes every view of the run, then compares them with the baseline
    report (:class:`harness.compare.RunBaseline`)."""

    def add(self, view: ScenarioView) -> None:
        """Take one finished scenario's view."""

    def compare(self) -> Comparison | None:
        """The run so far compared with the baseline; None when it cannot be (the baseline
        says why)."""


Failed = Callable[["Reporter", Exception], None]
"""Told once when a reporter raised ``OSError`` (or could not import what it renders with)."""


def _reraise(reporter: Reporter, exc: Exception) -> None:
    raise exc


class ReportFeed:
    """Builds each result's view once and hands it to every reporter, in order.

    A reporter that raises ``OSError`` (or ``ImportError``) is told to ``failed`` once, aborted
    and dropped; the others carry on. With no ``failed`` the error propagates (a single
    writer's caller wants it).
    """

    def __init__(
        self,
        reporters: Iterable[Reporter],
        scrub: ScrubPolicy,
        failed: Failed = _reraise,
        *,
        trace_url: str | None = None,
        baseline: Baseline | None = None,
        k: int | None = None,
    ) -> None:
        """Feed ``reporters``, masking with ``scrub``; ``failed`` hears of a broken one.

        ``trace_url``: a ``{trace_id}`` template linking each view to its trace (--trace-url).
        ``baseline``: sees every view; the summary view carries its comparison (--baseline).
        ``k``: the K of each view's pass@K and pass^K (--k; None: its number of runs).
        """
        self.reporters = list(reporters)
        self.scrub = scrub
        self._failed = failed
        self.trace_url = trace_url
        self.baseline = baseline
        self.k = k
        self.comparison: Comparison | None = None
        """Set by :meth:`close` when there is a ``baseline``."""

    @classmethod
    def for_suite(
        cls,
        reporters: Iterable[Reporter],
        result: SuiteResult,
        redactor: Redactor | None = None,
        failed: Failed = _reraise,
        *,
        trace_url: str | None = None,
        baseline: Baseline | None = None,
        k: int | None = None,
    ) -> ReportFeed:
        """A feed for a whole suite known up front: one scrubber over every run."""
        scrub = Scrubber.for_suite(redactor, result)
        return cls(reporters, scrub, failed, trace_url=trace_url, baseline=baseline, k=k)

    @classmethod
    def for_stream(
        cls,
        reporters: Iterable[Reporter],
        redactor: Redactor | None = None,
        failed: Failed = _reraise,
        *,
        trace_url: str | None = None,
        baseline: Baseline | None = None,
        k: int | None = None,
    ) -> ReportFeed:
        """A feed for results that arrive one by one (a :class:`StreamScrubber`)."""
        scrub = StreamScrubber(redactor)
        return cls(reporters, scrub, failed, trace_url=trace_url, baseline=baseline, k=k)

    def add(self, result: ScenarioResult) -> None:
        """Build ``result``'s view and hand it to every reporter (and the baseline)."""
        if not self.reporters and self.baseline is None:
            return
        view = scenario_view(result, self.scrub.for_result(result))
        if self.trace_url:
            view = with_trace_url(view, self.trace_url)
        if self.k is not None:
            view.k = self.k
        if self.baseline is not None:
            self.baseline.add(view)
        for reporter in list(self.reporters):
            try:
                reporter.add(view)
            except (OSError, ImportError) as exc:
                self._drop(reporter, exc)

    def close(self, summary: SuiteResult) -> list[Path]:
        """Close every reporter with the summary's view; returns the files written."""
        written: list[Path] = []
        reporters, self.reporters = self.reporters, []
        if not reporters and self.baseline is None:
            return written
        view = suite_view(summary, self.scrub.for_summary(summary))
        if self.baseline is not None:
            self.comparison = view.comparison = self.baseline.compare()
        for reporter in reporters:
            try:
                path = reporter.close(view)
            except (OSError, ImportError) as exc:
                reporter.abort()
                self._failed(reporter, exc)
                continue
            if path is not None:
                written.append(path)
        return written

    def run(self, result: SuiteResult) -> list[Path]:
        """Add every scenario of ``result``, then close with it (``harness run``'s reports)."""
        try:
            for scenario in result.scenarios:
                self.add(scenario)
        except BaseException:
            self.abort()
            raise
        return self.close(result)

    def abort(self) -> None:
        """Abort every reporter."""
        reporters, self.reporters = self.reporters, []
        for reporter in reporters:
            reporter.abort()

    def _drop(self, reporter: Reporter, exc: Exception) -> None:
        self.reporters.remove(reporter)
        reporter.abort()
        self._failed(reporter, exc)


class ResultWriter(Protocol):
    """A report fed with results, not views (``JsonReportWriter``, ``JunitReportWriter``)."""

    def add(self, scenario: ScenarioResult) -> None:
        """Append one scenario."""

    def close(self, summary: SuiteResult) -> Path:
        """Finish the file; the path written."""

    def abort(self) -> None:
        """Leave nothing behind."""


def write_whole(writer: ResultWriter, result: SuiteResult) -> Path:
    """Feed every scenario of ``result`` to ``writer`` and close it; abort it if that raises."""
    try:
        for scenario in result.scenarios:
            writer.add(scenario)
    except BaseException:
        writer.abort()
        raise
    return writer.close(result)


R = TypeVar("R", bound="_FileReporter")


class _FileReporter(Reporter, Protocol):
    path: Path


class FeedWriter(Generic[R]):
    """One file reporter fed with results, not views: each masked as it is added.

    ``scrubber``: mask every scenario with this one (a whole-suite scrubber); default: a
    :class:`~harness.redaction.StreamScrubber` over ``redactor``. The summary given to
    :meth:`close` is masked with the same policy.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        redactor: Redactor | None = None,
        scrubber: Scrubber | None = None,
    ) -> None:
        """Report to ``path`` (parents created now)."""
        reporter = self._reporter = self._open(path)
        policy: ScrubPolicy = StreamScrubber(redactor) if scrubber is None else scrubber
        self._feed = ReportFeed([reporter], policy)
        self.path = reporter.path

    def _open(self, path: str | os.PathLike[str]) -> R:
        """The file reporter writing ``path``."""
        raise NotImplementedError

    def add(self, scenario: ScenarioResult) -> None:
        """Append one scenario (masked now; nothing of it is kept)."""
        self._feed.add(scenario)

    def close(self, summary: SuiteResult) -> Path:
        """Finish the file from ``summary``; returns the path written."""
        self._feed.close(summary)
        return self.path

    def abort(self) -> None:
        """Drop what was written so far; ``path`` is left untouched."""
        self._feed.abort()
