"""The exit codes of every ``harness`` command (pytest's); see :mod:`harness.cli`."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CONFIG = 2
EXIT_NO_SCENARIOS = 5
EXIT_INTERRUPTED = 130
