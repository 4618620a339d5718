"""GitHub Actions: an ``::error`` annotation per failing scenario, and the job summary.

On when ``GITHUB_ACTIONS=true`` (GitHub sets it in every job) or with ``--github``. Each
failed or errored scenario becomes one workflow command on stdout, pointing at the scenario's
line in its YAML file, so the failure shows on the file in the pull request::

    ::error file=scenarios/travel.yaml,line=7,title=FAILED travel%3A%3Aweather::reason%0Areason

The escaping is the one GitHub's toolkit applies (``@actions/core``, ``command.ts``): in the
message ``%``, ``\\r`` and ``\\n`` become ``%25``, ``%0D``, ``%0A``; in a property also ``:``
and ``,`` become ``%3A`` and ``%2C``. File paths are made relative to ``GITHUB_WORKSPACE`` (the
checkout), where GitHub resolves them.

A failed ``severity: warn`` rule is a ``::warning`` at the scenario's line, whatever the
scenario's status (it never fails the run); annotations of both kinds share the limit below.

On close, the Markdown summary (:mod:`harness.report.markdown`) is appended to the file
``$GITHUB_STEP_SUMMARY`` names, when it names one. GitHub shows at most 10 error annotations
per step and 50 per job: past :data:`MAX_ANNOTATIONS` one ``::notice`` says how many more.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from harness.report.markdown import MarkdownSummary
from harness.report.text import warning_lines
from harness.report.view import ScenarioView, SuiteView

__all__ = [
    "MAX_ANNOTATIONS",
    "GithubReporter",
    "annotation",
    "escape_data",
    "escape_property",
    "github_enabled",
    "workspace_path",
]

MAX_ANNOTATIONS = 50
"""Annotations written per run; GitHub drops the ones past its own per-job limit anyway."""

_MESSAGE_LIMIT = 4000


def github_enabled(flag: bool, environ: Mapping[str, str] | None = None) -> bool:
    """``--github``, or running inside GitHub Actions (``GITHUB_ACTIONS=true``)."""
    env = os.environ if environ is None else environ
    return flag or env.get("GITHUB_ACTIONS", "").strip().lower() == "true"


def escape_data(text: str) -> str:
    """A workflow command's message: ``%``, CR and LF percent-encoded."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: as the message, plus ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(
    kind: str, message: str, *, file: str | None = None, line: int | None = None, title: str = ""
) -> str:
    """One ``::kind file=...,line=...,title=...::message`` line (properties omitted if empty)."""
    properties = []
    if file:
        properties.append(f"file={escape_property(file)}")
    if line:
        properties.append(f"line={line}")
    if title:
        properties.append(f"title={escape_property(title)}")
    head = f"::{kind} {','.join(properties)}" if properties else f"::{kind}"
    return f"{head}::{escape_data(message)}"


def workspace_path(file: str, environ: Mapping[str, str]) -> str:
    """``file`` relative to the checkout (``GITHUB_WORKSPACE``), with forward slashes."""
    workspace = environ.get("GITHUB_WORKSPACE", "").strip()
    path = Path(file)
    if workspace:
        # a file outside the checkout keeps its own path (GitHub then shows no file link)
        with contextlib.suppress(ValueError, OSError):
            path = path.resolve().relative_to(Path(workspace).resolve())
    return path.as_posix()


class GithubReporter:
    """Annotations as failures arrive; the job summary appended when the run closes."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        summary_file: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        """Write commands to ``stream`` (stdout); the summary to ``summary_file``
        (default ``$GITHUB_STEP_SUMMARY``)."""
        self.environ = dict(os.environ if environ is None else environ)
        self.stream = stream if stream is not None else sys.stdout
        target = summary_file or self.environ.get("GITHUB_STEP_SUMMARY", "").strip()
        self.summary_file = Path(target) if target else None
        self._summary = MarkdownSummary()
        self.annotated = 0
        self.unannotated = 0

    def add(self, result: ScenarioView) -> None:
        """Annotate a failed or errored scenario at its YAML line (a ``::warning`` for each
        failed ``warn`` rule)."""
        self._summary.add(result)
        for line in warning_lines(result):
            self._annotate("warning", line, result, f"WARN {result.id}")
        if result.status not in ("failed", "error"):
            return
        lines = list(result.reasons) or [result.status]
        if result.trace_url:
            lines.append(f"trace: {result.trace_url}")
        self._annotate("error", "\n".join(lines), result, f"{result.status.upper()} {result.id}")

    def _annotate(self, kind: str, message: str, result: ScenarioView, title: str) -> None:
        """One annotation at the scenario's line, unless :data:`MAX_ANNOTATIONS` were made."""
        if self.annotated >= MAX_ANNOTATIONS:
            self.unannotated += 1
            return
        if len(message) > _MESSAGE_LIMIT:
            message = message[: _MESSAGE_LIMIT - 1] + "…"
        command = annotation(
            kind,
            message,
            file=workspace_path(result.file, self.environ),
            line=result.line,
            title=title,
        )
        self.stream.write(command + "\n")
        self.stream.flush()
        self.annotated += 1

    def close(self, summary: SuiteView) -> None:
        """Say how many failures went unannotated; annotate each regression against the
        baseline; append the summary to the job summary."""
        if summary.comparison is not None:
            from harness.compare import github_annotations

            for command in github_annotations(summary.comparison, self.environ):
                self.stream.write(command + "\n")
        if self.unannotated:
            self.stream.write(
                annotation(
                    "notice",
                    f"{self.unannotated} more failures, errors or warnings not annotated "
                    "(see the job summary)",
                )
                + "\n"
            )
            self.stream.flush()
        if self.summary_file is not None:
            with self.summary_file.open("a", encoding="utf-8") as out:
                out.write(self._summary.render(summary) + "\n")
        self._summary = MarkdownSummary()

    def abort(self) -> None:
        """Append nothing (annotations already written stay: they are true)."""
        self._summary = MarkdownSummary()
