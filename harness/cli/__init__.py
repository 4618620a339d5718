"""``harness``: run scenario suites, score recorded traces, validate suites, list metrics.

Subcommands: ``run``, ``validate``, ``eval-traces``, ``compare``, ``draft``, ``metrics``,
``schema``, ``init``. Exit codes (as pytest): 0 every scenario passed (xfailed and xpassed
included), 1 a scenario failed or errored (``eval-traces``: also no trace found, or a line it
could not read; ``compare``: what ``--fail-on`` counts, by default a regression),
2 configuration or usage error (every problem found is listed), 5 no scenario selected, 130
interrupted by SIGINT, 143 ``harness run`` stopped by SIGTERM (128 + the signal, as a shell
reports it). After a first SIGINT (or ``run``'s SIGTERM) every report is still written for
what finished; a second signal stops at once. Flag defaults come from ``[tool.harness]`` /
``harness.toml`` and ``HARNESS_*``; a flag given wins over the variable, which wins over the
file (:mod:`harness.config`). See docs/architecture.md, "Threading and concurrency contracts".
"""

from __future__ import annotations

# the package's modules, each importing only those before it: exit_codes, parser, reporters,
# common, one per command (run, eval_traces, validate, commands: imported when that command
# runs), then entry (main)
from harness.cli.entry import main
from harness.cli.exit_codes import (
    EXIT_CONFIG,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_NO_SCENARIOS,
    EXIT_OK,
)
from harness.cli.parser import build_parser
from harness.cli.reporters import ReportFailed, ReportOptions, build_reporters

__all__ = [
    "EXIT_CONFIG",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_NO_SCENARIOS",
    "EXIT_OK",
    "ReportFailed",
    "ReportOptions",
    "build_parser",
    "build_reporters",
    "main",
]
