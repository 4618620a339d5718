"""Entry points: find scenario files, load and compile them, pick scenarios by keyword.

Under a folder, only the YAML files that look like suites are loaded (``looks_like_suite``),
so a repository's CI workflows or compose files do not break ``harness run .``; a file named
on the command line is always loaded, so a file that is not a suite says why.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from harness.errors import ConfigError
from harness.scenarios.compile import FileLoader
from harness.scenarios.file_model import SuiteSpec
from harness.scenarios.issues import ConfigIssue
from harness.scenarios.model import SCENARIO_SUFFIXES, Scenario, Suite

# Decided on the text, without parsing, so a suite broken past parsing is still found (and
# its error reported) while a YAML file of another tool is never read as YAML by us.
_TOP_KEY = re.compile(r"""^["']?([A-Za-z_][\w.-]*)["']?[ \t]*:(?=[ \t]|\r?$)""", re.MULTILINE)
_AGENT_KEY = re.compile(
    r"""(?:^[ \t]*(?:-[ \t]+)*|[{,][ \t]*)["']?agent["']?[ \t]*:(?=[ \t]|\r?$)""", re.MULTILINE
)
_OUR_KEYS = tuple(SuiteSpec.model_fields)


@dataclass(frozen=True, slots=True)
class FoundFiles:
    """What a search of the given paths found: suites to load, YAML files passed over, issues."""

    files: tuple[Path, ...]
    skipped: tuple[Path, ...]
    issues: tuple[ConfigIssue, ...]


def looks_like_suite(path: Path) -> bool:
    """A ``*.yaml``/``*.yml`` file with a top-level ``scenarios:`` key that reads as ours.

    Ours: besides ``scenarios`` (or a near-miss such as ``scenarioz``), it names an ``agent``
    somewhere or uses only our top-level keys. Artillery or promptfoo files, which also have
    ``scenarios:``, do neither. An unreadable file counts as a suite, so its error is shown.
    """
    if path.suffix not in SCENARIO_SUFFIXES:
        return False
    try:
        text = path.read_bytes().decode("utf-8", errors="replace").lstrip("\ufeff")
    except OSError:
        return True
    keys = set(_TOP_KEY.findall(text))
    if not any(_near(key, ("scenarios",)) for key in keys):
        return False
    return _AGENT_KEY.search(text) is not None or all(_near(key, _OUR_KEYS) for key in keys)


def _near(key: str, names: tuple[str, ...]) -> bool:
    return key in names or bool(difflib.get_close_matches(key.lower(), names, n=1, cutoff=0.8))


def scenario_files(paths: Iterable[str | os.PathLike[str]]) -> FoundFiles:
    """Every suite under ``paths`` (folders searched recursively), sorted; named files as is."""
    files: list[Path] = []
    skipped: list[Path] = []
    issues: list[ConfigIssue] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yaml_files = sorted(
                p for p in path.rglob("*") if p.suffix in SCENARIO_SUFFIXES and p.is_file()
            )
            found = [p for p in yaml_files if looks_like_suite(p)]
            suites = set(found)
            if not found:
                passed_over = len(yaml_files)
                why = (
                    f" ({passed_over} YAML file{'s' if passed_over != 1 else ''} without a "
                    "top-level 'scenarios:' key passed over)"
                    if passed_over
                    else ""
                )
                issues.append(ConfigIssue(str(raw), None, "", f"no scenario suites here{why}"))
            files.extend(found)
            skipped.extend(p for p in yaml_files if p not in suites)
        elif path.is_file():
            files.append(path)
        else:
            issues.append(ConfigIssue(str(raw), None, "", "no such file or directory"))
    unique = tuple(dict.fromkeys(files))
    named = set(unique)
    passed = tuple(p for p in dict.fromkeys(skipped) if p not in named)
    return FoundFiles(unique, passed, tuple(issues))


def display_path(path: Path) -> str:
    """The path relative to the current directory when it sits below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def load_file(path: str | os.PathLike[str]) -> Suite:
    """Load and compile one scenario file; raises ConfigError listing every problem in it."""
    return load_paths([path])[0]


def load_paths(
    paths: Iterable[str | os.PathLike[str]],
    *,
    on_skip: Callable[[Path], None] | None = None,
    runnable: bool = True,
) -> list[Suite]:
    """Load every suite under ``paths``; one ConfigError lists every problem found.

    ``on_skip`` hears of each YAML file under a folder that is not a suite (``-v`` lists them).
    ``runnable=False``: the suites only score traces (``eval-traces``): their agent modules are
    not imported and no model is built, so neither needs to be installed.
    """
    found = scenario_files(paths)
    if on_skip is not None:
        for path in found.skipped:
            on_skip(path)
    issues = list(found.issues)
    suites: list[Suite] = []
    for file in found.files:
        loader = FileLoader(file, display_path(file), runnable=runnable)
        suite = loader.load()
        issues.extend(loader.out.issues)
        if suite is not None:
            suites.append(suite)
    unique = list(dict.fromkeys(issues))
    if unique:
        raise ConfigError(unique)
    return suites


def iter_scenarios(suites: Iterable[Suite]) -> Iterator[Scenario]:
    """Every scenario of every suite, in file order."""
    for suite in suites:
        yield from suite.scenarios


def select(scenarios: Iterable[Scenario], keyword: str | None) -> list[Scenario]:
    """Scenarios a pytest-style ``-k`` expression selects (harness.run.filtering); all if None.

    A plain word keeps its old meaning: a substring (any case) of ``suite::name``.
    """
    if not keyword:
        return list(scenarios)
    from harness.run.filtering import Selection  # it imports this package's model

    return Selection.build(keywords=[keyword]).apply(scenarios)
