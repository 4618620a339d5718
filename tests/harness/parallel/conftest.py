"""Fixtures of the process-pool tests."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest


@pytest.fixture
def ctrl_c_raises() -> Iterator[None]:
    """SIGINT handled as Python handles it by default (KeyboardInterrupt), whatever this process
    inherited: a command a shell starts in the background starts with SIGINT ignored, and then
    a Ctrl-C forwarded to it rightly does nothing."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
