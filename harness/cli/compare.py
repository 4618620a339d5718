"""``harness compare BASE.json HEAD.json``: what changed between two runs, and the exit code.

Imports only what it needs, when it runs: the parser's part (:func:`add_parser`) is argparse
alone, and the command reads two files and prints — no LangChain, no agent, no model.
Exit codes: 0 nothing ``--fail-on`` counts, 1 something it counts (default: a regression),
2 a report that cannot be read or a file that cannot be written (the message says which and
why; never a traceback).
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.cli.exit_codes import EXIT_CONFIG, EXIT_FAILED, EXIT_OK
from harness.cli.parser import _positive_int  # the one count flag type of every command

if TYPE_CHECKING:
    from rich.console import Console

    from harness.compare import Comparison, Report, RunBaseline

__all__ = [
    "add_baseline_arguments",
    "add_parser",
    "baseline_exit_code",
    "compare_command",
    "load_baseline",
]

DEFAULT_ALPHA = 0.05  # harness.compare.DEFAULT_ALPHA, not imported here: --help stays cheap
FAIL_ON = ("regressions", "any", "none")  # harness.compare.FAIL_ON, for the same reason


def add_parser(commands: Any) -> None:
    """``harness compare``'s arguments."""
    compare: argparse.ArgumentParser = commands.add_parser(
        "compare",
        help="compare two JSON reports: regressions, fixes, significant pass-rate changes",
        description="Match the scenarios of two JSON reports (--json of `harness run` or "
        "`eval-traces`) by suite::name and say, for each, whether it regressed, was fixed, "
        "still fails, changed or is new. A scenario run more than once (repeat:) regresses "
        "only when its pass rate drops significantly (one-sided Fisher exact test).",
    )
    compare.add_argument("base", metavar="BASE.json", help="the baseline report (e.g. main's)")
    compare.add_argument("head", metavar="HEAD.json", help="the report to judge against it")
    compare.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="regressions",
        help="exit 1 on: a regression (default); any change at all, a fix included; never",
    )
    compare.add_argument(
        "--alpha",
        type=_alpha,
        default=DEFAULT_ALPHA,
        metavar="A",
        help="significance level of the pass-rate test for repeated scenarios (default 0.05)",
    )
    compare.add_argument(
        "--k",
        type=_positive_int,
        default=None,
        metavar="K",
        help="report pass@K and pass^K (default: K = each scenario's number of runs)",
    )
    compare.add_argument(
        "--json", dest="json_path", metavar="FILE", help="write the comparison as JSON"
    )
    compare.add_argument(
        "--markdown",
        dest="markdown_path",
        metavar="FILE",
        help="write the comparison as a Markdown summary (GitLab, PR comments)",
    )
    compare.add_argument(
        "--github",
        action="store_true",
        help="GitHub annotations for each regression and the job summary (on by itself when "
        "GITHUB_ACTIONS=true)",
    )
    output = compare.add_mutually_exclusive_group()
    output.add_argument("-q", "--quiet", action="store_true", help="print only the summary line")
    output.add_argument(
        "-v", "--verbose", action="store_true", help="list the unchanged scenarios too"
    )


def add_baseline_arguments(parser: argparse.ArgumentParser) -> None:
    """``--baseline``, ``--fail-on``, ``--alpha``, ``--k`` of ``run`` and ``eval-traces``."""
    parser.add_argument(
        "--baseline",
        metavar="BASE.json",
        help="compare this run with a JSON report (e.g. main's) when it ends: a 'Compared "
        "with baseline' block, a comparison section in the reports, exit 1 on a regression",
    )
    parser.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="regressions",
        help="with --baseline, exit 1 as well on: a regression (default); any change at all; never",
    )
    parser.add_argument(
        "--alpha",
        type=_alpha,
        default=DEFAULT_ALPHA,
        metavar="A",
        help="with --baseline, the significance level of the pass-rate test (default 0.05)",
    )
    parser.add_argument(
        "--k",
        type=_positive_int,
        default=None,
        metavar="K",
        help="report pass@K and pass^K of repeated scenarios (default: K = their runs)",
    )


def load_baseline(args: argparse.Namespace, err: Console) -> RunBaseline | int | None:
    """The :class:`~harness.compare.RunBaseline` of ``--baseline`` (None without one), or
    :data:`EXIT_CONFIG` with the reason printed: a run does not start on a bad baseline."""
    if not getattr(args, "baseline", None):
        return None
    from harness.compare import RunBaseline, load_report
    from harness.errors import ReportError

    try:
        report = load_report(args.baseline)
    except ReportError as exc:
        err.print(
            f"--baseline: {exc}", style="bold red", markup=False, highlight=False, soft_wrap=True
        )
        return EXIT_CONFIG
    return RunBaseline(report, alpha=args.alpha, k=args.k)


def baseline_exit_code(
    code: int, baseline: RunBaseline | None, args: argparse.Namespace, err: Console
) -> int:
    """The run's exit code ``code``; 1 when it was 0 and ``--fail-on`` counts what the
    comparison found; 2 when the run could not be compared (why printed)."""
    if baseline is None:
        return code
    comparison = baseline.comparison
    if comparison is None:
        if baseline.error is not None:
            err.print(str(baseline.error), style="bold red", markup=False, soft_wrap=True)
        return code if code != EXIT_OK else EXIT_CONFIG
    if code == EXIT_OK and comparison.fails(args.fail_on):
        return EXIT_FAILED
    return code


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a level between 0 and 1, got {text}")
    return value


def compare_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    """``harness compare``: read both reports, print the comparison, write the files asked
    for; the exit code."""
    from harness.compare import compare_reports, console_block, summary_rule

    sides = _load(args.base, args.head, err)
    if sides is None:
        return EXIT_CONFIG
    comparison = compare_reports(*sides, alpha=args.alpha, k=args.k)
    if args.quiet:
        out.print(summary_rule(comparison))
    else:
        title = f"{args.base} → {args.head}"
        out.print(console_block(comparison, title=title, verbose=args.verbose))
    if not _write_files(comparison, args, out, err):
        return EXIT_CONFIG
    return EXIT_FAILED if comparison.fails(args.fail_on) else EXIT_OK


def _load(base: str, head: str, err: Console) -> tuple[Report, Report] | None:
    """Both reports; None (every problem printed, both files' not only the first) if either
    cannot be read."""
    from harness.compare import load_report
    from harness.errors import ReportError

    loaded = []
    for path in (base, head):
        try:
            loaded.append(load_report(path))
        except ReportError as exc:
            err.print(str(exc), style="bold red", markup=False, highlight=False, soft_wrap=True)
    if len(loaded) != 2:
        return None
    return loaded[0], loaded[1]


def _write_files(
    comparison: Comparison, args: argparse.Namespace, out: Console, err: Console
) -> bool:
    """``--json``, ``--markdown``, ``--github``; False (the reason printed) if one failed."""
    from harness.compare import comparison_json, github_annotations, markdown_lines
    from harness.report.github import github_enabled

    markdown = "\n".join(markdown_lines(comparison, title="toolcall-harness compare")) + "\n"
    outputs: list[tuple[str, str, Callable[[Path, bytes], None]]] = []
    if args.json_path:
        section = {"comparison": comparison_json(comparison)}
        body = json.dumps(section, indent=2, ensure_ascii=False) + "\n"
        outputs.append((args.json_path, body, _replace))
    if args.markdown_path:
        outputs.append((args.markdown_path, markdown, _replace))
    if github_enabled(args.github):
        for command in github_annotations(comparison):
            out.file.write(command + "\n")
        summary = os.environ.get("GITHUB_STEP_SUMMARY", "").strip()
        if summary:  # other steps append to the job summary too
            outputs.append((summary, markdown, _append))
    ok = True
    for path, text, write in outputs:
        try:
            write(Path(path), text.encode("utf-8", "backslashreplace"))
        except OSError as exc:
            err.print(
                f"{path}: cannot write: {exc.strerror or exc}",
                style="bold red",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
            ok = False
    return ok


def _replace(path: Path, data: bytes) -> None:
    """Write ``path`` whole (a reader never sees half of it), creating its folder."""
    from harness.report.files import atomic_output

    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(path) as target:
        target.write(data)


def _append(path: Path, data: bytes) -> None:
    with path.open("ab") as target:
        target.write(data)
