"""Redaction: mask secrets in tool arguments, results, span data and every text that leaves.

Keys are half of it (:mod:`harness.redaction.secret_keys`: the :class:`Redactor`, its default key
list and the ``--redact-pattern`` value patterns). A secret can also travel inside free text (a
metric's reason, a forbidden call's message, a traceback): :func:`collect_secrets`
(:mod:`harness.redaction.secrets`) is the one collector of the values found under redacted keys,
and :mod:`harness.redaction.scrubber` replaces them in any text (:class:`Scrubber`, one minimum
length, :data:`MIN_SECRET_LENGTH`, for every report), per result of a stream
(:class:`StreamScrubber`, ``harness eval-traces``) and while a run is still going, for the span
exporter (:class:`SecretBook`). Values are also made safe to write
(:mod:`harness.redaction.values`: :func:`jsonable`, :func:`safe_repr`, the ``<cycle>``,
``<too deep>`` and ``<unrepresentable: ...>`` placeholders, :data:`VIEW_LIMITS`). See
docs/architecture.md, "Redaction".
"""

from __future__ import annotations

from harness.redaction.scrubber import _REMEMBERED_SECRETS as _REMEMBERED_SECRETS
from harness.redaction.scrubber import Scrubber, SecretBook, StreamScrubber
from harness.redaction.secret_keys import (
    BUILTIN_VALUE_PATTERNS,
    DEFAULT_REDACT_KEYS,
    MASK,
    WALK_DEPTH,
    Redactor,
    compile_value_patterns,
)
from harness.redaction.secrets import MIN_SECRET_LENGTH, collect_secrets, secrets_in
from harness.redaction.values import (
    CYCLE,
    DATA_LIMITS,
    TOO_DEEP,
    VIEW_LIMITS,
    Limits,
    clean_text,
    jsonable,
    safe_repr,
)

__all__ = [
    "BUILTIN_VALUE_PATTERNS",
    "CYCLE",
    "DATA_LIMITS",
    "DEFAULT_REDACT_KEYS",
    "MASK",
    "MIN_SECRET_LENGTH",
    "TOO_DEEP",
    "VIEW_LIMITS",
    "WALK_DEPTH",
    "Limits",
    "Redactor",
    "Scrubber",
    "SecretBook",
    "StreamScrubber",
    "clean_text",
    "collect_secrets",
    "compile_value_patterns",
    "jsonable",
    "safe_repr",
    "secrets_in",
]
