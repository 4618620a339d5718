"""OTLP JSON requests in every spelling: today's, the pre-1.0 one, and Grafana Tempo's exports.

One object holds spans under ``resourceSpans`` (OTLP 1.x, the Collector's file exporter) or
``batches`` (Tempo's v1 API, ``/api/traces/<id>``), optionally wrapped as ``{"trace": ...}``
(Tempo's v2 API); each resource holds them under ``scopeSpans`` or, before OTLP 1.0 and in
Tempo v1, ``instrumentationLibrarySpans``. The spans themselves are OTLP JSON spans either way
(Tempo writes integers as JSON numbers and enums by name, which
:func:`~tracing.otlp.decode.span_fields` reads as well), so only the walk differs. Each
resource's attributes (``service.name``, ...) go with its spans.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracing.otlp.decode import BadSpan, resource_attributes
from tracing.otlp.sources import Resources

__all__ = ["RESOURCE_KEYS", "SCOPE_KEYS", "request_spans", "resources_of"]

RESOURCE_KEYS = ("resourceSpans", "batches")
"""Where a request keeps its resources: OTLP, Tempo v1."""

SCOPE_KEYS = ("scopeSpans", "instrumentationLibrarySpans")
"""Where a resource keeps its scopes: OTLP >= 1.0, before (and Tempo v1)."""


def resources_of(request: Mapping[str, Any]) -> list[Any] | None:
    """The request's resource list in any spelling, or None when it has none."""
    for key in RESOURCE_KEYS:
        found = request.get(key)
        if found is not None:
            if not isinstance(found, list):
                raise BadSpan(f"{key!r} must be a list, got {type(found).__name__}")
            return found
    inner = request.get("trace")  # Tempo v2: {"trace": {"resourceSpans": [...]}}
    if isinstance(inner, Mapping):
        return resources_of(inner)
    return None


def request_spans(resources: list[Any]) -> tuple[list[Any], Resources]:
    """The spans of a resource list, in order (what a line of the file exporter holds), and
    their resources' attributes: one mapping for all when the list has one resource (nearly
    every line), else one per span."""
    out: list[Any] = []
    blocks: list[tuple[int, dict[str, Any]]] = []
    for resource_spans in resources:
        if type(resource_spans) is not dict and not isinstance(resource_spans, Mapping):
            continue
        before = len(out)
        scopes = resource_spans.get("scopeSpans")
        if scopes is None:
            scopes = resource_spans.get("instrumentationLibrarySpans")
        if isinstance(scopes, list):
            for scope_spans in scopes:
                spans = scope_spans.get("spans") if isinstance(scope_spans, Mapping) else None
                if isinstance(spans, list):
                    out += spans
        blocks.append((len(out) - before, resource_attributes(resource_spans.get("resource"))))
    if len(blocks) == 1:
        return out, blocks[0][1]
    return out, [attributes for count, attributes in blocks for _ in range(count)]
