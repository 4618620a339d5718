"""``harness``: run scenario suites, validate them, list metrics.

Exit codes (as pytest): 0 every scenario passed (xfailed and xpassed included), 1 a scenario
failed or errored, 2 configuration error (every problem found is listed), 130 interrupted.
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
import threading
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from harness.result import ScenarioResult, SuiteResult

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CONFIG = 2
EXIT_INTERRUPTED = 130


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="harness",
        description="Run YAML tool-call scenarios against LangChain / LangGraph agents.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="run scenario files and report")
    run.add_argument("paths", nargs="+", metavar="PATH", help="scenario files or folders")
    run.add_argument(
        "-k",
        dest="keyword",
        metavar="SUBSTRING",
        help="only scenarios whose 'suite::name' contains SUBSTRING (any case)",
    )
    run.add_argument(
        "--concurrency",
        type=_positive_int,
        default=8,
        metavar="N",
        help="scenarios run at once (default 8)",
    )
    run.add_argument(
        "--repeat",
        type=_positive_int,
        metavar="N",
        help="runs per scenario, overriding the files' repeat",
    )
    run.add_argument(
        "--timeout",
        type=_positive_float,
        metavar="S",
        help="seconds per run, overriding the files' timeout",
    )
    run.add_argument("--junit-xml", metavar="FILE", help="write a JUnit XML report")
    run.add_argument("--json", dest="json_path", metavar="FILE", help="write a JSON report")
    run.add_argument(
        "--fail-fast",
        action="store_true",
        help="start no new scenario after the first failure or error",
    )

    validate = commands.add_parser(
        "validate", help="check scenario files and their expectations against the agents' tools"
    )
    validate.add_argument("paths", nargs="+", metavar="PATH")

    commands.add_parser("metrics", help="list the metrics with their options and defaults")
    return parser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds as a number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {value:g}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: parse ``argv`` (default ``sys.argv[1:]``), run, return the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code) if isinstance(exc.code, int) else EXIT_CONFIG
    out = Console()
    err = Console(stderr=True)
    try:
        if args.command == "run":
            code, lingering = _run(args, out, err)
        elif args.command == "validate":
            code, lingering = _validate(args.paths, out, err), False
        else:
            code, lingering = _metrics(out), False
    except KeyboardInterrupt:
        err.print("interrupted")
        code, lingering = EXIT_INTERRUPTED, False
    if argv is None and lingering:
        # a sync agent or tool is still hung on a worker thread after its timeout: the report
        # is written, so leave now instead of waiting for it forever
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _load(paths: Sequence[str], err: Console) -> Any:
    from harness.scenarios import ConfigError, load_paths

    try:
        return load_paths(paths)
    except ConfigError as exc:
        _print_issues(exc.issues, err)
        return None


def _print_issues(issues: Sequence[Any], err: Console) -> None:
    for issue in issues:
        err.print(str(issue), markup=False, highlight=False, soft_wrap=True)
    count = len(issues)
    err.print(f"{count} configuration error{'s' if count != 1 else ''}", style="bold red")


def _run(args: argparse.Namespace, out: Console, err: Console) -> tuple[int, bool]:
    from harness.report.console import render_console
    from harness.runner import RunOptions, run_scenarios
    from harness.scenarios import iter_scenarios, select

    suites = _load(args.paths, err)
    if suites is None:
        return EXIT_CONFIG, False
    scenarios = select(iter_scenarios(suites), args.keyword)
    if not scenarios:
        where = f" matching -k {args.keyword!r}" if args.keyword else ""
        err.print(f"no scenarios{where} in {' '.join(args.paths)}", style="bold red")
        return EXIT_CONFIG, False
    threads_before = set(threading.enumerate())
    reporter = _Progress(out, len(scenarios))
    options = RunOptions(
        concurrency=args.concurrency,
        repeat=args.repeat,
        timeout=args.timeout,
        fail_fast=args.fail_fast,
        progress=reporter.update,
    )
    with reporter:
        result = run_scenarios(scenarios, options)
    render_console(result, out)
    _write_reports(result, args, out, err)
    lingering = any(
        t.is_alive() and not t.daemon for t in set(threading.enumerate()) - threads_before
    )
    if result.interrupted:
        return EXIT_INTERRUPTED, lingering
    return (EXIT_OK if result.ok else EXIT_FAILED), lingering


def _write_reports(
    result: SuiteResult, args: argparse.Namespace, out: Console, err: Console
) -> None:
    from harness.report.json_report import write_json
    from harness.report.junit import write_junit

    for path, writer in ((args.json_path, write_json), (args.junit_xml, write_junit)):
        if not path:
            continue
        try:
            written = writer(result, path)
        except OSError as exc:
            err.print(f"cannot write report {path}: {exc.strerror or exc}", style="red")
            continue
        out.print(f"report written: {written}", highlight=False)


class _Progress:
    """A live bar on a terminal; one plain line per finished scenario otherwise (CI logs)."""

    def __init__(self, console: Console, total: int) -> None:
        self.console = console
        self.total = total
        self.done = 0
        self.live = console.is_terminal
        self.bar: Progress | None = None
        self.task: Any = None

    def __enter__(self) -> _Progress:
        if self.live:
            self.bar = Progress(
                TextColumn("[bold]scenarios"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.description}"),
                console=self.console,
                transient=True,
            )
            self.bar.__enter__()
            self.task = self.bar.add_task("", total=self.total)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)

    def update(self, result: ScenarioResult) -> None:
        """Called by the runner as each scenario finishes."""
        self.done += 1
        if self.bar is not None:
            self.bar.update(self.task, advance=1, description=f"{result.status} {result.id}")
            return
        self.console.print(
            f"[{self.done}/{self.total}] {result.status.upper():8} {result.id} "
            f"({result.duration:.2f}s)",
            markup=False,
            highlight=False,
        )


def _validate(paths: Sequence[str], out: Console, err: Console) -> int:
    from harness.scenarios import check_tools, iter_scenarios

    suites = _load(paths, err)
    if suites is None:
        return EXIT_CONFIG
    issues = check_tools(suites)
    if issues:
        _print_issues(issues, err)
        return EXIT_CONFIG
    count = sum(1 for _ in iter_scenarios(suites))
    out.print(f"{len(suites)} file(s), {count} scenario(s): OK", highlight=False)
    return EXIT_OK


def _metrics(out: Console) -> int:
    from harness.metrics import metric_names, metric_options
    from harness.metrics.registry import get_metric

    table = Table(show_lines=False)
    table.add_column("metric", style="cyan", no_wrap=True)
    table.add_column("options (default)")
    table.add_column("description")
    for name in metric_names():
        try:
            options = metric_options(name)
            metric = get_metric(name)
        except Exception as exc:  # a broken plugin should not hide the others
            table.add_row(name, "", f"cannot load: {exc}")
            continue
        shown = ", ".join(
            f"{key}={'(required)' if value is inspect.Parameter.empty else _default(value)}"
            for key, value in options.items()
        )
        doc = (inspect.getdoc(type(metric)) or "").splitlines()
        table.add_row(name, shown, doc[0] if doc else "")
    out.print(table)
    return EXIT_OK


def _default(value: Any) -> str:
    if callable(value):
        return getattr(value, "__name__", repr(value))
    return repr(value)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
