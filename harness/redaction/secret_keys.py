"""Redaction keys: which keys are secret, the default key list and the value patterns.

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

See docs/architecture.md, "Redaction".
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

__all__ = [
    "BUILTIN_VALUE_PATTERNS",
    "DEFAULT_REDACT_KEYS",
    "MASK",
    "WALK_DEPTH",
    "Redactor",
    "compile_value_patterns",
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


# Two answers are remembered, each by a bounded ``lru_cache`` on a pure function (the project's
# one kind of memo), for texts up to _MEMO_CHARS long (an entry holds its text): whether a key
# is secret, and whether a text may name a secret key. Measured:
# * keys: a stream renders the same few keys in every trace, and a million-entry tool result
#   repeats its keys a million times; searching a result of a million small mappings for
#   secrets takes 0.85 s with the memo, 5.7 s without.
# * texts: the views of failing traces repeat their strings (codes, messages, argument
#   values): ``harness eval-traces --workers 1`` on 4,000 traces of benchmarks/
#   bench_eval_traces.py runs 7.80 G instructions with the memo, 7.94 G without (valgrind; 4.7 G
#   of either is start-up), so 4 % of the work done per trace.
_MEMO_SIZE = 4096
_MEMO_CHARS = 256


def _key_matches(patterns: frozenset[str], key: str) -> bool:
    """Does a run of consecutive words of ``key``, joined, equal one of ``patterns``?"""
    longest = max(map(len, patterns), default=0)
    words = _words(key)
    for start in range(len(words)):
        joined = ""
        for word in words[start:]:
            joined += word
            if len(joined) > longest:
                break
            if joined in patterns:
                return True
    return False


def _names_a_key(finder: re.Pattern[str], text: str) -> bool:
    """Can ``text`` hold a key that ``finder`` (every entry, squashed) matches? Never a false
    "no": a \\uXXXX escape can spell any letter of a key, so it always says "maybe"."""
    if "\\u" in text:
        return True
    return finder.search(_squash(_JSON_ESCAPE.sub(" ", text))) is not None


_key_matches_memo = functools.lru_cache(maxsize=_MEMO_SIZE)(_key_matches)
_names_a_key_memo = functools.lru_cache(maxsize=_MEMO_SIZE)(_names_a_key)


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
        "_finder",
        "_min_len",
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
        self._min_len = min((len(p) for p in self.patterns), default=0)
        # one scan of a squashed text for every entry, not one `in` per entry
        self._finder = (
            re.compile("|".join(re.escape(p) for p in sorted(self.patterns)))
            if self.patterns
            else None
        )

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
        if len(key) > _MEMO_CHARS:
            return _key_matches(self.patterns, key)
        return _key_matches_memo(self.patterns, key)

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
        finder = self._finder
        if len(text) < self._min_len or finder is None:
            return False  # squashing never lengthens a text, nor does decoding an escape
        if len(text) > _MEMO_CHARS:
            return _names_a_key(finder, text)
        return _names_a_key_memo(finder, text)
