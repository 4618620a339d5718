"""Expectations against the agent's real tools (``harness validate``): names, arguments, types.

Builds each agent once (an async factory on a private loop, its context manager closed after)
and reads its tools' JSON schemas; no model is invoked. The tools of a multi-agent system are
found by walking the compiled graph: its ToolNodes, its subgraphs (subgraph nodes, a
supervisor's or swarm's agents, a graph a node or ``Send`` worker invokes), and the agents a
tool invokes (an agent used as a tool), at any depth.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any

from pydantic import BaseModel

from harness.scenarios.agents import build_agent_sync
from harness.scenarios.issues import ConfigIssue, describe_found, suggest
from harness.scenarios.model import ExpectedCallSpec, RulePatternSpec, Scenario, Suite


def agent_tools(agent: Any) -> dict[str, Any] | None:
    """The tools of a built agent by name, nested agents included (see the module docstring)."""
    found: dict[str, Any] = {}
    _collect_tools(agent, found, set())
    return found or None


def _collect_tools(agent: Any, found: dict[str, Any], seen: set[int]) -> None:
    if id(agent) in seen:
        return
    seen.add(id(agent))
    own: list[Any] = []
    nodes = getattr(agent, "nodes", None)
    if isinstance(nodes, Mapping):
        for node in nodes.values():
            bound = getattr(node, "bound", node)
            by_name = getattr(bound, "tools_by_name", None)
            if isinstance(by_name, Mapping):
                own.extend(by_name.values())
    tools = getattr(agent, "tools", None)
    if isinstance(tools, (list, tuple)):
        own.extend(tools)
    for tool in own:
        name = getattr(tool, "name", None)
        if isinstance(name, str):
            found.setdefault(name, tool)
            for inner in _agents_in_tool(tool):
                _collect_tools(inner, found, seen)
    for inner in _subgraphs(agent):
        _collect_tools(inner, found, seen)


def _subgraphs(agent: Any) -> list[Any]:
    """A compiled graph's direct subgraphs (LangGraph finds them in nodes and their closures)."""
    get_subgraphs = getattr(agent, "get_subgraphs", None)
    if not callable(get_subgraphs):
        return []
    try:
        return [graph for _name, graph in get_subgraphs()]
    except Exception:  # a graph LangGraph cannot introspect: its own tools still count
        return []


def _agents_in_tool(tool: Any) -> list[Any]:
    """Graphs a tool's function refers to (closure or globals): an agent used as a tool."""
    import inspect

    from langchain_core.runnables.utils import get_function_nonlocals

    found: list[Any] = []
    for attribute in ("func", "coroutine"):
        function = getattr(tool, attribute, None)
        if not inspect.isfunction(function):
            continue
        referenced: list[Any] = []
        try:
            names = inspect.getclosurevars(function)
            referenced.extend([*names.nonlocals.values(), *names.globals.values()])
            # `agent.invoke` inside the function: LangGraph's own subgraph search reads these
            referenced.extend(
                getattr(value, "__self__", value) for value in get_function_nonlocals(function)
            )
        except Exception:  # source or closure unavailable (a builtin, a REPL lambda)
            pass
        found.extend(value for value in referenced if _is_graph(value))
    return found


def _is_graph(value: Any) -> bool:
    return callable(getattr(value, "get_subgraphs", None)) and isinstance(
        getattr(value, "nodes", None), Mapping
    )


def check_tools(suites: Iterable[Suite]) -> list[ConfigIssue]:
    """Check each scenario's expectations against its agent's real tools (builds the agents).

    Unknown tool (with the nearest name), unknown argument, a literal of the wrong JSON type,
    and ``forbid`` naming a tool the agent does not have; the same for the rules' call patterns,
    where a glob that matches no tool is a warning (``ConfigIssue.warning``). No model is
    invoked.
    """
    issues: list[ConfigIssue] = []
    built: dict[tuple[str, int], dict[str, Any] | None] = {}
    for suite in suites:
        for scenario in suite.scenarios:
            key = (scenario.agent.spec, id(scenario.agent.factory))
            if key not in built:
                built[key] = _tools_of(scenario, issues)
            tools = built[key]
            if tools is not None:
                issues.extend(_scenario_tool_issues(scenario, tools))
    return list(dict.fromkeys(issues))


def _tools_of(scenario: Scenario, issues: list[ConfigIssue]) -> dict[str, Any] | None:
    try:
        agent, close = build_agent_sync(scenario.agent.factory, scenario.model)
    except Exception as exc:
        issues.append(
            ConfigIssue(
                scenario.file,
                scenario.line,
                scenario.path,
                f"agent factory {scenario.agent.spec} raised {type(exc).__name__}: {exc}",
            )
        )
        return None
    try:
        tools = agent_tools(agent)
    finally:
        try:
            close()
        except Exception as exc:
            issues.append(
                ConfigIssue(
                    scenario.file,
                    scenario.line,
                    scenario.path,
                    f"closing agent factory {scenario.agent.spec} raised "
                    f"{type(exc).__name__}: {exc}",
                )
            )
    if tools is None:
        issues.append(
            ConfigIssue(
                scenario.file,
                scenario.line,
                scenario.path,
                f"cannot find the tools of agent {scenario.agent.spec} (no "
                "ToolNode in the graph, no 'tools' attribute): tool checks "
                "skipped",
            )
        )
    return tools


def _scenario_tool_issues(scenario: Scenario, tools: Mapping[str, Any]) -> list[ConfigIssue]:
    issues: list[ConfigIssue] = []
    names = sorted(tools)
    turn_specs = [spec for turn in scenario.turns for spec in turn.expected_specs]
    for spec in (*scenario.expected_specs, *turn_specs):
        tool = tools.get(spec.name)
        if tool is None:
            hint = suggest(spec.name, names) or f" (tools: {', '.join(names)})"
            issues.append(
                ConfigIssue(
                    scenario.file,
                    spec.line,
                    f"{spec.path}.name",
                    f"unknown tool '{spec.name}'{hint}",
                )
            )
            continue
        issues.extend(_argument_issues(scenario, spec, tool))
    for group in (scenario.expected_specs, *(turn.expected_specs for turn in scenario.turns)):
        issues.extend(_ref_issues(scenario, group, tools))
    rule_specs = [*scenario.rule_specs, *(s for turn in scenario.turns for s in turn.rule_specs)]
    for rule_spec in rule_specs:
        issues.extend(_rule_pattern_issues(scenario, rule_spec, tools))
        issues.extend(_same_issues(scenario, rule_spec, tools))
    for name in scenario.forbid:
        if name not in tools:
            hint = suggest(name, names) or f" (tools: {', '.join(names)})"
            issues.append(
                ConfigIssue(
                    scenario.file,
                    scenario.line,
                    f"{scenario.path}.expect.forbid",
                    f"forbids unknown tool '{name}'{hint}",
                )
            )
    return issues


def _rule_pattern_issues(
    scenario: Scenario, spec: RulePatternSpec, tools: Mapping[str, Any]
) -> list[ConfigIssue]:
    """A rule's call pattern against the tools: an unknown name (not a glob) or argument is an
    error, a glob that matches no tool a warning (the rule would never apply)."""
    names = sorted(tools)
    if not _GLOB_CHARS.intersection(spec.name):
        tool = tools.get(spec.name)
        if tool is None:
            hint = suggest(spec.name, names) or f" (tools: {', '.join(names)})"
            message = f"unknown tool '{spec.name}'{hint}"
            return [ConfigIssue(scenario.file, spec.line, spec.path, message)]
        call = ExpectedCallSpec(spec.name, spec.args, spec.path, spec.line)
        return [*_argument_issues(scenario, call, tool), *_path_issues(scenario, spec, [tool])]
    matched = [tools[name] for name in names if fnmatchcase(name, spec.name)]
    if not matched:
        message = f"'{spec.name}' matches no tool of the agent (tools: {', '.join(names)})"
        return [ConfigIssue(scenario.file, spec.line, spec.path, message, warning=True)]
    where = [(f"{spec.path}.args.{key}", key) for key in spec.args]
    issues = _unknown_in_all(scenario, spec, matched, where)
    return [*issues, *_path_issues(scenario, spec, matched)]


def _ref_issues(
    scenario: Scenario, specs: Sequence[ExpectedCallSpec], tools: Mapping[str, Any]
) -> list[ConfigIssue]:
    """``{$ref: <label>.args.<name>...}``: the labelled call's tool takes ``<name>`` (an unknown
    label is a load error already; a result has no schema to check against)."""
    labelled: dict[str, set[str]] = {}
    for spec in specs:
        if spec.label:
            labelled.setdefault(spec.label, set()).add(spec.name)
    issues = []
    for spec in specs:
        for key, value in spec.args.items():
            for target in _refs_in(value):
                parts = target.split(".")
                names = labelled.get(parts[0])
                if len(parts) < 3 or parts[1] != "args" or not names or not names <= tools.keys():
                    continue
                known = _arguments_of([tools[name] for name in names])
                if known is None or parts[2] in known:
                    continue
                hint = _argument_hint(parts[2], known)
                shown = ", ".join(sorted(names))
                message = (
                    f"$ref {target}: unknown argument '{parts[2]}' for tool '{shown}' "
                    f"(labelled '{parts[0]}'){hint}"
                )
                issues.append(
                    ConfigIssue(scenario.file, spec.line, f"{spec.path}.args.{key}", message)
                )
    return issues


def _refs_in(value: Any) -> list[str]:
    """The ``$ref`` targets anywhere in a raw expected value."""
    if isinstance(value, Mapping):
        own = [value["$ref"]] if isinstance(value.get("$ref"), str) else []
        return own + [target for item in value.values() for target in _refs_in(item)]
    if isinstance(value, list):
        return [target for item in value for target in _refs_in(item)]
    return []


def _same_issues(
    scenario: Scenario, spec: RulePatternSpec, tools: Mapping[str, Any]
) -> list[ConfigIssue]:
    """``before.first.args``' ``{$same: <path>}``: the ``then`` tools take its first name."""
    if spec.same_of is None:
        return []
    sames = [
        (key, value["$same"])
        for key, value in spec.args.items()
        if isinstance(value, Mapping) and isinstance(value.get("$same"), str)
    ]
    matched = [tools[name] for name in sorted(tools) if fnmatchcase(name, spec.same_of)]
    known = _arguments_of(matched) if sames and matched else None
    if known is None:
        return []  # no $same, or `then` matches no tool (reported on its own pattern)
    issues = []
    for key, path in sames:
        arg = path.split(".", 1)[0]
        if arg in known:
            continue
        message = (
            f"$same {path}: unknown argument '{arg}' for the `then` tool "
            f"'{spec.same_of}'{_argument_hint(arg, known)}"
        )
        issues.append(ConfigIssue(scenario.file, spec.line, f"{spec.path}.args.{key}", message))
    return issues


def _arguments_of(matched: Sequence[Any]) -> set[str] | None:
    """The arguments any of ``matched`` takes; None when one takes any (no or an open schema)."""
    known: set[str] = set()
    for tool in matched:
        schema = _tool_schema(tool)
        if schema is None or schema.get("additionalProperties"):
            return None
        known.update(schema.get("properties") or {})
    return known


def _argument_hint(arg: str, known: set[str]) -> str:
    return suggest(arg, sorted(known)) or f" (arguments: {', '.join(sorted(known)) or 'none'})"


def _path_issues(
    scenario: Scenario, spec: RulePatternSpec, matched: Sequence[Any]
) -> list[ConfigIssue]:
    """``grounded``'s argument paths: the first name of each is an argument of the tools."""
    where = [
        (f"{spec.arg_paths_at}[{position}]", path.split(".", 1)[0])
        for position, path in enumerate(spec.arg_paths)
    ]
    return _unknown_in_all(scenario, spec, matched, where)


def _unknown_in_all(
    scenario: Scenario,
    spec: RulePatternSpec,
    matched: Sequence[Any],
    where: Sequence[tuple[str, str]],
) -> list[ConfigIssue]:
    """An error for each argument no tool of ``matched`` takes (a tool without a schema, or
    with an open one, takes any)."""
    known = _arguments_of(matched)
    if known is None:
        return []
    issues = []
    for path, key in where:
        if key in known:
            continue
        hint = _argument_hint(key, known)
        glob = _GLOB_CHARS.intersection(spec.name)
        shown = f"the tools '{spec.name}' matches" if glob else f"tool '{spec.name}'"
        issues.append(
            ConfigIssue(
                scenario.file, spec.line, path, f"unknown argument '{key}' for {shown}{hint}"
            )
        )
    return issues


_GLOB_CHARS = frozenset("*?[")
"""What makes a rule's tool name a glob (harness.rules.patterns)."""


def _argument_issues(scenario: Scenario, spec: ExpectedCallSpec, tool: Any) -> list[ConfigIssue]:
    schema = _tool_schema(tool)
    if schema is None:
        return []
    properties: Mapping[str, Any] = schema.get("properties") or {}
    open_schema = bool(schema.get("additionalProperties"))
    issues: list[ConfigIssue] = []
    for key, raw in spec.args.items():
        where = f"{spec.path}.args.{key}"
        matcher = isinstance(raw, Mapping) and any(str(k).startswith("$") for k in raw)
        if key not in properties:
            if open_schema or (matcher and "$absent" in raw):
                continue
            hint = suggest(key, list(properties)) or (
                f" (arguments: {', '.join(properties) or 'none'})"
            )
            issues.append(
                ConfigIssue(
                    scenario.file,
                    spec.line,
                    where,
                    f"unknown argument '{key}' for tool '{spec.name}'{hint}",
                )
            )
            continue
        if matcher:
            continue
        expected = _json_types(properties[key], schema)
        if expected and not any(_is_json_type(raw, kind) for kind in expected):
            issues.append(
                ConfigIssue(
                    scenario.file,
                    spec.line,
                    where,
                    f"wrong type for argument '{key}' of tool '{spec.name}': "
                    f"expected {' or '.join(sorted(expected))}, found "
                    f"{describe_found(raw)}",
                )
            )
    return issues


def _tool_schema(tool: Any) -> dict[str, Any] | None:
    for attribute in ("tool_call_schema", "args_schema"):
        model = getattr(tool, attribute, None)
        if isinstance(model, type) and issubclass(model, BaseModel):
            return model.model_json_schema()
        if isinstance(model, Mapping):
            return dict(model)
    return None


def _json_types(prop: Mapping[str, Any], root: Mapping[str, Any]) -> set[str]:
    """The JSON types a property allows (empty set = anything / unknown)."""
    ref = prop.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        prop = (root.get("$defs") or {}).get(ref.split("/")[-1], {})
    kind = prop.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {str(k) for k in kind}
    members = prop.get("anyOf") or prop.get("oneOf")
    if isinstance(members, list):
        kinds: set[str] = set()
        for member in members:
            sub = _json_types(member, root)
            if not sub:
                return set()
            kinds |= sub
        return kinds
    if "enum" in prop or "const" in prop:
        return set()
    return {"object"} if "properties" in prop else set()


def _is_json_type(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, Mapping)
    if kind == "null":
        return value is None
    return True
