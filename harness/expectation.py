"""Expectation: a tool name plus an argument pattern (docs/metrics.md#samples-and-expectations).

An expectation may also carry a label (``id:`` in YAML), the labels it comes ``after``, be
``optional``, and constrain the call's ``result``; its patterns may hold ``$ref`` s to another
expectation's call, resolved per sample before scoring (:mod:`harness.resolve`).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from harness.matching import pattern_bytes
from harness.values import (
    ABSENT,
    LABEL,
    ArgCheck,
    Matcher,
    Ref,
    args_equal,
    args_match,
    check_args,
    check_result,
    compile_args,
    compile_pattern,
    describe_pattern,
    match_value,
    pattern_to_json,
    pointer_token,
    refs_in,
    result_forms,
)
from harness.values.refs import LABEL_RULE
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


RefSite = tuple[Literal["args", "result"], str, Ref]
"""Where a ``$ref`` sits in an expectation: (``"args"`` or ``"result"``, JSON pointer, ref)."""


@dataclass(frozen=True, slots=True)
class _Extras:
    """What few expectations carry: a label, ``after``, ``optional``, ``result``, ``$ref`` s.

    Kept in one slot of :class:`Expectation`, None for the others: an expectation stays as
    small as a plain call's, which the metrics' throughput depends on (benchmarks/).
    """

    label: str | None
    after: tuple[str, ...]
    optional: bool
    result: Any
    refs: tuple[RefSite, ...] = field(compare=False, repr=False)
    dynamic: bool = field(compare=False, repr=False)
    """Resolved per sample before scoring: a ``$ref`` to fill in, or optional (harness.resolve)."""


@dataclass(frozen=True, slots=True, init=False)
class Expectation:
    """An expected tool call: the name, and a compiled pattern for (some of) its arguments.

    ``args`` (and ``result``) are compiled on construction, so ``$`` mappings act as matchers
    and malformed ones raise :class:`~harness.errors.MatcherError` naming their JSON-pointer
    path. ``label``, ``after``, ``optional`` and ``result`` are keyword-only; :meth:`evolve`
    (not ``dataclasses.replace``, which knows only the first four) copies with changes.
    """

    name: str
    args: Mapping[str, Any]
    agent: str | None
    """Only calls made in this agent match: a path (``supervisor/research_agent``), its last
    segments (``research_agent``) or a glob of either (``supervisor/*``)."""
    node: str | None
    """Only calls made in this LangGraph node match (a name or a glob)."""
    exact: bytes | None = field(init=False, repr=False, compare=False)
    """The compiled args as bytes when they are plain literals and the call is paired by name
    alone (else None): computed once here so the metrics recognise an identical call without
    comparing value by value (:func:`harness.matching.pattern_bytes`)."""
    extra: _Extras | None = field(init=False)
    """Label, ``after``, ``optional``, ``result`` and ``$ref`` s; None when none is given."""

    def __init__(
        self,
        name: str,
        args: Mapping[str, Any] | str | None = None,
        agent: str | None = None,
        node: str | None = None,
        *,
        label: str | None = None,
        after: str | Iterable[str] = (),
        optional: bool = False,
        result: Any = ABSENT,
    ) -> None:
        """``label``: this call's name for ``after`` and ``$ref`` (``id:`` in YAML); ``after``:
        the label(s) whose calls must come first; ``optional``: no cost when absent;
        ``result``: a pattern the call's result must match."""
        if not isinstance(name, str) or not name:
            raise InvalidToolCall(f"expectation needs a non-empty string name, got {name!r}")
        for scope, value in (("agent", agent), ("node", node)):
            if value is not None and (not isinstance(value, str) or not value):
                raise InvalidToolCall(
                    f"expectation {name!r}: {scope} must be a non-empty string, got {value!r}"
                )
        raw = args if args is not None else {}
        if not isinstance(raw, Mapping):
            raw = parse_arguments(raw, where=f"expectation {name!r}")
        compiled = compile_args(raw)
        setter = object.__setattr__
        setter(self, "name", name)
        setter(self, "args", compiled)
        setter(self, "agent", agent)
        setter(self, "node", node)
        extra = None
        if label is not None or after != () or optional is not False or result is not ABSENT:
            extra = _extras(name, compiled, label, after, optional, result)
        elif any(isinstance(value, Matcher) for value in compiled.values()):
            extra = _extras(name, compiled, None, (), False, ABSENT)  # a $ref, maybe
        setter(self, "extra", extra)
        plain = agent is None and node is None and (extra is None or extra.result is ABSENT)
        setter(self, "exact", pattern_bytes(compiled) if plain else None)

    @property
    def label(self) -> str | None:
        """This expectation's name for ``after`` and ``$ref`` (``id:`` in YAML)."""
        return self.extra.label if self.extra is not None else None

    @property
    def after(self) -> tuple[str, ...]:
        """Labels of the expectations whose calls must come before this one's."""
        return self.extra.after if self.extra is not None else ()

    @property
    def optional(self) -> bool:
        """Matched when a call is there; when none is, dropped from the sample before scoring
        (docs/metrics.md, "Optional expectations")."""
        return self.extra is not None and self.extra.optional

    @property
    def result(self) -> Any:
        """The compiled pattern the call's result must match; ABSENT: not checked."""
        return self.extra.result if self.extra is not None else ABSENT

    @property
    def refs(self) -> tuple[RefSite, ...]:
        """Every ``$ref`` in ``args`` and ``result``, in order."""
        return self.extra.refs if self.extra is not None else ()

    def evolve(self, **changes: Any) -> Expectation:
        """A copy with some fields changed (any of the constructor's), the others kept."""
        name = changes.pop("name", self.name)
        fields = {
            "args": self.args,
            "agent": self.agent,
            "node": self.node,
            "label": self.label,
            "after": self.after,
            "optional": self.optional,
            "result": self.result,
        }
        fields.update(changes)
        return Expectation(name, **fields)

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
        """``{name, args}`` (or OpenAI-shaped), with ``agent``, ``node``, ``label``, ``after``,
        ``optional`` and ``result`` beside them. Not ``id``: a LangChain call's ``id`` is
        its call id, not a label."""
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
            label=item.get("label"),
            after=item.get("after") or (),
            optional=item.get("optional", False),
            result=item.get("result", ABSENT),
        )

    @property
    def scoped(self) -> bool:
        """Whether pairing needs more than the name: an agent, a node or a result to check."""
        return self.agent is not None or self.node is not None or self.result is not ABSENT

    def pairs_with(self, call: ToolCall) -> bool:
        """May this call stand for this expectation at all (arguments aside)?

        Same name, made in the expectation's agent and node if it names them, its result
        matching the expectation's ``result`` if it gives one, and not an ``invalid`` call:
        arguments that were never JSON match nothing (docs/metrics.md, "Call statuses").
        """
        if self.name != call.name or call.status == "invalid":
            return False
        if self.agent is not None and not agent_matches(self.agent, call.agent):
            return False
        if self.node is not None and (
            call.node is None or not fnmatch.fnmatchcase(call.node, self.node)
        ):
            return False
        extra = self.extra
        return extra is None or extra.result is ABSENT or _result_matches(extra.result, call)

    def accepts(self, call: ToolCall) -> bool:
        """Same name and every expected argument present and matching (and the result)."""
        return self.pairs_with(call) and args_match(self.args, call.args)

    def accepts_exactly(self, call: ToolCall) -> bool:
        """Same name and arguments equal both ways: every expected one matches, no extras."""
        return self.pairs_with(call) and args_equal(self.args, call.args)

    def check(self, call: ToolCall) -> ArgCheck:
        """Argument-by-argument comparison against a call (names are not compared), then the
        result when the expectation gives one (a ``wrong_result`` diff at path ``result``)."""
        found = check_args(self.args, call.args)
        if self.result is ABSENT:
            return found
        diff = check_result(self.result, call.result)
        if diff is None:
            return found
        return ArgCheck(found.correct, found.total, (*found.diffs, diff), found.extra_keys)

    def describe(self) -> str:
        """Render as ``name(key=pattern, ...)``, then `` in agent`` / `` at node`` if scoped,
        `` -> result`` when a result is expected."""
        inner = ", ".join(f"{key}={describe_pattern(value)}" for key, value in self.args.items())
        where = f" in {self.agent}" if self.agent is not None else ""
        where += f" at {self.node}" if self.node is not None else ""
        if self.result is not ABSENT:
            where += f" -> {describe_pattern(self.result)}"
        return f"{self.name}({inner}){where}"

    def to_dict(self) -> dict[str, Any]:
        """``{"name": ..., "args": {...}}`` with matchers in ``$`` form (compiles back equal),
        and every other field that is set (``label``, ``after``, ...)."""
        out: dict[str, Any] = {
            "name": self.name,
            "args": {k: pattern_to_json(v) for k, v in self.args.items()},
        }
        if self.agent is not None:
            out["agent"] = self.agent
        if self.node is not None:
            out["node"] = self.node
        if self.label is not None:
            out["label"] = self.label
        if self.after:
            out["after"] = list(self.after)
        if self.optional:
            out["optional"] = True
        if self.result is not ABSENT:
            out["result"] = pattern_to_json(self.result)
        return out


def _result_matches(pattern: Any, call: ToolCall) -> bool:
    """Does the call's result match (any of its forms: harness.values.result_forms)?"""
    return any(match_value(pattern, form) for form in result_forms(call.result))


def refs_in_args(args: Mapping[str, Any]) -> list[tuple[str, Ref]]:
    """Every ``$ref`` in compiled arguments, with its JSON pointer (``/order_id``)."""
    found: list[tuple[str, Ref]] = []
    for key, value in args.items():
        if isinstance(value, Matcher):  # literals hold no $ref: most arguments stop here
            found.extend(refs_in(value, "/" + pointer_token(key)))
    return found


def _extras(
    name: str,
    args: Mapping[str, Any],
    label: Any,
    after: Any,
    optional: Any,
    result: Any,
) -> _Extras | None:
    """Check and compile what an expectation carries beyond name, args and scope; None when
    it carries nothing (its args held matchers, but no ``$ref``)."""
    where = f"expectation {name!r}"
    if label is not None and (not isinstance(label, str) or not LABEL.match(label)):
        raise InvalidToolCall(f"{where}: label must be {LABEL_RULE}, got {label!r}")
    labels = _labels(after, where)
    if not isinstance(optional, bool):
        raise InvalidToolCall(f"{where}: optional must be true or false, got {optional!r}")
    sites: list[RefSite] = [("args", path, ref) for path, ref in refs_in_args(args)]
    if result is not ABSENT:
        result = compile_pattern(result, "/result")
        sites += [("result", path, ref) for path, ref in refs_in(result)]
    if label is None and not labels and not optional and result is ABSENT and not sites:
        return None
    return _Extras(label, labels, optional, result, tuple(sites), bool(sites) or optional)


def _labels(value: Any, where: str) -> tuple[str, ...]:
    """``after`` as a tuple of labels: one label or a list of them."""
    items: Iterable[Any] = (value,) if isinstance(value, str) else value
    if isinstance(value, Mapping) or not isinstance(items, Iterable):
        raise InvalidToolCall(f"{where}: after takes a label or a list of labels, got {value!r}")
    labels = tuple(items)
    for label in labels:
        if not isinstance(label, str) or not LABEL.match(label):
            raise InvalidToolCall(f"{where}: after names labels ({LABEL_RULE}), got {label!r}")
    return labels


def agent_matches(pattern: str, agent: str | None) -> bool:
    """Does an agent path match a pattern: the whole path, or its last segments, or a glob?

    ``research_agent`` matches ``supervisor/research_agent``; ``supervisor/*`` matches every
    agent under the supervisor; a call with no agent matches no pattern.
    """
    if agent is None:
        return False
    parts = agent.split("/")
    return any(fnmatch.fnmatchcase("/".join(parts[start:]), pattern) for start in range(len(parts)))
