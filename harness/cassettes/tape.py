"""Tape: one scenario's cassette while a run uses it — thread-safe lookups and appends.

Replay hands out the recordings of a key in turn (``repeat: N`` recorded N samples; run k
gets sample k, wrapping around), and remembers which were used so the unused ones can be
reported. Recording appends each answered turn in the order it finished.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.cassettes.diff import explain_miss
from harness.cassettes.format import Cassette, Recording, Response, read_cassette
from harness.cassettes.request_key import Identity, Request, tool_hash
from harness.errors import CassetteMiss

__all__ = ["Tape", "TapeInfo"]


@dataclass(frozen=True, slots=True)
class TapeInfo:
    """Which cassette a tape is: its file, the scenario it belongs to, how to re-record it."""

    path: Path
    scenario: str
    agent: str | None = None
    rerecord: str = "re-record it with --record"
    """What to run to re-record this scenario (named in every miss)."""


class Tape:
    """Recordings of one cassette: those loaded (to replay) and those made now (to write)."""

    def __init__(self, info: TapeInfo, loaded: Cassette | None = None) -> None:
        """Start from a loaded cassette (replay, --record=missing) or from nothing (--record)."""
        self.info = info
        self.loaded = loaded
        self._lock = threading.Lock()
        self._by_key: dict[str, list[int]] = {}
        self._cursor: dict[str, int] = {}
        self._used: set[int] = set()
        self._schemas: dict[str, Mapping[str, Any]] = dict(loaded.tools) if loaded else {}
        self._new: list[Recording] = []
        self.missed = False
        """Did a request miss? Its error already says why the recordings went unused."""
        for index, recording in enumerate(loaded.recordings if loaded else ()):
            self._by_key.setdefault(recording.key, []).append(index)

    @classmethod
    def open(cls, info: TapeInfo) -> Tape:
        """The tape of ``info.path``: loaded when the file exists, empty otherwise."""
        return cls(info, read_cassette(info.path) if info.path.exists() else None)

    def lookup(self, key: str) -> Response | None:
        """The next recorded answer to this key (None: not recorded)."""
        if self.loaded is None:
            return None
        with self._lock:
            indexes = self._by_key.get(key)
            if not indexes:
                return None
            cursor = self._cursor.get(key, 0)
            self._cursor[key] = cursor + 1
            index = indexes[cursor % len(indexes)]
            self._used.add(index)
            return self.loaded.recordings[index].response

    def record(self, request: Request, key: str, response: Response) -> None:
        """Append one answered turn."""
        hashes = tuple(tool_hash(schema) for schema in request.tools)
        recording = Recording(
            key=key,
            identity=request.identity,
            tools=hashes,
            params=dict(request.params),
            messages=request.messages,
            response=response,
        )
        with self._lock:
            for digest, schema in zip(hashes, request.tools, strict=True):
                self._schemas.setdefault(digest, schema)
            self._new.append(recording)

    def miss(self, request: Request) -> CassetteMiss:
        """The error for a request with no recording: turn, scenario, first difference, fix."""
        turn = request.turn
        self.missed = True
        if self.loaded is None:
            difference = "no cassette was recorded for this scenario"
        else:
            difference = explain_miss(request, self.loaded.recordings, self.loaded.tools)
        message = (
            f"no recording for turn {turn} of {self.info.scenario} in {self.info.path}: "
            f"{difference}; {self.info.rerecord}"
        )
        return CassetteMiss(
            message,
            path=str(self.info.path),
            scenario=self.info.scenario,
            turn=turn,
            difference=difference,
        )

    @property
    def recorded(self) -> int:
        """How many turns were recorded in this session."""
        with self._lock:
            return len(self._new)

    def unused(self) -> list[Recording]:
        """Loaded recordings that no request asked for (in file order)."""
        if self.loaded is None:
            return []
        with self._lock:
            return [r for i, r in enumerate(self.loaded.recordings) if i not in self._used]

    def cassette(self, *, keep_loaded: bool) -> Cassette:
        """What to write: the new recordings, after the loaded ones when ``keep_loaded``."""
        with self._lock:
            old = self.loaded.recordings if (keep_loaded and self.loaded) else ()
            recordings = (*old, *self._new)
            identity: Identity | None = recordings[0].identity if recordings else None
            return Cassette(
                scenario=self.info.scenario,
                identity=identity,
                agent=self.info.agent,
                tools=dict(self._schemas),
                recordings=recordings,
            )
