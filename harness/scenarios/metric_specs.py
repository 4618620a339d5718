"""The ``metrics:`` blocks: parsed into ``{name: options}`` and merged over ``defaults``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from harness.errors import MetricConfigError
from harness.metrics.base import Metric, check_threshold
from harness.scenarios.issues import Collector, PathKey, describe_found, suggest


def metric_registry() -> tuple[Callable[..., Metric], Callable[[], list[str]]]:
    from harness.metrics import get_metric, metric_names

    return get_metric, metric_names


def parse_metrics(raw: Any, loc: PathKey, out: Collector) -> dict[str, dict[str, Any] | None]:
    """``metrics:`` as ``{name: options}`` (None value = disabled); issues for bad entries."""
    if raw is None:
        return {}
    _get, names_of = metric_registry()
    known = names_of()
    entries: list[tuple[str, Any, PathKey]] = []
    if isinstance(raw, list):
        for index, item in enumerate(raw):
            if not isinstance(item, str):
                out.add((*loc, index), f"expected a metric name, found {describe_found(item)}")
                continue
            entries.append((item, None, (*loc, index)))
    elif isinstance(raw, Mapping):
        entries = [(str(name), value, (*loc, str(name))) for name, value in raw.items()]
    else:
        out.add(
            loc,
            "expected a mapping of metric name -> options (or a list of names), "
            f"found {describe_found(raw)}",
        )
        return {}
    parsed: dict[str, dict[str, Any] | None] = {}
    for name, value, where in entries:
        if name not in known:
            hint = suggest(name, known) or f" (known metrics: {', '.join(known)})"
            out.add(loc, f"unknown metric '{name}'{hint}", line=out.line_of(where))
            continue
        options = _metric_options(name, value, where, out)
        if options is not _INVALID:
            parsed[name] = options
    return parsed


_INVALID: Any = object()


def _metric_options(name: str, value: Any, where: PathKey, out: Collector) -> Any:
    if value is None or value is True:
        return {}
    if value is False:
        return None  # `metric: false` switches off a metric set in defaults
    if isinstance(value, (int, float)):
        value = {"threshold": value}  # `metric: 0.8` is shorthand for the threshold
    if not isinstance(value, Mapping):
        out.add(
            where,
            f"expected the options of metric '{name}' as a mapping (or a threshold "
            f"number, or true/false), found {describe_found(value)}",
        )
        return _INVALID
    options = {str(key): option for key, option in value.items()}
    if "threshold" in options:
        try:
            check_threshold(name, options["threshold"])
        except MetricConfigError:
            out.add(
                (*where, "threshold"),
                f"expected a threshold within [0, 1], found {describe_found(options['threshold'])}",
            )
            return _INVALID
    return options


def merge_metrics(
    defaults: Mapping[str, dict[str, Any] | None], own: Mapping[str, dict[str, Any] | None]
) -> dict[str, dict[str, Any]]:
    merged: dict[str, dict[str, Any]] = {k: dict(v) for k, v in defaults.items() if v is not None}
    for name, options in own.items():
        if options is None:
            merged.pop(name, None)
        else:
            merged[name] = {**merged.get(name, {}), **options}
    return merged
