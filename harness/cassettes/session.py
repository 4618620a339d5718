"""Cassettes for one ``harness run``: the ``--record`` / ``--replay`` flags and their session.

The CLI calls :func:`add_arguments` on its ``run`` parser, :func:`from_args` after parsing,
:meth:`RunCassettes.wrap` on the selected scenarios before the run and
:meth:`RunCassettes.finish` on the result after it (cassettes written, warnings added to the
result so every report lists them).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from harness.cassettes.paths import Mode

# The run parser adds these flags to every `harness` command line: the store and the scenarios
# (LangChain's chat models behind them) are imported when a session starts.
if TYPE_CHECKING:
    from harness.cassettes.store import CassetteStore
    from harness.run.results import SuiteResult
    from harness.scenarios.model import Scenario

__all__ = ["MISSING", "RunCassettes", "add_arguments", "from_args"]

MISSING = "missing"
"""``--record=missing``: replay what is recorded, record only what is not."""

_DEFAULT = "\0default"  # argparse const: the flag given without a folder


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--record [DIR|missing]`` and ``--replay [DIR]`` (mutually exclusive)."""
    group = parser.add_argument_group(
        "record and replay (cassettes/<suite>/<scenario>.yaml; a suite's `cassettes:` key "
        "moves its folder)"
    )
    flags = group.add_mutually_exclusive_group()
    flags.add_argument(
        "--record",
        nargs="?",
        const=_DEFAULT,
        metavar="DIR",
        help="run the real model and (re)write each scenario's cassette (default DIR "
        "cassettes/); --record=missing keeps the recordings and records only what they lack",
    )
    flags.add_argument(
        "--replay",
        nargs="?",
        const=_DEFAULT,
        metavar="DIR",
        help="answer every model turn from the cassettes: no provider, key or network; "
        "a turn that was not recorded is the scenario's error",
    )


@dataclass
class RunCassettes:
    """The store of one run, its folder, and the warnings found before the run."""

    mode: Mode
    directory: Path | None = None
    store: CassetteStore = field(init=False)
    warnings: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        from harness.cassettes.store import CassetteStore

        self.store = CassetteStore(self.mode)

    def wrap(self, selected: Sequence[Scenario], loaded: Iterable[Scenario]) -> list[Scenario]:
        """The selected scenarios behind recorders or replayers; stale files noted (replay)."""
        from harness.cassettes.scenarios import stale_cassettes, wrap_scenarios

        if self.mode != "record":
            self.warnings.extend(stale_cassettes(loaded, self.directory))
        return wrap_scenarios(selected, self.store, self.directory)

    def finish(self, result: SuiteResult) -> SuiteResult:
        """Write the recordings; the result with the cassette warnings added."""
        self.warnings.extend(self.store.finish())
        if not self.warnings:
            return result
        return replace(result, warnings=(*result.warnings, *self.warnings))


def from_args(args: argparse.Namespace) -> RunCassettes | None:
    """The session the flags ask for (None: neither flag given)."""
    record = getattr(args, "record", None)
    replay = getattr(args, "replay", None)
    if record is None and replay is None:
        return None
    if replay is not None:
        return RunCassettes("replay", None if replay == _DEFAULT else Path(str(replay)))
    if record == MISSING:
        return RunCassettes("missing")
    return RunCassettes("record", None if record == _DEFAULT else Path(str(record)))
