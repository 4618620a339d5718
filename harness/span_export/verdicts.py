"""A run's verdict on its root span: status, and GenAI ``gen_ai.evaluation.result`` events."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from harness.redaction import Scrubber
    from harness.run.results import RunResult

__all__ = [
    "EVALUATION_EVENT",
    "EVALUATION_EXPLANATION",
    "EVALUATION_NAME",
    "EVALUATION_SCORE_LABEL",
    "EVALUATION_SCORE_VALUE",
    "record_verdict",
]

EVALUATION_EVENT = "gen_ai.evaluation.result"
"""The OTel GenAI semantic conventions' evaluation event, one per metric (and check) result."""
EVALUATION_NAME = "gen_ai.evaluation.name"
EVALUATION_SCORE_VALUE = "gen_ai.evaluation.score.value"
EVALUATION_SCORE_LABEL = "gen_ai.evaluation.score.label"
EVALUATION_EXPLANATION = "gen_ai.evaluation.explanation"


def record_verdict(span: Span, run: RunResult, scrub: Scrubber) -> None:
    """Put a run's metric and check results on its root span as evaluation events, and its
    status: ERROR with the error (an errored run) or the first reason (a failed one).

    ``scrub`` is the run's scrubber: explanations are masked as in every report.
    Backends that read the GenAI conventions (Phoenix, LangSmith, Langfuse) show the scores
    next to the trace without knowing the ``harness.*`` attributes.
    """
    from opentelemetry.trace import Status as SpanStatus
    from opentelemetry.trace import StatusCode

    for score in run.scores:
        span.add_event(
            EVALUATION_EVENT,
            {
                EVALUATION_NAME: score.name,
                EVALUATION_SCORE_VALUE: float(score.value),
                EVALUATION_SCORE_LABEL: "pass" if score.passed else "fail",
                EVALUATION_EXPLANATION: scrub.text(score.reason),
            },
        )
    for check in run.checks:
        span.add_event(
            EVALUATION_EVENT,
            {
                EVALUATION_NAME: check.name,
                EVALUATION_SCORE_VALUE: 1.0 if check.passed else 0.0,
                # a failed `warn` rule: not a failure of the run (docs/metrics.md, Rules)
                EVALUATION_SCORE_LABEL: "pass"
                if check.passed
                else ("warn" if check.severity == "warn" else "fail"),
                EVALUATION_EXPLANATION: scrub.text(check.reason),
            },
        )
    if run.error is not None:
        span.set_status(SpanStatus(StatusCode.ERROR, scrub.text(run.error.summary())))
    elif not run.passed:
        reasons = run.reasons()
        first = scrub.text(reasons[0]) if reasons else "failed"
        span.set_status(SpanStatus(StatusCode.ERROR, first))
