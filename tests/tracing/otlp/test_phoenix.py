"""``--from phoenix://``: the address, the time window, and a Phoenix that is down or silent.

A real pull from a real Phoenix is in tests/integration/test_phoenix_pull.py (``make
test-integration``). Here the other end is a port on 127.0.0.1 that refuses connections, or one
that accepts and never answers: each is one error naming the URL, within the timeout.
"""

from __future__ import annotations

import socket
import time
from datetime import datetime, timedelta, timezone

import pytest

from harness.cli import main
from tests.support.paths import SCENARIOS
from tracing.otlp.file_format import OtlpJsonReader
from tracing.otlp.inputs import InputError, parse_when, trace_inputs
from tracing.otlp.phoenix import PhoenixSource, parse_phoenix_url


@pytest.mark.parametrize(
    ("url", "base", "project"),
    [
        ("phoenix://127.0.0.1:6006/default", "http://127.0.0.1:6006", "default"),
        ("phoenix://host:1/my%20app", "http://host:1", "my app"),
        ("phoenix+https://example.org/phoenix/prod/", "https://example.org/phoenix", "prod"),
    ],
)
def test_the_address_names_the_api_and_the_project(url: str, base: str, project: str) -> None:
    address = parse_phoenix_url(url)
    assert (address.base_url, address.project) == (base, project)


@pytest.mark.parametrize("url", ["http://127.0.0.1:6006/p", "phoenix://127.0.0.1:6006", "p"])
def test_a_wrong_address_is_a_configuration_error(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(InputError, match="not a Phoenix address"):
        trace_inputs([], pull=url)
    assert main(["eval-traces", "--from", url, "--scenarios", str(SCENARIOS)]) == 2
    assert "not a Phoenix address" in capsys.readouterr().err


def test_times_ago_and_iso_times() -> None:
    now = datetime(2025, 6, 2, 12, tzinfo=timezone.utc)
    assert parse_when("24h", "--since", now) == now - timedelta(hours=24)
    assert parse_when("90s", "--since", now) == now - timedelta(seconds=90)
    assert parse_when("2w", "--since", now) == now - timedelta(weeks=2)
    assert parse_when("2025-06-01T10:00:00Z", "--until", now) == datetime(
        2025, 6, 1, 10, tzinfo=timezone.utc
    )
    with pytest.raises(InputError, match="--since 'yesterday'"):
        parse_when("yesterday", "--since", now)
    with pytest.raises(InputError, match="give --from too"):
        trace_inputs(["x"], since="1h")
    with pytest.raises(InputError, match="is not before"):
        trace_inputs([], pull="phoenix://h:1/p", since="1h", until="2h")


def _errors(source: PhoenixSource) -> list[str]:
    reader = OtlpJsonReader(source)
    assert list(reader.iter_traces()) == []
    return [str(error) for error in reader.errors]


def test_a_phoenix_that_is_down_is_one_error_naming_it() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again when the block ends: nothing listens
    url = f"phoenix://127.0.0.1:{port}/demo"
    (error,) = _errors(PhoenixSource(url, timeout=5))
    assert error.startswith(f"{url}: page 1: cannot reach Phoenix at http://127.0.0.1:{port}")
    assert "\n" not in error


def test_a_phoenix_that_never_answers_times_out() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)  # connections are accepted by the kernel, never answered
        url = f"phoenix://127.0.0.1:{sock.getsockname()[1]}/demo"
        started = time.monotonic()
        (error,) = _errors(PhoenixSource(url, timeout=1))
    assert time.monotonic() - started < 30
    assert "gave no answer within" in error or "timed out" in error, error
