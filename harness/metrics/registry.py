"""Metric registry: snake_case names -> metric classes, plus third-party entry points.

Third-party packages add metrics through the entry point group ``toolcall_harness.metrics``::

    [project.entry-points."toolcall_harness.metrics"]
    my_metric = "my_pkg.metrics:MyMetric"

Entry points are only imported when their name is asked for, so a broken plugin cannot break
scoring with the built-in metrics.

``compat="ragas"`` (Python or YAML) maps ``tool_call_sequence_accuracy`` and ``tool_call_f1`` to
``harness.metrics.ragas``'s classes: the native classes build them when given that option, so
``get_metric(name, compat="ragas")`` and the class call give the same metric.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from importlib import metadata
from typing import Any, TypeVar

from harness.errors import MetricConfigError
from harness.metrics.accuracy import NoUnexpectedToolCalls, ToolCallAccuracy, ToolCallOrder
from harness.metrics.arguments import ToolArgumentCorrectness
from harness.metrics.base import Metric
from harness.metrics.f1 import ToolCallF1
from harness.metrics.partial_order import ToolCallPartialOrder
from harness.metrics.selection import ToolSelectionAccuracy
from harness.metrics.sequence import ToolCallSequenceAccuracy
from harness.text import did_you_mean

ENTRY_POINT_GROUP = "toolcall_harness.metrics"

MetricFactory = Callable[..., Metric]
F = TypeVar("F", bound=Callable[..., Any])

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")

_registry: dict[str, MetricFactory] = {}


def register_metric(factory: F, name: str | None = None, *, replace: bool = False) -> F:
    """Register a metric class (or factory) under ``name`` (default: its ``name`` attribute).

    Usable as a class decorator. Names are snake_case; registering a taken name is an error
    unless ``replace=True``.
    """
    key = name if name is not None else getattr(factory, "name", None)
    if not isinstance(key, str) or not _NAME.match(key):
        raise MetricConfigError(
            f"metric name must be snake_case (lowercase letters, digits, underscores), "
            f"got {key!r} for {factory!r}; pass name=... or set a class attribute `name`"
        )
    if not callable(factory):
        raise MetricConfigError(f"metric {key!r}: {factory!r} is not a class or callable")
    existing = _registry.get(key)
    if existing is not None and existing is not factory and not replace:
        raise MetricConfigError(
            f"metric {key!r} is already registered to {_label(existing)}; "
            "pass replace=True to override it"
        )
    _registry[key] = factory
    return factory


def unregister_metric(name: str) -> None:
    """Remove a registered metric (an entry point of that name stays loadable on demand)."""
    if _registry.pop(name, None) is None:
        raise MetricConfigError(f"metric {name!r} is not registered")


def _label(factory: Any) -> str:
    module = getattr(factory, "__module__", "?")
    return f"{module}.{getattr(factory, '__qualname__', repr(factory))}"


def _entry_points() -> dict[str, metadata.EntryPoint]:
    """Plugin entry points by name; read on demand so newly installed plugins are seen."""
    return {ep.name: ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def _load_entry_point(ep: metadata.EntryPoint) -> MetricFactory:
    dist = getattr(ep, "dist", None)
    origin = f" (distribution {dist.name})" if dist is not None else ""
    where = f"entry point {ep.name!r} = {ep.value!r}{origin} in group {ENTRY_POINT_GROUP!r}"
    try:
        loaded = ep.load()
    except Exception as exc:
        raise MetricConfigError(
            f"metric {ep.name!r}: {where} failed to load: {type(exc).__name__}: {exc}"
        ) from exc
    if not callable(loaded):
        raise MetricConfigError(
            f"metric {ep.name!r}: {where} points to {loaded!r}, which is not a metric class "
            "or factory"
        )
    factory: MetricFactory = loaded
    return register_metric(factory, ep.name, replace=True)


def _lookup(name: str) -> MetricFactory:
    factory = _registry.get(name)
    if factory is not None:
        return factory
    ep = _entry_points().get(name) if isinstance(name, str) else None
    if ep is not None:
        return _load_entry_point(ep)
    message = f"unknown metric {name!r}"
    hint = did_you_mean(str(name), metric_names())
    if hint:
        message += f" — {hint}"
    else:
        message += f"; known metrics: {', '.join(metric_names())}"
    raise MetricConfigError(message, metric=name)


def metric_names() -> list[str]:
    """Every metric name: built-ins, registered ones and not-yet-loaded entry points, sorted."""
    return sorted({*_registry, *_entry_points()})


def _signature(factory: MetricFactory) -> inspect.Signature | None:
    try:
        return inspect.signature(factory)
    except (TypeError, ValueError):  # some C callables have no signature
        return None


def metric_options(name: str) -> dict[str, Any]:
    """The options a metric accepts, with their defaults (``inspect.Parameter.empty`` if none)."""
    signature = _signature(_lookup(name))
    if signature is None:
        return {}
    return {
        param.name: param.default
        for param in signature.parameters.values()
        if param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD)
    }


def get_metric(name: str, /, **options: Any) -> Metric:
    """Build the metric registered as ``name`` with ``options``; bad names/options are errors."""
    factory = _lookup(name)
    signature = _signature(factory)
    if signature is not None and not any(
        param.kind is param.VAR_KEYWORD for param in signature.parameters.values()
    ):
        valid = [
            param.name
            for param in signature.parameters.values()
            if param.kind in (param.KEYWORD_ONLY, param.POSITIONAL_OR_KEYWORD)
        ]
        unknown = [option for option in options if option not in valid]
        if unknown:
            option = unknown[0]
            message = f"metric {name!r}: unknown option {option!r}"
            hint = did_you_mean(option, valid)
            if hint:
                message += f" ({hint})"
            message += f"; valid options: {', '.join(valid) or '(none)'}"
            raise MetricConfigError(message, metric=name, option=option, value=options[option])
    metric = factory(**options)
    if not isinstance(metric, Metric):
        raise MetricConfigError(
            f"metric {name!r}: {_label(factory)} built {metric!r}, which lacks the Metric "
            "protocol (name, threshold, evaluate(sample))"
        )
    return metric


for _builtin in (
    ToolCallAccuracy,
    NoUnexpectedToolCalls,
    ToolCallOrder,
    ToolArgumentCorrectness,
    ToolSelectionAccuracy,
    ToolCallSequenceAccuracy,
    ToolCallF1,
    ToolCallPartialOrder,
):
    register_metric(_builtin)
