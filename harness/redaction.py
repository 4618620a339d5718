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

Keys are half of it: a secret can also travel inside free text (a metric's reason, a forbidden
call's message, a traceback). :func:`collect_secrets` is the one collector of the values found
under redacted keys, :class:`Scrubber` replaces them in any text (one minimum length,
:data:`MIN_SECRET_LENGTH`, for every report), and :class:`StreamScrubber` gives each result of a
stream its scrubber when the whole suite is not known up front (``harness eval-traces``). See
docs/architecture.md, "Redaction".
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # the result model imports this module: no import back at run time
    from harness.result import RunResult, ScenarioResult, SuiteResult

__all__ = [
    "DEFAULT_REDACT_KEYS",
    "MASK",
    "MIN_SECRET_LENGTH",
    "Redactor",
    "Scrubber",
    "StreamScrubber",
    "collect_secrets",
    "jsonable",
]

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


# --- values made safe to write out ----------------------------------------------------------


def jsonable(value: Any) -> Any:
    """A JSON-ready copy: matchers and other objects become their readable text form."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    to_json = getattr(value, "to_json", None)  # matchers: back to their `$` mapping
    if callable(to_json):
        return jsonable(to_json())
    return _describe(value)


def _describe(value: Any) -> str:
    try:
        from harness.values import describe_pattern

        return describe_pattern(value)
    except Exception:  # a stub or an odd object: a repr still tells the reader what it was
        return repr(value)


# --- the one secret collector ---------------------------------------------------------------

MIN_SECRET_LENGTH: Final = 3
"""Shorter values under a secret key are not scrubbed out of free text: masking every "1" or
"ok" would garble it. One length for every report (docs/architecture.md, "Redaction")."""

_MAX_DEPTH = 50
"""Deeper nesting is not searched for secrets (the structured views still mask it by key)."""


def collect_secrets(runs: Iterable[RunResult], redactor: Redactor) -> frozenset[str]:
    """The values found under redacted keys in these runs' calls, results and expectations."""
    found: set[str] = set()
    if not redactor.enabled:
        return frozenset()
    for run in runs:
        sample = run.sample
        if sample is None:
            continue
        for call in sample.tool_calls or ():
            _secrets_in(call.args, redactor, found, False, 0)
            _secrets_in(call.result, redactor, found, False, 0)
        for expectation in sample.expected_tool_calls:
            # matchers in their `$` form: a literal in a pattern is a value like any other
            _secrets_in(jsonable(dict(expectation.args)), redactor, found, False, 0)
    return frozenset(found)


def _secrets_in(value: Any, redactor: Redactor, found: set[str], secret: bool, depth: int) -> None:
    """Collect the leaf values under redacted keys (JSON text is looked into as well)."""
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "["):
            try:
                parsed = json.loads(stripped)
            except ValueError:
                pass
            else:
                _secrets_in(parsed, redactor, found, secret, depth + 1)
                if not secret:
                    return
        if secret and len(stripped) >= MIN_SECRET_LENGTH:
            found.add(stripped)
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            hit = secret or (isinstance(key, str) and redactor.matches(key))
            _secrets_in(item, redactor, found, hit, depth + 1)
        return
    if isinstance(value, (list, tuple)):
        for item in value:
            _secrets_in(item, redactor, found, secret, depth + 1)
        return
    if secret and isinstance(value, (int, float)) and not isinstance(value, bool):
        text = repr(value)
        if len(text) >= MIN_SECRET_LENGTH:
            found.add(text)


# --- the text scrubber ----------------------------------------------------------------------


class Scrubber:
    """Masks secrets at render time: values under redacted keys, and those values in any text.

    Scoring never sees this: it happens only when a report or a span is written. A Scrubber is
    also the fixed scrubbing policy of a whole suite (:meth:`for_result` and :meth:`for_summary`
    return itself), the counterpart of :class:`StreamScrubber` for a stream.
    """

    __slots__ = ("_secrets", "redactor")

    def __init__(self, redactor: Redactor | None = None, secrets: Iterable[str] = ()) -> None:
        """Mask with ``redactor`` (default key list) and scrub ``secrets`` out of text."""
        self.redactor = Redactor() if redactor is None else redactor
        # longest first, so a secret that contains another is replaced whole
        self._secrets = tuple(sorted(set(secrets), key=len, reverse=True))

    @classmethod
    def for_runs(cls, redactor: Redactor | None, runs: Iterable[RunResult]) -> Scrubber:
        """A scrubber for everything these runs recorded or expected."""
        redactor = Redactor() if redactor is None else redactor
        return cls(redactor, collect_secrets(runs, redactor))

    @classmethod
    def for_suite(cls, redactor: Redactor | None, result: SuiteResult) -> Scrubber:
        """A scrubber for every run of every scenario of a suite result."""
        return cls.for_runs(redactor, (run for s in result.scenarios for run in s.runs))

    @property
    def secrets(self) -> tuple[str, ...]:
        """The secret values scrubbed out of text, longest first."""
        return self._secrets

    def text(self, text: str) -> str:
        """``text`` with every known secret value replaced by the mask."""
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, self.redactor.mask)
        return text

    def value(self, value: Any) -> Any:
        """A JSON-ready copy of ``value``: redacted keys masked, secret values scrubbed."""
        return self._strings(jsonable(self.redactor.redact(value)))

    def _strings(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value) if self._secrets else value
        if isinstance(value, dict):
            return {k: self._strings(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._strings(item) for item in value]
        return value

    def for_result(self, result: ScenarioResult) -> Scrubber:
        """The scrubber for one result of the suite: this one (it knows every run)."""
        return self

    def for_summary(self, summary: SuiteResult) -> Scrubber:
        """The scrubber for the suite's own text (warnings): this one."""
        return self


# --- the streaming scrubber -----------------------------------------------------------------

_REMEMBERED_SECRETS = 256
"""Secret values a stream remembers to scrub from later results' text (the longest are kept);
every string is searched for each of them, so the list stays short."""


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

    def for_result(self, result: ScenarioResult) -> Scrubber:
        """The scrubber to render ``result`` with."""
        own = collect_secrets(result.runs, self.redactor)
        new = [secret for secret in own if secret not in self._seen]
        if not new:
            return self._current
        self._seen.update(new)
        if len(self._seen) > _REMEMBERED_SECRETS:
            longest = sorted(self._seen, key=len, reverse=True)[:_REMEMBERED_SECRETS]
            self._seen = set(longest)
        self._current = Scrubber(self.redactor, self._seen)
        if own <= self._seen:
            return self._current
        return Scrubber(self.redactor, self._seen.union(own))  # its own always count

    def for_summary(self, summary: SuiteResult) -> Scrubber:
        """The scrubber for the stream's summary: the remembered secrets and the kept runs'.

        The summary of a stream is a bounded sample (its warnings, its kept results); the same
        redactor as every result's, so its head masks what a whole-suite report would.
        """
        kept = collect_secrets((run for s in summary.scenarios for run in s.runs), self.redactor)
        return Scrubber(self.redactor, self._seen.union(kept))
