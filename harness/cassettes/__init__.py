"""Record a real model once, replay it offline: chat-model cassettes (README: Record and replay).

Modules, each importing only those above it: ``key`` (the normalised request and its sha256),
``format`` (the YAML file: pydantic at the edge, frozen dataclasses inside), ``diff`` (why a
replay missed), ``tape`` (one cassette in use: thread-safe lookups and appends), ``recorder``
and ``replayer`` (the chat models put in front of a scenario's model), ``store`` (the tapes of a
session, one mode), ``scenarios`` (which file a scenario uses; wrapping a suite's models).

The narrow entry point is :func:`wrap_model`; ``harness run`` uses :func:`wrap_scenarios`.
"""

from __future__ import annotations

from pathlib import Path

from langchain_core.language_models import BaseChatModel

from harness.cassettes.format import (
    FORMAT_VERSION,
    Cassette,
    Recording,
    Response,
    dump_cassette,
    load_cassette,
    read_cassette,
    write_cassette,
)
from harness.cassettes.key import Identity, Request, canonical_json, identity_of, normalise_messages
from harness.cassettes.recorder import RecordingChatModel
from harness.cassettes.replayer import ReplayChatModel
from harness.cassettes.scenarios import scenario_cassette, stale_cassettes, wrap_scenarios
from harness.cassettes.store import DEFAULT_DIR, MODES, CassetteStore, Mode, cassette_path, slug
from harness.cassettes.tape import Tape, TapeInfo

__all__ = [
    "DEFAULT_DIR",
    "FORMAT_VERSION",
    "MODES",
    "Cassette",
    "CassetteStore",
    "Identity",
    "Mode",
    "Recording",
    "RecordingChatModel",
    "ReplayChatModel",
    "Request",
    "Response",
    "Tape",
    "TapeInfo",
    "canonical_json",
    "cassette_path",
    "dump_cassette",
    "identity_of",
    "load_cassette",
    "normalise_messages",
    "read_cassette",
    "scenario_cassette",
    "slug",
    "stale_cassettes",
    "wrap_model",
    "wrap_scenarios",
    "write_cassette",
]


def wrap_model(
    model: BaseChatModel,
    store: CassetteStore,
    path: Path,
    scenario_id: str,
    *,
    rerecord: str = "re-record it with --record",
) -> BaseChatModel:
    """``model`` recording to / replaying from the cassette at ``path`` (the store's mode)."""
    return store.wrap(model, TapeInfo(path=path, scenario=scenario_id, rerecord=rerecord))
