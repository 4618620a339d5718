"""A real HTTP weather service on 127.0.0.1 that fails a set share of its requests."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FlakyService(ThreadingHTTPServer):
    """Answers 503 to ``failures`` of every ``period`` requests (the first ones of each), 200
    with a forecast to the rest: a dependency whose outages the agent's runs must live with."""

    failures = 0
    period = 10

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self._lock = threading.Lock()
        self.served = 0

    def set_failures(self, failures: int, period: int = 10) -> None:
        """From now on, fail ``failures`` of each ``period`` requests, counting afresh."""
        with self._lock:
            self.failures, self.period, self.served = failures, period, 0

    def next_fails(self) -> bool:
        """Count one request; whether it is one the service fails."""
        with self._lock:
            index = self.served
            self.served += 1
        return index % self.period < self.failures

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"


class _Handler(BaseHTTPRequestHandler):
    server: FlakyService

    def do_GET(self) -> None:
        if self.server.next_fails():
            body, status = b"service unavailable", 503
        else:
            body, status = b"18 C, light rain", 200
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@contextmanager
def flaky_service() -> Iterator[FlakyService]:
    """Serve until the block ends."""
    server = FlakyService()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
