"""CassetteStore: the tapes of one session (a ``harness run`` or a pytest session).

``wrap`` puts a recorder or a replayer in front of a scenario's model and gives each cassette
file one tape; ``finish`` writes what was recorded and returns the warnings (recordings no
request used). The mode decides which wrapper, once, here: ``record`` rewrites a scenario's
file with what the real model answers, ``missing`` replays what is there and records only what
is not, ``replay`` never asks the model (a miss is the scenario's error).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path

from langchain_core.language_models import BaseChatModel

from harness.cassettes.format import write_cassette
from harness.cassettes.paths import DEFAULT_DIR, MODES, Mode, cassette_path, slug
from harness.cassettes.recorder import RecordingChatModel
from harness.cassettes.replayer import ReplayChatModel
from harness.cassettes.tape import Tape, TapeInfo
from harness.errors import CassetteError
from harness.text import plural

__all__ = ["DEFAULT_DIR", "MODES", "CassetteStore", "Mode", "cassette_path", "slug"]


class CassetteStore:
    """Wraps models for one mode and keeps one tape per cassette file until ``finish``."""

    def __init__(self, mode: Mode) -> None:
        """Nothing is read until a model is wrapped."""
        if mode not in MODES:
            raise CassetteError(f"cassette mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.mode: Mode = mode
        self._tapes: dict[Path, Tape] = {}
        self._lock = threading.Lock()

    def _tape(self, info: TapeInfo) -> Tape:
        path = info.path.resolve()
        with self._lock:
            tape = self._tapes.get(path)
            if tape is not None:
                if tape.info.scenario != info.scenario:
                    raise CassetteError(
                        f"{info.path}: {tape.info.scenario!r} and {info.scenario!r} would share "
                        "this cassette; rename one of them",
                        path=str(info.path),
                    )
                return tape
            tape = Tape(info) if self.mode == "record" else Tape.open(info)
            self._tapes[path] = tape
            return tape

    def wrap(self, model: BaseChatModel, info: TapeInfo) -> BaseChatModel:
        """``model`` behind this store's recorder or replayer, on the tape of ``info.path``."""
        tape = self._tape(info)
        if self.mode == "record":
            return RecordingChatModel(inner=model, tape=tape)
        fallback = RecordingChatModel(inner=model, tape=tape) if self.mode == "missing" else None
        return ReplayChatModel(inner=model, tape=tape, fallback=fallback)

    @property
    def tapes(self) -> Mapping[Path, Tape]:
        """The tapes opened so far, by resolved path."""
        with self._lock:
            return dict(self._tapes)

    def finish(self) -> list[str]:
        """Write what was recorded; the warnings: recorded turns that nothing asked for."""
        warnings: list[str] = []
        for tape in self.tapes.values():
            if self.mode in ("record", "missing") and tape.recorded:
                write_cassette(tape.cassette(keep_loaded=self.mode == "missing"), tape.info.path)
            if self.mode == "record" or tape.missed:
                continue
            unused = tape.unused()
            if unused:
                shown = ", ".join(f"key {r.key[:12]}" for r in unused[:3])
                more = f" (+{len(unused) - 3} more)" if len(unused) > 3 else ""
                warnings.append(
                    f"{tape.info.path}: {plural(len(unused), 'recorded turn')} of "
                    f"{tape.info.scenario} not used ({shown}{more}); re-record to drop them"
                )
        return warnings
