"""OTLP settings: where spans go and how, from the CLI flags or the standard OTEL_* variables.

``--otlp-endpoint`` / ``--otlp-protocol`` / ``--otlp-header`` win over
``OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT``, ``..._PROTOCOL`` and ``..._HEADERS``;
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``, ``OTEL_SERVICE_NAME`` /
``OTEL_RESOURCE_ATTRIBUTES`` and ``..._TIMEOUT`` are read as the OTel spec says. A value that
cannot be understood is an ExportConfigError before the run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from opentelemetry.sdk.resources import SERVICE_NAME, Resource

from harness.errors import ExportConfigError

__all__ = [
    "DEFAULT_EXPORT_TIMEOUT_S",
    "DEFAULT_SERVICE_NAME",
    "ExportProtocol",
    "ExportTarget",
    "capture_content_from_env",
    "merged_headers",
    "parse_header",
    "resolve_target",
]

ExportProtocol = Literal["http", "grpc"]

DEFAULT_SERVICE_NAME = "toolcall-harness"
DEFAULT_EXPORT_TIMEOUT_S = 5.0
"""Per-batch export timeout when ``OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT`` is unset (SDK: 10 s)."""

_TRACES_PATH = "/v1/traces"
_CAPTURE_ON = frozenset({"true", "1", "yes", "on", "span_only", "span_and_event", "event_only"})
_CAPTURE_OFF = frozenset({"", "false", "0", "no", "off", "no_content"})


# --- where to --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExportTarget:
    """Resolved OTLP destination: full URL for http (with ``/v1/traces``), host URL for grpc."""

    url: str
    protocol: ExportProtocol
    source: str
    """Where the URL came from: ``--otlp-endpoint`` or the variable's name (for messages)."""


def _protocol(flag: str | None, environ: Mapping[str, str]) -> ExportProtocol:
    for source, raw in (
        ("--otlp-protocol", flag),
        ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")),
    ):
        if raw is None or not raw.strip():
            continue
        value = raw.strip().lower()
        if value in ("http", "http/protobuf"):
            return "http"
        if value == "grpc":
            return "grpc"
        raise ExportConfigError(
            f"{source}={raw!r} is not supported: use 'http' (OTLP/HTTP protobuf, the default) "
            "or 'grpc'",
            source=source,
            value=raw,
        )
    return "http"


def _check_url(url: str, source: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ExportConfigError(
            f"{source}={url!r} is not an OTLP endpoint URL: expected e.g. http://127.0.0.1:4318 "
            "(http) or http://127.0.0.1:4317 (grpc)",
            source=source,
            value=url,
        )
    return url


def _with_traces_path(base: str) -> str:
    """Generic endpoint -> signal URL, as the OTel spec says: append ``v1/traces`` to the path."""
    parts = urlsplit(base)
    path = parts.path.rstrip("/")
    if path.endswith(_TRACES_PATH):
        return base  # already the signal URL (a friendly reading of --otlp-endpoint)
    return parts._replace(path=path + _TRACES_PATH).geturl()


def resolve_target(
    endpoint: str | None,
    protocol: str | None,
    environ: Mapping[str, str] | None = None,
) -> ExportTarget | None:
    """The OTLP destination from the flags, else the OTEL_* variables; None: export is off."""
    env = os.environ if environ is None else environ
    proto = _protocol(protocol, env)
    candidates = (
        ("--otlp-endpoint", endpoint, False),
        ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), True),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", env.get("OTEL_EXPORTER_OTLP_ENDPOINT"), False),
    )
    for source, raw, is_signal_url in candidates:
        if raw is None or not raw.strip():
            continue
        url = _check_url(raw.strip(), source)
        if proto == "http" and not is_signal_url:
            url = _with_traces_path(url)
        return ExportTarget(url=url, protocol=proto, source=source)
    return None


def capture_content_from_env(environ: Mapping[str, str] | None = None) -> bool:
    """``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` as a bool (unset: off)."""
    env = os.environ if environ is None else environ
    raw = env.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "")
    value = raw.strip().lower()
    if value in _CAPTURE_ON:
        return True
    if value in _CAPTURE_OFF:
        return False
    raise ExportConfigError(
        f"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT={raw!r} is not understood: use "
        "'true' or 'false' (or SPAN_ONLY / SPAN_AND_EVENT / NO_CONTENT)",
        source="OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
        value=raw,
    )


# --- the resource, timeouts and headers ------------------------------------------------------


def _resource(service_name: str | None) -> Resource:
    attributes: dict[str, Any] = {}
    in_env = os.environ.get("OTEL_SERVICE_NAME") or "service.name=" in os.environ.get(
        "OTEL_RESOURCE_ATTRIBUTES", ""
    )
    if service_name is not None:
        attributes[SERVICE_NAME] = service_name
    elif not in_env:
        attributes[SERVICE_NAME] = DEFAULT_SERVICE_NAME
    return Resource.create(attributes)


def _export_timeout(default: float) -> float | None:
    """None when a variable sets it (the SDK reads it), else our shorter default."""
    for name in ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"):
        if os.environ.get(name, "").strip():
            return None
    return default


def merged_headers(
    flags: Mapping[str, str] | None, environ: Mapping[str, str] | None = None
) -> dict[str, str] | None:
    """``--otlp-header`` over ``OTEL_EXPORTER_OTLP_[TRACES_]HEADERS``; None when neither is set.

    The SDK reads the variables only when no headers are passed, so once a flag gives one the
    variables' headers are merged in here (the flag wins for the same key).
    """
    if not flags:
        return None
    from opentelemetry.util.re import parse_env_headers

    env = os.environ if environ is None else environ
    merged: dict[str, str] = {}
    for name in ("OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"):
        merged.update(parse_env_headers(env.get(name, ""), liberal=True))
    merged.update(flags)
    return merged


def parse_header(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` (``--otlp-header``) as a pair; ExportConfigError for anything else."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ExportConfigError(
            f"--otlp-header {text!r}: expected KEY=VALUE, e.g. x-api-key=...",
            source="--otlp-header",
            value=text,
        )
    return key.strip(), value.strip()


def _display(target: ExportTarget) -> str:
    """The URL as shown in the warning: without credentials or query."""
    parts = urlsplit(target.url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    base = f"{parts.scheme}://{netloc}"
    if target.protocol == "http":
        path = parts.path
        if path.endswith(_TRACES_PATH):
            path = path[: -len(_TRACES_PATH)]
        return base + path.rstrip("/")
    return base
