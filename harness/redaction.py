"""Redaction: mask secrets in tool arguments, results, span data and every text that leaves.

A key matches a redaction entry when some run of consecutive *words* of the key, joined, equals
the entry with its separators removed. Words are split at any non-alphanumeric character
(``-``, ``_``, ``.``, spaces) and at camelCase boundaries, case-insensitively. So the entry
``api_key`` masks ``api_key``, ``API-Key``, ``apiKey``, ``x-api-key`` and ``APIKEY``, and
``token`` masks ``token``, ``github_token`` and ``accessToken`` but not ``max_tokens`` or
``tokenizer``. A matched key keeps its place; its value (whatever it is) becomes ``"***"``.

Redaction walks dicts, lists and tuples (to :data:`WALK_DEPTH` levels, cycles once), strings
that hold a JSON object or array (parsed, redacted, re-serialised only when something changed),
which is how tool arguments travel on spans, and free text: a ``Key: value`` header line or an
inline ``key=value`` / ``'key': 'value'`` pair of a secret key has its value masked (a tool that
echoes its request headers). Opt-in *value patterns* (``--redact-pattern``; built-ins for
OpenAI ``sk-`` keys, GitHub tokens, AWS access key ids and JWTs) mask secrets that sit under an
innocent key. The input is never mutated: when nothing matches, the very same object comes back
(no copy); otherwise the changed containers are new.

Keys are half of it: a secret can also travel inside free text (a metric's reason, a forbidden
call's message, a traceback). :func:`collect_secrets` is the one collector of the values found
under redacted keys, :class:`Scrubber` replaces them in any text (one minimum length,
:data:`MIN_SECRET_LENGTH`, for every report), :class:`StreamScrubber` gives each result of a
stream its scrubber when the whole suite is not known up front (``harness eval-traces``), and
:class:`SecretBook` collects them while a run is still going, for the span exporter. See
docs/architecture.md, "Redaction".

Values are also made safe to write: :func:`jsonable` and :meth:`Scrubber.value` turn anything
(cycles, 10,000-deep nesting, objects whose ``repr`` raises, ints past Python's 4,300-digit
string limit, numpy arrays) into JSON-ready data with placeholders
(``<cycle>``, ``<too deep>``, ``<unrepresentable: ...>``), and :func:`safe_repr` into text
(lone surrogates stay: each writer escapes or replaces them, :func:`clean_text`);
:meth:`Scrubber.value` also caps the size (:data:`VIEW_LIMITS`) so a 10 MB result costs a
report milliseconds, not minutes.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # the result model imports this module: no import back at run time
    from harness.result import RunResult, ScenarioResult, SuiteResult

__all__ = [
    "BUILTIN_VALUE_PATTERNS",
    "CYCLE",
    "DATA_LIMITS",
    "DEFAULT_REDACT_KEYS",
    "MASK",
    "MIN_SECRET_LENGTH",
    "TOO_DEEP",
    "VIEW_LIMITS",
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
    "private_key",
    "client_secret",
    "credential",
    "credentials",
    "cookie",
    "set_cookie",
    "x_api_key",
)
MASK: Final = "***"

BUILTIN_VALUE_PATTERNS: Final[Mapping[str, str]] = {
    # OpenAI-style secret keys (sk-..., sk-proj-..., sk-svcacct-...)
    "openai": r"\bsk-[A-Za-z0-9_-]{20,}",
    # GitHub personal, OAuth, user-to-server, server-to-server, refresh and fine-grained tokens
    "github": r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
    # AWS access key ids (long-term AKIA, temporary ASIA)
    "aws": r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    # JSON Web Tokens: base64url header and payload (both JSON objects, so "eyJ"), signature
    "jwt": r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}",
}
"""``--redact-pattern builtin`` enables all of these, ``builtin:NAME`` one of them."""

_CAMEL_LOWER_UPPER = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_CAMEL_ACRONYM = re.compile(r"(?<=[A-Z])(?=[A-Z][a-z])")
_NON_ALNUM = re.compile(r"[^0-9a-z]+")
_JSON_ESCAPE = re.compile(r"\\.")
_CACHE_LIMIT = 8192
_TEXT_CACHED = 256
"""Strings up to this length have their redacted form cached (at most ``_CACHE_LIMIT`` kept)."""

WALK_DEPTH: Final = 64
"""Containers nested deeper than this are not walked (the views render them as ``<too deep>``
well before, see :data:`VIEW_LIMITS`); a 10,000-deep value costs nothing and raises nothing."""

# A ``Key: value`` header line (the whole rest of the line is the value: ``Cookie: a=1; b=2``).
_HEADER_LINE = re.compile(
    r"(?m)^(?P<head>[ \t]*(?P<key>[A-Za-z][\w.\-]*)[ \t]*:[ \t]*)(?P<value>\S[^\r\n]*)"
)
# An inline ``key=value``, ``key: value``, ``'key': 'value'`` or ``"key": "value"`` pair; a
# quoted value may be cut at the end of the text (a shortened report value), and a key never
# starts inside a word (``1token`` is one word, not ``token``).
_INLINE_PAIR = re.compile(
    r"""(?<!\w)(?P<head>(?P<q>['"]?)(?P<key>[A-Za-z][\w.\-]*)(?P=q)[ \t]*[:=][ \t]*)"""
    r"""(?P<value>"(?:[^"\\\n]|\\.)*(?:"|$)|'(?:[^'\\\n]|\\.)*(?:'|$)"""
    r"""|(?:(?:Bearer|Basic|Token|Digest)[ \t]+)?[^\s,;&'"<>(){}\[\]]+)"""
)


def _words(key: str) -> tuple[str, ...]:
    """The lowercase words of a key: split at separators and camelCase boundaries."""
    spaced = _CAMEL_ACRONYM.sub(" ", _CAMEL_LOWER_UPPER.sub(" ", key)).lower()
    return tuple(word for word in _NON_ALNUM.split(spaced) if word)


def _squash(text: str) -> str:
    """Lowercase alphanumerics only: the form entries are compared in."""
    return _NON_ALNUM.sub("", text.lower())


def compile_value_patterns(specs: Iterable[str]) -> tuple[re.Pattern[str], ...]:
    """``--redact-pattern`` values compiled: ``builtin`` (every built-in), ``builtin:NAME``, or a
    regular expression. ValueError names a bad one (unknown built-in, invalid or empty-matching
    regex: masking the empty string would garble every text)."""
    out: list[re.Pattern[str]] = []
    for spec in specs:
        if spec == "builtin":
            out.extend(re.compile(p) for p in BUILTIN_VALUE_PATTERNS.values())
            continue
        if spec.startswith("builtin:"):
            name = spec.partition(":")[2]
            if name not in BUILTIN_VALUE_PATTERNS:
                known = ", ".join(BUILTIN_VALUE_PATTERNS)
                raise ValueError(f"unknown built-in pattern {name!r}: use one of {known}")
            out.append(re.compile(BUILTIN_VALUE_PATTERNS[name]))
            continue
        try:
            pattern = re.compile(spec)
        except re.error as exc:
            raise ValueError(f"{spec!r} is not a regular expression: {exc}") from None
        if pattern.search("") is not None:
            raise ValueError(f"{spec!r} matches the empty string: it would mask everywhere")
        out.append(pattern)
    return tuple(out)


class Redactor:
    """Masks values under secret-looking keys; see the module docstring for the matching rule."""

    __slots__ = (
        "_cache",
        "_finder",
        "_max_len",
        "_min_len",
        "_texts",
        "_values",
        "keys",
        "mask",
        "patterns",
        "value_patterns",
    )

    def __init__(
        self,
        keys: Iterable[str] = DEFAULT_REDACT_KEYS,
        *,
        mask: str = MASK,
        value_patterns: Iterable[re.Pattern[str] | str] = (),
    ) -> None:
        """Redact ``keys`` (case-insensitive; ``-``, ``_`` and camelCase are word breaks).

        ``value_patterns``: regular expressions (compiled, or ``--redact-pattern`` specs) whose
        matches are masked in every string, whatever key it sits under.
        """
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
        specs = [p for p in value_patterns if isinstance(p, str)]
        self.value_patterns: tuple[re.Pattern[str], ...] = (
            *(p for p in value_patterns if not isinstance(p, str)),
            *compile_value_patterns(specs),
        )
        self._values = (
            re.compile("|".join(f"(?:{p.pattern})" for p in self.value_patterns))
            if self.value_patterns
            else None
        )
        self._max_len = max((len(p) for p in self.patterns), default=0)
        self._min_len = min((len(p) for p in self.patterns), default=0)
        # one scan of a squashed text for every entry, not one `in` per entry
        self._finder = (
            re.compile("|".join(re.escape(p) for p in sorted(self.patterns)))
            if self.patterns
            else None
        )
        self._cache: dict[str, bool] = {}
        # short strings recur across results (tool names, reasons, argument values): each is
        # redacted once per redactor, not once per report view of every trace
        self._texts: dict[str, str] = {}

    def __repr__(self) -> str:
        """``Redactor(keys=(...))``."""
        return f"Redactor(keys={self.keys!r})"

    @property
    def enabled(self) -> bool:
        """False for a redactor with no keys and no value patterns (everything passes through)."""
        return bool(self.patterns) or self._values is not None

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
        if not self.enabled:
            return value
        return self._walk(value, 0, set())

    def redact_text(self, text: str) -> str:
        """A string with secrets masked: as JSON when it holds a JSON object or array, and as
        free text (``Key: value`` lines, ``key=value`` pairs, value patterns); else unchanged."""
        if not self.enabled:
            return text
        return self._text(text)

    def mask_values(self, text: str) -> str:
        """``text`` with every match of the value patterns masked (unchanged without patterns)."""
        if self._values is None:
            return text
        return self._values.sub(self.mask, text)

    def redact_attributes(self, attributes: Mapping[str, Any]) -> Mapping[str, Any]:
        """Span/event attributes: secret attribute names masked, string values redacted.

        Returns the same mapping when nothing changed, else a new dict.
        """
        if not self.enabled:
            return attributes
        changed: dict[str, Any] | None = None
        for name, value in attributes.items():
            if self.matches_attribute(name):
                new: Any = self.mask
            elif isinstance(value, str):
                new = self._text(value)
            elif isinstance(value, (list, tuple)):
                new = self._walk(value, 0, set())
            else:
                continue
            if new is not value:
                if changed is None:
                    changed = dict(attributes)
                changed[name] = new
        return attributes if changed is None else changed

    def _walk(self, value: Any, depth: int, path: set[int]) -> Any:
        if isinstance(value, str):
            return self._text(value)
        if depth >= WALK_DEPTH or not isinstance(value, (Mapping, list, tuple)):
            return value
        marker = id(value)
        if marker in path:
            return value  # a cycle: this container is being walked already, further up
        path.add(marker)
        try:
            if isinstance(value, Mapping):
                return self._mapping(value, depth, path)
            return self._sequence(value, depth, path)
        finally:
            path.discard(marker)

    def _mapping(self, mapping: Mapping[Any, Any], depth: int, path: set[int]) -> Any:
        changed: dict[Any, Any] | None = None
        for key, item in mapping.items():
            if isinstance(key, str) and self.matches(key):
                new: Any = self.mask
                if isinstance(item, str) and item == self.mask:
                    continue  # already masked: keep identity so a second pass copies nothing
            else:
                new = self._walk(item, depth + 1, path)
                if new is item:
                    continue
            if changed is None:
                changed = dict(mapping)
            changed[key] = new
        return mapping if changed is None else changed

    def _sequence(self, items: list[Any] | tuple[Any, ...], depth: int, path: set[int]) -> Any:
        changed: list[Any] | None = None
        for index, item in enumerate(items):
            if not isinstance(item, (str, Mapping, list, tuple)):
                continue  # numbers and the like: nothing to mask (a 1M-number list is quick)
            new = self._walk(item, depth + 1, path)
            if new is item:
                continue
            if changed is None:
                changed = list(items)
            changed[index] = new
        if changed is None:
            return items
        return tuple(changed) if isinstance(items, tuple) else changed

    def _text(self, text: str) -> str:
        if len(text) > _TEXT_CACHED:
            return self._redacted_text(text)
        cached = self._texts.get(text)
        if cached is not None:
            return text if cached == text else cached  # unchanged: the caller's own object
        out = self._redacted_text(text)
        if len(self._texts) >= _CACHE_LIMIT:
            self._texts.clear()  # texts come from user data: keep the cache bounded
        self._texts[text] = out
        return out

    def _redacted_text(self, text: str) -> str:
        out = text
        if self.patterns and self._might_match(text):
            out = self._free_text(self._json_text(text))
        if self._values is not None:
            out = self._values.sub(self.mask, out)
        return text if out == text else out

    def _json_text(self, text: str) -> str:
        stripped = text.lstrip()
        if not stripped or stripped[0] not in "{[":
            return text
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            return text  # not JSON, or too deep to parse: the free-text pass still looks
        redacted = self._walk(parsed, 0, set())
        if redacted is parsed:
            return text
        try:
            return json.dumps(redacted, ensure_ascii=False)
        except (ValueError, RecursionError):
            return self.mask  # cannot be written back without the secret: nothing of it goes

    def _free_text(self, text: str) -> str:
        """``Key: value`` header lines and inline ``key=value`` pairs of secret keys masked."""
        text = _HEADER_LINE.sub(self._mask_pair, text)
        return _INLINE_PAIR.sub(self._mask_pair, text)

    def _mask_pair(self, match: re.Match[str]) -> str:
        if not self.matches(match["key"]):
            return match[0]
        value = match["value"]
        quote = value[0] if value[0] in "'\"" else ""
        closed = quote and len(value) > 1 and value.endswith(quote)
        return f"{match['head']}{quote}{self.mask}{quote if closed else ''}"

    def _might_match(self, text: str) -> bool:
        """Cheap pre-check: can any key in this text match? Never a false "no"."""
        if len(text) < self._min_len or self._finder is None:
            return False  # squashing never lengthens a text, nor does decoding an escape
        if "\\u" in text:
            return True  # a \\uXXXX escape can spell any letter of a key: look to be sure
        squashed = _squash(_JSON_ESCAPE.sub(" ", text))
        return self._finder.search(squashed) is not None


# --- values made safe to write out ----------------------------------------------------------

CYCLE: Final = "<cycle>"
"""What a container shows where it contains itself (further up the same value)."""
TOO_DEEP: Final = "<too deep>"
"""What a container nested past the depth limit shows."""
_INT_DIGITS_LIMIT = 4300
"""Python refuses to turn longer ints into text (``sys.get_int_max_str_digits``)."""
_INT_BITS_SAFE = 14_000
"""Ints shorter than this many bits have fewer than 4,300 digits: no need to try."""


@dataclass(frozen=True, slots=True)
class Limits:
    """How much of a value is rendered: nesting depth, entries per container, total characters."""

    depth: int
    items: int | None = None
    """Entries kept per list or mapping (None: all)."""
    chars: int | None = None
    """Characters kept over all the value's strings (None: all); past it strings are cut."""


DATA_LIMITS: Final = Limits(depth=200)
""":func:`jsonable`: complete data, only deep nesting cut (JSON writers recurse)."""
VIEW_LIMITS: Final = Limits(depth=32, items=1000, chars=100_000)
"""The report views (:meth:`Scrubber.value`): what a reader can take in, and what keeps a 10 MB
string or a million-element list to milliseconds in every report (docs/architecture.md,
"Redaction")."""

_MIN_ROOM = 200
"""A string is never cut shorter than this, even once the value's budget is spent."""
_SCRUB_PAD = 4096
"""Characters past a cut that are still scrubbed before cutting: a secret or token that
straddles the cut is masked whole, never shown in part."""


def clean_text(text: str) -> str:
    """``text`` with lone surrogates escaped (``\udc80`` as the six characters ``\\udc80``).

    A lone surrogate cannot be encoded as UTF-8: written raw it breaks a JSON file, the
    console and the trace file. Every other character is kept.
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _int_text(value: int) -> str | None:
    """None when ``value`` can be written as digits, else its placeholder."""
    if value.bit_length() < _INT_BITS_SAFE:
        return None
    digits = int(value.bit_length() * math.log10(2)) + 1
    if digits <= _INT_DIGITS_LIMIT:
        try:
            int.__repr__(value)
            return None
        except ValueError:
            pass
    return f"<unrepresentable: int with about {digits:,} digits>"


def _unrepresentable(value: Any, exc: BaseException) -> str:
    kind = type(value).__name__
    return f"<unrepresentable: {kind} ({type(exc).__name__}: {_exc_text(exc)})>"


def _exc_text(exc: BaseException) -> str:
    try:
        return clean_text(str(exc))[:200]
    except Exception:
        return "?"


def _describe(value: Any) -> str:
    """A non-JSON object as text: a matcher's ``$`` form, else its ``repr``; never raises."""
    try:
        from harness.values import describe_pattern

        return describe_pattern(value)
    except Exception as exc:  # a repr that raises, or an odd object: say so, do not fail
        return _unrepresentable(value, exc)


def _cut(text: str, room: int) -> str:
    if len(text) <= room:
        return text
    return f"{text[:room]}… <{len(text) - room:,} more characters>"


class _Render:
    """One bounded walk of a value into JSON-ready data, cycles and depth cut, never raising.

    With a scrubber it also masks secret keys and scrubs every string on the way: one walk per
    value for the views (key masking, conversion and text scrubbing used to be three).
    """

    __slots__ = ("_path", "chars_left", "limits", "scrubber")

    def __init__(self, limits: Limits, scrubber: Scrubber | None = None) -> None:
        self.limits = limits
        self.scrubber = scrubber
        self.chars_left = limits.chars
        self._path: set[int] = set()

    def walk(self, value: Any, depth: int = 0) -> Any:
        try:
            return self._walk(value, depth)
        except Exception as exc:  # RecursionError included: a hostile value is its own problem
            return self.string(_unrepresentable(value, exc))

    def _walk(self, value: Any, depth: int) -> Any:
        kind = type(value)  # exact types first: a million-number list takes no ABC checks
        if kind is str:
            return self.string(value)
        if kind is int:
            shown = _int_text(value)
            return value if shown is None else shown
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, int):
            shown = _int_text(value)
            return int(value) if shown is None else shown
        if isinstance(value, float):
            return float(value) if math.isfinite(value) else repr(float(value))
        if isinstance(value, str):
            return self.string(value)
        if kind is dict or kind is list or isinstance(value, (Mapping, list, tuple)):
            if depth >= self.limits.depth:
                return TOO_DEEP
            marker = id(value)
            if marker in self._path:
                return CYCLE
            self._path.add(marker)
            try:
                if kind is dict or isinstance(value, Mapping):
                    return self._mapping(value, depth)
                return self._sequence(value, depth)
            finally:
                self._path.discard(marker)
        to_json = getattr(value, "to_json", None)  # matchers: back to their `$` mapping
        if callable(to_json):
            return self._walk(to_json(), depth)
        tolist = getattr(value, "tolist", None)  # numpy arrays and scalars, array.array
        if callable(tolist) and not isinstance(value, type):
            try:
                plain = tolist()
            except Exception:
                plain = value
            if plain is not value:
                return self._walk(plain, depth)
        return self.string(_describe(value))

    def _mapping(self, mapping: Mapping[Any, Any], depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        scrubber = self.scrubber
        limit = self.limits.items
        for count, (key, item) in enumerate(mapping.items()):
            if limit is not None and (count >= limit or self._spent()):
                out["…"] = f"<{len(mapping) - count:,} more entries>"
                break
            name = key if isinstance(key, str) else _key_text(key)
            if scrubber is not None and scrubber.redactor.matches(name):
                out[self.string(name)] = scrubber.redactor.mask
                continue
            out[self.string(name)] = self._walk(item, depth + 1)
        return out

    def _sequence(self, items: list[Any] | tuple[Any, ...], depth: int) -> list[Any]:
        limit = self.limits.items
        if limit is None:
            return [self._walk(item, depth + 1) for item in items]
        out: list[Any] = []
        for count, item in enumerate(items):
            if count >= limit or self._spent():
                out.append(f"<{len(items) - count:,} more items>")
                break
            out.append(self._walk(item, depth + 1))
        return out

    def _spent(self) -> bool:
        return self.chars_left is not None and self.chars_left <= 0

    def string(self, text: str) -> str:
        """A string as the value shows it: scrubbed, then cut to what the budget has left."""
        room = None if self.chars_left is None else max(self.chars_left, _MIN_ROOM)
        scrubber = self.scrubber
        if room is not None and len(text) > room:
            more = len(text) - room
            head = text[: room + _SCRUB_PAD]
            if scrubber is not None:
                head = scrubber.redacted_text(head)
            text = f"{head[:room]}… <{more:,} more characters>"
        elif scrubber is not None:
            text = scrubber.redacted_text(text)
        if self.chars_left is not None:
            self.chars_left -= len(text)
        return text


def _key_text(key: Any) -> str:
    try:
        return str(key)
    except Exception as exc:
        return _unrepresentable(key, exc)


def jsonable(value: Any) -> Any:
    """A JSON-ready copy of anything, never raising: matchers become their ``$`` mapping, other
    objects their text; cycles, nesting past :data:`DATA_LIMITS`, unwritable ints and failing
    ``repr`` become placeholders."""
    return _Render(DATA_LIMITS).walk(value)


_REPR_LIMIT = 10_000


def safe_repr(value: Any, limit: int = _REPR_LIMIT) -> str:
    """``repr(value)`` that never raises and stays short: literals as ``repr``, containers as
    the ``repr`` of their JSON-ready form (:data:`VIEW_LIMITS`), matchers as their ``$`` form,
    cut to ``limit`` characters."""
    try:
        if isinstance(value, str):
            return _cut(repr(value[: limit + 1]), limit)
        if isinstance(value, int) and not isinstance(value, bool):
            shown = _int_text(value)
            return shown if shown is not None else _cut(repr(int(value)), limit)
        if isinstance(value, (float, bool)) or value is None:
            return repr(value)
        if isinstance(value, (Mapping, list, tuple)):
            return _cut(repr(_Render(VIEW_LIMITS).walk(value)), limit)
        return _cut(_describe(value), limit)
    except Exception as exc:
        return _unrepresentable(value, exc)


# --- the one secret collector ---------------------------------------------------------------

MIN_SECRET_LENGTH: Final = 3
"""Shorter values under a secret key are not scrubbed out of free text: masking every "1" or
"ok" would garble it. One length for every report (docs/architecture.md, "Redaction")."""

_MAX_DEPTH = 50
"""Deeper nesting is not searched for secrets (the structured views still mask it by key)."""
_MAX_SECRET_LENGTH = 4096
"""Longer values under a secret key are masked by key but not searched for in free text."""


def collect_secrets(runs: Iterable[RunResult], redactor: Redactor) -> frozenset[str]:
    """The values found under redacted keys in these runs' calls, results and expectations.

    Each sample is searched once per redactor: the progress line, the root span and the reports
    each ask about the same runs, and a million-element result costs seconds per search.
    """
    if not redactor.patterns:
        return frozenset()
    found: set[str] = set()
    for run in runs:
        if run.sample is not None:
            found.update(_SEARCHED.secrets(run.sample, redactor))
    return frozenset(found)


def _sample_secrets(sample: Any, redactor: Redactor) -> frozenset[str]:
    found: set[str] = set()
    for call in sample.tool_calls or ():
        secrets_in(call.args, redactor, found)
        secrets_in(call.result, redactor, found)
    for expectation in sample.expected_tool_calls:
        # matchers in their `$` form: a literal in a pattern is a value like any other
        secrets_in(jsonable(dict(expectation.args)), redactor, found)
    return frozenset(found)


class _Searched:
    """The secrets of the last :data:`_SEARCHED_KEPT` samples searched, per redactor.

    Entries hold their sample and redactor, so an id is never reused while it is a key; the
    oldest entry goes first. A sample is not changed once scored (docs/architecture.md,
    "Data flow"), so its secrets stay what they were.
    """

    __slots__ = ("_entries", "_lock")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[tuple[int, int], tuple[Any, Redactor, frozenset[str]]] = {}

    def secrets(self, sample: Any, redactor: Redactor) -> frozenset[str]:
        key = (id(sample), id(redactor))
        with self._lock:
            entry = self._entries.get(key)
        if entry is not None and entry[0] is sample and entry[1] is redactor:
            return entry[2]
        found = _sample_secrets(sample, redactor)
        with self._lock:
            if len(self._entries) >= _SEARCHED_KEPT:
                del self._entries[next(iter(self._entries))]
            self._entries[key] = (sample, redactor, found)
        return found


_SEARCHED_KEPT = 64
_SEARCHED = _Searched()


def secrets_in(value: Any, redactor: Redactor, found: set[str]) -> None:
    """Add to ``found`` the leaf values under redacted keys in ``value`` (JSON text included)."""
    if not redactor.patterns:
        return
    try:
        _Search(redactor, found).walk(value, False, 0)
    except Exception:  # a value nothing can read: it renders as a placeholder, holds nothing
        return


_CONTAINERS = frozenset({dict, list, tuple})
_JSON_STARTS = frozenset("{[ \t\r\n")
_LEAVES = frozenset({int, float, bool, type(None)})


class _Search:
    """One search of a value for the leaves under redacted keys: each container once per path
    (a cycle ends there), :data:`_MAX_DEPTH` levels, JSON text looked into. Plain numbers and
    strings that are not under a secret key are skipped without a call: a million-element
    result is searched in a second or two."""

    __slots__ = ("_matches", "_path", "found", "redactor")

    def __init__(self, redactor: Redactor, found: set[str]) -> None:
        self.redactor = redactor
        self.found = found
        self._matches = redactor.matches
        self._path: set[int] = set()

    def walk(self, value: Any, secret: bool, depth: int) -> None:
        kind = type(value)
        if kind is str:
            if secret or value[:1] in _JSON_STARTS:
                _secret_text(value, self, secret, depth)
            return
        if kind in _CONTAINERS or isinstance(value, (Mapping, list, tuple)):
            if depth <= _MAX_DEPTH:
                self._container(value, kind, secret, depth)
            return
        if secret and isinstance(value, (int, float)) and not isinstance(value, bool):
            text = safe_repr(value)
            if MIN_SECRET_LENGTH <= len(text) <= _MAX_SECRET_LENGTH:
                self.found.add(text)

    def _container(self, value: Any, kind: type, secret: bool, depth: int) -> None:
        marker = id(value)
        path = self._path
        if marker in path:
            return  # a cycle: already being searched further up
        path.add(marker)
        try:
            if kind is dict or isinstance(value, Mapping):
                matches = self._matches
                for key, item in value.items():
                    hit = secret or (type(key) is str and matches(key))
                    if hit or _may_hold(item):
                        self.walk(item, hit, depth + 1)
            else:
                for item in value:
                    if secret or _may_hold(item):
                        self.walk(item, secret, depth + 1)
        finally:
            path.discard(marker)


def _may_hold(item: Any) -> bool:
    """Can ``item``, not under a secret key, hold one? Containers and JSON text only."""
    kind = type(item)
    if kind is str:
        return item[:1] in _JSON_STARTS
    return kind not in _LEAVES


def _secret_text(value: str, search: _Search, secret: bool, depth: int) -> None:
    head = value[:64].lstrip()
    redactor = search.redactor
    if head[:1] in ("{", "[") and (secret or redactor._might_match(value)):
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            pass
        else:
            search.walk(parsed, secret, depth + 1)
            if not secret:
                return
    if secret:
        stripped = value.strip()
        if MIN_SECRET_LENGTH <= len(stripped) <= _MAX_SECRET_LENGTH:
            search.found.add(stripped)


# --- the text scrubber ----------------------------------------------------------------------


class Scrubber:
    """Masks secrets at render time: values under redacted keys, and those values in any text.

    Scoring never sees this: it happens only when a report or a span is written. A Scrubber is
    also the fixed scrubbing policy of a whole suite (:meth:`for_result` and :meth:`for_summary`
    return itself), the counterpart of :class:`StreamScrubber` for a stream.
    """

    __slots__ = ("_constants", "_finder", "_secrets", "redactor")

    def __init__(self, redactor: Redactor | None = None, secrets: Iterable[str] = ()) -> None:
        """Mask with ``redactor`` (default key list) and scrub ``secrets`` out of text."""
        self.redactor = Redactor() if redactor is None else redactor
        self._constants: dict[str, Any] = {}
        # longest first, so a secret that contains another is replaced whole
        self._secrets = tuple(sorted(set(secrets), key=len, reverse=True))
        # one pass over a text for every secret, not one per secret (a long text, 256 secrets)
        self._finder = (
            re.compile("|".join(re.escape(secret) for secret in self._secrets))
            if self._secrets
            else None
        )

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

    def value(self, value: Any, limits: Limits = VIEW_LIMITS) -> Any:
        """A JSON-ready copy of ``value`` cut to ``limits``: redacted keys masked, secret values
        scrubbed, anything unwritable a placeholder (one walk; never raises)."""
        if value is None:
            return None  # a run without output or result: no walk to set up
        return _Render(limits, self).walk(value)

    def constant(self, name: str, value: Any) -> Any:
        """:meth:`value` of a value that is the same at every call under ``name`` (the details
        of a passing score, say): rendered once per scrubber, a fresh copy each time."""
        rendered = self._constants.get(name)
        if rendered is None:
            rendered = self._constants[name] = self.value(value)
        return _copied(rendered)

    def for_result(self, result: ScenarioResult) -> Scrubber:
        """The scrubber for one result of the suite: this one (it knows every run)."""
        return self

    def for_summary(self, summary: SuiteResult) -> Scrubber:
        """The scrubber for the suite's own text (warnings): this one."""
        return self


def _copied(rendered: Any) -> Any:
    """A copy of rendered (JSON-ready) data whose containers a caller may change freely."""
    if type(rendered) is dict:
        return {key: _copied(item) for key, item in rendered.items()}
    if type(rendered) is list:
        return [_copied(item) for item in rendered]
    return rendered


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

    def for_result(self, result: ScenarioResult) -> Scrubber:
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

    def for_summary(self, summary: SuiteResult) -> Scrubber:
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
    :mod:`harness.export`), and the exporter scrubs every span with :attr:`scrubber`, which
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
