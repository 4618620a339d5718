"""OTLP JSON files: the format and its writer, decoding spans, streaming a file into traces."""
