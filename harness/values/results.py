"""What a tool returned, read as a value: a JSON object or array text is its structure.

One reading for every consumer of results: an expected call's ``result:``, a ``$ref`` into a
result, and the ``grounded`` rule (docs/metrics.md, "Results"). LangChain's ToolNode turns
whatever a tool returns into message text (a dict becomes its JSON), so a text that holds a JSON
object or array is read back as that structure; any other text stays text (``"42"`` is the
string ``"42"``: a tool returning an id as text and one returning a number give the same text).
"""

from __future__ import annotations

import json
from typing import Any


def json_structure(text: str) -> Any:
    """The object or array a JSON text holds (a dict or a list), else None."""
    start = text.lstrip()[:1]
    if start != "{" and start != "[":
        return None
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, (dict, list)) else None


def read_result(result: Any) -> Any:
    """A call's result as a value: a JSON object or array text parsed, anything else as it is."""
    if isinstance(result, str):
        parsed = json_structure(result)
        if parsed is not None:
            return parsed
    return result
