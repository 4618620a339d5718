"""A JSON report as a comparison reads it: per scenario, its verdict and what to diff.

Only what a comparison looks at is kept — the status, runs and passes, reasons, the mean of
each score over the runs, and the calls of the run a report shows (the first that did not
pass, else the last) — not traces, outputs or score details. Data only: reading a file is
:mod:`harness.compare.load`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.text import shorten

__all__ = ["ARG_WIDTH", "Call", "Report", "ReportScenario"]

ARG_WIDTH = 40
"""Widest one argument value is drawn inside a call (as the match table draws it)."""

FAILING = frozenset({"failed", "error"})
"""Statuses that fail a run (xfailed and xpassed do not, as in pytest)."""


@dataclass(frozen=True, slots=True)
class Call:
    """A recorded tool call: name, arguments (as the report wrote them: secrets masked), turn."""

    name: str
    args: Mapping[str, Any]
    turn: int | None = None
    """0-based model turn that requested it (None in a report that does not say)."""
    captured: bool = True
    """False: the trace was recorded without content, so ``args`` is empty for that reason."""

    def text(self) -> str:
        """``name(key='value', ...)``, long values shortened."""
        if not self.captured:
            return f"{self.name}(…)"
        inner = ", ".join(
            f"{key}={shorten(repr(value), ARG_WIDTH)}" for key, value in self.args.items()
        )
        return f"{self.name}({inner})"


@dataclass(frozen=True, slots=True)
class ReportScenario:
    """One scenario of a report, as a comparison reads it."""

    suite: str
    name: str
    file: str
    line: int | None
    status: str
    runs: int
    passes: int
    reasons: tuple[str, ...] = ()
    scores: tuple[tuple[str, float | None], ...] = ()
    """Per metric (in report order), the mean of its value over the runs that have it; None
    when no run gave a number (NaN is written as null)."""
    calls: tuple[Call, ...] | None = None
    """The calls of the shown run; None when that run recorded nothing (it errored before,
    or it is a passing trace ``eval-traces`` kept without its calls)."""
    trace_id: str | None = None
    """Set for a result of ``harness eval-traces``: the trace it scored."""
    xfail: str | None = None

    @property
    def key(self) -> str:
        """What a comparison matches on: ``suite::name``, plus ``[trace id]`` for a trace."""
        base = f"{self.suite}::{self.name}"
        return f"{base}[{self.trace_id}]" if self.trace_id else base

    @property
    def id(self) -> str:
        """``suite::name`` as every report shows it (a trace id cut to 12 digits)."""
        base = f"{self.suite}::{self.name}"
        return f"{base}[{self.trace_id[:12]}]" if self.trace_id else base

    @property
    def location(self) -> str:
        """``file:line`` (the file alone when the line is not known)."""
        return f"{self.file}:{self.line}" if self.line else self.file

    @property
    def failing(self) -> bool:
        """Failed or errored: the verdicts that fail a run."""
        return self.status in FAILING

    @property
    def score_map(self) -> dict[str, float | None]:
        """The scores by metric name."""
        return dict(self.scores)


@dataclass(frozen=True, slots=True)
class Report:
    """A report's scenarios (each key once) and what its head says about completeness."""

    source: str
    """The file it was read from, or ``this run`` for results compared as they finish."""
    scenarios: tuple[ReportScenario, ...]
    version: int = 1
    interrupted: bool = False
    not_run: int = 0
    """Scenarios selected but never run (``--fail-fast``, Ctrl-C): absent from the list."""

    def by_key(self) -> dict[str, ReportScenario]:
        """The scenarios by :attr:`ReportScenario.key`, in report order."""
        return {scenario.key: scenario for scenario in self.scenarios}

    def counts(self) -> dict[str, int]:
        """Scenarios per status, in the order statuses first appear."""
        out: dict[str, int] = {}
        for scenario in self.scenarios:
            out[scenario.status] = out.get(scenario.status, 0) + 1
        return out
