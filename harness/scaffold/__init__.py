"""``harness init [DIR]``: write a starter project that runs as it is.

The files are package data (``harness/scaffold/files/``, real code checked by the repository's
ruff and mypy like the rest): an agent module with a ``build(model)`` factory, a suite over it
with the demo model, and a pytest test using the plugin's fixtures. Existing files are never
overwritten: the command refuses and names them.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from rich.console import Console

from harness.errors import ScaffoldError

__all__ = ["SCHEMA_FILE", "STARTER_FILES", "ScaffoldError", "init_command", "scaffold"]

SCHEMA_FILE = "harness-schema.json"
"""The suite's JSON Schema, generated (``harness schema``): starter.yaml's first line names it."""
STARTER_FILES = ("agent.py", "starter.yaml", "test_agent.py", SCHEMA_FILE)
"""What ``harness init`` writes, in this order."""


def scaffold(directory: str | Path) -> list[Path]:
    """Write the starter files into ``directory`` (created if missing); the paths written."""
    target = Path(directory)
    if target.exists() and not target.is_dir():
        raise ScaffoldError(f"{target} exists and is not a folder")
    taken = [target / name for name in STARTER_FILES if (target / name).exists()]
    if taken:
        names = ", ".join(str(path) for path in taken)
        raise ScaffoldError(
            f"not overwriting existing files: {names}", paths=[str(path) for path in taken]
        )
    target.mkdir(parents=True, exist_ok=True)
    source = files("harness.scaffold") / "files"
    written = []
    for name in STARTER_FILES:
        path = target / name
        if name == SCHEMA_FILE:
            from harness.scenarios.json_schema import schema_json

            path.write_text(schema_json(), encoding="utf-8")
        else:
            path.write_text((source / name).read_text(encoding="utf-8"), encoding="utf-8")
        written.append(path)
    return written


def init_command(directory: str, out: Console, err: Console) -> int:
    """``harness init``: scaffold, say what was written and what to run next; the exit code."""
    try:
        written = scaffold(directory)
    except (ScaffoldError, OSError) as exc:
        err.print(f"harness init: {exc}", style="bold red", markup=False, highlight=False)
        return 2  # harness.cli.EXIT_CONFIG (not imported: the CLI imports this module)
    for path in written:
        out.print(f"wrote {path}", markup=False, highlight=False)
    out.print(
        f"next: harness run {directory}    # the suite, with the demo model\n"
        f"      cd {directory} && pytest     # the pytest test",
        markup=False,
        highlight=False,
    )
    return 0
