"""The view classes every reporter renders from (:mod:`harness.report.view` describes the shape).

Only data and the few properties reporters ask of it; building a view from a result is
:mod:`harness.report.view.build`, its match rows :mod:`harness.report.view.rows`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from harness.run.results import ScenarioIdentity, Status

if TYPE_CHECKING:
    from harness.compare import Comparison, Rate

RowVerdict = Literal["ok", "wrong_args", "wrong_result", "invalid", "missing", "unexpected"]
"""``ok``: the call matches; ``wrong_args``: same tool, some argument wrong; ``wrong_result``:
same tool and arguments, but its result does not match the expected ``result``; ``invalid``:
same tool, but the model's arguments were not JSON (an ``invalid`` call, which pairs with
nothing); ``missing``: no call for this expectation; ``unexpected``: a call no expectation
claimed."""

# --- the view classes ---------------------------------------------------------------------


@dataclass(slots=True)
class ArgView:
    """One argument of a call or an expectation, masked and scrubbed."""

    key: str
    value: Any
    """JSON-ready (matchers in their ``$`` mapping form); the mask when ``masked``."""
    text: str
    """How a table shows it (``repr``, a matcher's ``$`` description); ``repr`` of the mask when
    ``masked``."""
    masked: bool
    """The key is secret: the value was replaced by the mask."""


@dataclass(slots=True)
class CallView:
    """A recorded call: index in the run's calls, name, arguments, what its execution gave."""

    index: int
    name: str
    args: tuple[ArgView, ...]
    status: str
    """The call's status (``tracing.records.CallStatus``): ``ok``, ``error``, ``requested``
    (asked for, never executed), ``interrupted`` or ``invalid`` (arguments not JSON)."""
    error: str | None
    result: Any
    """JSON-ready, masked and scrubbed (None when the tool returned nothing or did not run)."""
    result_text: str | None
    """The result as prose: a string as it is (JSON text masked inside), else its ``text``
    form; None when there is no result."""
    id: str | None = None
    node: str | None = None
    turn: int = 0
    duration_ns: int | None = None
    args_captured: bool = True
    """False when the trace was recorded without content: ``args`` is empty for that reason,
    not because the model sent none (``harness eval-traces``)."""
    agent: str | None = None
    """The path of graphs the call ran in (``supervisor/research_agent``), None if unknown."""


@dataclass(slots=True)
class ExpectationView:
    """An expected call: index in the sample's expectations, tool name, argument patterns."""

    index: int
    name: str
    args: tuple[ArgView, ...]
    agent: str | None = None
    """The agent the expectation is scoped to (a path, its last segments or a glob)."""
    node: str | None = None
    """The node the expectation is scoped to (a name or a glob)."""
    label: str | None = None
    """Its label (``id:``), which ``after`` and ``$ref`` name."""
    after: tuple[str, ...] = ()
    """The labels whose calls must come before this one's."""
    optional: bool = False
    """An optional expectation (one that is shown was matched: absent ones are dropped)."""
    result: ArgView | None = None
    """The expected result (key ``result``), when one is given."""


@dataclass(slots=True)
class DiffView:
    """One argument difference of a paired row, ready to show."""

    path: str
    """JSON pointer of the argument (``/filter/status``); ``""`` for the arguments as a whole."""
    code: str
    """The diff's reason code (``wrong_value``, ``missing_arg``, ``extra_arg``, ...)."""
    expected: str
    """The expected pattern as text (the mask when ``masked``)."""
    actual: str
    """The actual value as text (``<absent>`` when missing; the mask when ``masked``)."""
    reason: str
    """The diff's message, scrubbed; ``"<code> (value masked)"`` when ``masked``."""
    masked: bool
    """The path crosses a secret key, or a value held one: the message is not shown."""
    source: str = ""
    """``""`` for the expectation's own check; else the metric that recorded the diff."""

    @property
    def top(self) -> str:
        """The top-level argument the diff sits under (``""`` for the whole arguments, and for
        a ``wrong_result`` diff, whose path ``result/...`` is not an argument's)."""
        return _pointer(self.path)[0] if self.path.startswith("/") else ""


@dataclass(slots=True)
class MatchRow:
    """One line of the match table: an expected call and its partner, or an unexpected call."""

    verdict: RowVerdict
    expected_index: int | None
    """Index into :attr:`RunView.expected` (None for an unexpected call)."""
    actual_index: int | None
    """Index into :attr:`RunView.calls` (None for a missing call)."""
    diffs: tuple[DiffView, ...] = ()
    note: str | None = None
    """Scrubbed: for an unexpected call that failed, ``error: <message>``; for an ``invalid``
    call, why its arguments could not be read (the clause reasons give as the likely cause)."""
    tags: tuple[str, ...] = ()
    """What failing checks say of the actual call: ``forbidden``, ``tool error``."""
    rules: tuple[int, ...] = ()
    """Indices into :attr:`RunView.checks` of the failed rules that name the actual call (its
    ``severity`` says whether it failed the run or only warned)."""


@dataclass(slots=True)
class ScoreView:
    """A metric's verdict on the run, reason scrubbed, details JSON-ready and masked."""

    name: str
    value: float
    threshold: float
    passed: bool
    reason: str
    codes: tuple[str, ...]
    details: Mapping[str, Any]
    """``Details.to_dict()`` masked and scrubbed: pairs, unmatched indices, issues, extras."""


@dataclass(slots=True)
class CheckView:
    """A ``forbid`` / ``no_errors`` / ``output`` verdict, or a rule's (``rule:<name>``), reason
    scrubbed."""

    name: str
    passed: bool
    code: str | None
    reason: str
    calls: tuple[int, ...]
    """Indices into :attr:`RunView.calls` of the calls that broke the check."""
    kind: str = "check"
    """``check`` or ``rule``."""
    severity: str = "error"
    """``error``, or ``warn``: failed, the check is a warning and the run does not fail on it."""

    @property
    def warned(self) -> bool:
        """A ``warn`` check that did not pass."""
        return not self.passed and self.severity == "warn"

    @property
    def call_numbers(self) -> tuple[int, ...]:
        """The calls that broke it, numbered from 1 as reasons name them (``#3``)."""
        return tuple(index + 1 for index in self.calls)

    def mark(self) -> str:
        """``✓`` passed, ``✗`` failed, ``⚠`` warned (failed, severity ``warn``)."""
        return "✓" if self.passed else "⚠" if self.severity == "warn" else "✗"


@dataclass(slots=True)
class ErrorView:
    """Why a run errored, every text scrubbed."""

    type: str
    message: str
    traceback: str
    phase: str
    brief: bool = False
    """The message says it all (``ErrorInfo.brief``): the traceback is shown only on request."""

    def summary(self) -> str:
        """``Type: message`` in one line."""
        return f"{self.type}: {self.message}" if self.message else self.type


@dataclass(slots=True)
class RunView:
    """One run: what was recorded and expected, how it scored, and its match table."""

    index: int
    passed: bool
    trace_id: str | None
    duration: float
    recorded: bool
    """A sample was captured (False: the run errored before it, or a lean passing trace)."""
    output: Any
    """The final answer, JSON-ready, masked and scrubbed (None when there is none)."""
    output_text: str | None
    """The final answer as prose (a string as it is), None when there is none."""
    calls: tuple[CallView, ...]
    expected: tuple[ExpectationView, ...]
    scores: tuple[ScoreView, ...]
    checks: tuple[CheckView, ...]
    error: ErrorView | None
    rows: tuple[MatchRow, ...]
    reasons: tuple[str, ...]
    """One line per failing score or check, or the error (``RunResult.reasons``), scrubbed."""
    input_text: str | None = None
    """The input the agent got, as prose (a string as it is), None when there is none."""
    paused: tuple[Any, ...] = ()
    """The interrupt payloads the run ended paused on (``RunResult.paused``), JSON-ready,
    masked and scrubbed; empty when it finished."""
    paused_text: str | None = None
    """Those payloads as prose (``; `` between several), None when the run finished."""
    turns: tuple[TurnView, ...] = ()
    """A conversation's turns (``turns:``), in order; empty for a single-input scenario."""

    @property
    def warnings(self) -> tuple[CheckView, ...]:
        """The ``warn`` checks that did not pass (reported; the run does not fail on them)."""
        return tuple(check for check in self.checks if check.warned)

    @property
    def several_agents(self) -> bool:
        """Do the calls come from more than one agent (match tables then name each one's)?"""
        return len({call.agent for call in self.calls}) > 1

    def row_agent(self, row: MatchRow) -> str:
        """A row's agent: its call's, else the scope of its expectation, else ``-``."""
        if row.actual_index is not None:
            return self.calls[row.actual_index].agent or "-"
        if row.expected_index is not None:
            return self.expected[row.expected_index].agent or "-"
        return "-"


@dataclass(slots=True)
class TurnView:
    """One turn of a conversation: where it left the graph (paused on what, or finished)."""

    index: int
    """0-based, as ``Sample.metadata["turns"]`` counts them."""
    paused: tuple[Any, ...] = ()
    """The interrupt payloads the turn ended paused on, JSON-ready, masked; empty: finished."""
    paused_text: str | None = None
    """Those payloads as prose, None when the turn finished."""


@dataclass(slots=True)
class ScenarioView(ScenarioIdentity):
    """One scenario result as every report shows it."""

    suite: str
    name: str
    file: str
    line: int | None
    status: Status
    runs: tuple[RunView, ...]
    repeat: int
    pass_rate: float
    passes: int
    xfail: str | None
    reasons: tuple[str, ...]
    """Why the scenario did not pass, scrubbed."""
    duration: float
    trace_id: str | None = None
    """Set when the result scores one recorded trace (``harness eval-traces``)."""
    source: str | None = None
    """Where that trace was read (``file:line``)."""
    trace_url: str | None = None
    """A link to the shown run's trace in a backend (``--trace-url``); None without one."""
    k: int | None = None
    """``--k``: the K of pass@K and pass^K (None: the scenario's number of runs)."""

    @property
    def repeated(self) -> bool:
        """Run more than once (``repeat:``): reports show its pass rate, pass@k and pass^k."""
        return self.repeat > 1 or len(self.runs) > 1

    def rate(self) -> Rate:
        """The pass rate over the runs with its Wilson interval, pass@k and pass^k
        (docs/metrics.md, "Comparing runs")."""
        from harness.compare.stats import rate

        return rate(self.passes, len(self.runs), self.k)

    @property
    def warnings(self) -> tuple[CheckView, ...]:
        """The failed ``warn`` checks over every run, the first of each name."""
        found: dict[str, CheckView] = {}
        for run in self.runs:
            for check in run.warnings:
                found.setdefault(check.name, check)
        return tuple(found.values())

    @property
    def shown(self) -> RunView | None:
        """The run a report details: the first that did not pass, else the last."""
        for run in self.runs:
            if not run.passed:
                return run
        return self.runs[-1] if self.runs else None


@dataclass(slots=True)
class SuiteView:
    """The suite summary a reporter closes with: counts, timing, warnings (scrubbed)."""

    started_at: float
    duration: float
    interrupted: bool
    not_run: int
    ok: bool
    counts: Mapping[str, int]
    """Per status, every result (kept or not)."""
    omitted: Mapping[str, int]
    """Per status, results counted but not kept in the summary (a stream's bounded sample)."""
    warnings: tuple[str, ...]
    summary: str
    """``3 passed, 1 failed in 1.23s``."""
    mask: str
    """What masked values show (``***``)."""
    rule_warnings: int = 0
    """``warn`` rules that did not pass, once per scenario and rule (counted, never failing)."""
    comparison: Comparison | None = None
    """``--baseline``: this run compared with the baseline report (None without one)."""

    @property
    def total(self) -> int:
        """How many results there were, kept or not."""
        return sum(self.counts.values())

    @property
    def omitted_total(self) -> int:
        """How many results were counted but not kept."""
        return sum(self.omitted.values())


def _pointer(path: str) -> list[str]:
    """JSON-pointer segments, unescaped (``~1`` is ``/``, ``~0`` is ``~``)."""
    return [part.replace("~1", "/").replace("~0", "~") for part in path.split("/")[1:]] or [""]
