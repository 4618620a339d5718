"""A real OTLP/HTTP endpoint on 127.0.0.1 that keeps every request's body, headers and path."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        self.server.bodies.append(body)  # type: ignore[attr-defined]
        self.server.seen.append(dict(self.headers))  # type: ignore[attr-defined]
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        self.server.posts.append((self.path, body))  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@contextmanager
def otlp_receiver() -> Iterator[ThreadingHTTPServer]:
    """Serve until the block ends; per POST, ``server.bodies`` (as sent), ``server.seen``
    (headers) and ``server.posts`` (path, body unzipped) grow."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    server.bodies = []  # type: ignore[attr-defined]
    server.seen = []  # type: ignore[attr-defined]
    server.posts = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
