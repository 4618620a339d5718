"""Exports that fail: a trace file that cannot be written, backends that never answer.

``harness run`` on the shipped calculator suite (a real LangGraph agent, the scripted model)
against real faults: a path whose folder is a file, ``/dev/full``, a file-size limit that cuts a
write in the middle, a TCP server on 127.0.0.1 that accepts and never answers (with
``OTEL_EXPORTER_OTLP_TIMEOUT=60``), and ``https://`` to a plain HTTP port. Each must give the
run's results, one warning, a bounded exit, and never a cut-off line.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import ROOT

HARNESS = Path(sys.executable).parent / "harness"
SUITE = ROOT / "scenarios" / "calculator.yaml"

SHUTDOWN_BOUND_S = 5.0
"""harness.span_export.DEFAULT_SHUTDOWN_TIMEOUT_S: how long shutdown may wait for a backend."""


def _run(tmp_path: Path, *flags: str, env: dict[str, str] | None = None) -> tuple[Any, float]:
    start = time.monotonic()
    proc = subprocess.run(
        [str(HARNESS), "run", str(SUITE), "--json", str(tmp_path / "r.json"), *flags],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, **(env or {})},
    )
    return proc, time.monotonic() - start


def _results_intact(tmp_path: Path, proc: Any) -> None:
    assert proc.returncode == 0, proc.stderr  # the suite passes; an export fault does not fail it
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert len(data["scenarios"]) == 10 and data["ok"] is True


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning:")]


# --- the trace file -------------------------------------------------------------------------


def test_an_unwritable_trace_file_is_a_configuration_error_before_the_run(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    proc, _ = _run(tmp_path, "--trace-file", str(tmp_path / "afile" / "t.json"))
    assert proc.returncode == 2
    assert "--trace-file" in proc.stderr and "a file is where its folder should be" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "r.json").exists()  # nothing ran
    folder = tmp_path / "adir"
    folder.mkdir()
    proc, _ = _run(tmp_path, "--trace-file", str(folder))
    assert proc.returncode == 2 and "Is a directory" in proc.stderr, proc.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_full_disk_is_one_warning_and_the_results_are_intact(tmp_path: Path) -> None:
    proc, _ = _run(tmp_path, "--trace-file", "/dev/full")
    _results_intact(tmp_path, proc)
    assert _warnings(proc.stderr) == [
        "warning: writing the trace file /dev/full failed: No space left on device — results "
        "and reports are still written"
    ]
    assert "Traceback" not in proc.stderr


def test_a_write_cut_short_leaves_no_partial_last_line(tmp_path: Path) -> None:
    """A file-size limit cuts the second batch mid-line (as a disk that fills up does): the file
    ends after the first batch's whole line."""
    script = textwrap.dedent(
        """
        import resource, signal, sys
        from opentelemetry.sdk.trace import TracerProvider
        from tracing.otlp.file_format import OtlpJsonFileExporter

        path, limit = sys.argv[1], int(sys.argv[2])
        tracer = TracerProvider().get_tracer("t")

        def spans(n, size):
            out = []
            for i in range(n):
                with tracer.start_as_current_span(f"s{i}", attributes={"blob": "x" * size}) as s:
                    pass
                out.append(s)
            return out

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a kill
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        exporter = OtlpJsonFileExporter(path)
        exporter.export(spans(2, 100))
        try:
            exporter.export(spans(100, 500))
        except OSError as exc:
            print("failed:", exc.strerror)
        exporter.export(spans(1, 10))  # still below the limit: appended after the whole line
        """
    )
    target = tmp_path / "t.json"
    proc = subprocess.run(
        [sys.executable, "-c", script, str(target), "20000"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr
    assert "failed: File too large" in proc.stdout
    data = target.read_bytes()
    assert data.endswith(b"\n")
    lines = data.splitlines()
    assert len(lines) == 2
    names = [
        [span["name"] for rs in json.loads(line)["resourceSpans"] for ss in rs["scopeSpans"]
         for span in ss["spans"]]
        for line in lines
    ]  # fmt: skip
    assert names == [["s0", "s1"], ["s0"]]


# --- backends that never answer ---------------------------------------------------------------


@pytest.fixture
def black_hole() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that accepts every connection and never says a word."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield int(server.getsockname()[1])
    finally:
        stop.set()
        thread.join(2)
        for conn in held:
            conn.close()
        server.close()


class _Plain(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@pytest.fixture
def plain_http() -> Iterator[int]:
    """A plain HTTP server on 127.0.0.1 (what a TLS client gets when it dials the wrong port)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Plain)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_a_black_holed_backend_costs_one_warning_and_a_bounded_exit(
    tmp_path: Path, black_hole: int, scheme: str
) -> None:
    proc, elapsed = _run(
        tmp_path,
        "--otlp-endpoint",
        f"{scheme}://127.0.0.1:{black_hole}",
        env={"OTEL_EXPORTER_OTLP_TIMEOUT": "60"},
    )
    _results_intact(tmp_path, proc)
    (warning,) = _warnings(proc.stderr)
    assert "spans were not sent" in warning and "shutdown timeout" in warning, warning
    assert elapsed < 20 + SHUTDOWN_BOUND_S, elapsed  # not the 60 s export timeout


def test_https_to_a_plain_port_warns_that_spans_were_lost(tmp_path: Path, plain_http: int) -> None:
    proc, elapsed = _run(
        tmp_path,
        "--otlp-endpoint",
        f"https://127.0.0.1:{plain_http}",
        env={"OTEL_EXPORTER_OTLP_TIMEOUT": "60"},
    )
    _results_intact(tmp_path, proc)
    (warning,) = _warnings(proc.stderr)
    assert f"https://127.0.0.1:{plain_http}" in warning
    assert "not sent" in warning or "failed" in warning, warning
    assert elapsed < 20 + SHUTDOWN_BOUND_S, elapsed


def test_shutdown_warns_whenever_spans_were_dropped_and_not_when_all_went_out(
    tmp_path: Path, black_hole: int
) -> None:
    """The pipeline itself: counts what ended against what each destination got."""
    from harness.span_export import configure_export

    lines: list[str] = []
    pipeline = configure_export(
        f"http://127.0.0.1:{black_hole}",
        trace_file=tmp_path / "t.json",
        warn=lines.append,
        export_timeout_s=60,
        shutdown_timeout_s=1.0,
    )
    assert pipeline.tracer_provider is not None
    tracer = pipeline.tracer_provider.get_tracer("t")
    for n in range(5):
        with tracer.start_as_current_span(f"s{n}"):
            pass
    start = time.monotonic()
    pipeline.shutdown()
    assert time.monotonic() - start < 3
    assert len(lines) == 1 and "5 of 5 spans were not sent" in lines[0], lines
    assert len((tmp_path / "t.json").read_text().splitlines()) >= 1  # the file got them all
    written = sum(
        len(ss["spans"])
        for line in (tmp_path / "t.json").read_text().splitlines()
        for rs in json.loads(line)["resourceSpans"]
        for ss in rs["scopeSpans"]
    )
    assert written == 5
