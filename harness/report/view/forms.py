"""How a view shows values and texts: escaped for a terminal, ``repr`` or ``$`` forms, cut.

Shared by the builders (:mod:`harness.report.view.build`, :mod:`harness.report.view.rows`)
and by reporters (:func:`printable`).
"""

from __future__ import annotations

import re
from typing import Any

from harness.redaction import Scrubber, safe_repr
from harness.values import ABSENT, Matcher

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


def display(value: Any) -> str:
    """How a table shows a value: ``<absent>``, a matcher's ``$`` form, else ``repr`` (never
    raising, cut to a readable length: :func:`~harness.redaction.safe_repr`)."""
    if value is ABSENT:
        return "<absent>"
    if isinstance(value, Matcher):
        return value.describe()
    return safe_repr(value)  # containers: matchers nested inside show in their `$` form


_REPR_PLAIN = frozenset({int, float, bool, type(None)})
"""Values whose rendered form is themselves and whose text is their ``repr``
(:func:`~harness.redaction.safe_repr` of a writable number)."""


def _text_form(value: Any, rendered: Any, scrubber: Scrubber) -> str:
    """The ``text`` of a value from its rendered (masked, scrubbed, cut) form."""
    if rendered is value and type(value) in _REPR_PLAIN:  # a plain number: its repr
        return scrubber.text(repr(value))
    if value is ABSENT or isinstance(value, Matcher):
        return scrubber.text(display(value), TEXT_LIMIT)
    if isinstance(rendered, str) and not isinstance(value, str):
        return rendered  # a placeholder or an object's own text: shown as it is
    return scrubber.text(safe_repr(rendered, TEXT_LIMIT))
