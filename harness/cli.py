"""``harness``: run scenario suites, score recorded traces, validate suites, list metrics.

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

from harness.redaction import DEFAULT_REDACT_KEYS, Redactor
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
    _report_arguments(run)
    run.add_argument(
        "--fail-fast",
        action="store_true",
        help="start no new scenario after the first failure or error",
    )
    export = run.add_argument_group(
        "OpenTelemetry export (default: the OTEL_EXPORTER_OTLP_* variables; none set: no spans)"
    )
    export.add_argument(
        "--otlp-endpoint",
        metavar="URL",
        help="export every run as one trace to this OTLP endpoint, e.g. http://127.0.0.1:4318",
    )
    export.add_argument(
        "--otlp-protocol",
        choices=("http", "grpc"),
        help="OTLP transport (default http, or OTEL_EXPORTER_OTLP_PROTOCOL)",
    )
    export.add_argument(
        "--capture-content",
        action="store_true",
        help="export tool arguments/results and messages (default: "
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, else off); secrets stay masked",
    )
    export.add_argument(
        "--trace-file",
        metavar="FILE",
        help="also append the spans to FILE as OTLP JSON (input for `harness eval-traces`)",
    )

    evaluate = commands.add_parser(
        "eval-traces",
        help="score recorded traces (OTLP JSON files) against scenarios",
        epilog="Files are read as a stream, and memory stays flat however many traces they "
        "hold: the JSON and JUnit reports are written as each trace is scored and list every "
        "one; the console and the HTML report show at most 500 results (those that did not "
        "pass first) with the counts of all of them.",
    )
    evaluate.add_argument(
        "files", nargs="+", metavar="FILE", help="OTLP JSON files (collector file exporter format)"
    )
    evaluate.add_argument(
        "--scenarios",
        nargs="+",
        required=True,
        metavar="PATH",
        help="scenario files or folders whose expectations score the traces",
    )
    evaluate.add_argument(
        "--scenario",
        metavar="NAME",
        help="score every trace against this scenario (NAME or suite::NAME) instead of the "
        "one its root span names",
    )
    evaluate.add_argument(
        "-k",
        dest="keyword",
        metavar="SUBSTRING",
        help="only traces of scenarios whose 'suite::name' contains SUBSTRING (any case)",
    )
    _report_arguments(evaluate)

    validate = commands.add_parser(
        "validate", help="check scenario files and their expectations against the agents' tools"
    )
    validate.add_argument("paths", nargs="+", metavar="PATH")

    commands.add_parser("metrics", help="list the metrics with their options and defaults")
    return parser


def _report_arguments(parser: argparse.ArgumentParser) -> None:
    """``--junit-xml``, ``--json``, ``--html`` and the redaction options (run, eval-traces)."""
    parser.add_argument("--junit-xml", metavar="FILE", help="write a JUnit XML report")
    parser.add_argument("--json", dest="json_path", metavar="FILE", help="write a JSON report")
    parser.add_argument(
        "--html", dest="html_path", metavar="FILE", help="write a self-contained HTML report"
    )
    parser.add_argument(
        "--redact",
        action="append",
        default=[],
        metavar="KEY",
        help="also mask the values of argument/result keys matching KEY in reports and spans "
        f"(repeatable, or comma-separated; always masked: {', '.join(DEFAULT_REDACT_KEYS)})",
    )
    parser.add_argument(
        "--no-default-redact",
        action="store_true",
        help="mask only the --redact keys, not the default list",
    )


def _redactor(args: argparse.Namespace) -> Redactor:
    """The one Redactor of a command: the default keys (unless dropped) plus ``--redact``."""
    extra = [key.strip() for item in args.redact for key in item.split(",") if key.strip()]
    base = () if args.no_default_redact else DEFAULT_REDACT_KEYS
    return Redactor((*base, *extra))


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
        elif args.command == "eval-traces":
            code, lingering = _eval_traces(args, out, err), False
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
    try:
        redactor = _redactor(args)
    except ValueError as exc:
        err.print(f"--redact: {exc}", style="bold red", markup=False)
        return EXIT_CONFIG, False
    pipeline = _export_pipeline(args, redactor, err)
    if pipeline is False:
        return EXIT_CONFIG, False
    threads_before = set(threading.enumerate())
    reporter = _Progress(out, len(scenarios))
    options = RunOptions(
        concurrency=args.concurrency,
        repeat=args.repeat,
        timeout=args.timeout,
        fail_fast=args.fail_fast,
        progress=reporter.update,
        tracer_provider=pipeline.tracer_provider if pipeline is not None else None,
        capture_content=pipeline.capture_content if pipeline is not None else False,
        redactor=redactor,
    )
    try:
        with reporter:
            result = run_scenarios(scenarios, options)
    finally:
        # spans of a Ctrl-C'd run still go out; a hung backend is cut off by the timeout
        if pipeline is not None:
            pipeline.shutdown()
    render_console(result, out, redactor=redactor)
    _write_reports(result, args, out, err, redactor)
    lingering = any(
        t.is_alive() and not t.daemon for t in set(threading.enumerate()) - threads_before
    )
    if result.interrupted:
        return EXIT_INTERRUPTED, lingering
    return (EXIT_OK if result.ok else EXIT_FAILED), lingering


_OTEL_ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def _export_pipeline(args: argparse.Namespace, redactor: Redactor, err: Console) -> Any:
    """The OTLP/trace-file pipeline; None when nothing is exported, False on a config error."""
    wanted = args.otlp_endpoint or args.trace_file
    if not wanted and not any(
        os.environ.get(name, "").strip() for name in _OTEL_ENDPOINT_VARIABLES
    ):
        return None  # no exporter configured: do not even import the SDK
    from harness.export import ExportConfigError, configure_export

    def warn(line: str) -> None:
        err.print(f"warning: {line}", style="yellow", markup=False, highlight=False, soft_wrap=True)

    try:
        pipeline = configure_export(
            args.otlp_endpoint,
            args.otlp_protocol,
            capture_content=True if args.capture_content else None,
            redactor=redactor,
            trace_file=args.trace_file,
            warn=warn,
        )
    except ExportConfigError as exc:
        err.print(str(exc), style="bold red", markup=False, highlight=False, soft_wrap=True)
        return False
    return pipeline if pipeline.enabled else None


def _write_reports(
    result: SuiteResult,
    args: argparse.Namespace,
    out: Console,
    err: Console,
    redactor: Redactor,
) -> None:
    from harness.report.json_report import write_json
    from harness.report.junit import write_junit

    writers: list[tuple[str | None, Any]] = [
        (args.json_path, write_json),
        (args.junit_xml, write_junit),
        (args.html_path, _write_html),
    ]
    for path, writer in writers:
        if path:
            _write_one(path, writer, result, out, err, redactor)


def _write_one(
    path: str, writer: Any, result: SuiteResult, out: Console, err: Console, redactor: Redactor
) -> None:
    """Write one report; a failure is one red line, not the end of the command."""
    try:
        written = writer(result, path, redactor=redactor)
    except OSError as exc:
        err.print(f"cannot write report {path}: {exc.strerror or exc}", style="red")
        return
    except ImportError as exc:
        err.print(f"cannot write report {path}: {exc}", style="red", markup=False)
        return
    out.print(f"report written: {written or path}", highlight=False)


def _write_html(result: SuiteResult, path: str, *, redactor: Redactor) -> str:
    from harness.report.html import write_html

    write_html(result, path, redactor=redactor)
    return path


_MAX_TRACE_ROWS = 200
"""Console rows for eval-traces: beyond this only traces that did not pass are listed."""


def _eval_traces(args: argparse.Namespace, out: Console, err: Console) -> int:
    from harness.evaluate_traces import (
        KEPT_RESULTS,
        ScenarioIndex,
        UnknownScenarioError,
        evaluate_traces,
    )
    from harness.report.console import render_console
    from harness.scenarios import iter_scenarios, select

    try:
        redactor = _redactor(args)
    except ValueError as exc:
        err.print(f"--redact: {exc}", style="bold red", markup=False)
        return EXIT_CONFIG
    missing = [path for path in args.files if not os.path.isfile(path)]
    if missing:
        err.print(f"no such trace file: {', '.join(missing)}", style="bold red", markup=False)
        return EXIT_CONFIG
    suites = _load(args.scenarios, err)
    if suites is None:
        return EXIT_CONFIG
    scenarios = list(iter_scenarios(suites))
    only = None
    if args.scenario:
        try:
            only = ScenarioIndex(scenarios).named(args.scenario)
        except UnknownScenarioError as exc:
            err.print(str(exc), style="bold red", markup=False, highlight=False, soft_wrap=True)
            return EXIT_CONFIG
    chosen = {id(s) for s in select(scenarios, args.keyword)} if args.keyword else None

    def selected(scenario: Any) -> bool:
        return chosen is None or id(scenario) in chosen

    unreadable: list[Any] = []
    streams = _TraceReports(args, redactor, err)
    try:
        result = evaluate_traces(
            args.files,
            scenarios,
            only=only,
            selected=selected,
            errors=unreadable,
            progress=streams.add,
            keep=KEPT_RESULTS,
        )
    except BaseException:
        streams.abort()
        raise
    render_console(result, out, redactor=redactor, max_rows=_MAX_TRACE_ROWS)
    streams.close(result, out)
    if args.html_path:
        _write_one(args.html_path, _write_html, result, out, err, redactor)
    if result.interrupted:
        return EXIT_INTERRUPTED
    if not result.total:
        err.print("no traces found in " + " ".join(args.files), style="bold red", markup=False)
        return EXIT_FAILED
    # an unreadable line may have held a failing trace: do not call the run clean
    return EXIT_OK if result.ok and not unreadable else EXIT_FAILED


class _TraceReports:
    """The JSON and JUnit reports of eval-traces, written as each result is scored.

    The result the reports are closed with is a bounded sample (counts of everything); the
    writers saw every result. A writer that fails (cannot create its file, disk full) says so
    once and is dropped; the others carry on.
    """

    def __init__(self, args: argparse.Namespace, redactor: Redactor, err: Console) -> None:
        from harness.report.json_report import JsonReportWriter
        from harness.report.junit import JunitReportWriter

        self.err = err
        self.writers: list[tuple[str, Any]] = []
        wanted: list[tuple[str | None, Any]] = [
            (args.json_path, JsonReportWriter),
            (args.junit_xml, JunitReportWriter),
        ]
        for path, kind in wanted:
            if not path:
                continue
            try:
                self.writers.append((path, kind(path, redactor=redactor)))
            except OSError as exc:
                self._failed(path, exc)

    def _failed(self, path: str, exc: OSError) -> None:
        self.err.print(
            f"cannot write report {path}: {exc.strerror or exc}", style="red", markup=False
        )

    def add(self, result: ScenarioResult) -> None:
        """Hand one scored trace to every writer."""
        for entry in list(self.writers):
            path, writer = entry
            try:
                writer.add(result)
            except OSError as exc:
                self._failed(path, exc)
                writer.abort()
                self.writers.remove(entry)

    def close(self, result: SuiteResult, out: Console) -> None:
        """Finish every report with the run's counts and warnings."""
        for path, writer in self.writers:
            try:
                written = writer.close(result)
            except OSError as exc:
                self._failed(path, exc)
                continue
            out.print(f"report written: {written}", highlight=False)
        self.writers = []

    def abort(self) -> None:
        """Drop every partial report."""
        for _, writer in self.writers:
            writer.abort()
        self.writers = []


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
