"""Policy files: YAML read with its line map, compiled into :class:`Policy` s.

A policy file holds no scenarios and no agent: ``policies: <name>`` with ``select:`` and
``rules:`` at the top level, or ``policies:`` a list of ``{name, select, rules}``. Every
problem of every file is collected as ``file:line: field: message`` (with the nearest valid
name where one is close) and :func:`load_policies` raises one
:class:`~harness.errors.ConfigError` listing them all; a file is never half-loaded. The rules
are compiled by :func:`harness.rules.compile_rules` (the forms of docs/metrics.md "Rules", plus
``max_rate``), the YAML read by the guarded reader of :mod:`harness.scenarios.yaml_lines`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness.errors import ConfigError, MatcherError
from harness.policies.policy import Policy
from harness.policies.schema import SELECT_KEYS, PolicyFileSpec, PolicySpec, SelectSpec
from harness.policies.select import Selector
from harness.rules import PolicyRuleSpec, compile_rules
from harness.scenarios.issues import (
    Collector,
    ConfigIssue,
    PathKey,
    describe_found,
    pydantic_issues,
)
from harness.scenarios.yaml_lines import read_yaml
from harness.text import did_you_mean
from harness.values import compile_pattern, has_refs

__all__ = ["POLICY_SUFFIXES", "load_policies", "load_policy_file", "looks_like_policies"]

POLICY_SUFFIXES = (".yaml", ".yml")
_TOP_KEYS = tuple(PolicyFileSpec.model_fields)
_ITEM_KEYS = tuple(PolicySpec.model_fields)
_POLICIES_KEY = re.compile(r"""^["']?policies["']?[ \t]*:(?=[ \t]|\r?$)""", re.MULTILINE)
_SUITE_KEYS = {
    "scenarios": "a policy file holds no scenarios: scenarios go in a suite file "
    "(`harness eval-traces --scenarios`); a policy holds only select and rules",
    "agent": "a policy file names no agent: it scores traces whatever produced them",
    "model": "a policy file names no model: it scores traces whatever produced them",
    "suite": "a policy file has no suite: name the policy with 'policies: <name>'",
    "defaults": "a policy file has no defaults: each policy lists its rules",
}
_EMPTY = "'policies: <name>', 'select' and 'rules'"


def looks_like_policies(path: Path) -> bool:
    """A ``*.yaml`` / ``*.yml`` file with a top-level ``policies:`` key (read as text)."""
    if path.suffix not in POLICY_SUFFIXES:
        return False
    try:
        text = path.read_bytes().decode("utf-8", errors="replace").lstrip("\ufeff")
    except OSError:
        return True  # unreadable: loaded, so its error is shown
    return _POLICIES_KEY.search(text) is not None


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _files(paths: Iterable[str | os.PathLike[str]], issues: list[ConfigIssue]) -> list[Path]:
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            under = sorted(
                p
                for p in path.rglob("*")
                if p.suffix in POLICY_SUFFIXES and p.is_file() and looks_like_policies(p)
            )
            if not under:
                issues.append(
                    ConfigIssue(str(raw), None, "", "no policy files here (none has 'policies:')")
                )
            found.extend(under)
        elif path.is_file():
            found.append(path)
        else:
            issues.append(ConfigIssue(str(raw), None, "", "no such file or directory"))
    return list(dict.fromkeys(found))


def load_policies(paths: Iterable[str | os.PathLike[str]]) -> list[Policy]:
    """Every policy of the files (folders: their files with ``policies:``), in order.

    ConfigError listing every problem of every file (names unique across the files).
    """
    issues: list[ConfigIssue] = []
    policies: list[Policy] = []
    first: dict[str, Policy] = {}
    for path in _files(paths, issues):
        found, out = load_policy_file(path)
        issues.extend(out.issues)
        for policy in found:
            if policy.name in first:
                where = first[policy.name]
                shown = f"{where.path}:{where.line}" if where.line else str(where.path)
                issues.append(
                    ConfigIssue(
                        out.file,
                        policy.line,
                        "policies",
                        f"duplicate policy name '{policy.name}' (first defined at {shown})",
                    )
                )
                continue
            first[policy.name] = policy
            policies.append(policy)
    unique = list(dict.fromkeys(issues))
    if unique:
        raise ConfigError(unique)
    return policies


def load_policy_file(path: Path) -> tuple[list[Policy], Collector]:
    """The policies of one file and the collector of its issues (none loaded if any)."""
    out = Collector(_display(path))
    data = read_yaml(path, out, expected=_EMPTY)
    if data is None:
        return [], out
    if not isinstance(data, Mapping):
        out.add(
            (),
            f"expected a mapping at the top level (keys: {', '.join(_TOP_KEYS)}), found "
            f"{describe_found(data)}",
        )
        return [], out
    _unknown_keys(data, (), _TOP_KEYS, out)
    if "policies" not in data:
        out.add(
            (),
            "missing required key 'policies' (the policy's name, or a list of "
            "{name, select, rules})",
        )
        return [], out
    raw = data["policies"]
    policies: list[Policy] = []
    if isinstance(raw, str) and raw:
        if "rules" not in data:
            out.add((), "missing required key 'rules' (the policy's rules)")
        line = out.line_of(("policies",))
        policy = _policy(raw, data.get("select"), data.get("rules"), (), out, line)
        policies.extend([policy] if policy is not None else [])
    elif isinstance(raw, list):
        for key in ("select", "rules"):
            if key in data:
                out.add(
                    (key,),
                    f"with a list of policies, each policy holds its own {key}: "
                    "move it into the list's items",
                )
        for index, item in enumerate(raw):
            policy = _item(item, ("policies", index), out)
            policies.extend([policy] if policy is not None else [])
    else:
        out.add(
            ("policies",),
            "expected the policy's name or a list of {name, select, rules}, "
            f"found {describe_found(raw)}",
        )
    return ([] if out.issues else policies), out


def _unknown_keys(
    data: Mapping[Any, Any], loc: PathKey, valid: tuple[str, ...], out: Collector
) -> None:
    for key in data:
        if key in valid:
            continue
        line = out.line_of((*loc, key)) if isinstance(key, (str, int)) else None
        if key in _SUITE_KEYS:
            out.add((*loc, key), _SUITE_KEYS[key], line=line)
            continue
        hint = did_you_mean(str(key), valid)
        out.add(
            loc,
            f"unknown key '{key}'"
            + (f" — {hint}" if hint else f" (valid keys: {', '.join(valid)})"),
            line=line,
        )


def _item(item: Any, loc: PathKey, out: Collector) -> Policy | None:
    if not isinstance(item, Mapping):
        out.add(
            loc,
            f"expected a policy mapping ({', '.join(_ITEM_KEYS)}), found {describe_found(item)}",
        )
        return None
    _unknown_keys(item, loc, _ITEM_KEYS, out)
    name = item.get("name")
    if not isinstance(name, str) or not name:
        out.add(
            (*loc, "name") if "name" in item else loc,
            "missing required key 'name'"
            if "name" not in item
            else f"expected the policy's name (a non-empty string), found {describe_found(name)}",
        )
        name = None
    if "rules" not in item:
        out.add(loc, "missing required key 'rules' (the policy's rules)")
    policy = _policy(name or "", item.get("select"), item.get("rules"), loc, out, out.line_of(loc))
    return policy if name else None


def _policy(
    name: str, select: Any, rules: Any, loc: PathKey, out: Collector, line: int | None
) -> Policy | None:
    before = len(out.issues)
    selector = _selector(select, (*loc, "select"), out)
    if isinstance(rules, list) and not rules:
        out.add((*loc, "rules"), "a policy needs at least one rule")
    compiled = compile_rules(rules, (*loc, "rules"), out, spec=PolicyRuleSpec)
    if len(out.issues) > before or selector is None:
        return None
    return Policy(name, selector, compiled, out.file, line)


def _selector(raw: Any, loc: PathKey, out: Collector) -> Selector | None:
    if raw is None:
        return Selector()
    if not isinstance(raw, Mapping):
        out.add(loc, f"expected a mapping of {', '.join(SELECT_KEYS)}, found {describe_found(raw)}")
        return None
    before = len(out.issues)
    spec: SelectSpec | None = None
    try:
        spec = SelectSpec.model_validate(dict(raw))
    except ValidationError as exc:
        pydantic_issues(exc, SelectSpec, loc, out)
    written = raw.get("attributes")
    attributes: list[tuple[str, Any]] = []
    for key, value in written.items() if isinstance(written, Mapping) else ():
        if not isinstance(key, str):
            continue  # pydantic said so
        where = (*loc, "attributes", key)
        try:
            pattern = compile_pattern(value)
        except MatcherError as exc:
            out.add(where, str(exc))
            continue
        if has_refs(pattern):
            out.add(
                where,
                "$ref has no meaning here: a selector looks at one trace's "
                "attributes, not at a call's arguments",
            )
            continue
        attributes.append((key, pattern))
    if len(out.issues) > before or spec is None:
        return None
    return Selector(
        spec.service, spec.agent, spec.root, tuple(attributes), tuple(spec.uses_tool or ())
    )
