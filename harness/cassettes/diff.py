"""Why a replayed turn has no recording: the first difference from the nearest recorded turn.

The nearest recording is the one at the same turn of its conversation whose messages share the
longest prefix with the request (ties: the earliest). Differences are looked for in the order a
reviewer would want them: the model, the bound tools, the call options, then the messages —
``bound tools changed: get_weather (description)``, ``message [0] (system) differs at
character 186: recorded '...', now '...'``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.cassettes.format import Recording, common_prefix
from harness.cassettes.request_key import Request, canonical_json, tool_hash
from harness.text import shorten

__all__ = ["explain_miss", "nearest"]

_CONTEXT = 30


def nearest(request: Request, recordings: Sequence[Recording]) -> Recording | None:
    """The recording most like ``request`` (same turn first, then longest shared prefix)."""
    if not recordings:
        return None
    turn = request.turn

    def closeness(recording: Recording) -> tuple[int, int]:
        same_turn = int(_turn(recording) == turn)
        return same_turn, common_prefix(recording.messages, request.messages)

    best = recordings[0]
    best_score = closeness(best)
    for recording in recordings[1:]:
        score = closeness(recording)
        if score > best_score:
            best, best_score = recording, score
    return best


def _turn(recording: Recording) -> int:
    return 1 + sum(1 for m in recording.messages if m.get("role") == "assistant")


def _name(schema: Mapping[str, Any]) -> str:
    function = schema.get("function", schema)
    return str(function.get("name", "?")) if isinstance(function, Mapping) else "?"


def _tool_change(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """Which part of one tool's schema changed: description, parameters, or the rest."""
    a, b = old.get("function", old), new.get("function", new)
    parts = [
        part
        for part in ("description", "parameters")
        if isinstance(a, Mapping) and isinstance(b, Mapping) and a.get(part) != b.get(part)
    ]
    return ", ".join(parts) or "schema"


def _tools_difference(
    recorded: Sequence[Mapping[str, Any]], now: Sequence[Mapping[str, Any]]
) -> str | None:
    if [tool_hash(s) for s in recorded] == [tool_hash(s) for s in now]:
        return None
    old = {_name(s): s for s in recorded}
    new = {_name(s): s for s in now}
    changed = [
        f"{name} ({_tool_change(old[name], new[name])})"
        for name in new
        if name in old and canonical_json(old[name]) != canonical_json(new[name])
    ]
    added = [name for name in new if name not in old]
    removed = [name for name in old if name not in new]
    parts = []
    if changed:
        parts.append("bound tools changed: " + ", ".join(changed))
    if added:
        parts.append("tools added: " + ", ".join(added))
    if removed:
        parts.append("tools removed: " + ", ".join(removed))
    return "; ".join(parts) or "bound tools reordered: " + ", ".join(new)


def _mapping_difference(what: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    if canonical_json(old) == canonical_json(new):
        return None
    keys = sorted(set(old) | set(new))
    changes = [
        f"{k} recorded {old.get(k)!r}, now {new.get(k)!r}"
        for k in keys
        if canonical_json(old.get(k)) != canonical_json(new.get(k))
    ]
    return f"{what} changed: " + "; ".join(changes)


def _around(text: str, at: int) -> str:
    start = max(0, at - _CONTEXT)
    head = "…" if start else ""
    return head + shorten(text[start:], 2 * _CONTEXT + 1)


def _text_difference(old: str, new: str) -> tuple[int, str]:
    at = common_prefix(old, new)
    return at, f"recorded {_around(old, at)!r}, now {_around(new, at)!r}"


def _message_difference(index: int, old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    role = new.get("role", "?")
    where = f"message [{index}] ({role})"
    if old.get("role") != role:
        return f"{where} was a {old.get('role')} message when recorded"
    if old.get("text") != new.get("text"):
        at, shown = _text_difference(str(old.get("text", "")), str(new.get("text", "")))
        return f"{where} differs at character {at}: {shown}"
    for field in ("tool_calls", "invalid_tool_calls", "status", "tool_call_id", "blocks"):
        if canonical_json(old.get(field)) != canonical_json(new.get(field)):
            return (
                f"{where} {field.replace('_', ' ')} differ: recorded "
                f"{shorten(canonical_json(old.get(field)), 80)}, "
                f"now {shorten(canonical_json(new.get(field)), 80)}"
            )
    return f"{where} differs"


def _messages_difference(
    recorded: Sequence[Mapping[str, Any]], now: Sequence[Mapping[str, Any]]
) -> str:
    shared = common_prefix(recorded, now)
    if shared < len(recorded) and shared < len(now):
        return _message_difference(shared, recorded[shared], now[shared])
    if len(now) > len(recorded):
        extra = now[shared]
        return (
            f"message [{shared}] ({extra.get('role', '?')}) is new: recorded {len(recorded)} "
            f"messages, now {len(now)}"
        )
    return f"recorded {len(recorded)} messages, now {len(now)}: message [{shared}] is gone"


def explain_miss(
    request: Request,
    recordings: Sequence[Recording],
    schemas: Mapping[str, Mapping[str, Any]],
) -> str:
    """The first difference between ``request`` and the nearest recording, in one line."""
    closest = nearest(request, recordings)
    if closest is None:
        return "the cassette has no recorded turns"
    if closest.identity != request.identity:
        return (
            f"model changed: recorded {closest.identity.label} "
            f"{dict(closest.identity.params) or ''}".rstrip()
            + f", now {request.identity.label} {dict(request.identity.params) or ''}".rstrip()
        )
    recorded_tools = [schemas.get(h, {}) for h in closest.tools]
    tools = _tools_difference(recorded_tools, request.tools)
    if tools is not None:
        return tools
    params = _mapping_difference("call options", closest.params, request.params)
    if params is not None:
        return params
    if list(closest.messages) != list(request.messages):
        return _messages_difference(closest.messages, request.messages)
    return "the recording of this request was used up"
