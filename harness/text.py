"""Text helpers every message uses: cut a long value, suggest a near name, count a noun.

One place for these so that errors, reasons and reports shorten and suggest the same way.
``tracing`` must not import ``harness`` at module level (docs/architecture.md), so its own
preview helper stays there until it can import this lazily.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

ELLIPSIS = "…"
"""What :func:`shorten` puts where it cut the text."""


def shorten(text: str, width: int, *, placeholder: str = ELLIPSIS) -> str:
    """``text`` itself if it fits in ``width`` characters, else its head plus ``placeholder``.

    Unlike :func:`textwrap.shorten` this keeps whitespace and cuts mid-word: a value in an
    error must read exactly as it was given, up to the cut.
    """
    if len(text) <= width:
        return text
    return text[: max(width - len(placeholder), 0)] + placeholder


def did_you_mean(
    word: str, candidates: Iterable[str], *, limit: int = 1, cutoff: float = 0.6
) -> str:
    """``did you mean 'x'?`` (``'x' or 'y'`` for several) for the nearest candidates, or ``""``.

    Callers put their own separator in front (`` — ``, ``(...)``, ``; ``), so the hint fits the
    sentence it ends. ``limit`` caps the suggestions, ``cutoff`` is difflib's similarity floor.
    """
    close = difflib.get_close_matches(word, list(candidates), n=limit, cutoff=cutoff)
    if not close:
        return ""
    return "did you mean " + " or ".join(repr(name) for name in close) + "?"


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 call`` / ``2 calls``: the count and the noun, ``many`` for an irregular plural."""
    if n == 1:
        return f"{n} {word}"
    return f"{n} {many if many is not None else word + 's'}"
