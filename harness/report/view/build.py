"""Building views from results: suite, scenario, run, call, expectation, score, check, error.

Every text and value is masked and scrubbed here, once (docs/architecture.md, "Reporter").
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harness.expectation import Expectation
from harness.metrics.base import Details, Score
from harness.redaction import Redactor, Scrubber, safe_repr
from harness.report.view.details import details_data
from harness.report.view.forms import TEXT_LIMIT, _text_form
from harness.report.view.model import (
    ArgView,
    CallView,
    CheckView,
    ErrorView,
    ExpectationView,
    MatchRow,
    RunView,
    ScenarioView,
    ScoreView,
    SuiteView,
    TurnView,
)
from harness.report.view.rows import _rows
from harness.run.results import CheckResult, ErrorInfo, RunResult, ScenarioResult, SuiteResult
from harness.sample import Sample
from harness.scoring import CONTENT_NOT_CAPTURED, content_gaps
from harness.values import ABSENT, RESULT_PATH
from tracing.records import ToolCall


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
        rule_warnings=summary.rule_warnings,
    )


def scenario_view(result: ScenarioResult, scrubber: Scrubber) -> ScenarioView:
    """The result's view, every run masked and scrubbed with ``scrubber``; never raises."""
    # List comprehensions and positional arguments: ``harness eval-traces`` builds one per trace.
    given = result.reasons
    reasons = tuple([scrubber.text(reason, TEXT_LIMIT) for reason in given]) if given else ()
    try:
        runs = tuple([run_view(run, scrubber) for run in result.runs])
    except Exception as exc:  # a value nothing could render: this scenario only says so
        why = f"report: the details could not be rendered ({safe_repr(exc, 300)})"
        runs = tuple(_bare_run_view(run, scrubber, why) for run in result.runs)
        reasons = (*reasons, why)
    xfail = result.xfail
    return ScenarioView(
        result.suite,
        result.name,
        result.file,
        result.line,
        result.status,
        runs,
        result.repeat,
        result.pass_rate,
        result.passes,
        scrubber.text(xfail) if xfail is not None else None,
        reasons,
        result.duration,
        result.trace_id,
        result.source,
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
    if sample is None:
        return _sampleless_run_view(run, scrubber)
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


def _sampleless_run_view(run: RunResult, scrubber: Scrubber) -> RunView:
    """A run that recorded nothing (it errored first, or a lean passing trace): its verdicts.

    What :func:`run_view` gives for it, without the steps that find nothing to show: the bulk
    of a large ``eval-traces`` stream is lean passing runs (docs/architecture.md, "Reporter").
    """
    paused = run.paused
    error = run.error
    reasons = run.reasons()
    return RunView(
        run.index,
        run.passed,
        run.trace_id,
        run.duration,
        False,
        None,
        None,
        (),
        (),
        tuple([_score_view(score, scrubber) for score in run.scores]),
        tuple([_check_view(check, scrubber) for check in run.checks]),
        _error_view(error, scrubber) if error is not None else None,
        (),
        tuple([scrubber.text(reason, TEXT_LIMIT) for reason in reasons]) if reasons else (),
        None,
        tuple([scrubber.value(payload) for payload in paused]) if paused else (),
        _paused_text(paused, scrubber) if paused else None,
        (),
    )


def _unjudged(run: RunResult) -> bool:
    return run.error is not None and run.error.type == CONTENT_NOT_CAPTURED


def _paused_text(payloads: Sequence[Any], scrubber: Scrubber) -> str | None:
    """Interrupt payloads as prose, ``; `` between several; None for none."""
    if not payloads:
        return None
    return "; ".join(_prose(p, scrubber.value(p), scrubber) for p in payloads)


def _turn_views(sample: Sample | None, scrubber: Scrubber) -> tuple[TurnView, ...]:
    """The turns the runner recorded in ``Sample.metadata["turns"]`` (harness/run/invocation.py)."""
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
    result = expectation.result
    return ExpectationView(
        index,
        expectation.name,
        _args(expectation.args, scrubber),
        expectation.agent,
        expectation.node,
        expectation.label,
        expectation.after,
        expectation.optional,
        None if result is ABSENT else _args({RESULT_PATH: result}, scrubber)[0],
    )


def _score_view(score: Score, scrubber: Scrubber) -> ScoreView:
    details = score.details
    if not (
        details.pairs
        or details.unmatched_expected
        or details.unmatched_actual
        or details.issues
        or details.extra
    ):
        return _plain_score_view(
            score.name, score.value, score.threshold, score.passed, score.reason, scrubber
        )
    return ScoreView(
        name=score.name,
        value=score.value,
        threshold=score.threshold,
        passed=score.passed,
        reason=scrubber.text(score.reason, TEXT_LIMIT),
        codes=score.codes,
        details=details_data(details, scrubber),
    )


# Most scores of a large ``eval-traces`` stream pass with nothing to detail, and say the same
# for every trace of their scenario: their view is remembered (a bounded ``lru_cache`` on a pure
# function, the project's one kind of memo; ``typed``: 1 and 1.0 are one key but not one JSON)
# and shared, as views are never changed once built. ``harness eval-traces --workers 1`` on 4,000
# traces of benchmarks/bench_eval_traces.py runs 7.80 G instructions with the memo, 7.90 G
# without (valgrind; 4.7 G of either is start-up), so 3 % of the work done per trace.
@functools.lru_cache(maxsize=1024, typed=True)
def _plain_score_view(
    name: str, value: float, threshold: float, passed: bool, reason: str, scrubber: Scrubber
) -> ScoreView:
    """The view of a score with nothing to detail."""
    details = details_data(_NO_DETAILS, scrubber)
    return ScoreView(name, value, threshold, passed, scrubber.text(reason, TEXT_LIMIT), (), details)


_NO_DETAILS = Details()


def _check_view(check: CheckResult, scrubber: Scrubber) -> CheckView:
    reason = scrubber.text(check.reason, TEXT_LIMIT)
    name = scrubber.text(check.name, TEXT_LIMIT) if check.kind == "rule" else check.name
    return CheckView(
        name, check.passed, check.code, reason, check.calls, check.kind, check.severity
    )


def _error_view(error: ErrorInfo, scrubber: Scrubber) -> ErrorView:
    def text(value: str) -> str:
        return scrubber.text(value, TEXT_LIMIT)

    return ErrorView(
        text(error.type), text(error.message), text(error.traceback), error.phase, error.brief
    )


def scrubber_for(
    runs: Iterable[RunResult], redactor: Redactor | None, scrubber: Scrubber | None
) -> Scrubber:
    """``scrubber`` if given, else one over these runs with ``redactor`` (default key list)."""
    return scrubber if scrubber is not None else Scrubber.for_runs(redactor, runs)
