"""Traces and log events of the official GenAI instrumentation, made in a process of their own
(tests/support/genai_events_run.py: its instrumentor patches LangChain for the whole process)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT


def produce(folder: Path, runner: str = "tests.support.genai_events_run") -> Path:
    """Write spans.jsonl, logs.jsonl and logs.pb of two agent runs into ``folder`` (``runner``:
    the module that runs them, in a process of its own)."""
    done = subprocess.run(
        [sys.executable, "-m", runner, str(folder)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return folder
