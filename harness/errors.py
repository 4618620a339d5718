"""Exceptions the evaluation layer raises, in one place so callers can catch them by kind."""

from __future__ import annotations


class HarnessError(Exception):
    """Base class of every error toolcall-harness raises on purpose."""


class SampleError(HarnessError, ValueError):
    """A sample that a metric cannot score (no expectations, nothing recorded, bad call data)."""


class MatcherError(HarnessError, ValueError):
    """A malformed argument pattern: unknown ``$`` key or an operand of the wrong type."""

    def __init__(self, message: str, path: str = "") -> None:
        self.path = path
        where = f"at {path}: " if path else ""
        super().__init__(f"{where}{message}")


class MetricConfigError(HarnessError, ValueError):
    """A metric built with bad options (threshold outside [0, 1], unknown name or option)."""
