"""``rules:`` and ``disable_rules:`` in a scenario file (docs/metrics.md, "Rules in scenario
files").

Rules are written in three places: a suite's ``defaults.rules`` (every scenario of the file), a
scenario's ``expect.rules`` and a turn's ``expect.rules`` (scored on that turn's calls). Each
list is compiled by :func:`harness.rules.compile_rules`, every problem located as
``file:line: field: message``. A scenario's rules are :func:`merge_rules` of the suite's and its
own: suite rules first, one of the scenario's with a suite rule's name in that rule's place,
the names in ``disable_rules`` left out, then the scenario's other rules.

The call patterns of the rules that compiled are kept as written (:class:`RulePatternSpec`),
so ``harness validate`` can check them against the agent's real tools.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from harness.rules import Rule, compile_rules
from harness.scenarios.issues import Collector, PathKey, render_path, suggest
from harness.scenarios.model import RulePatternSpec

__all__ = [
    "RuleSet",
    "compile_rule_list",
    "disabled_names",
    "merge_rules",
    "pattern_specs",
    "scenario_rules",
    "turn_rules",
]


class _Named(Protocol):
    @property
    def name(self) -> str: ...


Named = TypeVar("Named", bound=_Named)

RuleSet = tuple[tuple[Rule, ...], dict[int, tuple[RulePatternSpec, ...]]]
"""Compiled rules, and the call patterns of each (keyed by ``id(rule)``)."""


def merge_rules(
    suite: Sequence[Named], own: Sequence[Named], disabled: Collection[str] = ()
) -> tuple[Named, ...]:
    """A scenario's rules: the suite's first, each replaced in place by the scenario's rule of
    the same name or left out when ``disabled`` names it, then the scenario's other rules."""
    mine = {rule.name: rule for rule in own}
    merged: list[Named] = []
    replaced: set[str] = set()
    for rule in suite:
        if rule.name in mine:
            merged.append(mine[rule.name])
            replaced.add(rule.name)
        elif rule.name not in disabled:
            merged.append(rule)
    merged.extend(rule for rule in own if rule.name not in replaced)
    return tuple(merged)


def compile_rule_list(raw: Any, loc: PathKey, out: Collector) -> RuleSet:
    """The rules of one ``rules:`` list at ``loc`` (problems in ``out``), with their patterns."""
    before = len(out.issues)
    rules = compile_rules(raw, loc, out)
    if len(out.issues) > before or not rules:
        return rules, {}  # the load fails: nothing will be validated or run
    specs: dict[int, tuple[RulePatternSpec, ...]] = {}
    for position, (rule, item) in enumerate(zip(rules, raw, strict=True)):
        specs[id(rule)] = tuple(_patterns(item, (*loc, position), out))
    return rules, specs


def disabled_names(
    raw: Sequence[str],
    suite: Sequence[Rule],
    own: Sequence[Rule],
    loc: PathKey,
    out: Collector,
) -> frozenset[str]:
    """``disable_rules``: each must name a suite rule the scenario does not redefine."""
    names = [rule.name for rule in suite]
    mine = {rule.name for rule in own}
    for position, name in enumerate(raw):
        where = (*loc, position)
        if name in mine:
            out.add(
                where,
                f"'{name}' is both disabled and defined in this scenario's rules: a scenario "
                "rule with a suite rule's name already replaces it; remove one of the two",
            )
        elif not names:
            out.add(
                where, f"unknown suite rule '{name}': the suite defines no rules (defaults.rules)"
            )
        elif name not in names:
            hint = suggest(name, names) or f" (suite rules: {', '.join(names)})"
            out.add(where, f"unknown suite rule '{name}'{hint}")
    return frozenset(raw)


def pattern_specs(rules: Sequence[Rule], *sets: RuleSet) -> tuple[RulePatternSpec, ...]:
    """The call patterns of ``rules``, looked up in the rule sets they were compiled in."""
    found: list[RulePatternSpec] = []
    for rule in rules:
        for _, specs in sets:
            if id(rule) in specs:
                found.extend(specs[id(rule)])
                break
    return tuple(found)


def _patterns(item: Mapping[str, Any], where: PathKey, out: Collector) -> list[RulePatternSpec]:
    """A compiled rule's call patterns, as written, with their paths and lines."""
    found: list[tuple[Any, PathKey, tuple[str, ...]]] = []
    same_of = None
    if "forbid" in item:
        found.append((item["forbid"], (*where, "forbid"), ()))
    elif "allow" in item:
        found += [(p, (*where, "allow", i), ()) for i, p in enumerate(item["allow"])]
    elif "before" in item:
        found += [(item["before"][key], (*where, "before", key), ()) for key in ("first", "then")]
        then = item["before"]["then"]
        same_of = then if isinstance(then, str) else then["name"]
    elif "grounded" in item:
        grounded = item["grounded"]
        paths = grounded["args"]
        paths = (paths,) if isinstance(paths, str) else tuple(paths)
        found.append((grounded["tool"], (*where, "grounded", "tool"), paths))
    elif "max_calls" in item and "tool" in item["max_calls"]:
        found.append((item["max_calls"]["tool"], (*where, "max_calls", "tool"), ()))
    specs = []
    args: Mapping[str, Any]
    for pattern, loc, paths in found:
        if isinstance(pattern, str):
            name, args = pattern, {}
        else:
            name, args = pattern["name"], pattern.get("args") or {}
        at = render_path((*loc[:-1], "args")) if paths else ""
        reads = same_of if loc[-1] == "first" else None
        specs.append(
            RulePatternSpec(name, args, render_path(loc), out.line_of(loc), paths, at, reads)
        )
    return specs


def scenario_rules(
    expect: Any, suite: RuleSet, loc: PathKey, out: Collector
) -> tuple[tuple[Rule, ...], tuple[RulePatternSpec, ...]]:
    """A scenario's rules (its ``expect`` at ``loc``, merged over the suite's) and patterns."""
    own = compile_rule_list(expect.rules, (*loc, "expect", "rules"), out)
    where = (*loc, "expect", "disable_rules")
    disabled = disabled_names(expect.disable_rules, suite[0], own[0], where, out)
    merged = merge_rules(suite[0], own[0], disabled)
    return merged, pattern_specs(merged, own, suite)


def turn_rules(
    expect: Any, loc: PathKey, out: Collector
) -> tuple[tuple[Rule, ...], tuple[RulePatternSpec, ...]]:
    """A turn's own rules (its ``expect`` at ``loc``), scored on that turn's calls."""
    if expect.disable_rules:
        out.add(
            (*loc, "expect", "disable_rules"),
            "disable_rules goes in the scenario's expect: suite rules apply to the whole "
            "conversation, and a turn's rules are only its own",
        )
    own = compile_rule_list(expect.rules, (*loc, "expect", "rules"), out)
    return own[0], pattern_specs(own[0], own)
