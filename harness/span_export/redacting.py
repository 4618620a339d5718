"""Redaction on the way out: every span is rewritten before an exporter sees it.

Secret keys (inside JSON attributes, ``key=value`` text, secret attribute names) and the secret
values noted while the run goes become ``"***"``; with content capture off the content
attributes, and a failed run's reasons, are not sent at all (docs/architecture.md, Secrets).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import Status

from harness.redaction import Redactor, Scrubber, SecretBook, clean_text
from harness.run.output_attribute import OUTPUT_ATTRIBUTE

__all__ = ["CONTENT_ATTRIBUTES", "CONTENT_EVENT_ATTRIBUTES", "RedactingSpanExporter"]

CONTENT_ATTRIBUTES: frozenset[str] = frozenset(
    {
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        OUTPUT_ATTRIBUTE,  # the run's answer on its root span (harness/run/output_attribute.py)
    }
)
"""Opt-in content attributes (GenAI's, and the harness's final answer): exported only with
content capture on."""

CONTENT_EVENT_ATTRIBUTES: frozenset[str] = frozenset(
    {"harness.reason", "gen_ai.evaluation.explanation"}
)
"""Event attributes that quote what the run saw (a failure reason can quote the final answer
or an argument): exported only with content capture on, like CONTENT_ATTRIBUTES."""
_VERDICT_STATUS = "harness.status"
"""The root span's verdict attribute (harness/run/runner.py): its status message is a reason."""
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class RedactingSpanExporter(SpanExporter):
    """Rewrites spans before ``inner`` sees them: secrets masked, content kept only if opted in.

    Masked by key (JSON attributes, ``key=value`` text, secret attribute names) and by value:
    ``secrets`` holds the values seen under secret keys so far (a tool's exception that quotes
    its password is scrubbed in the status message and the ``exception`` event). Every string
    (name, status, attributes) is also made writable (lone surrogates escaped) and an int past
    int64 becomes text: one odd value must not cost the whole batch.
    """

    def __init__(
        self,
        inner: SpanExporter,
        redactor: Redactor,
        *,
        capture_content: bool,
        secrets: SecretBook | None = None,
    ) -> None:
        """Wrap ``inner``; ``capture_content=False`` also removes the content attributes."""
        self.inner = inner
        self.redactor = redactor
        self.capture_content = capture_content
        self.secrets = secrets
        self._plain = Scrubber(redactor)

    def _scrubber(self) -> Scrubber:
        return self.secrets.scrubber if self.secrets is not None else self._plain

    def _string(self, text: str, scrub: Scrubber) -> str:
        """By value: the secrets seen so far and the value patterns; lone surrogates escaped.

        (Secret keys inside attribute values are the Redactor's, in ``redact_attributes``.)
        """
        out = clean_text(scrub.text(text))
        return text if out == text else out

    def _value(self, value: Any, scrub: Scrubber) -> Any:
        if isinstance(value, str):
            return self._string(value, scrub)
        if isinstance(value, bool) or not isinstance(value, (int, tuple, list)):
            return value
        if isinstance(value, int):
            in_range = _INT64_MIN <= value <= _INT64_MAX
            return value if in_range else f"<int out of int64 range, {value.bit_length()} bits>"
        items = [self._value(item, scrub) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return tuple(items) if isinstance(value, tuple) else items

    def _attributes(
        self,
        attributes: Mapping[str, Any] | None,
        scrub: Scrubber,
        content: frozenset[str],
    ) -> Mapping[str, Any] | None:
        if not attributes:
            return attributes
        if not self.capture_content and not content.isdisjoint(attributes):
            attributes = {k: v for k, v in attributes.items() if k not in content}
        redacted = self.redactor.redact_attributes(attributes)
        changed: dict[str, Any] | None = None
        for name, value in redacted.items():
            new = self._value(value, scrub)
            if new is not value:
                if changed is None:
                    changed = dict(redacted)
                changed[name] = new
        return redacted if changed is None else changed

    def _status(self, span: ReadableSpan, scrub: Scrubber) -> Status:
        status = span.status
        text = status.description
        if not text:
            return status
        attributes = span.attributes or {}
        if not self.capture_content and attributes.get(_VERDICT_STATUS) == "failed":
            shown = "failed"  # the first failure reason: it can quote the answer or an argument
        else:
            shown = self._string(self.redactor.redact_text(text), scrub)
        return status if shown == text else Status(status.status_code, shown)

    def redact_span(self, span: ReadableSpan) -> ReadableSpan:
        """The span itself when nothing changes, else a copy with the rewritten parts."""
        scrub = self._scrubber()
        attributes = self._attributes(span.attributes, scrub, CONTENT_ATTRIBUTES)
        events: list[Event] = []
        events_changed = False
        for event in span.events:
            event_attributes = self._attributes(event.attributes, scrub, CONTENT_EVENT_ATTRIBUTES)
            if event_attributes is not event.attributes:
                events_changed = True
                event = Event(event.name, event_attributes, event.timestamp)
            events.append(event)
        name = self._string(span.name, scrub)
        status = self._status(span, scrub)
        unchanged = attributes is span.attributes and name == span.name
        if unchanged and not events_changed and status is span.status:
            return span
        return ReadableSpan(
            name=name,
            context=span.context,
            parent=span.parent,
            resource=span.resource,
            attributes=attributes,
            events=events,
            links=span.links,
            kind=span.kind,
            status=status,
            start_time=span.start_time,
            end_time=span.end_time,
            instrumentation_scope=span.instrumentation_scope,
        )

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Redact, then hand on."""
        return self.inner.export([self.redact_span(span) for span in spans])

    def shutdown(self) -> None:
        """Shut the inner exporter down."""
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Flush the inner exporter."""
        return self.inner.force_flush(timeout_millis)
