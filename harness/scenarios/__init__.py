"""Scenario suites in YAML (docs/architecture.md): schema, a line-keeping safe loader, compilation.

``load_paths([...])`` reads every suite (``*.yaml`` / ``*.yml`` with a top-level ``scenarios:``
key, see ``looks_like_suite``) under the given paths, and every file named, and returns
compiled :class:`Suite` objects, or raises one :class:`ConfigError` listing *every* problem of
*every* file as ``file:line: field.path: message``. Nothing here runs a model: the only code
executed is the import of the agent module the suite names (and model construction).

Modules, each importing only those above it: ``model`` (the compiled form), ``issues``
(ConfigIssue, pydantic errors as issues), ``yaml_lines`` (the line-keeping reader), ``file_model``
(the pydantic specs), ``metric_specs``, ``agents`` (agent import), ``compile`` (one file into a
Suite), ``discovery`` (the entry points), ``tool_validation`` (``harness validate``),
``json_schema`` (``harness schema``) and ``draft`` (``harness draft``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.errors import ConfigError
    from harness.scenarios.agents import resolve_agent
    from harness.scenarios.compile import build_model
    from harness.scenarios.discovery import (
        FoundFiles,
        display_path,
        iter_scenarios,
        load_file,
        load_paths,
        looks_like_suite,
        scenario_files,
        select,
    )
    from harness.scenarios.file_model import (
        DefaultsSpec,
        ExpectSpec,
        ScenarioSpec,
        SuiteSpec,
        ToolCallSpec,
    )
    from harness.scenarios.issues import ConfigIssue, PathKey, describe_found, suggest
    from harness.scenarios.model import (
        DEFAULT_TIMEOUT,
        SCENARIO_SUFFIXES,
        AgentRef,
        ExpectedCallSpec,
        Order,
        Scenario,
        Suite,
    )
    from harness.scenarios.tool_validation import agent_tools, check_tools

# Imported on first use (PEP 562): `harness schema` needs only the specs, and the CLI's settings
# only the issue type, not the loader, the agent import and the metrics behind the others.
_HOMES = {
    "ConfigError": "harness.errors",
    "resolve_agent": "harness.scenarios.agents",
    "build_model": "harness.scenarios.compile",
    "FoundFiles": "harness.scenarios.discovery",
    "display_path": "harness.scenarios.discovery",
    "iter_scenarios": "harness.scenarios.discovery",
    "load_file": "harness.scenarios.discovery",
    "load_paths": "harness.scenarios.discovery",
    "looks_like_suite": "harness.scenarios.discovery",
    "scenario_files": "harness.scenarios.discovery",
    "select": "harness.scenarios.discovery",
    "ConfigIssue": "harness.scenarios.issues",
    "PathKey": "harness.scenarios.issues",
    "describe_found": "harness.scenarios.issues",
    "suggest": "harness.scenarios.issues",
    "AgentRef": "harness.scenarios.model",
    "DEFAULT_TIMEOUT": "harness.scenarios.model",
    "ExpectedCallSpec": "harness.scenarios.model",
    "Order": "harness.scenarios.model",
    "SCENARIO_SUFFIXES": "harness.scenarios.model",
    "Scenario": "harness.scenarios.model",
    "Suite": "harness.scenarios.model",
    "DefaultsSpec": "harness.scenarios.file_model",
    "ExpectSpec": "harness.scenarios.file_model",
    "ScenarioSpec": "harness.scenarios.file_model",
    "SuiteSpec": "harness.scenarios.file_model",
    "ToolCallSpec": "harness.scenarios.file_model",
    "agent_tools": "harness.scenarios.tool_validation",
    "check_tools": "harness.scenarios.tool_validation",
}

__all__ = [
    "DEFAULT_TIMEOUT",
    "SCENARIO_SUFFIXES",
    "AgentRef",
    "ConfigError",
    "ConfigIssue",
    "DefaultsSpec",
    "ExpectSpec",
    "ExpectedCallSpec",
    "FoundFiles",
    "Order",
    "PathKey",
    "Scenario",
    "ScenarioSpec",
    "Suite",
    "SuiteSpec",
    "ToolCallSpec",
    "agent_tools",
    "build_model",
    "check_tools",
    "describe_found",
    "display_path",
    "iter_scenarios",
    "load_file",
    "load_paths",
    "looks_like_suite",
    "resolve_agent",
    "scenario_files",
    "select",
    "suggest",
]


def __getattr__(name: str) -> Any:
    """Load the package's names on first access."""
    module = _HOMES.get(name)
    if module is None:
        raise AttributeError(f"module 'harness.scenarios' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
