"""Selector: which traces a policy applies to, from what the reader found in each trace.

Every key given must hold (``service`` and ``agent`` and ...); a selector without keys takes
every trace. Names are globs (``fnmatchcase``: ``*``, ``?``, ``[abc]``; a plain name matches
itself only); ``attributes`` values are the argument patterns of :mod:`harness.values` (a
literal, or a ``$`` matcher such as ``{$regex: ^prod}`` or ``{$absent: true}``), looked up on
the root span first, then on the resource.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.values import ABSENT, match_value

if TYPE_CHECKING:
    from tracing.otel.trace_run import TraceRun

__all__ = ["Selector"]


DECIDED_LIMIT = 4096
"""Keys whose verdict a :class:`Selector` keeps; past it, a new key is matched each time (a
bound on memory, not on correctness)."""


@functools.lru_cache(maxsize=1024)
def _glob(pattern: str) -> re.Pattern[str]:
    return re.compile(fnmatch.translate(pattern))


def glob_match(pattern: str, value: str | None) -> bool:
    """Does ``value`` match the glob ``pattern`` (case-sensitive; None never matches)?"""
    if value is None:
        return False
    return _glob(pattern).match(value) is not None


@dataclass(frozen=True, slots=True)
class Selector:
    """What a trace must show for a policy to apply; every field given must hold."""

    service: str | None = None
    """A glob on the resource's ``service.name``."""
    agent: str | None = None
    """A glob on the agent name the reader found (``TraceRun.agent``)."""
    root: str | None = None
    """A glob on the root span's name."""
    attributes: tuple[tuple[str, Any], ...] = ()
    """(key, compiled pattern) pairs, on the root span's attributes, else the resource's."""
    uses_tool: tuple[str, ...] = ()
    """Globs: the trace calls a tool matching one of them."""
    _decided: dict[tuple[Any, ...], bool] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    """Without ``attributes``, the verdict per (service, agent, root name, tool names):
    production traces repeat a few such keys, so each is matched once."""

    @property
    def every_trace(self) -> bool:
        """No key given: the selector takes every trace."""
        return not (self.service or self.agent or self.root or self.attributes or self.uses_tool)

    def selects(self, run: TraceRun) -> bool:
        """Does ``run`` show everything this selector asks for?"""
        if self.attributes:  # values of any kind and size: matched for each trace
            return self._selects(run)
        key = (run.service, run.agent, run.root_name, run.tool_names if self.uses_tool else None)
        found = self._decided.get(key)
        if found is None:
            found = self._selects(run)
            if len(self._decided) < DECIDED_LIMIT:
                self._decided[key] = found
        return found

    def _selects(self, run: TraceRun) -> bool:
        if self.service is not None and not glob_match(self.service, run.service):
            return False
        if self.agent is not None and not glob_match(self.agent, run.agent):
            return False
        if self.root is not None and not glob_match(self.root, run.root_name):
            return False
        for key, pattern in self.attributes:
            if not match_value(pattern, _attribute(run, key)):
                return False
        if self.uses_tool:
            names = run.tool_names
            return any(glob_match(glob, name) for glob in self.uses_tool for name in names)
        return True

    def describe(self) -> str:
        """The selector as one line, for reports: ``service=shop-* uses_tool=refund_*``."""
        parts = [
            f"{key}={value}"
            for key, value in (
                ("service", self.service),
                ("agent", self.agent),
                ("root", self.root),
            )
            if value is not None
        ]
        parts.extend(f"attributes.{key}" for key, _ in self.attributes)
        if self.uses_tool:
            parts.append("uses_tool=" + ",".join(self.uses_tool))
        return " ".join(parts) or "every trace"


def _attribute(run: TraceRun, key: str) -> Any:
    for source in (run.root_attributes, run.resource):
        if isinstance(source, Mapping) and key in source:
            return source[key]
    return ABSENT
