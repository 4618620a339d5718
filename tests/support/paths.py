"""Paths the tests share, so a test file can move without its fixtures moving with it."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository."""

FIXTURES = ROOT / "tests" / "fixtures"
"""Suites, bad files and the fixture agent the tests load."""

AGENT_FILE = FIXTURES / "fixture_agent.py"
"""The fixture agent: a LangGraph tool loop over the scripted model."""

SCENARIOS = ROOT / "scenarios"
"""The shipped example suites."""

DOCS = ROOT / "docs"
"""The documentation site's pages (mkdocs.yml)."""


def documentation() -> str:
    """README.md and every page under docs/, as one text: the tested examples live in both."""
    pages = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    return "\n".join(page.read_text(encoding="utf-8") for page in pages)
