"""The command line's trace inputs as sources: files, globs, ``-``, ``--logs``, ``--from``.

:func:`trace_inputs` is the one call ``harness eval-traces`` makes: it expands globs (quoted so
the shell left them), checks every file exists, and returns plain paths for files that need
nothing more (they can be cut into parts for worker processes), sources for the rest: standard
input, files joined to ``--logs``, the ``--from`` pull. Anything wrong is an :class:`InputError`
(a configuration error: nothing was read yet).
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone

from tracing.otlp.sources import FileSource, SpanSource

__all__ = ["InputError", "parse_when", "trace_inputs"]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_GLOB = re.compile(r"[*?[]")


class InputError(ValueError):
    """A trace input that cannot be used: the message says which and why."""


def parse_when(value: str, option: str, now: datetime | None = None) -> datetime:
    """``24h`` / ``30m`` / ``7d`` ago, or an ISO 8601 time (UTC unless it says otherwise)."""
    now = now or datetime.now(timezone.utc)
    match = _DURATION.match(value)
    if match:
        amount, unit = float(match.group(1)), match.group(2)
        return now - timedelta(**{_UNITS[unit]: amount})
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InputError(
            f"{option} {value!r}: expected a time ago (90s, 30m, 24h, 7d, 2w) or an ISO 8601 "
            "time (2025-06-01T12:00:00Z)"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _files(patterns: Sequence[str]) -> list[str]:
    """Each pattern as the files it names, in order; ``-`` stays (once)."""
    out: list[str] = []
    missing: list[str] = []
    for pattern in patterns:
        if pattern == "-":
            if "-" in out:
                raise InputError("'-' (standard input) is given twice")
            out.append(pattern)
        elif os.path.isfile(pattern):
            out.append(pattern)
        elif _GLOB.search(pattern):
            found = sorted(p for p in glob.glob(pattern, recursive=True) if os.path.isfile(p))
            if not found:
                raise InputError(f"no trace file matches {pattern!r}")
            out += found
        else:
            missing.append(pattern)
    if missing:
        raise InputError(f"no such trace file: {', '.join(missing)}")
    return out


def trace_inputs(
    files: Sequence[str],
    *,
    logs: Sequence[str] = (),
    pull: str | None = None,
    since: str | None = None,
    until: str | None = None,
) -> list[str | SpanSource]:
    """The inputs in the order given: a path for a plain file, a source for anything else.

    ``logs``: OTLP log files whose events join the spans of every input (:mod:`~tracing.otlp.
    logs`). ``pull``: a ``phoenix://HOST:PORT/PROJECT`` to pull spans from (last), between
    ``since`` and ``until`` (a time ago or an ISO time). Raises InputError.
    """
    if (since or until) and not pull:
        raise InputError("--since and --until choose what --from pulls: give --from too")
    if not files and not pull:
        raise InputError("no traces to read: give trace files (or - for standard input) or --from")
    paths = _files(files)
    missing_logs = [path for path in logs if not os.path.isfile(path)]
    if missing_logs:
        raise InputError(f"no such log file: {', '.join(missing_logs)}")
    inputs: list[str | SpanSource] = [FileSource(path) if path == "-" else path for path in paths]
    if pull:
        inputs.append(_pull(pull, since, until))
    if logs:
        from tracing.otlp.logs import JoinedSource, LogEvents

        events = LogEvents(logs)
        inputs = [
            JoinedSource(item if isinstance(item, SpanSource) else FileSource(item), events)
            for item in inputs
        ]
    return inputs


def _pull(url: str, since: str | None, until: str | None) -> SpanSource:
    from tracing.otlp.phoenix import PhoenixSource

    now = datetime.now(timezone.utc)
    start = parse_when(since, "--since", now) if since else None
    end = parse_when(until, "--until", now) if until else None
    if start and end and start >= end:
        shown = "%Y-%m-%d %H:%M:%S"
        raise InputError(f"--since ({start:{shown}}) is not before --until ({end:{shown}})")
    try:
        source = PhoenixSource(url, since=start, until=end)
    except ValueError as exc:
        raise InputError(f"--from: {exc}") from None
    try:
        import phoenix.client  # noqa: F401 (an optional extra: say so before reading anything)
    except ImportError:
        raise InputError(
            "--from phoenix:// needs the Phoenix client: pip install 'toolcall-harness[phoenix]'"
        ) from None
    return source
