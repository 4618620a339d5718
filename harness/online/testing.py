"""Fail a test on any rule violation in the traces the app makes while it runs (issue 28, item 5).

For integration tests that run the whole app with its own ``TracerProvider``::

    with no_violations(provider, policies):
        client.post("/chat", json={"message": "cancel my order"})

On leaving the block the processor evaluates every trace the app made (those still open
marked incomplete), then raises
``AssertionError`` listing each violation (policy, rule, reason, trace id). Results that are no
verdict (arguments not captured, a rule that raised) are listed too when ``errors=True``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from harness.online.policy import OnlinePolicy, TraceResult
from harness.online.processor import RuleProcessor

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = ["no_violations"]


@contextmanager
def no_violations(
    provider: TracerProvider,
    policies: Iterable[OnlinePolicy],
    *,
    errors: bool = False,
    timeout: float = 30.0,
) -> Iterator[list[TraceResult]]:
    """Evaluate ``policies`` on the traces ``provider`` finishes inside the block; yields the
    list of every result, filled as traces finish. AssertionError on a violation."""
    found: list[TraceResult] = []
    processor = RuleProcessor(policies, on_result=found.append)
    provider.add_span_processor(processor)
    try:
        yield found  # an exception of the block goes on, after the finally
    finally:
        flushed = processor.force_flush(int(timeout * 1000))
        # traces still open are evaluated too (marked incomplete); the provider keeps the
        # processor, which takes no more spans once shut down
        processor.shutdown(int(timeout * 1000))
    if not flushed:
        raise AssertionError(f"the traces were not evaluated within {timeout:g} s")
    bad = [r for r in found if r.violation or (errors and r.result.error)]
    if bad:
        lines = [
            f"  {r.policy} / {r.result.rule}: {r.result.reason} (trace {r.trace_id})" for r in bad
        ]
        raise AssertionError(f"{len(bad)} rule violation(s):\n" + "\n".join(lines))
