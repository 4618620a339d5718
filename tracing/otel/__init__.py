"""OpenTelemetry spans: the emitter, the exporter, the conventions, reading and joining spans.

The emitter (:mod:`tracing.otel.emitter`) writes a LangChain run as GenAI spans; the exporter
(:mod:`tracing.otel.tool_call_exporter`) and the OTLP reader turn spans of any of the three
conventions (:mod:`tracing.otel.conventions`) back into calls (:mod:`tracing.otel.span_reading`,
:mod:`tracing.otel.joining`).

:mod:`tracing.otel.producers` knows the shapes frameworks write inside the three span
conventions (smolagents' and LlamaIndex's argument envelopes, OpenLLMetry's and Pydantic AI's
unparsable-argument markers, smolagents' final-answer tool); :mod:`tracing.otel.messages` reads
chat spans' messages (the user's input, the tool messages a model call received, usage, the
final answer); :mod:`tracing.otel.trace_run` turns a read trace into a
:class:`~tracing.otel.trace_run.TraceRun`.
"""
