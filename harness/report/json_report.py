"""The JSON report: :meth:`SuiteResult.to_dict` (with ``schema_version``) written to a file."""

from __future__ import annotations

import json
import os
from pathlib import Path

from harness.result import SuiteResult


def render_json(result: SuiteResult) -> str:
    """The report as a JSON string (UTF-8 text, stable key order, indented)."""
    return json.dumps(result.to_dict(), indent=2, ensure_ascii=False, default=repr)


def write_json(result: SuiteResult, path: str | os.PathLike[str]) -> Path:
    """Write the report, creating parent folders; returns the path written."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_json(result) + "\n", encoding="utf-8")
    return target
