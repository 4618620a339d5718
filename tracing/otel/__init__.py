"""Reading the spans of producers other than LangChain, and a trace as one run for rules.

:mod:`tracing.otel.producers` knows the shapes frameworks write inside the three span
conventions (smolagents' and LlamaIndex's argument envelopes, OpenLLMetry's and Pydantic AI's
unparsable-argument markers, smolagents' final-answer tool); :mod:`tracing.otel.messages` reads
chat spans' messages (the user's input, the tool messages a model call received, usage, the
final answer); :mod:`tracing.otel.trace_run` turns a read trace into a
:class:`~tracing.otel.trace_run.TraceRun`.
"""
