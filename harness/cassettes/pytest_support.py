"""Record and replay under pytest: the options, the mode an item runs in, each test's cassette.

``--harness-record`` / ``--harness-replay`` or the ini option ``harness_cassettes =
record|missing|replay|auto|off`` (default ``auto``) choose the mode; ``--harness-cassette-dir``
or ``harness_cassette_dir`` (default ``cassettes``, relative to the rootdir) the folder. ``auto``
replays when the ``CI`` variable is set and the item's cassette exists, and runs live
otherwise — as pytest-recording keeps CI off the network. A scenario item uses the same file
as ``harness run`` (``<dir>/<suite>/<scenario>.yaml``); ``harness_model(...)`` in a test uses
that test's own file (``<dir>/<test file>/<test name>.yaml``), so ``pytest -n auto`` never
has two processes writing one file.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.cassettes.paths import MODES, Mode, slug

__all__ = [
    "CassetteWarning",
    "PytestCassettes",
    "add_options",
    "from_config",
    "test_cassette",
    "warn_all",
]

RECORD_FLAG = "--harness-record"
REPLAY_FLAG = "--harness-replay"
DIR_FLAG = "--harness-cassette-dir"
MODE_INI = "harness_cassettes"
DIR_INI = "harness_cassette_dir"
_SETTINGS = (*MODES, "auto", "off")


class CassetteWarning(UserWarning):
    """Recordings that nothing used, or cassettes no scenario records to."""


def add_options(group: Any, parser: Any) -> None:
    """The record/replay flags and ini options on the plugin's option group."""
    # plain flags: an optional value would swallow the test path that follows it
    group.addoption(
        RECORD_FLAG,
        action="store_true",
        default=False,
        help="run real models and (re)write the cassettes (ini harness_cassettes = missing: "
        "record only what the cassettes lack)",
    )
    group.addoption(
        REPLAY_FLAG,
        action="store_true",
        default=False,
        help="answer every model turn from the cassettes: no provider, key or network",
    )
    group.addoption(
        DIR_FLAG,
        default=None,
        metavar="DIR",
        help="cassette folder (default: the harness_cassette_dir ini option, else cassettes/)",
    )
    parser.addini(
        MODE_INI,
        default="auto",
        help="record | missing | replay | off | auto (default: replay under CI when the "
        "cassette exists, else live)",
    )
    parser.addini(DIR_INI, default="cassettes", help="cassette folder, relative to the rootdir")


def _on_ci() -> bool:
    value = os.environ.get("CI", "").strip().lower()
    return value not in ("", "0", "false", "no")


@dataclass(frozen=True, slots=True)
class PytestCassettes:
    """The session's setting (a mode, ``auto`` or ``off``) and the cassette folder."""

    setting: str
    directory: Path
    explicit_dir: bool = False
    """A folder was given on the command line: it wins over a suite's ``cassettes:`` key."""

    def mode_for(self, cassette: Path) -> Mode | None:
        """The mode for one cassette file (None: run live, no cassette)."""
        if self.setting == "off":
            return None
        if self.setting == "auto":
            return "replay" if _on_ci() and cassette.exists() else None
        return self.setting  # type: ignore[return-value]  # one of MODES, checked in from_config


def from_config(config: Any) -> PytestCassettes:
    """The setting from the flags (first) or the ini options; a bad value is a usage error."""
    root = Path(str(config.rootpath))
    given_dir = config.getoption(DIR_FLAG, default=None)
    directory = Path(given_dir) if given_dir else root / str(config.getini(DIR_INI) or "cassettes")
    record = config.getoption(RECORD_FLAG, default=False)
    replay = config.getoption(REPLAY_FLAG, default=False)
    if record and replay:
        raise ValueError(f"{RECORD_FLAG} and {REPLAY_FLAG} exclude each other")
    setting = str(config.getini(MODE_INI) or "auto").strip().lower()
    if setting not in _SETTINGS:
        raise ValueError(f"{MODE_INI} must be one of {', '.join(_SETTINGS)}, got {setting!r}")
    if replay:
        setting = "replay"
    elif record:
        setting = "missing" if setting == "missing" else "record"
    return PytestCassettes(setting, directory, explicit_dir=bool(given_dir))


def test_cassette(directory: Path, nodeid: str) -> Path:
    """A test's own cassette: ``<dir>/<test file without .py>/<test name>.yaml``."""
    file, _, name = nodeid.partition("::")
    stem = Path(file).with_suffix("")
    return directory.joinpath(*[slug(part) for part in stem.parts]) / f"{slug(name)}.yaml"


def warn_all(lines: Sequence[str]) -> None:
    """Each line as a CassetteWarning (pytest lists them in its warnings summary)."""
    for line in lines:
        warnings.warn(CassetteWarning(line), stacklevel=2)
