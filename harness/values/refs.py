"""``$ref``: an expected value taken from an earlier expected call's arguments or result.

``{$ref: "find.result.order_id"}`` compiles to a :class:`Ref`. It means nothing on its own: a
sample's expectations are resolved before scoring (:mod:`harness.resolve`), each ``Ref`` becoming
a :class:`Resolved` (the value the call paired with ``find`` returned there) or an
:class:`Unresolved` (no call was paired with ``find``, or it has no value there), which match
like any matcher (docs/metrics.md, "Data flow").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from harness.errors import MatcherError, RefError
from harness.values.equivalence import ABSENT, equivalent
from harness.values.pattern import Matcher

LABEL = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
"""An expected call's label (``id:``): a letter or ``_``, then letters, digits, ``_`` and ``-``
(no dot: a ``$ref`` path splits on dots)."""

LABEL_RULE = "a letter or _, then letters, digits, _ or - (no dots)"

Source = Literal["args", "result"]

_FORMS = "label.args.<argument path> or label.result[.<path>] (as in find.result.order_id)"


@dataclass(frozen=True, slots=True)
class Ref(Matcher):
    """``{$ref: "label.args.path"}`` / ``{$ref: "label.result[.path]"}``, parsed when built."""

    target: str
    """The reference as written: ``find.result.order_id``."""
    label: str = field(init=False, compare=False)
    source: Source = field(init=False, compare=False)
    path: tuple[str, ...] = field(init=False, compare=False)
    """The keys and list indices after ``args`` / ``result`` (empty: the whole result)."""
    key: ClassVar[str] = "$ref"

    def __post_init__(self) -> None:
        target = self.target
        if not isinstance(target, str):
            raise MatcherError(f"$ref takes a string, {_FORMS}; got {target!r}")
        parts = target.split(".")
        if len(parts) < 2 or not LABEL.match(parts[0]):
            raise MatcherError(
                f"$ref {target!r} must start with an expected call's label ({LABEL_RULE}), "
                f"then name its args or result: {_FORMS}"
            )
        source = parts[1]
        if source not in ("args", "result"):
            raise MatcherError(
                f"$ref {target!r}: after the label comes 'args' or 'result', found {source!r}: "
                f"{_FORMS}"
            )
        path = tuple(parts[2:])
        if source == "args" and not path:
            raise MatcherError(f"$ref {target!r} names no argument: write {target}.<argument>")
        if not all(path):
            raise MatcherError(
                f"$ref {target!r} has an empty part: keys and list indices joined by single dots"
            )
        object.__setattr__(self, "label", parts[0])
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "path", path)

    def matches(self, actual: Any) -> bool:
        """Never called on a resolved sample: an unresolved ``$ref`` is a usage error."""
        raise RefError(
            f"$ref {self.target} was not resolved: a $ref only goes in an expected call's args "
            "or result, and a sample is resolved before scoring (harness.resolve.resolve_sample)",
            label=self.label,
            path=self.target,
        )

    def describe(self) -> str:
        """``$ref find.result.order_id``."""
        return f"$ref {self.target}"

    def to_json(self) -> Any:
        """``{"$ref": "find.result.order_id"}``."""
        return {"$ref": self.target}


@dataclass(frozen=True, slots=True)
class Resolved(Matcher):
    """A ``$ref`` resolved on one run: matches a value equivalent to :attr:`value` (top-level
    rule, wherever it sits)."""

    ref: Ref
    value: Any = field(hash=False)
    call: int = 0
    """0-based index of the call the value was taken from."""
    also: Any = field(default=ABSENT, hash=False)
    """A second value it stands for: the number a result's text spells (``"3"`` and 3;
    harness.values.result_forms), else ABSENT."""
    key: ClassVar[str] = "$ref"

    def matches(self, actual: Any) -> bool:
        """Present and equivalent to the resolved value (or to :attr:`also`)."""
        if actual is ABSENT:
            return False
        if equivalent(self.value, actual):
            return True
        return self.also is not ABSENT and equivalent(self.also, actual)

    def describe(self) -> str:
        """``$ref find.result.order_id`` (the diff shows the value)."""
        return self.ref.describe()

    def to_json(self) -> Any:
        """The ``$ref`` as written."""
        return self.ref.to_json()


@dataclass(frozen=True, slots=True)
class Unresolved(Matcher):
    """A ``$ref`` that has no value on this run: matches nothing; ``why`` says what is missing."""

    ref: Ref
    why: str
    key: ClassVar[str] = "$ref"

    def matches(self, actual: Any) -> bool:
        """Never: there is no value to compare with."""
        return False

    def describe(self) -> str:
        """``$ref find.result.order_id``."""
        return self.ref.describe()

    def to_json(self) -> Any:
        """The ``$ref`` as written."""
        return self.ref.to_json()
