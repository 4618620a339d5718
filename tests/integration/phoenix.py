"""A real Arize Phoenix server for integration tests, run from its own cached virtualenv.

Phoenix is heavy (~850 MB installed) and must not become a dependency of toolcall-harness, so it
lives in ``.cache/phoenix-venv`` (``make test-integration`` creates it; ``PHOENIX_VENV``
overrides the place). The server binds 127.0.0.1 on free ports, keeps its SQLite database in a
temp working dir, and is told not to reach the internet.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DEFAULT_VENV = REPO / ".cache" / "phoenix-venv"
PROJECT_ATTRIBUTE = "openinference.project.name"
"""Resource attribute Phoenix files incoming spans under (``phoenix.utilities.project``)."""

Span = dict[str, Any]


class PhoenixError(RuntimeError):
    """Phoenix could not be started or did not answer as expected."""


def phoenix_venv() -> Path:
    """Where Phoenix is installed: ``$PHOENIX_VENV`` or ``.cache/phoenix-venv``."""
    path = Path(os.environ.get("PHOENIX_VENV") or DEFAULT_VENV)
    return path if path.is_absolute() else REPO / path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def project_resource(project: str) -> str:
    """``OTEL_RESOURCE_ATTRIBUTES`` value that files a process's spans under ``project``."""
    return f"{PROJECT_ATTRIBUTE}={project}"


@dataclass
class PhoenixServer:
    """A running Phoenix: where to send OTLP and how to read spans back."""

    http_port: int
    grpc_port: int
    working_dir: Path
    log_path: Path
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    startup_s: float = 0.0

    @property
    def base_url(self) -> str:
        """The HTTP root: UI, REST API, and OTLP/HTTP at ``/v1/traces``."""
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def otlp_http_endpoint(self) -> str:
        """Value for ``--otlp-endpoint`` / ``OTEL_EXPORTER_OTLP_ENDPOINT`` (protocol http)."""
        return self.base_url

    @property
    def otlp_grpc_endpoint(self) -> str:
        """Value for ``--otlp-endpoint`` with ``--otlp-protocol grpc``."""
        return f"http://127.0.0.1:{self.grpc_port}"

    # --- life cycle ------------------------------------------------------------------------------

    @classmethod
    def start(
        cls, working_dir: Path, *, venv: Path | None = None, timeout_s: float = 180.0
    ) -> PhoenixServer:
        """Start ``phoenix serve`` and wait (bounded) until ``/readyz`` answers 200."""
        venv = venv or phoenix_venv()
        python = venv / "bin" / "python"
        if not python.exists():
            raise PhoenixError(
                f"no Phoenix virtualenv at {venv}: run `make test-integration` (it installs "
                "arize-phoenix there) or set PHOENIX_VENV to one that has it"
            )
        working_dir.mkdir(parents=True, exist_ok=True)
        server = cls(free_port(), free_port(), working_dir, working_dir / "phoenix.log")
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("OTEL_", "PHOENIX_", "VIRTUAL_ENV", "PYTHON"))
        }
        env.update(server.environment())
        started = time.perf_counter()
        with server.log_path.open("wb") as log:
            server.process = subprocess.Popen(
                [str(python), "-m", "phoenix.server.main", "serve"],
                cwd=working_dir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a Ctrl-C in the test run does not hit it mid-write
            )
        try:
            server._wait_ready(timeout_s)
        except BaseException:
            server.stop()
            raise
        server.startup_s = time.perf_counter() - started
        return server

    def environment(self) -> dict[str, str]:
        """The variables that pin Phoenix to 127.0.0.1, our ports and dir, and no network."""
        return {
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(self.http_port),
            "PHOENIX_GRPC_PORT": str(self.grpc_port),
            "PHOENIX_WORKING_DIR": str(self.working_dir),
            "PHOENIX_TELEMETRY_ENABLED": "false",
            "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
            "PHOENIX_LOG_MIGRATIONS": "false",
            "PHOENIX_ENABLE_AUTH": "false",
        }

    def _wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        delay = 0.1
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise PhoenixError(
                    f"Phoenix exited with code {self.process.returncode} while starting; "
                    f"log {self.log_path}:\n{self.log_tail()}"
                )
            try:
                with urllib.request.urlopen(f"{self.base_url}/readyz", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(delay)
            delay = min(delay * 1.5, 1.0)
        raise PhoenixError(
            f"Phoenix not ready on {self.base_url} after {timeout_s:.0f} s; "
            f"log {self.log_path}:\n{self.log_tail()}"
        )

    def log_tail(self, lines: int = 30) -> str:
        """The last lines of the server's log (for failure messages)."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout_s: float = 15.0) -> None:
        """SIGTERM, then SIGKILL after ``timeout_s``; safe to call twice."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)

    # --- reading spans back ----------------------------------------------------------------------

    def _get(self, path: str, query: Mapping[str, str | list[str]]) -> Any:
        url = f"{self.base_url}{path}?{urllib.parse.urlencode(query, doseq=True)}"
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                return json.load(response)
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return None  # the project does not exist yet: nothing ingested so far
            body = exc.read().decode("utf-8", "replace")[:500]
            raise PhoenixError(f"GET {url} -> HTTP {exc.code}: {body}") from exc

    def spans(self, project: str, trace_id: str) -> list[Span]:
        """Every span of one trace in ``project`` (``GET /v1/projects/{project}/spans``)."""
        found: list[Span] = []
        cursor: str | None = None
        while True:
            query: dict[str, str | list[str]] = {"trace_id": [trace_id], "limit": "1000"}
            if cursor:
                query["cursor"] = cursor
            page = self._get(f"/v1/projects/{urllib.parse.quote(project, safe='')}/spans", query)
            if page is None:
                return found
            found.extend(page.get("data", []))
            cursor = page.get("next_cursor")
            if not cursor:
                return found

    def wait_for_spans(
        self,
        project: str,
        trace_id: str,
        *,
        count: int | None = None,
        until: Callable[[list[Span]], bool] | None = None,
        timeout_s: float = 30.0,
    ) -> list[Span]:
        """Poll until the trace has ``count`` spans (or ``until`` holds); bounded by ``timeout_s``.

        Phoenix ingests OTLP asynchronously (a queue flushed to SQLite), so spans appear a
        little after the export returned.
        """
        done = until or (lambda spans: len(spans) >= (count or 1))
        deadline = time.monotonic() + timeout_s
        delay = 0.1
        spans: list[Span] = []
        while True:
            spans = self.spans(project, trace_id)
            if done(spans):
                return spans
            if time.monotonic() >= deadline:
                names = sorted(span.get("name", "?") for span in spans)
                raise PhoenixError(
                    f"trace {trace_id} in project {project!r}: {len(spans)} span(s) after "
                    f"{timeout_s:.0f} s ({names}), expected {count or 'more'}; "
                    f"server log:\n{self.log_tail()}"
                )
            time.sleep(delay)
            delay = min(delay * 1.5, 1.0)
