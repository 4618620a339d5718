"""The run's final answer on its root span (``harness.output``), for ``harness eval-traces``.

``harness run`` puts the answer it scored (the one rule of :mod:`tracing.langchain.final_answer`) on
the run's root span, redacted, when content is captured; ``eval-traces`` reads it back, so an output
check offline sees what the live run saw, whoever wrote the last message (docs/metrics.md,
"Samples and expectations").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from harness.redaction import Redactor, jsonable

__all__ = ["OUTPUT_ATTRIBUTE", "encode_output", "read_output"]

OUTPUT_ATTRIBUTE = "harness.output"
"""Root-span attribute: the run's final answer as JSON (only with content capture)."""


def encode_output(output: Any, redactor: Redactor | None = None) -> str:
    """The attribute value: the answer as JSON, secrets masked."""
    masked = (redactor or Redactor()).redact(jsonable(output))
    return json.dumps(masked, ensure_ascii=False, sort_keys=True)


def read_output(attributes: Mapping[str, Any]) -> tuple[bool, Any]:
    """``(found, answer)`` from a root span's attributes; not found without the attribute."""
    raw = attributes.get(OUTPUT_ATTRIBUTE)
    if not isinstance(raw, str):
        return False, None
    try:
        return True, json.loads(raw)
    except ValueError:
        return True, raw
