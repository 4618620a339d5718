"""``--trace-url``: a link from each result to its trace in a tracing backend.

The template holds ``{trace_id}`` (32 hex digits), e.g.
``http://localhost:6006/projects/default/traces/{trace_id}`` for Phoenix. The feed puts the
link on each view (:attr:`~harness.report.view.ScenarioView.trace_url`), so the console, JUnit,
Markdown and HTML reports show the same URL without knowing the template.
"""

from __future__ import annotations

from dataclasses import replace

from harness.errors import ExportConfigError
from harness.report.view import ScenarioView

__all__ = ["PLACEHOLDER", "check_template", "trace_link", "with_trace_url"]

PLACEHOLDER = "{trace_id}"


def check_template(template: str) -> str:
    """The template itself, or ExportConfigError when it has no ``{trace_id}``."""
    if PLACEHOLDER not in template:
        raise ExportConfigError(
            f"--trace-url {template!r} has no {PLACEHOLDER} to put the trace id in, e.g. "
            "http://localhost:6006/projects/default/traces/{trace_id}",
            source="--trace-url",
            value=template,
        )
    return template


def trace_link(template: str, trace_id: str) -> str:
    """The template with the trace id in place (only ``{trace_id}`` is replaced)."""
    return template.replace(PLACEHOLDER, trace_id)


def with_trace_url(view: ScenarioView, template: str) -> ScenarioView:
    """``view`` linked to the trace of the run it shows (unchanged when that has no trace)."""
    run = view.shown
    trace_id = view.trace_id or (run.trace_id if run is not None else None)
    if not trace_id:
        return view
    return replace(view, trace_url=trace_link(template, trace_id))
