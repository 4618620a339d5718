"""Redaction: mask the values of secret-looking keys in tool arguments, results and span data.

A key matches a redaction entry when some run of consecutive *words* of the key, joined, equals
the entry with its separators removed. Words are split at any non-alphanumeric character
(``-``, ``_``, ``.``, spaces) and at camelCase boundaries, case-insensitively. So the entry
``api_key`` masks ``api_key``, ``API-Key``, ``apiKey``, ``x-api-key`` and ``APIKEY``, and
``token`` masks ``token``, ``github_token`` and ``accessToken`` but not ``max_tokens`` or
``tokenizer``. A matched key keeps its place; its value (whatever it is) becomes ``"***"``.

Redaction walks dicts, lists and tuples at any depth, and strings that hold a JSON object or
array (parsed, redacted, re-serialised only when something changed), which is how tool
arguments travel on spans. The input is never mutated: when nothing matches, the very same
object comes back (no copy); otherwise the changed containers are new.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

__all__ = ["DEFAULT_REDACT_KEYS", "MASK", "Redactor"]

DEFAULT_REDACT_KEYS: Final[tuple[str, ...]] = (
    "api_key",
    "apikey",
    "password",
    "passwd",
    "secret",
    "token",
    "authorization",
    "access_token",
    "refresh_token",
)
MASK: Final = "***"

_CAMEL_LOWER_UPPER = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_CAMEL_ACRONYM = re.compile(r"(?<=[A-Z])(?=[A-Z][a-z])")
_NON_ALNUM = re.compile(r"[^0-9a-z]+")
_JSON_ESCAPE = re.compile(r"\\.")
_CACHE_LIMIT = 8192


def _words(key: str) -> tuple[str, ...]:
    """The lowercase words of a key: split at separators and camelCase boundaries."""
    spaced = _CAMEL_ACRONYM.sub(" ", _CAMEL_LOWER_UPPER.sub(" ", key)).lower()
    return tuple(word for word in _NON_ALNUM.split(spaced) if word)


def _squash(text: str) -> str:
    """Lowercase alphanumerics only: the form entries are compared in."""
    return _NON_ALNUM.sub("", text.lower())


class Redactor:
    """Masks values under secret-looking keys; see the module docstring for the matching rule."""

    __slots__ = ("_cache", "_max_len", "keys", "mask", "patterns")

    def __init__(self, keys: Iterable[str] = DEFAULT_REDACT_KEYS, *, mask: str = MASK) -> None:
        """Redact ``keys`` (case-insensitive; ``-``, ``_`` and camelCase are word breaks)."""
        self.keys: tuple[str, ...] = tuple(keys)
        patterns = []
        for key in self.keys:
            if not isinstance(key, str) or not _squash(key):
                raise ValueError(
                    f"redaction key {key!r} has no letters or digits; give a key name such as "
                    "'api_key'"
                )
            patterns.append(_squash(key))
        self.patterns: frozenset[str] = frozenset(patterns)
        self.mask = mask
        self._max_len = max((len(p) for p in self.patterns), default=0)
        self._cache: dict[str, bool] = {}

    def __repr__(self) -> str:
        """``Redactor(keys=(...))``."""
        return f"Redactor(keys={self.keys!r})"

    @property
    def enabled(self) -> bool:
        """False for a redactor with no keys (everything passes through)."""
        return bool(self.patterns)

    # --- keys ----------------------------------------------------------------------------------

    def matches(self, key: str) -> bool:
        """True when ``key``'s value must be masked."""
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        result = self._match_words(_words(key))
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()  # keys come from user data: keep the cache bounded
        self._cache[key] = result
        return result

    def _match_words(self, words: tuple[str, ...]) -> bool:
        for start in range(len(words)):
            joined = ""
            for word in words[start:]:
                joined += word
                if len(joined) > self._max_len:
                    break
                if joined in self.patterns:
                    return True
        return False

    def matches_attribute(self, name: str) -> bool:
        """True when an OTel attribute *name* is secret: judged by its last dotted part only.

        Attribute names are namespaces (``llm.token_count.total`` is a count, not a token), so
        only the leaf counts: ``http.request.header.authorization`` matches.
        """
        return self.matches(name.rsplit(".", 1)[-1])

    # --- values --------------------------------------------------------------------------------

    def redact(self, value: Any) -> Any:
        """``value`` with every matching key's value masked; the same object if nothing matched."""
        if not self.patterns:
            return value
        return self._walk(value)

    def redact_text(self, text: str) -> str:
        """A string redacted as JSON when it holds a JSON object or array; else unchanged."""
        if not self.patterns:
            return text
        return self._text(text)

    def redact_attributes(self, attributes: Mapping[str, Any]) -> Mapping[str, Any]:
        """Span/event attributes: secret attribute names masked, JSON string values redacted.

        Returns the same mapping when nothing changed, else a new dict.
        """
        if not self.patterns:
            return attributes
        changed: dict[str, Any] | None = None
        for name, value in attributes.items():
            if self.matches_attribute(name):
                new: Any = self.mask
            elif isinstance(value, str):
                new = self._text(value)
            elif isinstance(value, (list, tuple)):
                new = self._walk(value)
            else:
                continue
            if new is not value:
                if changed is None:
                    changed = dict(attributes)
                changed[name] = new
        return attributes if changed is None else changed

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._text(value)
        if isinstance(value, Mapping):
            return self._mapping(value)
        if isinstance(value, (list, tuple)):
            return self._sequence(value)
        return value

    def _mapping(self, mapping: Mapping[Any, Any]) -> Any:
        changed: dict[Any, Any] | None = None
        for key, item in mapping.items():
            if isinstance(key, str) and self.matches(key):
                new: Any = self.mask
                if isinstance(item, str) and item == self.mask:
                    continue  # already masked: keep identity so a second pass copies nothing
            else:
                new = self._walk(item)
                if new is item:
                    continue
            if changed is None:
                changed = dict(mapping)
            changed[key] = new
        return mapping if changed is None else changed

    def _sequence(self, items: list[Any] | tuple[Any, ...]) -> Any:
        changed: list[Any] | None = None
        for index, item in enumerate(items):
            new = self._walk(item)
            if new is item:
                continue
            if changed is None:
                changed = list(items)
            changed[index] = new
        if changed is None:
            return items
        return tuple(changed) if isinstance(items, tuple) else changed

    def _text(self, text: str) -> str:
        stripped = text.lstrip()
        if not stripped or stripped[0] not in "{[":
            return text
        if not self._might_match(text):
            return text
        try:
            parsed = json.loads(text)
        except ValueError:
            return text
        redacted = self._walk(parsed)
        if redacted is parsed:
            return text
        return json.dumps(redacted, ensure_ascii=False)

    def _might_match(self, text: str) -> bool:
        """Cheap pre-check: can any key in this JSON text match? Never a false "no"."""
        if "\\u" in text:
            return True  # a \\uXXXX escape can spell any letter of a key: parse to be sure
        squashed = _squash(_JSON_ESCAPE.sub(" ", text))
        return any(pattern in squashed for pattern in self.patterns)
