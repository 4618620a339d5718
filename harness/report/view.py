"""The view model every reporter renders from: built once per result, already redacted.

A reporter never reads a :class:`~harness.result.ScenarioResult` itself: the feed
(:class:`~harness.report.base.ReportFeed`) turns each result into a :class:`ScenarioView` with
one :class:`~harness.redaction.Scrubber` and hands that to every reporter, and the suite summary
into a :class:`SuiteView` with the same redactor (docs/architecture.md, "Reporter" and
"Redaction"). Nothing in a view needs masking again, and nothing in it is cut for width:
shortening is the renderer's choice.

The shape, top down (every class is a frozen dataclass; tuples, never lists)::

    SuiteView            the summary: counts, omitted, warnings (scrubbed), summary line, mask
    ScenarioView         one result: identity (suite, name, file, line: config, not scrubbed),
      │                  status, xfail, reasons (scrubbed), repeat, passes, timing, trace
      └─ runs: RunView   one run; ``shown`` is the run a report details (first not passed)
           ├─ input_text, output, output_text  what the agent got, what it answered
           ├─ paused, paused_text, turns: TurnView  the interrupt it ended paused on; per
           │                   turn of a conversation, where that turn left the graph
           ├─ calls: CallView          recorded calls: args as ArgView, status, error, result
           ├─ expected: ExpectationView  expected calls: args as ArgView (matchers described)
           ├─ scores: ScoreView        name, value, threshold, passed, reason, codes, details
           ├─ checks: CheckView        forbid / no_errors / output: reason, code, call indices
           ├─ error: ErrorView | None  type, message, traceback (scrubbed), phase
           └─ rows: MatchRow           the match table: one row per expected call, then one per
                                       call nobody expected; each paired row carries DiffView
                                       (path, code, expected, actual, reason, masked, source)

Values come in two forms: ``value`` (JSON-ready: what the JSON report writes; redacted keys
hold the mask, secret values are scrubbed out of every string) and ``text`` (how a table shows
it: ``repr`` for literals, the ``$`` description for matchers, ``<absent>`` for a missing
argument), scrubbed too. Any value renders, each in one walk (:meth:`Scrubber.value
<harness.redaction.Scrubber.value>`): a cycle shows ``<cycle>``, nesting past 32 levels ``<too
deep>``, an object whose ``repr`` raises or an int past 4,300 digits ``<unrepresentable: ...>``,
and a value is cut to :data:`~harness.redaction.VIEW_LIMITS` (1,000
entries per container, 100,000 characters in all), free texts to :data:`TEXT_LIMIT`. A result
whose view cannot be built at all still gets one, saying so: one bad value costs only its own
scenario's detail (docs/architecture.md, "Reporter").

The match rows are built from what the metrics recorded (docs/metrics.md, "Matching"): the
full matches are the pairs of the largest pairing some metric recorded over the whole run
(``Details.pairs``, every pair accepted by its expectation, e.g. ``tool_call_accuracy``'s), plus
any other recorded pair the expectation accepts; only when no metric recorded such a pairing
is a maximum matching computed. Near misses (``wrong_args``: same name, some argument wrong)
pair what is left: recorded same-name pairs first (``tool_argument_correctness`` records
its best assignment), then a best assignment over what no recorded pair covers; a near pair
whose argument check finds nothing wrong shows as ``ok``. A row's diffs
are the expectation's own argument check (``source=""``) followed by the diffs failing metrics
recorded for that pair (``source`` = the metric), one per (path, code).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from harness.expectation import Expectation
from harness.matching import best_assignment, max_matching
from harness.metrics.base import Details, Score
from harness.redaction import Redactor, Scrubber, safe_repr
from harness.result import (
    CheckResult,
    ErrorInfo,
    RunResult,
    ScenarioResult,
    Status,
    SuiteResult,
)
from harness.sample import Sample
from harness.scoring import CONTENT_NOT_CAPTURED, content_gaps
from harness.values import ABSENT, ArgCheck, ArgDiff, Matcher
from tracing.records import ToolCall

__all__ = [
    "ArgView",
    "CallView",
    "CheckView",
    "DiffView",
    "ErrorView",
    "ExpectationView",
    "MatchRow",
    "RowVerdict",
    "RunView",
    "ScenarioView",
    "ScoreView",
    "SuiteView",
    "TurnView",
    "call_view",
    "display",
    "expectation_view",
    "printable",
    "run_view",
    "scenario_view",
    "scrubber_for",
    "suite_view",
]

# Characters a terminal or a page must not get raw: C0/C1 controls but tab and newline (an ESC
# starts a terminal escape sequence), DEL, the bidi embeddings, overrides and isolates (U+202A-
# U+202E, U+2066-U+2069: an RLO in one name reverses what follows it on screen), and lone
# surrogates (not encodable).
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` safe for a terminal: controls, bidi overrides and lone surrogates shown as
    their escapes (``\\u202e``), so they are visible and change nothing around them."""
    if text.isascii() and text.isprintable():
        return text
    return _UNPRINTABLE.sub(_escape_char, text)


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


TEXT_LIMIT = 100_000
"""Longest free text a view keeps (a reason, an error message, a traceback): a reason that
quotes a 10 MB answer costs every report that much otherwise."""

RowVerdict = Literal["ok", "wrong_args", "missing", "unexpected"]
"""``ok``: the call matches; ``wrong_args``: same tool, some argument wrong; ``missing``: no call
for this expectation; ``unexpected``: a call no expectation claimed."""


# --- the view classes ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class CallView:
    """A recorded call: index in the run's calls, name, arguments, what its execution gave."""

    index: int
    name: str
    args: tuple[ArgView, ...]
    status: str
    """``ok``, ``error`` or ``requested`` (asked for, never executed)."""
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


@dataclass(frozen=True, slots=True)
class ExpectationView:
    """An expected call: index in the sample's expectations, tool name, argument patterns."""

    index: int
    name: str
    args: tuple[ArgView, ...]
    agent: str | None = None
    """The agent the expectation is scoped to (a path, its last segments or a glob)."""
    node: str | None = None
    """The node the expectation is scoped to (a name or a glob)."""


@dataclass(frozen=True, slots=True)
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
        """The top-level argument the diff sits under (``""`` for the whole arguments)."""
        return _pointer(self.path)[0] if self.path else ""


@dataclass(frozen=True, slots=True)
class MatchRow:
    """One line of the match table: an expected call and its partner, or an unexpected call."""

    verdict: RowVerdict
    expected_index: int | None
    """Index into :attr:`RunView.expected` (None for an unexpected call)."""
    actual_index: int | None
    """Index into :attr:`RunView.calls` (None for a missing call)."""
    diffs: tuple[DiffView, ...] = ()
    note: str | None = None
    """For an unexpected call that failed: ``error: <message>``, scrubbed."""
    tags: tuple[str, ...] = ()
    """What failing checks say of the actual call: ``forbidden``, ``tool error``."""


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class CheckView:
    """A ``forbid`` / ``no_errors`` / ``output`` verdict, reason scrubbed."""

    name: str
    passed: bool
    code: str | None
    reason: str
    calls: tuple[int, ...]
    """Indices into :attr:`RunView.calls` of the calls that broke the check."""


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class TurnView:
    """One turn of a conversation: where it left the graph (paused on what, or finished)."""

    index: int
    """0-based, as ``Sample.metadata["turns"]`` counts them."""
    paused: tuple[Any, ...] = ()
    """The interrupt payloads the turn ended paused on, JSON-ready, masked; empty: finished."""
    paused_text: str | None = None
    """Those payloads as prose, None when the turn finished."""


@dataclass(frozen=True, slots=True)
class ScenarioView:
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

    @property
    def display_name(self) -> str:
        """The name, with ``[trace id prefix]`` when the result scores a recorded trace."""
        return f"{self.name}[{self.trace_id[:12]}]" if self.trace_id else self.name

    @property
    def id(self) -> str:
        """``suite::name`` (``suite::name[trace]`` for a recorded trace)."""
        return f"{self.suite}::{self.display_name}"

    @property
    def location(self) -> str:
        """``file:line``."""
        return f"{self.file}:{self.line}" if self.line else self.file

    @property
    def shown(self) -> RunView | None:
        """The run a report details: the first that did not pass, else the last."""
        for run in self.runs:
            if not run.passed:
                return run
        return self.runs[-1] if self.runs else None


@dataclass(frozen=True, slots=True)
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

    @property
    def total(self) -> int:
        """How many results there were, kept or not."""
        return sum(self.counts.values())

    @property
    def omitted_total(self) -> int:
        """How many results were counted but not kept."""
        return sum(self.omitted.values())


# --- building -----------------------------------------------------------------------------


def suite_view(summary: SuiteResult, scrubber: Scrubber) -> SuiteView:
    """The summary's view, its warnings scrubbed with ``scrubber``."""
    return SuiteView(
        started_at=summary.started_at,
        duration=summary.duration,
        interrupted=summary.interrupted,
        not_run=summary.not_run,
        ok=summary.ok,
        counts=dict(summary.counts),
        omitted=dict(summary.omitted),
        warnings=tuple(scrubber.text(warning, TEXT_LIMIT) for warning in summary.warnings),
        summary=summary.summary_line(),
        mask=scrubber.redactor.mask,
    )


def scenario_view(result: ScenarioResult, scrubber: Scrubber) -> ScenarioView:
    """The result's view, every run masked and scrubbed with ``scrubber``; never raises."""
    reasons = tuple(scrubber.text(reason, TEXT_LIMIT) for reason in result.reasons)
    try:
        runs = tuple(run_view(run, scrubber) for run in result.runs)
    except Exception as exc:  # a value nothing could render: this scenario only says so
        why = f"report: the details could not be rendered ({safe_repr(exc, 300)})"
        runs = tuple(_bare_run_view(run, scrubber, why) for run in result.runs)
        reasons = (*reasons, why)
    return ScenarioView(
        suite=result.suite,
        name=result.name,
        file=result.file,
        line=result.line,
        status=result.status,
        runs=runs,
        repeat=result.repeat,
        pass_rate=result.pass_rate,
        passes=result.passes,
        xfail=scrubber.text(result.xfail) if result.xfail is not None else None,
        reasons=reasons,
        duration=result.duration,
        trace_id=result.trace_id,
        source=result.source,
    )


def _bare_run_view(run: RunResult, scrubber: Scrubber, why: str) -> RunView:
    """A run's verdict without its detail, and why the detail is missing."""
    return RunView(
        index=run.index,
        passed=run.passed,
        trace_id=run.trace_id,
        duration=run.duration,
        recorded=False,
        output=None,
        output_text=None,
        calls=(),
        expected=(),
        scores=tuple(_score_view(score, scrubber) for score in run.scores),
        checks=tuple(_check_view(check, scrubber) for check in run.checks),
        error=_error_view(run.error, scrubber) if run.error is not None else None,
        rows=(),
        reasons=(*(scrubber.text(r, TEXT_LIMIT) for r in run.reasons()), why),
    )


def run_view(run: RunResult, scrubber: Scrubber) -> RunView:
    """One run's view: calls, expectations, scores, checks, error and match rows."""
    sample = run.sample
    recorded_calls = run.calls
    expectations = sample.expected_tool_calls if sample is not None else []
    uncaptured = set(content_gaps(sample)[0])
    calls = tuple(
        call_view(i, call, scrubber, args_captured=i not in uncaptured)
        for i, call in enumerate(recorded_calls)
    )
    expected = tuple(expectation_view(i, e, scrubber) for i, e in enumerate(expectations))
    output = sample.output if sample is not None else None
    given = sample.input if sample is not None else None
    reasons = tuple(scrubber.text(reason, TEXT_LIMIT) for reason in run.reasons())
    rows: tuple[MatchRow, ...] = ()
    # a run judged without its content has no table: every row would blame arguments the
    # trace never recorded (the reasons say so per call; harness/scoring.py)
    if sample is not None and not _unjudged(run):
        try:
            rows = _rows(run, expectations, recorded_calls, scrubber)
        except Exception as exc:  # a matcher that cannot compare these values (numpy, depth)
            note = f"report: the match table could not be built ({safe_repr(exc, 300)})"
            reasons = (*reasons, note)
    rendered_output = scrubber.value(output)
    return RunView(
        index=run.index,
        passed=run.passed,
        trace_id=run.trace_id,
        duration=run.duration,
        recorded=sample is not None,
        output=rendered_output,
        output_text=_prose(output, rendered_output, scrubber) if output is not None else None,
        calls=calls,
        expected=expected,
        scores=tuple(_score_view(score, scrubber) for score in run.scores),
        checks=tuple(_check_view(check, scrubber) for check in run.checks),
        error=_error_view(run.error, scrubber) if run.error is not None else None,
        rows=rows,
        reasons=reasons,
        input_text=_prose(given, scrubber.value(given), scrubber) if given is not None else None,
        paused=tuple(scrubber.value(payload) for payload in run.paused),
        paused_text=_paused_text(run.paused, scrubber),
        turns=_turn_views(sample, scrubber),
    )


def _unjudged(run: RunResult) -> bool:
    return run.error is not None and run.error.type == CONTENT_NOT_CAPTURED


def _paused_text(payloads: Sequence[Any], scrubber: Scrubber) -> str | None:
    """Interrupt payloads as prose, ``; `` between several; None for none."""
    if not payloads:
        return None
    return "; ".join(_prose(p, scrubber.value(p), scrubber) for p in payloads)


def _turn_views(sample: Sample | None, scrubber: Scrubber) -> tuple[TurnView, ...]:
    """The turns the runner recorded in ``Sample.metadata["turns"]`` (harness/invocation.py)."""
    turns = sample.metadata.get("turns") if sample is not None else None
    out = []
    for position, turn in enumerate(turns if isinstance(turns, list) else ()):
        if not isinstance(turn, Mapping):
            continue
        index = turn.get("turn")
        paused = turn.get("paused")
        payloads = tuple(paused) if isinstance(paused, (list, tuple)) else ()
        out.append(
            TurnView(
                index if isinstance(index, int) else position,
                tuple(scrubber.value(p) for p in payloads),
                _paused_text(payloads, scrubber),
            )
        )
    return tuple(out)


def display(value: Any) -> str:
    """How a table shows a value: ``<absent>``, a matcher's ``$`` form, else ``repr`` (never
    raising, cut to a readable length: :func:`~harness.redaction.safe_repr`)."""
    if value is ABSENT:
        return "<absent>"
    if isinstance(value, Matcher):
        return value.describe()
    return safe_repr(value)  # containers: matchers nested inside show in their `$` form


def _text_form(value: Any, rendered: Any, scrubber: Scrubber) -> str:
    """The ``text`` of a value from its rendered (masked, scrubbed, cut) form."""
    if value is ABSENT or isinstance(value, Matcher):
        return scrubber.text(display(value), TEXT_LIMIT)
    if isinstance(rendered, str) and not isinstance(value, str):
        return rendered  # a placeholder or an object's own text: shown as it is
    return scrubber.text(safe_repr(rendered, TEXT_LIMIT))


def _args(args: Mapping[str, Any], scrubber: Scrubber) -> tuple[ArgView, ...]:
    redactor = scrubber.redactor
    out = []
    for key, value in args.items():
        name = key if isinstance(key, str) else safe_repr(key)
        if redactor.matches(name):
            out.append(ArgView(name, redactor.mask, repr(redactor.mask), True))
            continue
        rendered = scrubber.value(value)
        out.append(ArgView(name, rendered, _text_form(value, rendered, scrubber), False))
    return tuple(out)


def _prose(value: Any, rendered: Any, scrubber: Scrubber) -> str:
    """A string as it is (masked inside, cut), anything else in its ``text`` form."""
    if isinstance(value, str) and isinstance(rendered, str):
        return rendered
    return _text_form(value, rendered, scrubber)


def call_view(
    index: int, call: ToolCall, scrubber: Scrubber, *, args_captured: bool = True
) -> CallView:
    """Call ``index`` of a run, masked and scrubbed (``args_captured``: see CallView)."""
    result = call.result
    rendered = scrubber.value(result)
    return CallView(
        index=index,
        name=call.name,
        args=_args(call.args, scrubber),
        status=call.status,
        error=scrubber.text(call.error, TEXT_LIMIT) if call.error is not None else None,
        result=rendered,
        result_text=_prose(result, rendered, scrubber) if result is not None else None,
        id=call.id,
        node=call.node,
        turn=call.turn,
        duration_ns=call.duration_ns,
        args_captured=args_captured,
        agent=call.agent,
    )


def expectation_view(index: int, expectation: Expectation, scrubber: Scrubber) -> ExpectationView:
    """Expected call ``index`` of a sample, masked and scrubbed."""
    return ExpectationView(
        index,
        expectation.name,
        _args(expectation.args, scrubber),
        expectation.agent,
        expectation.node,
    )


def _score_view(score: Score, scrubber: Scrubber) -> ScoreView:
    return ScoreView(
        name=score.name,
        value=score.value,
        threshold=score.threshold,
        passed=score.passed,
        reason=scrubber.text(score.reason, TEXT_LIMIT),
        codes=tuple(score.codes),
        details=_details_view(score.details, scrubber),
    )


_NO_DETAILS = Details()


def _details_view(details: Details, scrubber: Scrubber) -> Mapping[str, Any]:
    # most scores of a large stream pass with nothing to detail: that form is rendered once
    if not (
        details.pairs
        or details.unmatched_expected
        or details.unmatched_actual
        or details.issues
        or details.extra
    ):
        return scrubber.constant("no details", _NO_DETAILS.to_dict())  # type: ignore[no-any-return]
    return scrubber.value(details.to_dict())  # type: ignore[no-any-return]


def _check_view(check: CheckResult, scrubber: Scrubber) -> CheckView:
    reason = scrubber.text(check.reason, TEXT_LIMIT)
    return CheckView(check.name, check.passed, check.code, reason, check.calls)


def _error_view(error: ErrorInfo, scrubber: Scrubber) -> ErrorView:
    def text(value: str) -> str:
        return scrubber.text(value, TEXT_LIMIT)

    return ErrorView(
        text(error.type), text(error.message), text(error.traceback), error.phase, error.brief
    )


# --- the match rows -----------------------------------------------------------------------


def _rows(
    run: RunResult, expected: Sequence[Expectation], calls: Sequence[ToolCall], scrubber: Scrubber
) -> tuple[MatchRow, ...]:
    """Every expected call with its partner (or none), then every call nobody claimed."""
    # A score named `<scope>.<metric>` (a turn's, an agent's: harness.scoring.scoped_score)
    # indexes its own slice of the run: its pairs are not this table's.
    run = replace(run, scores=tuple(score for score in run.scores if "." not in score.name))
    pairs = _Pairs(run, expected, calls)
    full = pairs.full()
    near = pairs.near(full)
    metric_diffs = _metric_diffs(run.scores)
    tags = _flagged_calls(run.checks)
    rows: list[MatchRow] = []
    for index in range(len(expected)):
        partner = full.get(index, near.get(index))
        if partner is None:
            rows.append(MatchRow("missing", index, None))
            continue
        own = () if index in full else pairs.check(index, partner).diffs
        diffs = _row_diffs(own, metric_diffs.get((index, partner), ()), scrubber)
        verdict: RowVerdict = "wrong_args" if own else "ok"
        rows.append(MatchRow(verdict, index, partner, diffs, None, tags.get(partner, ())))
    used = set(full.values()) | set(near.values())
    for index, call in enumerate(calls):
        if index in used:
            continue
        note = None
        if call.status == "error" and call.error:
            note = scrubber.text(f"error: {call.error}", TEXT_LIMIT)
        rows.append(MatchRow("unexpected", None, index, (), note, tags.get(index, ())))
    return tuple(rows)


class _Pairs:
    """The pairings of one run: those its metrics recorded, computed ones only as a fallback."""

    __slots__ = ("_accepts", "_checks", "calls", "expected", "recorded")

    def __init__(
        self, run: RunResult, expected: Sequence[Expectation], calls: Sequence[ToolCall]
    ) -> None:
        self.expected = expected
        self.calls = calls
        self._accepts: dict[tuple[int, int], bool] = {}
        self._checks: dict[tuple[int, int], ArgCheck] = {}
        # Pairings over the whole run, in score order; a pairing that names an index outside
        # the run (a metric scored another sample) is not this run's.
        self.recorded: list[tuple[tuple[int, int], ...]] = []
        if expected and calls:
            for score in run.scores:
                pairing = _pairing(score.details, len(expected), len(calls))
                if pairing is not None:
                    self.recorded.append(pairing)

    def accepts(self, i: int, j: int) -> bool:
        """Does expectation ``i`` accept call ``j`` (remembered)?"""
        key = (i, j)
        found = self._accepts.get(key)
        if found is None:
            found = self._accepts[key] = self.expected[i].accepts(self.calls[j])
        return found

    def check(self, i: int, j: int) -> ArgCheck:
        """The argument check of expectation ``i`` against call ``j`` (remembered)."""
        key = (i, j)
        found = self._checks.get(key)
        if found is None:
            found = self._checks[key] = self.expected[i].check(self.calls[j])
        return found

    def full(self) -> dict[int, int]:
        """Expected index -> call index of the full matches."""
        complete = [p for p in self.recorded if all(self.accepts(i, j) for i, j in p)]
        if not complete:
            if not self.expected or not self.calls:
                return {}
            matching = max_matching(
                self.expected, self.calls, lambda e, a: e.accepts(a), key=lambda x: x.name
            )
            return dict(matching.pairs)
        best = max(complete, key=len)  # the first of the largest, in score order
        taken: dict[int, int] = {}
        for pairing in (best, *self.recorded):
            _take(taken, pairing, self.accepts)
        return taken

    def near(self, full: Mapping[int, int]) -> dict[int, int]:
        """Expected index -> call index of the same-name near misses among what is left."""
        taken: dict[int, int] = {}
        used = set(full.values())

        def free(i: int, j: int) -> bool:
            return i not in full and j not in used and self._same_name(i, j)

        candidates = [pair for pairing in self.recorded for pair in pairing if free(*pair)]
        candidates.sort(key=lambda pair: -self.check(*pair).correct)  # stable: score order
        _take(taken, candidates, lambda i, j: j not in used)
        rest_e = [i for i in range(len(self.expected)) if i not in full and i not in taken]
        busy = used | set(taken.values())
        rest_a = [j for j in range(len(self.calls)) if j not in busy]
        names = {self.expected[i].name for i in rest_e}
        if not any(self.calls[j].name in names for j in rest_a):
            return taken
        assignment = best_assignment(
            [self.expected[i] for i in rest_e],
            [self.calls[j] for j in rest_a],
            lambda e, a: float(e.check(a).correct) if e.name == a.name else None,
            key=lambda item: item.name,
        )
        taken.update({rest_e[e]: rest_a[a] for e, a in assignment.pairs})
        return taken

    def _same_name(self, i: int, j: int) -> bool:
        return self.expected[i].name == self.calls[j].name


def _pairing(details: Details, expected: int, actual: int) -> tuple[tuple[int, int], ...] | None:
    """The details' pairs when they pair over the whole run (every index accounted for)."""
    pairs = tuple((pair.expected_index, pair.actual_index) for pair in details.pairs)
    if not pairs and not details.unmatched_expected and not details.unmatched_actual:
        return None  # recorded nothing (a metric that pairs nothing, or a lean trace's score)
    if len(pairs) + len(details.unmatched_expected) != expected:
        return None
    if len(pairs) + len(details.unmatched_actual) != actual:
        return None
    if any(not (0 <= i < expected and 0 <= j < actual) for i, j in pairs):
        return None
    return pairs


def _take(
    taken: dict[int, int], pairs: Iterable[tuple[int, int]], ok: Callable[[int, int], bool]
) -> None:
    """Add each pair whose two sides are still free and that ``ok`` accepts."""
    used = set(taken.values())
    for i, j in pairs:
        if i in taken or j in used or not ok(i, j):
            continue
        taken[i] = j
        used.add(j)


def _metric_diffs(scores: Iterable[Score]) -> dict[tuple[int, int], list[tuple[str, ArgDiff]]]:
    """Argument diffs that failing metrics recorded per (expected, actual) pair."""
    out: dict[tuple[int, int], list[tuple[str, ArgDiff]]] = {}
    for score in scores:
        if score.passed:
            continue
        for pair in score.details.pairs:
            for diff in pair.diffs:
                out.setdefault((pair.expected_index, pair.actual_index), []).append(
                    (score.name, diff)
                )
    return out


def _row_diffs(
    own: Iterable[ArgDiff], recorded: Iterable[tuple[str, ArgDiff]], scrubber: Scrubber
) -> tuple[DiffView, ...]:
    """The expectation's own diffs, then the metrics' extras: one per (path, code)."""
    seen: set[tuple[str, str]] = set()
    out: list[DiffView] = []
    for source, diff in (*(("", d) for d in own), *recorded):
        if (diff.path, diff.code) in seen:
            continue
        seen.add((diff.path, diff.code))
        out.append(_diff_view(diff, source, scrubber))
    return tuple(out)


def _diff_view(diff: ArgDiff, source: str, scrubber: Scrubber) -> DiffView:
    """One diff, masked: a secret on its path hides both values and the message."""
    redactor = scrubber.redactor
    if any(redactor.matches(part) for part in _pointer(diff.path) if part):
        mask = redactor.mask
        return DiffView(
            diff.path, diff.code, mask, mask, f"{diff.code} (value masked)", True, source
        )
    expected = redactor.redact(diff.expected)
    actual = redactor.redact(diff.actual)
    # a value that held a secret key: the message may quote it, so only the code is shown
    changed = expected is not diff.expected or actual is not diff.actual
    reason = f"{diff.code} (value masked)" if changed else scrubber.text(diff.message, TEXT_LIMIT)
    return DiffView(
        diff.path,
        diff.code,
        _text_form(expected, scrubber.value(expected), scrubber),
        _text_form(actual, scrubber.value(actual), scrubber),
        reason,
        changed,
        source,
    )


def _pointer(path: str) -> list[str]:
    """JSON-pointer segments, unescaped (``~1`` is ``/``, ``~0`` is ``~``)."""
    return [part.replace("~1", "/").replace("~0", "~") for part in path.split("/")[1:]] or [""]


_CHECK_TAG = {"unexpected_call": "forbidden", "tool_error": "tool error", "wrong_output": ""}


def _flagged_calls(checks: Iterable[CheckResult]) -> dict[int, tuple[str, ...]]:
    """Call index -> tags of the failing checks that name it (``forbidden``, ``tool error``)."""
    out: dict[int, list[str]] = {}
    for check in checks:
        if check.passed:
            continue
        tag = _CHECK_TAG.get(check.code or "", check.name)
        if not tag:
            continue
        for index in check.calls:
            out.setdefault(index, []).append(tag)
    return {index: tuple(tags) for index, tags in out.items()}


def scrubber_for(
    runs: Iterable[RunResult], redactor: Redactor | None, scrubber: Scrubber | None
) -> Scrubber:
    """``scrubber`` if given, else one over these runs with ``redactor`` (default key list)."""
    return scrubber if scrubber is not None else Scrubber.for_runs(redactor, runs)
