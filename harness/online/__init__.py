"""Online rules: check live traces in the app (:class:`RuleProcessor`, an OTel SDK span
processor) with the same rule engine and trace reader as ``harness eval-traces`` (issue 28).

::

    from opentelemetry.sdk.trace import TracerProvider
    from harness.online import RuleProcessor

    provider = TracerProvider()
    provider.add_span_processor(RuleProcessor(policies, on_result=alert))

Each rule result becomes a ``gen_ai.evaluation.result`` event (OTel Logs API) linked to the
trace, and the ``harness.rule.evaluations`` / ``harness.rule.violations`` /
``harness.rule.dropped`` / ``harness.rule.errors`` counters (OTel Metrics API). Modules:
``policy`` (what is evaluated, what comes out), ``reading`` (spans -> TraceRun), ``signals``
(events and counters), ``processor``, ``receiver`` and ``serve`` (``harness serve``),
``testing`` (:func:`~harness.online.testing.no_violations`: fail a test on a violation).
"""

from __future__ import annotations

from harness.online.policy import OnlinePolicy, TraceResult
from harness.online.processor import RuleProcessor

__all__ = ["OnlinePolicy", "RuleProcessor", "TraceResult"]
