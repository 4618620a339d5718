"""Fixtures every test folder shares: the fixture agent and suite files written over it."""

from __future__ import annotations

import signal
import threading
import warnings
from collections.abc import Callable, Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.support.otlp_receiver import otlp_receiver
from tests.support.paths import AGENT_FILE
from tests.support.suites import fixture_suite

_STOPS = (signal.SIGINT, signal.SIGTERM)


@pytest.fixture(autouse=True)
def _stop_handlers_put_back(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each test starts with the stop handlers the session had: one that leaves SIGINT or
    SIGTERM changed (a command run in-process) is named in a warning, and its handler put back,
    so a later test's Ctrl-C is not swallowed (seen once in CI: two stop-signal tests on one
    worker got no KeyboardInterrupt)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {signum: signal.getsignal(signum) for signum in _STOPS}
    yield
    for signum, handler in before.items():
        if signal.getsignal(signum) is not handler:
            signal.signal(signum, handler)
            name = signal.Signals(signum).name
            warnings.warn(f"{request.node.nodeid} left the {name} handler changed", stacklevel=1)


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
