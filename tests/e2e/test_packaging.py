"""What the package declares about itself: version, license, package data, dependency groups."""

from __future__ import annotations

import importlib.metadata
import re

import pytest

import harness
from harness.cli import main
from tests.support.paths import ROOT


def _pyproject() -> dict[str, object]:
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    data: dict[str, object] = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    return data


def test_version_comes_from_the_package_metadata() -> None:
    assert harness.__version__ == importlib.metadata.version("toolcall-harness")
    assert re.match(r"^\d+\.\d+", harness.__version__)


def test_harness_version_prints_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"harness {harness.__version__}\n"


def test_package_data_globs_match_real_files() -> None:
    package_data = _pyproject()["tool"]["setuptools"]["package-data"]  # type: ignore[index]
    empty = [
        f"{package}/{pattern}"
        for package, patterns in package_data.items()
        for pattern in patterns
        if not [p for p in (ROOT / package).glob(pattern) if p.is_file()]
    ]
    assert empty == []


def test_license_is_apache_2_and_shipped() -> None:
    project = _pyproject()["project"]
    assert project["license"] == "Apache-2.0"  # type: ignore[index]
    assert project["license-files"] == ["LICENSE"]  # type: ignore[index]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text


def test_tooling_is_in_dependency_groups_not_extras() -> None:
    data = _pyproject()
    extras = data["project"]["optional-dependencies"]  # type: ignore[index]
    groups = data["dependency-groups"]
    assert {"dev", "bench"} <= set(groups)  # type: ignore[arg-type]
    # pytest is advertised only as what the plugin runs in (the `pytest` extra)
    advertised = " ".join(r for name, extra in extras.items() if name != "pytest" for r in extra)
    for tool in ("pytest", "ragas", "playwright", "mypy", "ruff", "scipy"):
        assert tool not in advertised


def test_the_pytest_extra_is_pytest_at_the_floor_the_checks_prove() -> None:
    """The quick start's `[pytest]` extra: the plugin's pytest, floor from the dev group (which
    `make test-lowest` installs at its floor)."""
    data = _pyproject()
    extra = data["project"]["optional-dependencies"]["pytest"]  # type: ignore[index]
    dev = data["dependency-groups"]["dev"]  # type: ignore[index]
    assert extra == [r for r in dev if re.match(r"pytest\b(?!-)", r)]


def test_the_sdist_ships_no_tests() -> None:
    manifest = (ROOT / "MANIFEST.in").read_text(encoding="utf-8").splitlines()
    assert {"prune tests", "prune benchmarks", "prune scenarios"} <= set(manifest)
