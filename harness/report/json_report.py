"""The JSON report: :meth:`SuiteResult.to_dict` (with ``schema_version``) written to a file."""

from __future__ import annotations

import json
import os
from pathlib import Path

from harness.redaction import Redactor
from harness.result import Scrubber, SuiteResult


def render_json(result: SuiteResult, *, redactor: Redactor | None = None) -> str:
    """The report as a JSON string (UTF-8 text, stable key order, indented), secrets masked."""
    data = result.to_dict(redactor)
    return json.dumps(data, indent=2, ensure_ascii=False, default=repr)


def write_json(
    result: SuiteResult, path: str | os.PathLike[str], *, redactor: Redactor | None = None
) -> Path:
    """Write the report, creating parent folders; returns the path written.

    Scenarios are written one at a time (same text as :func:`render_json`), so a report of
    100,000 recorded traces never exists as one string or one dict in memory.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    scrub = Scrubber.for_suite(redactor, result)
    head = result.to_dict(redactor, scenarios=False)
    head_text = json.dumps({**head, "scenarios": []}, indent=2, ensure_ascii=False, default=repr)
    before, _, _ = head_text.rpartition('"scenarios": []')
    with target.open("w", encoding="utf-8") as fp:
        fp.write(before + '"scenarios": [')
        for position, scenario in enumerate(result.scenarios):
            text = json.dumps(scenario.to_dict(scrub), indent=2, ensure_ascii=False, default=repr)
            fp.write(("," if position else "") + "\n    " + text.replace("\n", "\n    "))
        fp.write("\n  ]\n}\n" if result.scenarios else "]\n}\n")
    return target
