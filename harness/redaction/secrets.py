"""The one secret collector: the values found under redacted keys, in one walk per sample.

:func:`collect_secrets` gathers them from runs, :func:`secrets_in` from any value;
:data:`MIN_SECRET_LENGTH` is the one minimum length for every report. See
docs/architecture.md, "Redaction".
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

from harness.redaction.values import jsonable, safe_repr

if TYPE_CHECKING:
    from harness.redaction.secret_keys import Redactor

__all__ = [
    "MIN_SECRET_LENGTH",
    "ResultRuns",
    "RunSample",
    "SuiteRuns",
    "collect_secrets",
    "secrets_in",
]


# What redaction reads of the result model (harness.run.results), which imports this package: the
# bottom layer names no class above it (docs/architecture.md, "Layers").
class _Call(Protocol):
    @property
    def args(self) -> Mapping[str, Any]: ...
    @property
    def result(self) -> Any: ...


class _Expected(Protocol):
    @property
    def args(self) -> Mapping[str, Any]: ...


class _Sample(Protocol):
    @property
    def tool_calls(self) -> Sequence[_Call] | None: ...
    @property
    def expected_tool_calls(self) -> Sequence[_Expected]: ...


class RunSample(Protocol):
    """A run as redaction reads it (``RunResult``): the sample it recorded, if any."""

    @property
    def sample(self) -> _Sample | None: ...


class ResultRuns(Protocol):
    """A scenario result as redaction reads it (``ScenarioResult``): its runs."""

    @property
    def runs(self) -> Sequence[RunSample]: ...


class SuiteRuns(Protocol):
    """A suite result as redaction reads it (``SuiteResult``): its scenario results."""

    @property
    def scenarios(self) -> Sequence[ResultRuns]: ...


MIN_SECRET_LENGTH: Final = 3
"""Shorter values under a secret key are not scrubbed out of free text: masking every "1" or
"ok" would garble it. One length for every report (docs/architecture.md, "Redaction")."""

_MAX_DEPTH = 50
"""Deeper nesting is not searched for secrets (the structured views still mask it by key)."""
_MAX_SECRET_LENGTH = 4096
"""Longer values under a secret key are masked by key but not searched for in free text."""


def collect_secrets(runs: Iterable[RunSample], redactor: Redactor) -> frozenset[str]:
    """The values found under redacted keys in these runs' calls, results and expectations."""
    if not redactor.patterns:
        return frozenset()
    found: set[str] = set()
    for run in runs:
        if run.sample is not None:
            _sample_secrets(run.sample, redactor, found)
    return frozenset(found)


def _sample_secrets(sample: _Sample, redactor: Redactor, found: set[str]) -> None:
    search = _Search(redactor, found)  # one search over every call: no set-up per value
    for call in sample.tool_calls or ():
        for value in (call.args, call.result):
            if _may_hold(value):  # a plain number or string holds no key
                try:
                    search.walk(value, False, 0)
                except Exception:  # as secrets_in: an unreadable value holds nothing
                    search.clear_path()
    for expectation in sample.expected_tool_calls:
        # matchers in their `$` form: a literal in a pattern is a value like any other
        secrets_in(jsonable(dict(expectation.args)), redactor, found)


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

    def clear_path(self) -> None:
        """Forget the containers being searched (after a search that raised)."""
        self._path.clear()

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
