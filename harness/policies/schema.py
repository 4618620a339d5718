"""The pydantic schema of a policy file as written in YAML (``extra="forbid"``, strict).

A policy file holds one policy (``policies: <name>``, ``select:``, ``rules:``) or several
(``policies: [{name, select, rules}, ...]``). The rules are :class:`~harness.rules.schema.
PolicyRuleSpec` s, compiled by :func:`harness.rules.compile_rules` with the file's line map;
here they are a plain list. Every field carries a description: ``harness schema --policies``
turns these models into the JSON Schema editors use.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


def _one_or_more(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


SELECT_KEYS = ("service", "agent", "root", "attributes", "uses_tool")
"""What ``select:`` may hold; a trace is selected when every key given holds."""


class SelectSpec(_Strict):
    """``select:``: the traces a policy applies to (every key given must hold; none: all)."""

    service: str | None = Field(
        default=None, min_length=1, description="The resource's service.name: a name or a glob."
    )
    agent: str | None = Field(
        default=None,
        min_length=1,
        description="The agent name the reader finds (outermost agent span, else the root's): "
        "a name or a glob.",
    )
    root: str | None = Field(
        default=None, min_length=1, description="The root span's name: a name or a glob."
    )
    attributes: dict[str, Any] | None = Field(
        default=None,
        description="Root span (else resource) attributes: a literal or a $ matcher per key.",
    )
    uses_tool: Annotated[list[str] | None, BeforeValidator(_one_or_more)] = Field(
        default=None,
        min_length=1,
        description="The trace calls a tool of this name or glob (a list: any of them).",
    )


class PolicySpec(_Strict):
    """One policy of a list: its name, the traces it selects, its rules."""

    name: str = Field(min_length=1, description="Unique across the policy files given.")
    select: SelectSpec | None = Field(default=None, description="Absent: every trace.")
    rules: list[Any] = Field(min_length=1, description="The policy's rules (PolicyRuleSpec).")


class PolicyFileSpec(_Strict):
    """A policy file: ``policies: <name>`` with ``select`` and ``rules``, or a list of policies."""

    policies: str | list[PolicySpec] = Field(
        description="The policy's name (select and rules at the top level), or a list of "
        "{name, select, rules}."
    )
    select: SelectSpec | None = Field(
        default=None, description="With a named policy: the traces it selects (absent: all)."
    )
    rules: list[Any] | None = Field(
        default=None, description="With a named policy: its rules (PolicyRuleSpec)."
    )
