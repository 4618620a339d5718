"""Record a real model once, replay it offline: chat-model cassettes (docs/record-replay.md).

Modules, each importing only those above it: ``paths`` (modes, file names; standard library
only), ``request_key`` (the normalised request and its sha256), ``format`` (the YAML file:
pydantic at the edge, frozen dataclasses inside), ``diff`` (why a replay missed), ``tape`` (one
cassette in use: thread-safe lookups and appends), ``recorder`` and ``replayer`` (the chat models
put in front of a scenario's model), ``store`` (the tapes of a session, one mode), ``scenarios``
(which file a scenario uses; wrapping a suite's models), ``session`` (``harness run``'s flags)
and ``pytest_support`` (the plugin's options).

The narrow entry point is :func:`wrap_model`; ``harness run`` uses :func:`wrap_scenarios`.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from harness.cassettes.paths import DEFAULT_DIR, MODES, Mode, cassette_path, slug
    from harness.cassettes.recorder import RecordingChatModel
    from harness.cassettes.replayer import ReplayChatModel
    from harness.cassettes.request_key import (
        Identity,
        Request,
        canonical_json,
        identity_of,
        normalise_messages,
    )
    from harness.cassettes.scenarios import scenario_cassette, stale_cassettes, wrap_scenarios
    from harness.cassettes.store import CassetteStore
    from harness.cassettes.tape import Tape, TapeInfo

# Where each public name lives. Imported on first use (PEP 562), so the pytest plugin can read
# harness.cassettes.pytest_support at startup without importing LangChain.
_HOMES = {
    "FORMAT_VERSION": "format",
    "Cassette": "format",
    "Recording": "format",
    "Response": "format",
    "dump_cassette": "format",
    "load_cassette": "format",
    "read_cassette": "format",
    "write_cassette": "format",
    "Identity": "request_key",
    "Request": "request_key",
    "canonical_json": "request_key",
    "identity_of": "request_key",
    "normalise_messages": "request_key",
    "DEFAULT_DIR": "paths",
    "MODES": "paths",
    "Mode": "paths",
    "cassette_path": "paths",
    "slug": "paths",
    "RecordingChatModel": "recorder",
    "ReplayChatModel": "replayer",
    "scenario_cassette": "scenarios",
    "stale_cassettes": "scenarios",
    "wrap_scenarios": "scenarios",
    "CassetteStore": "store",
    "Tape": "tape",
    "TapeInfo": "tape",
}

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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'harness.cassettes' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"harness.cassettes.{home}"), name)
    globals()[name] = value
    return value


def wrap_model(
    model: BaseChatModel,
    store: CassetteStore,
    path: Path,
    scenario_id: str,
    *,
    rerecord: str = "re-record it with --record",
) -> BaseChatModel:
    """``model`` recording to / replaying from the cassette at ``path`` (the store's mode)."""
    from harness.cassettes.tape import TapeInfo

    return store.wrap(model, TapeInfo(path=path, scenario=scenario_id, rerecord=rerecord))
