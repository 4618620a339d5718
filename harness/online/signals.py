"""What the online processor sends out: one ``gen_ai.evaluation.result`` event per rule result
(the OTel GenAI evaluation event, through the Logs API), and its counters (Metrics API).

Events are linked to the evaluated trace and its root span, so a backend shows them with the
trace. Explanations are masked of the secret values the trace's calls carry under redacted keys,
as in every report (docs/architecture.md, "Redaction").
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from opentelemetry._logs import LoggerProvider, LogRecord, SeverityNumber, get_logger_provider
from opentelemetry.metrics import MeterProvider, get_meter_provider
from opentelemetry.trace import (
    NonRecordingSpan,
    SpanContext,
    TraceFlags,
    set_span_in_context,
)

from harness.online.policy import TraceResult
from harness.redaction import Redactor, Scrubber, secrets_in
from harness.span_export.verdicts import (
    EVALUATION_EVENT,
    EVALUATION_EXPLANATION,
    EVALUATION_NAME,
    EVALUATION_SCORE_LABEL,
    EVALUATION_SCORE_VALUE,
)
from tracing.otel.trace_run import TraceRun

__all__ = [
    "DROPPED",
    "ERRORS",
    "EVALUATIONS",
    "SCOPE",
    "VIOLATIONS",
    "Signals",
    "trace_context",
]

SCOPE = "harness.online"
"""The instrumentation scope of the events and counters (and the Python logger's name)."""
EVALUATIONS = "harness.rule.evaluations"
VIOLATIONS = "harness.rule.violations"
DROPPED = "harness.rule.dropped"
ERRORS = "harness.rule.errors"
ERROR_TYPE = "error.type"
POLICY = "harness.policy"
CODE = "harness.rule.code"
SEVERITY = "harness.rule.severity"
COMPLETE = "harness.trace.complete"

log = logging.getLogger(SCOPE)


def label(result: TraceResult) -> str | None:
    """``pass``, ``fail``, ``warn`` (a failed ``warn`` rule); None for a result that is no
    verdict (it carries ``error.type`` instead, as the GenAI conventions say)."""
    rule = result.result
    if rule.error:
        return None
    if rule.passed:
        return "pass"
    return "warn" if rule.severity == "warn" else "fail"


class Signals:
    """The logger and counters of one processor; every method is safe on any thread."""

    def __init__(
        self,
        logger_provider: LoggerProvider | None,
        meter_provider: MeterProvider | None,
        redactor: Redactor | None = None,
        explain_passes: bool = False,
    ) -> None:
        """Events go to ``logger_provider``, counters to ``meter_provider`` (default: the
        global providers, read once here); a passing result's event carries its explanation
        only with ``explain_passes``."""
        self._logger = (logger_provider or get_logger_provider()).get_logger(SCOPE)
        meter = (meter_provider or get_meter_provider()).get_meter(SCOPE)
        self._evaluations = meter.create_counter(
            EVALUATIONS, unit="{evaluation}", description="Rule results on live traces."
        )
        self._violations = meter.create_counter(
            VIOLATIONS, unit="{violation}", description="Rule results that failed."
        )
        self._dropped = meter.create_counter(
            DROPPED, unit="{trace}", description="Traces not evaluated, by reason."
        )
        self._errors = meter.create_counter(
            ERRORS,
            unit="{error}",
            description="Exceptions inside policies, result callbacks or the reader, by stage.",
        )
        self._redactor = redactor or Redactor()
        self._warned: set[str] = set()
        self._explain_passes = explain_passes

    def scrubber(self, run: TraceRun) -> Scrubber:
        """The scrubber for one trace's explanations: its calls' secret values."""
        found: set[str] = set()
        for call in run.calls:
            secrets_in(call.args, self._redactor, found)
            secrets_in(call.result, self._redactor, found)
        return Scrubber(self._redactor, found)

    def result(self, item: TraceResult, scrub: Callable[[], Scrubber], context: Any) -> None:
        """One event and the counters of one rule result; ``scrub`` gives the trace's
        scrubber (:meth:`scrubber`, built when a first explanation needs it), ``context`` is
        :func:`trace_context` of its trace (made once per trace)."""
        rule = item.result
        counted = {"rule": rule.rule, "policy": item.policy}
        self._evaluations.add(1, counted)
        if item.violation:
            self._violations.add(1, counted)
        attributes: dict[str, Any] = {
            EVALUATION_NAME: f"rule:{rule.rule}",
            POLICY: item.policy,
            SEVERITY: rule.severity,
            COMPLETE: item.complete,
        }
        if not rule.passed or self._explain_passes:  # a pass says nothing a reader acts on
            attributes[EVALUATION_EXPLANATION] = scrub().text(rule.reason)
        verdict = label(item)
        if verdict is None:
            attributes[ERROR_TYPE] = rule.code or "rule_error"
        else:
            attributes[EVALUATION_SCORE_VALUE] = 1.0 if rule.passed else 0.0
            attributes[EVALUATION_SCORE_LABEL] = verdict
        if rule.code is not None:
            attributes[CODE] = rule.code
        self._logger.emit(
            LogRecord(
                context=context,
                event_name=EVALUATION_EVENT,
                severity_number=SeverityNumber.INFO if item.result.passed else SeverityNumber.WARN,
                attributes=attributes,
            )
        )

    def dropped(self, reason: str, count: int = 1) -> None:
        """Count traces not evaluated; the first drop of each reason is one warning."""
        self._dropped.add(count, {"reason": reason})
        if reason not in self._warned:
            self._warned.add(reason)
            log.warning(
                "harness online rules: dropped %d trace(s) (%s); further drops are counted in "
                "the %s counter",
                count,
                _WHY.get(reason, reason),
                DROPPED,
            )

    def error(self, stage: str, policy: str | None = None) -> None:
        """Count (and log, with its traceback) an exception caught at ``stage``."""
        attributes = {"stage": stage} if policy is None else {"stage": stage, "policy": policy}
        self._errors.add(1, attributes)
        log.exception("harness online rules: an exception in %s (counted, not raised)", stage)


_WHY = {
    "max_open_traces": "more traces open at once than max_open_traces",
    "max_spans_per_trace": "a trace had more spans than max_spans_per_trace",
    "queue_full": "the evaluation queue was full (queue_size)",
    "shutdown": "still pending when shutdown's timeout passed",
    "after_shutdown": "spans ended after shutdown",
}


def trace_context(trace_id: str, span_id: str | None) -> Any:
    """A context whose current span is the evaluated trace's (root) span."""
    context = SpanContext(
        int(trace_id, 16),
        int(span_id, 16) if span_id else 0,
        is_remote=False,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
    )
    return set_span_in_context(NonRecordingSpan(context))
