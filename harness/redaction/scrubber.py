"""The text scrubbers: a whole suite's, a stream's, and the one a run fills as it goes.

:class:`Scrubber` replaces the collected secrets in any text and renders values masked,
:class:`StreamScrubber` gives each result of a stream its scrubber when the whole suite is not
known up front (``harness eval-traces``), and :class:`SecretBook` collects them while a run is
still going, for the span exporter. See docs/architecture.md, "Redaction".
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Iterable
from typing import Any

from harness.redaction.secret_keys import Redactor
from harness.redaction.secrets import ResultRuns, RunSample, SuiteRuns, collect_secrets, secrets_in
from harness.redaction.values import (
    _INT_BITS_SAFE,
    _SCRUB_PAD,
    VIEW_LIMITS,
    Limits,
    _cut,
    _Render,
)

__all__ = ["Scrubber", "SecretBook", "StreamScrubber"]

# --- the text scrubber ----------------------------------------------------------------------


class Scrubber:
    """Masks secrets at render time: values under redacted keys, and those values in any text.

    Scoring never sees this: it happens only when a report or a span is written. A Scrubber is
    also the fixed scrubbing policy of a whole suite (:meth:`for_result` and :meth:`for_summary`
    return itself), the counterpart of :class:`StreamScrubber` for a stream.
    """

    __slots__ = ("_finder", "_secrets", "redactor")

    def __init__(self, redactor: Redactor | None = None, secrets: Iterable[str] = ()) -> None:
        """Mask with ``redactor`` (default key list) and scrub ``secrets`` out of text."""
        self.redactor = Redactor() if redactor is None else redactor
        # longest first, so a secret that contains another is replaced whole
        self._secrets = tuple(sorted(set(secrets), key=len, reverse=True))
        # one pass over a text for every secret, not one per secret (a long text, 256 secrets)
        self._finder = (
            re.compile("|".join(re.escape(secret) for secret in self._secrets))
            if self._secrets
            else None
        )

    @classmethod
    def for_runs(cls, redactor: Redactor | None, runs: Iterable[RunSample]) -> Scrubber:
        """A scrubber for everything these runs recorded or expected."""
        redactor = Redactor() if redactor is None else redactor
        return cls(redactor, collect_secrets(runs, redactor))

    @classmethod
    def for_suite(cls, redactor: Redactor | None, result: SuiteRuns) -> Scrubber:
        """A scrubber for every run of every scenario of a suite result."""
        return cls.for_runs(redactor, (run for s in result.scenarios for run in s.runs))

    @property
    def secrets(self) -> tuple[str, ...]:
        """The secret values scrubbed out of text, longest first."""
        return self._secrets

    def text(self, text: str, limit: int | None = None) -> str:
        """``text`` with every known secret value (and value pattern) masked; cut to ``limit``
        characters when given (what is scrubbed is never shown in part)."""
        if limit is not None and len(text) > limit:
            return _cut(self._scrub(text[: limit + _SCRUB_PAD]), limit)
        return self._scrub(text)

    def _scrub(self, text: str) -> str:
        if self._finder is not None:
            text = self._finder.sub(self.redactor.mask, text)
        return self.redactor.mask_values(text)

    def redacted_text(self, text: str) -> str:
        """A value's string: secret keys masked inside it (JSON, ``key=value``), then scrubbed."""
        return self._scrub(self.redactor.redact_text(text))

    def key(self, name: str) -> tuple[bool, str]:
        """A mapping key: is its value secret (masked by key), and the key as a view shows it
        (:meth:`redacted_text`)."""
        return self.redactor.matches(name), self.redacted_text(name)

    def value(self, value: Any, limits: Limits = VIEW_LIMITS) -> Any:
        """A JSON-ready copy of ``value`` cut to ``limits``: redacted keys masked, secret values
        scrubbed, anything unwritable a placeholder (one walk; never raises)."""
        if value is None:
            return None  # a run without output or result: no walk to set up
        kind = type(value)
        if kind is str and (limits.chars is None or len(value) <= limits.chars):
            return self.redacted_text(value)  # what the walk does with a string that fits
        if kind is bool or (kind is int and value.bit_length() < _INT_BITS_SAFE):
            return value  # what the walk gives a plain number: no walk to set up
        if kind is float and math.isfinite(value):
            return value
        return _Render(limits, self).walk(value)

    def for_result(self, result: ResultRuns) -> Scrubber:
        """The scrubber for one result of the suite: this one (it knows every run)."""
        return self

    def for_summary(self, summary: SuiteRuns) -> Scrubber:
        """The scrubber for the suite's own text (warnings): this one."""
        return self


# --- the streaming scrubber -----------------------------------------------------------------

_REMEMBERED_SECRETS = 256
"""Secret values a stream remembers to scrub from later results' text (the longest are kept);
every string is searched for each of them, so the list stays short."""


def _longest(secrets: set[str]) -> set[str]:
    if len(secrets) <= _REMEMBERED_SECRETS:
        return secrets
    return set(sorted(secrets, key=len, reverse=True)[:_REMEMBERED_SECRETS])


class StreamScrubber:
    """The scrubber for each result of a stream: its own secrets plus those seen before it.

    A whole-suite :class:`Scrubber` needs every run up front; a stream has one result at a time.
    So each result is scrubbed of every secret found in its own runs and of up to
    :data:`_REMEMBERED_SECRETS` secret values seen in earlier results (a secret that first shows
    up in a later result is not scrubbed out of an earlier one's free text; values under
    redacted keys are masked by key either way).
    """

    __slots__ = ("_current", "_seen", "redactor")

    def __init__(self, redactor: Redactor | None = None) -> None:
        """Scrub with ``redactor`` (default: the default key list)."""
        self.redactor = Redactor() if redactor is None else redactor
        self._seen: set[str] = set()
        self._current = Scrubber(self.redactor)

    def for_result(self, result: ResultRuns) -> Scrubber:
        """The scrubber to render ``result`` with."""
        own = collect_secrets(result.runs, self.redactor)
        new = [secret for secret in own if secret not in self._seen]
        if not new:
            return self._current
        self._seen.update(new)
        self._seen = _longest(self._seen)
        self._current = Scrubber(self.redactor, self._seen)
        if own <= self._seen:
            return self._current
        return Scrubber(self.redactor, self._seen.union(own))  # its own always count

    def for_summary(self, summary: SuiteRuns) -> Scrubber:
        """The scrubber for the stream's summary: the remembered secrets and the kept runs'.

        The summary of a stream is a bounded sample (its warnings, its kept results); the same
        redactor as every result's, so its head masks what a whole-suite report would.
        """
        kept = collect_secrets((run for s in summary.scenarios for run in s.runs), self.redactor)
        return Scrubber(self.redactor, self._seen.union(kept))


# --- secrets seen while a run goes on ---------------------------------------------------------


class SecretBook:
    """The secret values seen so far in a run, for the span exporter; thread-safe.

    Spans leave while the run goes on, long before its result exists: whoever sees tool
    arguments, results and replies :meth:`note`\\ s them (the runner's callback, see
    :mod:`harness.span_export`), and the exporter scrubs every span with :attr:`scrubber`, which
    holds every secret noted before the span ended. Like a stream, it keeps the
    :data:`_REMEMBERED_SECRETS` longest.
    """

    __slots__ = ("_lock", "_scrubber", "_seen", "redactor")

    def __init__(self, redactor: Redactor | None = None) -> None:
        """Collect the values under ``redactor``'s keys (default: the default key list)."""
        self.redactor = Redactor() if redactor is None else redactor
        self._lock = threading.Lock()
        self._seen: set[str] = set()
        self._scrubber = Scrubber(self.redactor)

    @property
    def scrubber(self) -> Scrubber:
        """A scrubber over every secret noted so far."""
        return self._scrubber

    def note(self, value: Any) -> None:
        """Remember the secret values under redacted keys anywhere in ``value``."""
        found: set[str] = set()
        secrets_in(value, self.redactor, found)
        self.add(found)

    def add(self, secrets: Iterable[str]) -> None:
        """Remember these secret values."""
        with self._lock:
            new = {s for s in secrets if s not in self._seen}
            if not new:
                return
            self._seen = _longest(self._seen | new)
            self._scrubber = Scrubber(self.redactor, self._seen)
