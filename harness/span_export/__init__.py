"""OTLP export for the runner: one batched, redacted TracerProvider, quiet when the backend is down.

``configure_export`` builds the pipeline from the CLI flags, falling back to the standard
variables (``OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT``, ``..._PROTOCOL``, ``..._HEADERS``,
``..._TIMEOUT``, ``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``,
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``):

* every exporter sits behind a ``BatchSpanProcessor`` (a Simple one costs a network round trip
  per span on the agent's own thread);
* a redacting layer rewrites each span before it leaves: secret keys inside JSON attributes
  (tool arguments and results, chat messages) and in event attributes become ``"***"``, and
  with content capture off the content attributes are dropped altogether, so neither the wire
  nor the ``--trace-file`` ever sees them (capture is opt-in for the backend; the trace file,
  local and meant for ``harness eval-traces``, keeps content unless ``--no-capture-content``);
* an export failure is reported once, as one warning line, instead of the SDK's per-batch
  retry logs; after a failure batches are dropped for a cool-down instead of each one waiting
  out the retry backoff;
* the redacting layer also masks *by value*: every secret value seen under a redacted key
  while the run goes (the runner's :class:`SecretWatcher` notes tool arguments, results and
  requested calls in a :class:`~harness.redaction.SecretBook`) is scrubbed out of span names,
  status messages, event and span attributes (a tool's exception quoting its password), and
  without content capture the failure reasons (which can quote the final answer or an
  argument) are not sent either;
* ``--trace-file`` is checked before the run (an unwritable path is a configuration error) and
  a write that fails later (a full disk) is one warning, never a cut-off last line;
* ``shutdown`` flushes within a bounded time, is idempotent, and also runs at interpreter exit;
  when spans were not sent (a black-holed backend, a TLS endpoint that never answers, a
  timeout longer than the shutdown's) it says how many, in one warning.

The package is layered, each module importing only those above it (docs/architecture.md):

* :mod:`~harness.span_export.settings` — the destination and options from the flags and the OTEL_*
  variables (:func:`resolve_target`, :func:`capture_content_from_env`, :func:`merged_headers`);
* :mod:`~harness.span_export.redacting` — :class:`RedactingSpanExporter` and the content attributes;
* :mod:`~harness.span_export.secrets` — :class:`SecretWatcher`, the by-value secret book of a run;
* :mod:`~harness.span_export.guard` — :class:`GuardedExporter`: one warning, cool-down, span counts;
* :mod:`~harness.span_export.file_destination` — the ``--trace-file`` destination and its early
  check;
* :mod:`~harness.span_export.pipeline` — :func:`configure_export` and :class:`ExportPipeline`;
* :mod:`~harness.span_export.verdicts` — :func:`record_verdict`: evaluation events on the root span.
"""

from __future__ import annotations

from harness.errors import ExportConfigError
from harness.span_export.guard import DEFAULT_COOLDOWN_S, GuardedExporter
from harness.span_export.pipeline import (
    DEFAULT_SHUTDOWN_TIMEOUT_S,
    ExportPipeline,
    configure_export,
)
from harness.span_export.redacting import (
    CONTENT_ATTRIBUTES,
    CONTENT_EVENT_ATTRIBUTES,
    RedactingSpanExporter,
)
from harness.span_export.secrets import SecretWatcher, secret_watchers
from harness.span_export.settings import (
    DEFAULT_EXPORT_TIMEOUT_S,
    DEFAULT_SERVICE_NAME,
    ExportProtocol,
    ExportTarget,
    capture_content_from_env,
    merged_headers,
    parse_header,
    resolve_target,
)
from harness.span_export.verdicts import (
    EVALUATION_EVENT,
    EVALUATION_EXPLANATION,
    EVALUATION_NAME,
    EVALUATION_SCORE_LABEL,
    EVALUATION_SCORE_VALUE,
    record_verdict,
)

__all__ = [
    "CONTENT_ATTRIBUTES",
    "CONTENT_EVENT_ATTRIBUTES",
    "DEFAULT_COOLDOWN_S",
    "DEFAULT_EXPORT_TIMEOUT_S",
    "DEFAULT_SERVICE_NAME",
    "DEFAULT_SHUTDOWN_TIMEOUT_S",
    "EVALUATION_EVENT",
    "EVALUATION_EXPLANATION",
    "EVALUATION_NAME",
    "EVALUATION_SCORE_LABEL",
    "EVALUATION_SCORE_VALUE",
    "ExportConfigError",
    "ExportPipeline",
    "ExportProtocol",
    "ExportTarget",
    "GuardedExporter",
    "RedactingSpanExporter",
    "SecretWatcher",
    "capture_content_from_env",
    "configure_export",
    "merged_headers",
    "parse_header",
    "record_verdict",
    "resolve_target",
    "secret_watchers",
]
