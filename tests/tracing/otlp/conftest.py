"""One real export of the demo suites, shared by the format tests: ``harness run`` on the shipped
scenarios with ``--trace-file`` (the OTLP JSON lines baseline) and ``--otlp-endpoint`` into a
local receiver (the protobuf requests the real OTLP/HTTP exporter sent), then every other format
made from those requests (tests/support/trace_formats.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.cli import main
from tests.support.otlp_receiver import otlp_receiver
from tests.support.paths import SCENARIOS
from tests.support.trace_formats import write_formats


@dataclass(frozen=True)
class DemoExport:
    """The demo suites' traces: the trace file, the exported bodies, every format's inputs."""

    trace_file: Path
    bodies: list[bytes]
    formats: dict[str, list[str]]


@pytest.fixture(scope="package")
def demo_export(tmp_path_factory: pytest.TempPathFactory) -> DemoExport:
    """Run the demo suites once, exporting to a file and to a local OTLP endpoint."""
    folder = tmp_path_factory.mktemp("demo-export")
    trace_file = folder / "run.jsonl"
    with otlp_receiver() as server:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}"
        argv = ["run", str(SCENARIOS), "--trace-file", str(trace_file), "--capture-content"]
        argv += ["--otlp-endpoint", endpoint, "--json", str(folder / "run.json")]
        assert main(argv) == 0
        bodies = list(server.bodies)
    assert bodies, "the OTLP exporter sent nothing"
    return DemoExport(trace_file, bodies, write_formats(bodies, folder / "formats"))
