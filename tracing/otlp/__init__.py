"""Where traces live: span sources for every format ``harness eval-traces`` reads.

One small interface (:class:`~tracing.otlp.sources.SpanSource`: spans in input order, in
batches that say where they were read) and a module per format or place:

* :mod:`~tracing.otlp.sources`: the interface, and files (or ``-``, standard input) whose
  format is found by content, gzipped or not (:func:`~tracing.otlp.sources.sniff` has the rule);
* :mod:`~tracing.otlp.lines`: JSON lines (OTLP requests, Tempo or Jaeger exports, bare spans);
* :mod:`~tracing.otlp.document`: whole JSON documents, streamed;
* :mod:`~tracing.otlp.tempo` and :mod:`~tracing.otlp.jaeger`: those exports' shapes;
* :mod:`~tracing.otlp.protobuf`: the Collector file exporter's length-prefixed protobuf;
* :mod:`~tracing.otlp.logs`: GenAI events written as OTLP logs, joined to their spans;
* :mod:`~tracing.otlp.phoenix`: spans pulled page by page from a running Phoenix;
* :mod:`~tracing.otlp.inputs`: the command line's inputs (files, globs, ``-``, ``--logs``,
  ``--from``) as sources.

:class:`~tracing.otlp.reader.OtlpJsonReader` groups any source's spans into traces;
:mod:`~tracing.otlp.file_format` is the OTLP JSON file format and its writer,
:mod:`~tracing.otlp.decode` decodes its spans.
"""

from __future__ import annotations

from tracing.otlp.sources import FileSource, SpanSource, open_source, sniff, splits_by_line

__all__ = ["FileSource", "SpanSource", "open_source", "sniff", "splits_by_line"]
