"""Rules as written in YAML / JSON (:mod:`harness.rules.schema`) compiled into Rules.

:func:`compile_rules` takes the raw list (as a scenario file's ``expect.rules`` /
``defaults.rules`` or a policy file's ``rules`` holds it), adds every problem to the caller's
:class:`~harness.scenarios.issues.Collector` as ``file:line: field: message`` with the nearest
valid name, and returns the rules that compiled. :func:`load_rules` does the same for Python
data and raises one :class:`~harness.errors.ConfigError` listing every problem.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from harness.errors import ConfigError, MatcherError
from harness.rules.kinds import (
    Allow,
    Before,
    Budget,
    Forbid,
    Grounded,
    MaxCalls,
    MaxRepeats,
    RuleKind,
)
from harness.rules.patterns import CallPattern, parse_path
from harness.rules.rule import Rule
from harness.rules.schema import (
    KINDS,
    CallPatternSpec,
    PolicyRuleSpec,
    RuleSpec,
)
from harness.text import did_you_mean

if TYPE_CHECKING:
    from harness.scenarios.issues import Collector, PathKey


def compile_rules(
    raw: Any, loc: PathKey, out: Collector, *, spec: type[RuleSpec] = RuleSpec
) -> tuple[Rule, ...]:
    """Compile a raw list of rule mappings found at ``loc``; every problem goes to ``out``.

    ``spec``: :class:`RuleSpec`, or :class:`PolicyRuleSpec` for a policy file. Returns the rules
    that compiled (a rule with any issue is left out); None or a missing list gives none.
    """
    from harness.scenarios.issues import describe_found, render_path

    if raw is None:
        return ()
    if not isinstance(raw, list):
        out.add(loc, f"expected a list of rules, found {describe_found(raw)}")
        return ()
    rules: list[Rule] = []
    first: dict[str, PathKey] = {}
    for position, item in enumerate(raw):
        where: PathKey = (*loc, position)
        rule = compile_rule(item, where, out, spec=spec)
        name = item.get("name") if isinstance(item, Mapping) else None
        if not isinstance(name, str):
            continue
        if name in first:
            line = out.line_of(first[name])
            shown = f"line {line}" if line else render_path(first[name])
            out.add((*where, "name"), f"duplicate rule name '{name}' (first defined on {shown})")
            continue
        first[name] = where
        if rule is not None:
            rules.append(rule)
    return tuple(rules)


def compile_rule(
    raw: Any, where: PathKey, out: Collector, *, spec: type[RuleSpec] = RuleSpec
) -> Rule | None:
    """Compile one rule mapping found at ``where``; None (issues in ``out``) when it is bad."""
    from harness.scenarios.issues import describe_found, pydantic_issues

    if not isinstance(raw, Mapping):
        out.add(
            where,
            f"expected a rule mapping (name and one of {', '.join(KINDS)}), "
            f"found {describe_found(raw)}",
        )
        return None
    before = len(out.issues)
    kinds = [key for key in KINDS if key in raw]
    for key in (key for key in raw if key not in spec.model_fields):
        out.add(
            where,
            _unknown_key(key, list(spec.model_fields), kinds),
            line=out.line_of((*where, key)),
        )
    if len(kinds) > 1:
        out.add(
            (*where, kinds[1]),
            f"a rule has exactly one kind, found {' and '.join(kinds)}: split it into "
            f"{len(kinds)} rules, each with its own name",
        )
    elif not kinds and all(key in spec.model_fields for key in raw):
        out.add(where, f"a rule needs one kind: one of {', '.join(KINDS)}")
    try:
        parsed = spec.model_validate({k: v for k, v in raw.items() if k in spec.model_fields})
    except ValidationError as exc:
        pydantic_issues(exc, spec, where, out)
        return None
    if len(out.issues) > before or not kinds:
        return None
    kind = _kind(parsed, kinds[0], (*where, kinds[0]), out)
    if kind is None:
        return None
    max_rate = parsed.max_rate if isinstance(parsed, PolicyRuleSpec) else 0.0
    return Rule(parsed.name, kind, parsed.severity, max_rate, out.line_of(where), out.file)


def _unknown_key(key: Any, fields: list[str], kinds: list[str]) -> str:
    """An unknown key's message: an unknown kind when the rule has none, with the nearest name."""
    if key == "max_rate":
        return (
            "'max_rate' only goes in a policy file's rules (the share of traces that may "
            "violate it); here a rule fails on any violation"
        )
    hint = did_you_mean(str(key), fields)
    if kinds:
        return f"unknown key '{key}'" + (
            f" — {hint}" if hint else f" (valid keys: {', '.join(fields)})"
        )
    return f"unknown rule kind '{key}'" + (
        f" — {hint}" if hint else f" (kinds: {', '.join(KINDS)})"
    )


def load_rules(
    raw: Any, *, file: str = "<rules>", spec: type[RuleSpec] = RuleSpec
) -> tuple[Rule, ...]:
    """Compile a list of rule mappings given in Python; ConfigError listing every problem."""
    from harness.scenarios.issues import Collector

    out = Collector(file)
    rules = compile_rules(raw, ("rules",), out, spec=spec)
    if out.issues:
        raise ConfigError(out.issues)
    return rules


def _kind(spec: RuleSpec, name: str, where: PathKey, out: Collector) -> RuleKind | None:
    """The compiled kind ``name`` of a validated rule; None (issues in ``out``) when bad."""
    value = getattr(spec, name)
    if value is None:
        out.add(where, f"expected the {name} rule's value, found nothing (null)")
        return None
    before = len(out.issues)
    try:
        kind = _build(name, value, where, out)
    except ValueError as exc:  # the kinds' own checks, which the schema already made
        out.add(where, str(exc))
        return None
    return kind if len(out.issues) == before else None


def _build(name: str, value: Any, where: PathKey, out: Collector) -> RuleKind | None:
    kind: RuleKind | None = None
    if name == "forbid":
        pattern = _pattern(value, where, out)
        kind = Forbid(pattern) if pattern else None
    elif name == "allow":
        patterns = [_pattern(item, (*where, i), out) for i, item in enumerate(value)]
        kind = Allow(tuple(p for p in patterns if p))
    elif name == "before":
        first = _pattern(value.first, (*where, "first"), out, same_allowed=True)
        then = _pattern(value.then, (*where, "then"), out)
        kind = Before(first, then) if first and then else None
    elif name == "grounded":
        tool = _pattern(value.tool, (*where, "tool"), out)
        paths = _paths(value.args, (*where, "args"), out)
        kind = Grounded(tool, paths) if tool and paths else None
    elif name == "max_calls":
        tool = _pattern(value.tool, (*where, "tool"), out)
        kind = MaxCalls(tool, value.max) if tool else None
    elif name == "budget":  # Budget says when no figure is given
        kind = Budget(**value.model_dump())
    else:  # max_repeats: pydantic checked it is a positive int
        kind = MaxRepeats(value)
    return kind


def _pattern(
    spec: CallPatternSpec, where: PathKey, out: Collector, *, same_allowed: bool = False
) -> CallPattern | None:
    try:
        return CallPattern.build(spec.name, spec.args, same_allowed=same_allowed)
    except MatcherError as exc:
        sub = (*where, "args", *_pointer_parts(exc.path))
        message = str(exc)
        prefix = f"at {exc.path}: "
        out.add(sub, message[len(prefix) :] if message.startswith(prefix) else message)
        return None


def _pointer_parts(pointer: str) -> tuple[str | int, ...]:
    """A JSON pointer (``/items/0``) as field-path parts."""
    parts: list[str | int] = []
    for token in pointer.split("/")[1:]:
        parts.append(int(token) if token.isdigit() else token.replace("~1", "/").replace("~0", "~"))
    return tuple(parts)


def _paths(written: list[str], where: PathKey, out: Collector) -> tuple[str, ...]:
    """The argument paths that parse; an issue for each that does not."""
    paths: list[str] = []
    for position, text in enumerate(written):
        try:
            parse_path(text)
        except ValueError as exc:
            out.add((*where, position), str(exc))
            continue
        paths.append(text)
    return tuple(paths)
