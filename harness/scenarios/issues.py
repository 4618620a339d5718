"""Configuration issues: where each sits, how pydantic's errors read as ours, suggestions.

Every problem of a load is collected (file, line, field path, message) rather than raised, so
one :class:`~harness.errors.ConfigError` can list them all.
"""

from __future__ import annotations

import difflib
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError


@dataclass(frozen=True, slots=True)
class ConfigIssue:
    """One configuration problem: where it sits (file, line, field path) and what is wrong."""

    file: str
    line: int | None
    path: str
    message: str
    warning: bool = False
    """Worth a look, but not an error (``harness validate``: a rule's glob matching no tool)."""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"


PathKey = tuple[str | int, ...]


def render_path(loc: Iterable[str | int]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


class Collector:
    """Issues of one load, with the file's line map to place them."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.lines: dict[PathKey, int] = {}
        self.issues: list[ConfigIssue] = []

    def line_of(self, loc: Sequence[str | int]) -> int | None:
        """The line of the deepest prefix of ``loc`` the YAML file spells out."""
        for end in range(len(loc), -1, -1):
            line = self.lines.get(tuple(loc[:end]))
            if line is not None:
                return line
        return None

    def add(self, loc: Sequence[str | int], message: str, *, line: int | None = None) -> None:
        """Record an issue at ``loc`` (its line looked up unless given)."""
        where = line if line is not None else self.line_of(loc)
        self.issues.append(ConfigIssue(self.file, where, render_path(loc), message))


def suggest(word: str, candidates: Iterable[str]) -> str:
    """`` — did you mean 'x'?`` for the nearest candidate, or an empty string."""
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f" — did you mean '{close[0]}'?" if close else ""


def describe_found(value: Any) -> str:
    """How a YAML value reads in an error: 'a list', "the string 'x'", 'the number 3'."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 60 else value[:59] + "…"
        return f"the string {shown!r}"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    return f"a {type(value).__name__}"


_EXPECTED = {
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "list_type": "a list",
    "string_type": "a string",
    "int_type": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "string_too_short": "a non-empty string",
    "too_short": "a non-empty list",
}


def _model_at(loc: Sequence[str | int], root: type[BaseModel]) -> type[BaseModel] | None:
    """The schema model that governs the mapping at ``loc`` (for listing its valid keys)."""
    current: type[BaseModel] | None = root
    for part in loc:
        if isinstance(part, int) or current is None:
            continue
        info = current.model_fields.get(part)
        if info is None:
            return None
        current = _inner_model(info.annotation)
    return current


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _union_tag(part: Any) -> bool:
    # pydantic appends the union member tried ('str', 'dict[str,any]') to the loc; not a field
    return isinstance(part, str) and (
        part in ("str", "int", "float", "bool", "list", "dict") or "[" in part
    )


def pydantic_issues(
    exc: ValidationError, root: type[BaseModel], prefix: PathKey, out: Collector
) -> None:
    """Turn pydantic's errors into issues with paths, lines, expected/found and suggestions."""
    union_seen: set[PathKey] = set()
    for error in exc.errors():
        loc: PathKey = tuple(part for part in error["loc"] if not _union_tag(part))
        kind = error["type"]
        found = error.get("input")
        ctx = error.get("ctx") or {}
        if len(loc) < len(error["loc"]):
            # one message per union field, not one per member type pydantic tried
            if loc in union_seen:
                continue
            union_seen.add(loc)
            out.add(
                (*prefix, *loc),
                f"expected {_union_expected(root, loc)}, found {describe_found(found)}",
            )
            continue
        if kind == "extra_forbidden":
            parent, key = loc[:-1], str(loc[-1])
            model = _model_at(parent, root)
            valid = list(model.model_fields) if model else []
            hint = suggest(key, valid)
            listing = f" (valid keys: {', '.join(valid)})" if valid and not hint else ""
            out.add(
                (*prefix, *parent),
                f"unknown key '{key}'{hint}{listing}",
                line=out.line_of((*prefix, *loc)),
            )
        elif kind == "missing":
            parent = loc[:-1]
            out.add((*prefix, *parent), f"missing required key '{loc[-1]}'")
        elif kind == "literal_error":
            allowed = str(ctx.get("expected", ""))
            names = [part.strip(" '") for part in allowed.replace(" or ", ",").split(",")]
            hint = suggest(str(found), names) if isinstance(found, str) else ""
            out.add(
                (*prefix, *loc), f"expected one of {allowed}, found {describe_found(found)}{hint}"
            )
        elif kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
            symbol, key = {
                "greater_than": (">", "gt"),
                "greater_than_equal": (">=", "ge"),
                "less_than": ("<", "lt"),
                "less_than_equal": ("<=", "le"),
            }[kind]
            limit = ctx.get(key)
            bound = f"{symbol} {limit:g}" if isinstance(limit, (int, float)) else symbol
            out.add((*prefix, *loc), f"expected a number {bound}, found {describe_found(found)}")
        elif kind in _EXPECTED:
            out.add((*prefix, *loc), f"expected {_EXPECTED[kind]}, found {describe_found(found)}")
        else:
            out.add((*prefix, *loc), f"{error['msg']}, found {describe_found(found)}")


def _union_expected(root: type[BaseModel], loc: PathKey) -> str:
    model = _model_at(loc[:-1], root)
    field_name = loc[-1] if loc else None
    if model is None or not isinstance(field_name, str) or field_name not in model.model_fields:
        return "a different value"
    annotation = model.model_fields[field_name].annotation
    words = []
    for arg in typing.get_args(annotation):
        origin = typing.get_origin(arg) or arg
        if origin is type(None):
            continue
        words.append(
            {str: "a string", dict: "a mapping", list: "a list", bool: "true/false"}.get(
                origin, getattr(origin, "__name__", str(origin))
            )
        )
    return " or ".join(words) or "a different value"
