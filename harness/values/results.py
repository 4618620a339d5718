"""What a tool returned, read as a value: a JSON object or array text is its structure.

One reading for every consumer of results: an expected call's ``result:``, a ``$ref`` into a
result, and the ``grounded`` rule (docs/metrics.md, "Results"). LangChain's ToolNode turns
whatever a tool returns into message text (a dict becomes its JSON), so a text that holds a JSON
object or array is read back as that structure; any other text stays text. A tool returning the
number 3 and one returning the string ``"3"`` both give the text ``3``, so such a text stands
for both: :func:`result_forms` gives the text and the JSON number (or boolean, or null) it
spells, and an expected result matches when it matches either.
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


def result_forms(result: Any) -> tuple[Any, ...]:
    """The values a result stands for: its structure (a JSON object or array text); the text
    and the number, boolean or null it spells (``"3"``: ``("3", 3)``); else itself."""
    if not isinstance(result, str):
        return (result,)
    parsed = json_structure(result)
    if parsed is not None:
        return (parsed,)
    scalar = _json_scalar(result)
    return (result,) if scalar is _NOT_SCALAR else (result, scalar)


_NOT_SCALAR = object()


def _json_scalar(text: str) -> Any:
    """The number, boolean or null a short text is in JSON, else :data:`_NOT_SCALAR`."""
    stripped = text.strip()
    if not stripped or len(stripped) > 64 or stripped[0] not in "-0123456789tfn":
        return _NOT_SCALAR
    try:
        value = json.loads(stripped)
    except ValueError:
        return _NOT_SCALAR
    return value if value is None or isinstance(value, (bool, int, float)) else _NOT_SCALAR


def read_result(result: Any) -> Any:
    """A call's result as a value: a JSON object or array text parsed, anything else as it is."""
    if isinstance(result, str):
        parsed = json_structure(result)
        if parsed is not None:
            return parsed
    return result
