"""Expectation: a tool name plus an argument pattern (docs/metrics.md#samples-and-expectations)."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.matching import pattern_bytes
from harness.values import (
    ArgCheck,
    args_equal,
    args_match,
    check_args,
    compile_args,
    describe_pattern,
    pattern_to_json,
)
from tracing.records import InvalidToolCall, ToolCall, parse_arguments


def tool_name(tool: Any, who: str = "expectation") -> str:
    """The name of a tool given as a string, a LangChain ``BaseTool`` / ``@tool`` function, etc.

    ``who`` starts each message (``called()`` for an assertion); InvalidToolCall otherwise.
    """
    if isinstance(tool, str):
        if not tool:
            raise InvalidToolCall(f"{who}: the tool name is empty; give the tool or its name")
        return tool
    name = getattr(tool, "name", None)
    if isinstance(name, str) and name:
        # BaseTool.name honours @tool("custom_name"), which a hand-written string could miss.
        return name
    if callable(tool) and isinstance(getattr(tool, "__name__", None), str):
        raise InvalidToolCall(
            f"{who}: {tool.__name__!r} is a plain function, not a tool: decorate it with "
            f"@tool or give the tool's name as a string"
        )
    raise InvalidToolCall(
        f"{who} takes a tool name (str), a LangChain BaseTool or an @tool function, "
        f"got {type(tool).__name__} {tool!r}"
    )


@dataclass(frozen=True, slots=True)
class Expectation:
    """An expected tool call: the name, and a compiled pattern for (some of) its arguments.

    ``args`` are compiled on construction, so ``$`` mappings act as matchers and malformed ones
    raise :class:`~harness.errors.MatcherError` naming their JSON-pointer path.
    """

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    agent: str | None = None
    """Only calls made in this agent match: a path (``supervisor/research_agent``), its last
    segments (``research_agent``) or a glob of either (``supervisor/*``)."""
    node: str | None = None
    """Only calls made in this LangGraph node match (a name or a glob)."""
    exact: bytes | None = field(init=False, repr=False, compare=False)
    """The compiled args as bytes when they are plain literals and the expectation is not scoped
    (else None): computed once here so the metrics recognise an identical call without comparing
    value by value (:func:`harness.matching.pattern_bytes`)."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InvalidToolCall(f"expectation needs a non-empty string name, got {self.name!r}")
        for scope, value in (("agent", self.agent), ("node", self.node)):
            if value is not None and (not isinstance(value, str) or not value):
                raise InvalidToolCall(
                    f"expectation {self.name!r}: {scope} must be a non-empty string, got {value!r}"
                )
        raw = self.args
        if not isinstance(raw, Mapping):
            raw = parse_arguments(raw, where=f"expectation {self.name!r}")
        object.__setattr__(self, "args", compile_args(raw))
        scoped = self.agent is not None or self.node is not None
        exact = None if scoped else pattern_bytes(self.args)
        object.__setattr__(self, "exact", exact)

    @classmethod
    def of(cls, tool: Any, args: Any = None, /, **kwargs: Any) -> Expectation:
        """Build from a name, a BaseTool or @tool function, and a mapping/JSON string/keywords."""
        name = tool_name(tool)
        merged = parse_arguments(args, where=f"expectation {name!r}")
        merged.update(kwargs)
        return cls(name, merged)

    @classmethod
    def coerce(cls, item: Expectation | ToolCall | Mapping[str, Any]) -> Expectation:
        """Accept an Expectation, a ToolCall (its args are the pattern) or a {name, args} dict.

        Mappings may also be OpenAI-shaped (``{"function": {"name", "arguments"}}``); a string or
        a tool object alone means "any call of that tool".
        """
        if isinstance(item, Expectation):
            return item
        if isinstance(item, ToolCall):
            return cls(item.name, item.args)
        if isinstance(item, Mapping):
            return cls._from_mapping(item)
        return cls(tool_name(item))

    @classmethod
    def _from_mapping(cls, item: Mapping[str, Any]) -> Expectation:
        body = item.get("function", item)
        if not isinstance(body, Mapping):
            raise InvalidToolCall(f"expectation 'function' must be a mapping, got {body!r}")
        name = body.get("name")
        if not isinstance(name, str) or not name:
            raise InvalidToolCall(
                f"expectation mapping needs a non-empty 'name', got {name!r} in {dict(item)!r}"
            )
        if "args" in body and "arguments" in body:
            raise InvalidToolCall(f"expectation {name!r} gives both 'args' and 'arguments'")
        raw = body.get("args", body.get("arguments"))
        return cls(
            name,
            parse_arguments(raw, where=f"expectation {name!r}"),
            agent=item.get("agent"),
            node=item.get("node"),
        )

    @property
    def scoped(self) -> bool:
        """Whether this expectation names an agent or a node."""
        return self.agent is not None or self.node is not None

    def pairs_with(self, call: ToolCall) -> bool:
        """May this call stand for this expectation at all (arguments aside)?

        Same name, made in the expectation's agent and node if it names them, and not an
        ``invalid`` call: arguments that were never JSON match nothing (docs/metrics.md,
        "Call statuses").
        """
        if self.name != call.name or call.status == "invalid":
            return False
        if self.agent is not None and not agent_matches(self.agent, call.agent):
            return False
        return self.node is None or (
            call.node is not None and fnmatch.fnmatchcase(call.node, self.node)
        )

    def accepts(self, call: ToolCall) -> bool:
        """Same name and every expected argument present and matching."""
        return self.pairs_with(call) and args_match(self.args, call.args)

    def accepts_exactly(self, call: ToolCall) -> bool:
        """Same name and arguments equal both ways: every expected one matches, no extras."""
        return self.pairs_with(call) and args_equal(self.args, call.args)

    def check(self, call: ToolCall) -> ArgCheck:
        """Argument-by-argument comparison against a call (names are not compared)."""
        return check_args(self.args, call.args)

    def describe(self) -> str:
        """Render as ``name(key=pattern, ...)``, then `` in agent`` / `` at node`` if scoped."""
        inner = ", ".join(f"{key}={describe_pattern(value)}" for key, value in self.args.items())
        where = f" in {self.agent}" if self.agent is not None else ""
        where += f" at {self.node}" if self.node is not None else ""
        return f"{self.name}({inner}){where}"

    def to_dict(self) -> dict[str, Any]:
        """``{"name": ..., "args": {...}}`` with matchers in ``$`` form (compiles back equal)."""
        out: dict[str, Any] = {
            "name": self.name,
            "args": {k: pattern_to_json(v) for k, v in self.args.items()},
        }
        if self.agent is not None:
            out["agent"] = self.agent
        if self.node is not None:
            out["node"] = self.node
        return out


def agent_matches(pattern: str, agent: str | None) -> bool:
    """Does an agent path match a pattern: the whole path, or its last segments, or a glob?

    ``research_agent`` matches ``supervisor/research_agent``; ``supervisor/*`` matches every
    agent under the supervisor; a call with no agent matches no pattern.
    """
    if agent is None:
        return False
    parts = agent.split("/")
    return any(fnmatch.fnmatchcase("/".join(parts[start:]), pattern) for start in range(len(parts)))
