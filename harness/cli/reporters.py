"""The reporters the report flags ask for, shared by ``harness run`` and ``harness eval-traces``."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from harness.report.base import Reporter


@dataclass(frozen=True, slots=True)
class ReportOptions:
    """What the report flags asked for, and where the console report goes."""

    console: Console
    json_path: str | None = None
    junit_xml: str | None = None
    html_path: str | None = None
    max_rows: int | None = None
    """Console table rows before only the results that did not pass are listed."""
    keep: int | None = None
    """Results the console and HTML reports keep (eval-traces: its bounded sample)."""
    markdown_path: str | None = None
    github: bool = False
    """``--github``; GitHub's own runners turn it on with ``GITHUB_ACTIONS=true``."""
    quiet: bool = False
    """``-q``: the console prints only the summary line."""
    verbose: bool = False
    """``-v``: the console shows a provider error's or a cassette miss's traceback too."""


ReportFailed = Callable[[Any, Exception], None]
"""Told once that a report cannot be written: its path (or the reporter), and why."""


def build_reporters(options: ReportOptions, failed: ReportFailed) -> list[Reporter]:
    """The reporters the flags ask for, in output order: console, JSON, JUnit, HTML, Markdown,
    GitHub.

    A file reporter that cannot be created (an unwritable folder) goes to ``failed`` and is
    left out; the others still report. A new output is one module plus one line below.
    """
    from harness.report.console import ConsoleReporter
    from harness.report.github import GithubReporter, github_enabled
    from harness.report.html import HtmlReporter
    from harness.report.json_report import JsonReporter
    from harness.report.junit import JunitReporter
    from harness.report.markdown import MarkdownReporter

    wanted: list[tuple[str | None, Callable[[str], Reporter]]] = [
        (options.json_path, JsonReporter),
        (options.junit_xml, JunitReporter),
        (options.html_path, lambda path: HtmlReporter(path, keep=options.keep)),
        (options.markdown_path, MarkdownReporter),
        (
            "$GITHUB_STEP_SUMMARY" if github_enabled(options.github) else None,
            lambda _target: GithubReporter(),
        ),
    ]
    console = ConsoleReporter(
        options.console,
        max_rows=options.max_rows,
        keep=options.keep,
        quiet=options.quiet,
        verbose=options.verbose,
    )
    reporters: list[Reporter] = [console]
    for path, make in wanted:
        if not path:
            continue
        try:
            reporters.append(make(path))
        except OSError as exc:
            failed(path, exc)
    return reporters


def report_options(
    args: argparse.Namespace,
    out: Console,
    *,
    max_rows: int | None = None,
    keep: int | None = None,
) -> ReportOptions:
    """The :class:`ReportOptions` of parsed ``run`` / ``eval-traces`` flags."""
    return ReportOptions(
        out,
        args.json_path,
        args.junit_xml,
        args.html_path,
        max_rows,
        keep,
        markdown_path=args.markdown_path,
        github=args.github,
        quiet=args.quiet,
        verbose=args.verbose,
    )


def report_failed(err: Console) -> ReportFailed:
    """Says once that a report cannot be written (a path, or the reporter that failed)."""

    def failed(where: Any, exc: Exception) -> None:
        path = getattr(where, "path", where)
        reason = (exc.strerror or exc) if isinstance(exc, OSError) else exc
        err.print(
            f"cannot write report {path}: {reason}", style="red", markup=False, soft_wrap=True
        )

    return failed


def print_written(paths: Sequence[Any], out: Console) -> None:
    """One ``report written: PATH`` line per report file."""
    for path in paths:
        out.print(f"report written: {path}", highlight=False, soft_wrap=True)
