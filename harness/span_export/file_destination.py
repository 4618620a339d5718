"""The ``--trace-file`` destination: OTLP JSON lines, checked writable before the run."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from harness.errors import ExportConfigError

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter


def _file_exporter(path: Path) -> SpanExporter:
    from tracing.otlp.file_format import OtlpJsonFileExporter

    return OtlpJsonFileExporter(path)


def _check_trace_file(path: Path) -> None:
    """Fail before the run when the trace file cannot be written (no permission, a file where
    its folder should be, a folder in its place): ExportConfigError naming the reason."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("ab"):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if isinstance(exc, FileExistsError):
            reason = "a file is where its folder should be"
        raise ExportConfigError(
            f"--trace-file {path}: cannot write it: {reason}",
            source="--trace-file",
            value=str(path),
        ) from None
