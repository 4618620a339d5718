"""Cassettes for scenario suites: which file each scenario records to, and wrapping its model.

A scenario's cassette is ``<dir>/<suite>/<scenario>.yaml``; ``<dir>`` is the folder given to
``--record`` / ``--replay`` when one is given, else the suite's ``cassettes:`` key (relative to
the suite file), else ``cassettes/``.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from harness.cassettes.paths import DEFAULT_DIR, cassette_path, slug
from harness.cassettes.store import CassetteStore
from harness.cassettes.tape import TapeInfo
from harness.scenarios.model import Scenario

__all__ = ["scenario_cassette", "stale_cassettes", "wrap_scenarios"]


def _root(scenario: Scenario, directory: Path | None) -> Path:
    if directory is not None:
        return directory
    own = scenario.cassettes  # the suite's `cassettes:` folder, when set
    return Path(own) if own else DEFAULT_DIR


def scenario_cassette(scenario: Scenario, directory: Path | None = None) -> Path:
    """The cassette file of one scenario."""
    return cassette_path(_root(scenario, directory), scenario.suite, scenario.name)


def _rerecord(scenario: Scenario, directory: Path | None) -> str:
    where = f" {shlex.quote(str(directory))}" if directory is not None else ""
    # `file.yaml::name` selects exactly this scenario (harness.run.filtering)
    target = shlex.quote(f"{scenario.file}::{scenario.name}")
    return f"re-record with `harness run {target} --record{where}`"


def wrap_scenarios(
    scenarios: Sequence[Scenario], store: CassetteStore, directory: Path | None = None
) -> list[Scenario]:
    """Copies of the scenarios whose models record to / replay from their cassettes."""
    wrapped: list[Scenario] = []
    for scenario in scenarios:
        if scenario.model is None:
            wrapped.append(scenario)
            continue
        info = TapeInfo(
            path=scenario_cassette(scenario, directory),
            scenario=scenario.id,
            agent=scenario.agent.spec,
            rerecord=_rerecord(scenario, directory),
        )
        wrapped.append(replace(scenario, model=store.wrap(scenario.model, info)))
    return wrapped


def stale_cassettes(scenarios: Iterable[Scenario], directory: Path | None = None) -> list[str]:
    """Warnings for cassette files in the loaded suites' folders that no loaded scenario owns."""
    owned: set[Path] = set()
    folders: set[Path] = set()
    for scenario in scenarios:
        path = scenario_cassette(scenario, directory).resolve()
        owned.add(path)
        folders.add(path.parent)
    warnings = []
    for folder in sorted(folders):
        for path in sorted(folder.glob("*.yaml")):
            if path.resolve() not in owned:
                warnings.append(
                    f"{path}: a cassette no loaded scenario records to (renamed or removed "
                    "scenario?); delete it if it is not needed"
                )
    return warnings


__all__ += ["slug"]
