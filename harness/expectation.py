"""Expectation: a tool name plus an argument pattern.

INTERFACE STUB — to be implemented.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.values import ArgCheck
from tracing.records import ToolCall


@dataclass(frozen=True, slots=True)
class Expectation:
    """An expected tool call: the name, and a compiled pattern for (some of) its arguments."""

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, tool: Any, args: Any = None, /, **kwargs: Any) -> Expectation:
        """Build from a name, a BaseTool or @tool function, and a mapping/JSON string/keywords."""
        raise NotImplementedError

    @classmethod
    def coerce(cls, item: Expectation | ToolCall | Mapping[str, Any]) -> Expectation:
        """Accept an Expectation, a ToolCall (its args are the pattern) or a {name, args} dict."""
        raise NotImplementedError

    def accepts(self, call: ToolCall) -> bool:
        """Same name and every expected argument present and matching."""
        raise NotImplementedError

    def check(self, call: ToolCall) -> ArgCheck:
        """Argument-by-argument comparison against a call (names are not compared)."""
        raise NotImplementedError

    def describe(self) -> str:
        """Render as ``name(key=pattern, ...)``."""
        raise NotImplementedError
