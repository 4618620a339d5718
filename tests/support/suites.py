"""Suite files over the fixture agent, written the way a user writes them (shared by the tests)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.support.paths import AGENT_FILE


def fixture_suite(
    folder: Path,
    scenarios: str,
    *,
    file: str = "suite.yaml",
    suite: str | None = None,
    header: str = "",
) -> Path:
    """Write ``scenarios`` (YAML list items, any indent) as a suite over the fixture agent."""
    path = folder / file
    name = f"suite: {suite}\n" if suite else ""
    path.write_text(
        f"{name}{header}agent: {AGENT_FILE}:build\nmodel: {{provider: scripted}}\nscenarios:\n"
        + textwrap.indent(textwrap.dedent(scenarios).lstrip("\n"), "  "),
        encoding="utf-8",
    )
    return path
