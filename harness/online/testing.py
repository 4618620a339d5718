"""Fail a test on any rule violation in the traces the app makes while it runs (issue 28, item 5).

For integration tests that run the whole app with its own ``TracerProvider``::

    with no_violations(provider, "policies/support.yaml"):
        client.post("/chat", json={"message": "cancel my order"})

On leaving the block the processor evaluates every trace the app made (those still open
marked incomplete), then raises
``AssertionError`` listing each violation (policy, rule, reason, trace id). Results that are no
verdict (arguments not captured, a rule that raised) are listed too when ``errors=True``.

The pytest plugin's ``harness_rules`` fixture is a :class:`RuleCheck`: the test installs the
rules on its provider, and the test fails when it ends with a violation.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from harness.online.policy import OnlinePolicy, TraceResult
from harness.online.processor import RuleProcessor

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = ["RuleCheck", "no_violations"]

Policies = str | os.PathLike[str] | Iterable[OnlinePolicy | str | os.PathLike[str]]
"""A policy file path, a list of paths, or loaded policy objects (as :class:`RuleProcessor`)."""


class RuleCheck:
    """Rule processors installed on tracer providers, checked together at the end."""

    def __init__(self, timeout: float = 30.0) -> None:
        """``timeout``: seconds :meth:`finish` waits for the pending traces' evaluation."""
        self.timeout = timeout
        self._installed: list[tuple[RuleProcessor, list[TraceResult], bool]] = []
        self._closed = False
        self._late = False

    def __call__(
        self, provider: TracerProvider, policies: Policies, *, errors: bool = False
    ) -> list[TraceResult]:
        """Evaluate ``policies`` on the traces ``provider`` finishes from now on; the list of
        every result, filled as traces finish. ``errors``: results that are no verdict fail
        the check too. A policy file that does not load raises here (ConfigError)."""
        found: list[TraceResult] = []
        processor = RuleProcessor(policies, on_result=found.append)
        provider.add_span_processor(processor)
        self._installed.append((processor, found, errors))
        return found

    def close(self) -> None:
        """Evaluate what is pending (open traces marked incomplete) and stop the processors;
        the providers keep them, and they take no more spans."""
        if self._closed:
            return
        self._closed = True
        millis = int(self.timeout * 1000)
        for processor, _, _ in self._installed:
            if not processor.force_flush(millis):
                self._late = True
            processor.shutdown(millis)

    def finish(self) -> None:
        """:meth:`close`, then AssertionError listing each violation (and each error result
        where asked)."""
        self.close()
        if self._late:
            raise AssertionError(f"the traces were not evaluated within {self.timeout:g} s")
        bad = [
            r
            for _, found, errors in self._installed
            for r in found
            if r.violation or (errors and r.result.error)
        ]
        if bad:
            lines = [
                f"  {r.policy} / {r.result.rule}: {r.result.reason} (trace {r.trace_id})"
                for r in bad
            ]
            raise AssertionError(f"{len(bad)} rule violation(s):\n" + "\n".join(lines))


@contextmanager
def no_violations(
    provider: TracerProvider,
    policies: Policies,
    *,
    errors: bool = False,
    timeout: float = 30.0,
) -> Iterator[list[TraceResult]]:
    """Evaluate ``policies`` on the traces ``provider`` finishes inside the block; yields the
    list of every result, filled as traces finish. AssertionError on a violation."""
    check = RuleCheck(timeout)
    found = check(provider, policies, errors=errors)
    try:
        yield found
    except BaseException:  # the block's own exception goes on; the processor still stops
        check.close()
        raise
    check.finish()
