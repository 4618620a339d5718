"""Integration fixtures: a session-wide Phoenix server; skipped unless HARNESS_INTEGRATION=1.

The default ``make test`` run collects these tests but skips them (they need the Phoenix
virtualenv and ~30 s to start it); ``make test-integration`` sets ``HARNESS_INTEGRATION=1``.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.phoenix import PhoenixServer, project_resource

_HERE = Path(__file__).resolve().parent
ENABLED = os.environ.get("HARNESS_INTEGRATION", "").strip().lower() in ("1", "true", "yes")


_timings: dict[str, float] = {}
_session_start = time.perf_counter()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print how long Phoenix took to start, for the issue's timing notes."""
    if _timings:
        _timings["integration session total"] = time.perf_counter() - _session_start
        terminalreporter.section("phoenix timings")
        for what, seconds in _timings.items():
            terminalreporter.write_line(f"{what}: {seconds:.1f} s")


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``integration`` marker."""
    config.addinivalue_line("markers", "integration: needs real external services (Phoenix)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark this folder's tests ``integration`` and skip them unless HARNESS_INTEGRATION=1."""
    skip = pytest.mark.skip(
        reason="integration test: run `make test-integration` (or set HARNESS_INTEGRATION=1)"
    )
    for item in items:
        if _HERE not in Path(str(item.path)).resolve().parents:
            continue
        item.add_marker(pytest.mark.integration)
        if not ENABLED:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PhoenixServer]:
    """A Phoenix server on 127.0.0.1 for the whole session, stopped at the end."""
    server = PhoenixServer.start(tmp_path_factory.mktemp("phoenix"))
    _timings["Phoenix server start (to /readyz)"] = server.startup_s
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def phoenix_project(request: pytest.FixtureRequest) -> str:
    """A fresh Phoenix project name per test (spans of different tests never mix)."""
    name = request.node.name.replace("[", "-").replace("]", "").replace("/", "-")
    return f"{name[:40]}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def phoenix_env(phoenix: PhoenixServer, phoenix_project: str) -> dict[str, str]:
    """Environment for a ``harness run`` subprocess exporting into ``phoenix_project``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["OTEL_RESOURCE_ATTRIBUTES"] = project_resource(phoenix_project)
    env["OTEL_EXPORTER_OTLP_ENDPOINT"] = phoenix.otlp_http_endpoint
    return env
