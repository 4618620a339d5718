"""Fixtures every test folder shares: the fixture agent and suite files written over it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.support.otlp_receiver import otlp_receiver
from tests.support.paths import AGENT_FILE
from tests.support.suites import fixture_suite


@pytest.fixture
def agent_file() -> Path:
    """The fixture agent (a LangGraph tool loop over the scripted model)."""
    return AGENT_FILE


@pytest.fixture
def write_suite(tmp_path: Path) -> Callable[..., Path]:
    """``write_suite(scenarios, file=..., suite=..., header=...)``: a suite file in ``tmp_path``."""

    def write(scenarios: str, **options: str) -> Path:
        return fixture_suite(tmp_path, scenarios, **options)

    return write


@pytest.fixture
def receiver() -> Iterator[ThreadingHTTPServer]:
    """A real OTLP/HTTP endpoint on 127.0.0.1 keeping every request's body and headers."""
    with otlp_receiver() as server:
        yield server
