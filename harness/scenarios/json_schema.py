"""``harness schema``: the JSON Schema (2020-12) of a scenario file (``--policies``: of a policy
file), for editors and CI.

Generated from the loader's own pydantic models (:mod:`harness.scenarios.file_model`), so it
cannot drift from what ``harness run`` accepts: every key with its description, the metric
names and options from the registry (plugins included), the ``$`` matcher keys. VS Code's YAML
extension (and any editor speaking the YAML language server) completes and flags typos when a
suite starts with ``# yaml-language-server: $schema=harness-schema.json`` (``harness init``
writes both). See docs/ci.md.

The schema is looser than the loader in one way only: what needs the agent (tool names and
their arguments, ``harness validate``) or Python (a metric option's accepted values) is left
to the loader, which reports it as ``file:line``.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

from pydantic.json_schema import models_json_schema

from harness.rules.schema import KINDS, PolicyRuleSpec, RuleSpec
from harness.scenarios.file_model import ScenarioSpec, SuiteSpec

__all__ = [
    "DIALECT",
    "MATCHER_DESCRIPTIONS",
    "policy_schema",
    "scenario_schema",
    "schema_json",
]

DIALECT = "https://json-schema.org/draft/2020-12/schema"

REF_PATTERN = r"^[A-Za-z_][A-Za-z0-9_-]*\.(args(\.[^.]+)+|result(\.[^.]+)*)$"
"""What a ``$ref`` string looks like (harness.values.Ref checks the same, with messages)."""

MATCHER_DESCRIPTIONS: dict[str, tuple[dict[str, Any], str]] = {
    "$any": ({"const": True}, "Present, any value: {$any: true}."),
    "$absent": ({"const": True}, "The key must not be there: {$absent: true}."),
    "$regex": ({"type": "string"}, "A string matching this regular expression (search)."),
    "$contains": ({}, "A substring of a string, or a member of a list."),
    "$icase": ({"type": "string"}, "A string equal to this one ignoring case."),
    "$approx": ({"type": "number"}, "A number within $tol (absolute) or $rel (relative)."),
    "$tol": ({"type": "number", "minimum": 0}, "Absolute tolerance of $approx."),
    "$rel": ({"type": "number", "minimum": 0}, "Relative tolerance of $approx."),
    "$one_of": ({"type": "array"}, "One of several acceptable values (or patterns)."),
    "$type": (
        {"enum": ["string", "integer", "number", "boolean", "object", "array", "null"]},
        "The JSON type of the value.",
    ),
    "$subset": ({"type": "object"}, "A nested object containing at least these keys."),
    "$unordered": ({"type": "array"}, "A list compared as a multiset."),
    "$optional": ({}, "May be absent; if present must match this pattern."),
    "$literal": ({}, "This value as it is, even a mapping with $ keys."),
    "$ref": (
        {"type": "string", "pattern": REF_PATTERN},
        "In an expected call's args or result only: the value the call labelled <label> "
        "passed (<label>.args.<path>) or returned (<label>.result[.<path>]).",
    ),
}
"""Every ``$`` key a pattern may use (harness.values.MATCHER_KEYS, plus $approx's options)."""


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def _pattern_defs() -> dict[str, Any]:
    matcher_properties: dict[str, Any] = {}
    for key, (shape, description) in MATCHER_DESCRIPTIONS.items():
        prop = dict(shape, description=description)
        if key in ("$subset", "$optional"):
            prop = {"description": description, **_ref("Pattern")}
        elif key in ("$one_of", "$unordered"):
            prop["items"] = _ref("Pattern")
        matcher_properties[key] = prop
    return {
        "Pattern": {
            "description": "A literal, or a $ matcher, or a mapping / list holding matchers.",
            "anyOf": [
                {"type": ["string", "number", "boolean", "null"]},
                {"type": "array", "items": _ref("Pattern")},
                _ref("Matcher"),
                {
                    "type": "object",
                    "propertyNames": {"not": {"pattern": "^\\$"}},
                    "additionalProperties": _ref("Pattern"),
                },
            ],
        },
        "Matcher": {
            "description": "A mapping of $ keys: one matcher ($approx with $tol / $rel).",
            "type": "object",
            "minProperties": 1,
            "propertyNames": {"pattern": "^\\$"},
            "properties": matcher_properties,
            "additionalProperties": False,
        },
    }


def _json_type(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "number"}  # an int default still takes 0.5 where a float makes sense
    if isinstance(value, float):
        return {"type": "number"}
    if isinstance(value, str):
        return {"type": "string"}
    return {}


def _metric_def(name: str) -> dict[str, Any]:
    from harness.metrics import metric_options
    from harness.metrics.registry import get_metric

    description = ""
    try:
        options = metric_options(name)
        doc = (inspect.getdoc(type(get_metric(name))) or "").splitlines()
        description = doc[0] if doc else ""
    except Exception:  # a broken plugin: its name still completes, its options do not
        options = {}
    properties: dict[str, Any] = {}
    for option, default in options.items():
        if option == "threshold":
            shown = "" if default is inspect.Parameter.empty else f" (default {default!r})"
            properties[option] = {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "description": f"Pass when the score is at least this{shown}.",
            }
            continue
        if default is inspect.Parameter.empty:
            properties[option] = {"description": "Required option."}
            continue
        shape = _json_type(default) if not callable(default) else {}
        properties[option] = dict(shape, description=f"Default {default!r}.")
    return {
        "description": description or name,
        "anyOf": [
            {"type": "boolean", "description": "true: on with its defaults; false: off."},
            {"type": "number", "minimum": 0, "maximum": 1, "description": "The threshold."},
            {"type": "null"},
            {"type": "object", "properties": properties, "additionalProperties": False},
        ],
    }


def _model_def() -> dict[str, Any]:
    """``model:``: a string, or a mapping whose other keys are the model's options."""
    kinds = (
        "demo, scripted, a LangChain provider, or module:callable / file.py:callable (a factory "
        "returning your own BaseChatModel)"
    )
    return {
        "anyOf": [
            {
                "type": "string",
                "minLength": 1,
                "description": f"{kinds}; 'provider:model' names a provider's model.",
            },
            {
                "type": "object",
                "properties": {
                    "provider": {"type": "string", "minLength": 1, "description": kinds + "."},
                    "model": {
                        "type": "string",
                        "description": "The model's name (a factory gets it as model=).",
                    },
                    "max_concurrency": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "At most this many calls of this model at once in the "
                        "whole run, shared by every scenario with the same model config; "
                        "waiting for a slot does not count against the timeout.",
                    },
                },
                "additionalProperties": True,
            },
            {"type": "null"},
        ]
    }


def _metrics_def() -> dict[str, Any]:
    from harness.metrics import metric_names

    names = metric_names()
    return {
        "description": "{metric_name: {threshold, ...options}} (or a list of names).",
        "anyOf": [
            {
                "type": "object",
                "properties": {name: _metric_def(name) for name in names},
                "additionalProperties": False,
            },
            {"type": "array", "items": {"enum": names}},
            {"type": "null"},
        ],
    }


def _replace(model: dict[str, Any], field: str, replacement: dict[str, Any]) -> None:
    """Swap a property's generated schema (``Any``: no constraint) for ``replacement``."""
    prop = model["properties"][field]
    kept = {key: prop[key] for key in ("description", "title") if key in prop}
    model["properties"][field] = {**kept, **replacement}


def _call_pattern(same: bool = False) -> dict[str, Any]:
    """A rule's call pattern: a tool name or glob, or ``{name, args}`` (``same``: its args may
    hold ``{$same: <arg>}``, as ``before.first``'s)."""
    value: dict[str, Any] = _ref("Pattern")
    if same:
        same_ref: dict[str, Any] = {
            "type": "object",
            "properties": {
                "$same": {
                    "type": "string",
                    "minLength": 1,
                    "description": "Equal to this argument (a name or dot path) of the "
                    "'then' call.",
                }
            },
            "required": ["$same"],
            "additionalProperties": False,
        }
        value = {"anyOf": [same_ref, value]}
    return {
        "anyOf": [
            {"type": "string", "minLength": 1, "description": "A tool name, or a glob: * ? [abc]."},
            {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1},
                    "args": {
                        "anyOf": [
                            {"type": "object", "additionalProperties": value},
                            {"type": "null"},
                        ]
                    },
                },
                "required": ["name"],
                "additionalProperties": False,
            },
        ]
    }


def _rule_defs(defs: dict[str, Any], rule_model: str = "RuleSpec") -> None:
    """``rules:`` items: call patterns in every form the loader takes, exactly one kind
    (``rule_model``: RuleSpec, or PolicyRuleSpec for a policy file)."""
    defs.pop("CallPatternSpec", None)
    for model, field in (
        ("BeforeSpec", "then"),
        ("GroundedSpec", "tool"),
        ("MaxCallsSpec", "tool"),
    ):
        _replace(defs[model], field, _call_pattern())
    _replace(defs["BeforeSpec"], "first", _call_pattern(same=True))
    _replace(
        defs["GroundedSpec"],
        "args",
        {
            "anyOf": [
                {"type": "string"},
                {"type": "array", "items": {"type": "string"}, "minItems": 1},
            ]
        },
    )
    rule = defs[rule_model]
    kinds: dict[str, dict[str, Any]] = {
        "forbid": _call_pattern(),
        "allow": {"type": "array", "items": _call_pattern(), "minItems": 1},
        "before": _ref("BeforeSpec"),
        "grounded": _ref("GroundedSpec"),
        "max_calls": _ref("MaxCallsSpec"),
        "max_repeats": {"type": "integer", "minimum": 1},
        "budget": {**_ref("BudgetSpec")},
    }
    for kind, shape in kinds.items():
        _replace(rule, kind, shape)
    defs["BudgetSpec"]["minProperties"] = 1
    rule["oneOf"] = [{"required": [kind]} for kind in KINDS]  # exactly one kind


def scenario_schema() -> dict[str, Any]:
    """The schema of one scenario file, as a JSON-ready mapping."""
    _, generated = models_json_schema(
        [(SuiteSpec, "validation"), (ScenarioSpec, "validation"), (RuleSpec, "validation")],
        ref_template="#/$defs/{model}",
    )
    defs: dict[str, Any] = dict(generated["$defs"])
    suite = defs.pop("SuiteSpec")
    _replace(suite, "scenarios", {"type": "array", "minItems": 1, "items": _ref("ScenarioSpec")})
    for model in ("DefaultsSpec", "ScenarioSpec", "TurnSpec"):
        _replace(defs[model], "metrics", _ref("Metrics"))
    _replace(suite, "model", _ref("Model"))
    _replace(defs["ScenarioSpec"], "model", _ref("Model"))
    _replace(defs["ExpectSpec"], "output", _ref("Pattern"))
    tool_calls = defs["ExpectSpec"]["properties"]["tool_calls"]
    # `- get_time` is shorthand for `- {name: get_time}` (the loader's _bare_names)
    _replace(
        defs["ExpectSpec"],
        "tool_calls",
        {
            "anyOf": [
                {
                    "type": "array",
                    "items": {"anyOf": [{"type": "string", "minLength": 1}, _ref("ToolCallSpec")]},
                },
                {"type": "null"},
            ],
            **({"default": tool_calls["default"]} if "default" in tool_calls else {}),
        },
    )
    _replace(
        defs["ToolCallSpec"],
        "args",
        {
            "anyOf": [
                {"type": "object", "additionalProperties": _ref("Pattern")},
                {"type": "null"},
            ]
        },
    )
    _rule_defs(defs)
    rules = {"anyOf": [{"type": "array", "items": _ref("RuleSpec")}, {"type": "null"}]}
    for model in ("ExpectSpec", "DefaultsSpec"):
        _replace(defs[model], "rules", rules)
    _replace(defs["ToolCallSpec"], "result", _ref("Pattern"))
    label = defs["ToolCallSpec"]["properties"]["id"]["pattern"]
    _replace(
        defs["ToolCallSpec"],
        "after",
        {
            "anyOf": [
                {"type": "string", "pattern": label},
                {"type": "array", "items": {"type": "string", "pattern": label}},
                {"type": "null"},
            ]
        },
    )
    defs["Metrics"] = _metrics_def()
    defs["Model"] = _model_def()
    defs.update(_pattern_defs())
    return {
        "$schema": DIALECT,
        "$id": "https://github.com/toolcall-harness/toolcall-harness/scenario-suite.schema.json",
        "title": "toolcall-harness scenario suite",
        **{key: value for key, value in suite.items() if key != "title"},
        "$defs": dict(sorted(defs.items())),
    }


def policy_schema() -> dict[str, Any]:
    """The schema of one policy file (harness.policies), as a JSON-ready mapping."""
    from harness.policies.schema import PolicyFileSpec

    _, generated = models_json_schema(
        [(PolicyFileSpec, "validation"), (PolicyRuleSpec, "validation")],
        ref_template="#/$defs/{model}",
    )
    defs: dict[str, Any] = dict(generated["$defs"])
    top = defs.pop("PolicyFileSpec")
    _rule_defs(defs, "PolicyRuleSpec")
    rules = {"type": "array", "minItems": 1, "items": _ref("PolicyRuleSpec")}
    _replace(top, "rules", {"anyOf": [rules, {"type": "null"}]})
    _replace(defs["PolicySpec"], "rules", rules)
    _replace(
        defs["SelectSpec"],
        "attributes",
        {"anyOf": [{"type": "object", "additionalProperties": _ref("Pattern")}, {"type": "null"}]},
    )
    _replace(
        defs["SelectSpec"],
        "uses_tool",
        {
            "anyOf": [
                {"type": "string", "minLength": 1},
                {"type": "array", "items": {"type": "string"}, "minItems": 1},
                {"type": "null"},
            ]
        },
    )
    defs.update(_pattern_defs())
    return {
        "$schema": DIALECT,
        "$id": "https://github.com/toolcall-harness/toolcall-harness/policy-file.schema.json",
        "title": "toolcall-harness policy file",
        **{key: value for key, value in top.items() if key != "title"},
        "$defs": dict(sorted(defs.items())),
    }


def schema_json(*, policies: bool = False) -> str:
    """The schema as indented JSON text (what ``harness schema [--policies]`` prints)."""
    schema = policy_schema() if policies else scenario_schema()
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
