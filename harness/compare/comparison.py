"""The value a comparison gives: per scenario its class and what changed (data only).

Every renderer (:mod:`harness.compare.console`, :mod:`harness.compare.sections`) and every
caller (``harness compare``, a run's ``--baseline``) reads a :class:`Comparison`; how one is
computed is :mod:`harness.compare.classify` (docs/metrics.md, "Comparing runs").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from harness.compare.report import Call, ReportScenario
from harness.compare.stats import Rate
from harness.text import plural

__all__ = [
    "FAIL_ON",
    "KINDS",
    "LABELS",
    "ArgChange",
    "CallChange",
    "Comparison",
    "FailOn",
    "Kind",
    "RateChange",
    "ScenarioChange",
    "ScoreChange",
]

Kind = Literal[
    "regressed",
    "fixed",
    "still_failing",
    "not_significant",
    "changed",
    "added",
    "removed",
    "unchanged",
]
KINDS: tuple[Kind, ...] = (
    "regressed",
    "fixed",
    "still_failing",
    "not_significant",
    "changed",
    "added",
    "removed",
    "unchanged",
)
"""Every class, in the order reports list them (the worst news first)."""

LABELS: Mapping[Kind, str] = {
    "regressed": "regressed",
    "fixed": "fixed",
    "still_failing": "still failing",
    "not_significant": "changed (not significant)",
    "changed": "changed",
    "added": "added",
    "removed": "removed",
    "unchanged": "unchanged",
}
"""How a person reads each class."""

FailOn = Literal["regressions", "any", "none"]
FAIL_ON: tuple[FailOn, ...] = ("regressions", "any", "none")
"""``--fail-on``: exit 1 on a regression; on any change at all (:attr:`ScenarioChange.moved`);
never."""


@dataclass(frozen=True, slots=True)
class ScoreChange:
    """One metric's value on each side (the mean over the runs); None where it is absent."""

    name: str
    base: float | None
    head: float | None

    @property
    def delta(self) -> float | None:
        """``head - base``; None unless both sides have a value."""
        if self.base is None or self.head is None:
            return None
        return self.head - self.base


@dataclass(frozen=True, slots=True)
class ArgChange:
    """One argument that differs between the two calls: where (JSON pointer) and the values.

    ``base`` / ``head`` is :data:`harness.values.ABSENT` on the side that lacks the argument.
    """

    path: str
    base: Any
    head: Any


@dataclass(frozen=True, slots=True)
class CallChange:
    """The first call that differs between the two sides' shown runs, and how."""

    index: int
    """0-based position in the run's calls (reports print it 1-based: ``#2``)."""
    base: Call | None
    """None: the base run made fewer calls."""
    head: Call | None
    """None: the head run made fewer calls."""
    args: tuple[ArgChange, ...] = ()
    """The arguments that differ, when both calls have the same tool."""


@dataclass(frozen=True, slots=True)
class RateChange:
    """A repeated scenario's two pass rates and the one-sided Fisher exact tests between them."""

    base: Rate
    head: Rate
    p_drop: float
    """P-value that head's rate is lower (docs/metrics.md, "Comparing runs")."""
    p_rise: float
    """P-value that head's rate is higher."""
    alpha: float

    @property
    def dropped(self) -> bool:
        """The drop is significant: ``p_drop <= alpha``."""
        return self.p_drop <= self.alpha

    @property
    def rose(self) -> bool:
        """The rise is significant: ``p_rise <= alpha``."""
        return self.p_rise <= self.alpha

    @property
    def direction(self) -> int:
        """1 when head's rate is higher, -1 when lower, 0 when equal (or a side has no runs)."""
        if not self.base.runs or not self.head.runs:
            return 0
        head, base = self.head.passes * self.base.runs, self.base.passes * self.head.runs
        return (head > base) - (head < base)

    @property
    def p_value(self) -> float:
        """The p-value of the direction the rate moved (the drop's when it did not move)."""
        return self.p_rise if self.direction > 0 else self.p_drop


@dataclass(frozen=True, slots=True)
class ScenarioChange:
    """One scenario of either report: its class, both sides, and what changed."""

    kind: Kind
    base: ReportScenario | None
    head: ReportScenario | None
    changed: tuple[str, ...] = ()
    """What differs: any of ``status``, ``pass rate``, ``reasons``, ``scores``, ``calls``."""
    rates: RateChange | None = None
    """Set when either side ran the scenario more than once."""
    scores: tuple[ScoreChange, ...] = ()
    """The metrics whose value differs (or that one side lacks)."""
    reasons_added: tuple[str, ...] = ()
    reasons_removed: tuple[str, ...] = ()
    call: CallChange | None = None

    @property
    def scenario(self) -> ReportScenario:
        """The side that names it (head's when both do: its file and line are current)."""
        side = self.head if self.head is not None else self.base
        assert side is not None  # a change has at least one side
        return side

    @property
    def id(self) -> str:
        """``suite::name`` (``[trace]`` for a trace)."""
        return self.scenario.id

    @property
    def label(self) -> str:
        """The class as a person reads it."""
        return LABELS[self.kind]

    @property
    def moved(self) -> bool:
        """Anything differs: every class but ``unchanged``, and ``still failing`` only when
        something about the failure changed (a report compared with itself has no change)."""
        if self.kind == "still_failing":
            return bool(self.changed)
        return self.kind != "unchanged"

    @property
    def reasons_changed(self) -> bool:
        """The failure reasons differ between the sides."""
        return bool(self.reasons_added or self.reasons_removed)


@dataclass(frozen=True, slots=True)
class Comparison:
    """Every scenario of both reports, classified; the options that decided it."""

    base: str
    """Where the base report came from (its file)."""
    head: str
    """Where the head report came from (its file, or ``this run``)."""
    scenarios: tuple[ScenarioChange, ...]
    """Head's order, then what only the base had, in its order."""
    alpha: float = 0.05
    k: int | None = None
    """``--k`` (None: each scenario's own run count)."""
    notes: tuple[str, ...] = ()
    """What a reader should know about the inputs (an interrupted base, scenarios not run)."""
    counts: Mapping[Kind, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        tally: dict[Kind, int] = dict.fromkeys(KINDS, 0)
        for change in self.scenarios:
            tally[change.kind] += 1
        object.__setattr__(self, "counts", tally)

    def ordered(self) -> list[ScenarioChange]:
        """Every scenario, the worst news first (:data:`KINDS` order), report order within."""
        rank = {kind: index for index, kind in enumerate(KINDS)}
        return sorted(self.scenarios, key=lambda change: rank[change.kind])

    def of_kind(self, *kinds: Kind) -> list[ScenarioChange]:
        """The scenarios of these classes, in report order."""
        return [change for change in self.scenarios if change.kind in kinds]

    @property
    def changed(self) -> bool:
        """Anything at all differs (a fix, an added scenario, a score, a failure's reasons)."""
        return any(change.moved for change in self.scenarios)

    def fails(self, fail_on: FailOn) -> bool:
        """Whether ``--fail-on fail_on`` makes the exit code 1."""
        if fail_on == "regressions":
            return bool(self.counts["regressed"])
        return fail_on == "any" and self.changed

    def headline(self) -> str:
        """``3 regressions, 1 fix, 2 still failing, 10 unchanged`` (regressions and fixes
        always, the rest when there are any); ``no change: 16 scenarios, 3 still failing``."""
        counts = self.counts
        if not self.changed:
            head = f"no change: {plural(len(self.scenarios), 'scenario')}"
            failing = counts["still_failing"]
            return f"{head}, {failing} still failing" if failing else head
        parts = [
            plural(counts["regressed"], "regression"),
            plural(counts["fixed"], "fix", "fixes"),
        ]
        parts += [f"{counts[kind]} {LABELS[kind]}" for kind in KINDS[2:] if counts[kind]]
        return ", ".join(parts)
