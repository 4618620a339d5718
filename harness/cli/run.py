"""``harness``: run scenario suites, score recorded traces, validate suites, list metrics.

Subcommands: ``run``, ``validate``, ``eval-traces``, ``draft``, ``metrics``, ``schema``,
``init``. Exit codes (as pytest): 0 every scenario passed (xfailed and xpassed included), 1 a
scenario failed or errored (``eval-traces``: also no trace found, or a line it could not read),
2 configuration or usage error (every problem found is listed), 5 no scenario selected, 130
interrupted by SIGINT, 143 ``harness run`` stopped by SIGTERM (128 + the signal, as a shell
reports it). After a first SIGINT (or ``run``'s SIGTERM) every report is still written for
what finished; a second signal stops at once. Flag defaults come from ``[tool.harness]`` /
``harness.toml`` and ``HARNESS_*``; a flag given wins over the variable, which wins over the
file (:mod:`harness.config`). See docs/architecture.md, "Threading and concurrency contracts".
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from harness import __version__
from harness.redaction import DEFAULT_REDACT_KEYS, Redactor

if TYPE_CHECKING:
    from harness.report.base import Reporter

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CONFIG = 2
EXIT_NO_SCENARIOS = 5
EXIT_INTERRUPTED = 130

CONSOLE_ROWS = 50
"""``harness run``: past this many scenarios the table lists only those that did not pass."""


def build_parser(defaults: Mapping[str, Any] | None = None) -> argparse.ArgumentParser:
    """The argument parser of every subcommand; ``defaults``: the settings' flag defaults."""
    parser = argparse.ArgumentParser(
        prog="harness",
        description="Run YAML tool-call scenarios against LangChain / LangGraph agents.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="run scenario files and report")
    run.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="scenario files or folders, or FILE::SCENARIO (default: the configured paths)",
    )
    run.add_argument(
        "-k",
        dest="keyword",
        action="append",
        default=[],
        metavar="EXPR",
        help="only scenarios matching EXPR, pytest's -k: words (any case, substrings of the "
        "name, suite, file or tags) with and/or/not/(); repeatable: all must hold",
    )
    from harness.selection import add_arguments as add_selection_arguments

    add_selection_arguments(run)
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
    from harness.cassettes.session import add_arguments as add_cassette_arguments

    add_cassette_arguments(run)
    run.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="list the YAML files that are not suites, every scenario in the table, and the "
        "traceback of a provider error or cassette miss",
    )
    run.add_argument(
        "-q", "--quiet", action="store_true", help="print only the summary line (and errors)"
    )
    run.add_argument(
        "-x",
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
    content = export.add_mutually_exclusive_group()
    content.add_argument(
        "--capture-content",
        action="store_const",
        const=True,
        dest="capture_content",
        help="export tool arguments/results and messages (backend default: "
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, else off; --trace-file: on); "
        "secrets stay masked",
    )
    content.add_argument(
        "--no-capture-content",
        action="store_const",
        const=False,
        dest="capture_content",
        help="keep content out of the --trace-file too (eval-traces then cannot check "
        "arguments or the final answer)",
    )
    export.add_argument(
        "--trace-file",
        metavar="FILE",
        help="also append the spans to FILE as OTLP JSON (input for `harness eval-traces`)",
    )
    export.add_argument(
        "--otlp-header",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an OTLP request header, e.g. x-api-key=... (repeatable; merged over "
        "OTEL_EXPORTER_OTLP_HEADERS)",
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
        action="append",
        default=[],
        metavar="EXPR",
        help="only traces of scenarios matching EXPR (pytest's -k, as for `harness run`)",
    )
    evaluate.add_argument(
        "--workers",
        type=_positive_int,
        default=None,
        metavar="N",
        help="score in N processes, each taking a part of the input (default: the number of "
        "cores); the results and reports are the same as with --workers 1",
    )
    _report_arguments(evaluate)
    if defaults:
        run.set_defaults(**defaults)
        evaluate.set_defaults(**defaults)

    validate = commands.add_parser(
        "validate", help="check scenario files and their expectations against the agents' tools"
    )
    validate.add_argument("paths", nargs="+", metavar="PATH")

    commands.add_parser("metrics", help="list the metrics with their options and defaults")
    commands.add_parser(
        "schema", help="print the JSON Schema (2020-12) of the scenario format, for editors"
    )

    from harness.draft import add_parser as add_draft_parser

    add_draft_parser(commands)

    init = commands.add_parser("init", help="write a starter project (agent, suite, pytest test)")
    init.add_argument("directory", nargs="?", default=".", metavar="DIR", help="default: .")
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
    parser.add_argument(
        "--redact-pattern",
        action="append",
        default=[],
        type=_value_pattern,
        metavar="REGEX",
        help="also mask every match of REGEX in any value or text, whatever its key (repeatable); "
        "'builtin' masks OpenAI sk-... keys, GitHub ghp_... tokens, AWS AKIA... key ids and JWTs "
        "('builtin:NAME' one of openai, github, aws, jwt)",
    )
    parser.add_argument(
        "--markdown",
        dest="markdown_path",
        metavar="FILE",
        help="write a Markdown summary (counts, failures, match tables): GitLab, PR comments",
    )
    parser.add_argument(
        "--github",
        action="store_true",
        help="GitHub annotations and job summary (on by itself when GITHUB_ACTIONS=true)",
    )
    parser.add_argument(
        "--trace-url",
        metavar="TEMPLATE",
        help="link each failure to its trace: a URL with {trace_id}, e.g. "
        "http://localhost:6006/projects/default/traces/{trace_id}",
    )


def _redactor(args: argparse.Namespace) -> Redactor:
    """The one Redactor of a command: the default keys (unless dropped) plus ``--redact``, and
    the ``--redact-pattern`` value patterns."""
    extra = [key.strip() for item in args.redact for key in item.split(",") if key.strip()]
    base = () if args.no_default_redact else DEFAULT_REDACT_KEYS
    return Redactor((*base, *extra), value_patterns=getattr(args, "redact_pattern", ()))


def _value_pattern(text: str) -> str:
    """A ``--redact-pattern``, checked now (a bad regex is a usage error, exit 2)."""
    from harness.redaction import compile_value_patterns

    try:
        compile_value_patterns([text])
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


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
    if args.command in ("run", "eval-traces"):
        defaults = _settings_defaults(parser, err)
        if defaults is None:
            return EXIT_CONFIG
        if defaults:  # parsed again: flags given now override the settings
            args = build_parser(defaults).parse_args(argv)
    try:
        if args.command == "run":
            code, lingering = _run(args, out, err)
        elif args.command == "eval-traces":
            code, lingering = _eval_traces(args, out, err), False
        elif args.command == "validate":
            code, lingering = _validate(args.paths, out, err), False
        elif args.command == "draft":
            from harness.draft import command as draft_command

            code, lingering = draft_command(args, _plain(out), _plain(err)), False
        elif args.command == "init":
            from harness.scaffold import init_command

            code, lingering = init_command(args.directory, out, err), False
        elif args.command == "schema":
            from harness.schema import schema_json

            out.file.write(schema_json())
            code, lingering = EXIT_OK, False
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


def _settings_defaults(parser: argparse.ArgumentParser, err: Console) -> dict[str, Any] | None:
    """The flag defaults of ``[tool.harness]`` / ``harness.toml`` / ``HARNESS_*``; None: bad."""
    from harness.config import flag_defaults, load_settings
    from harness.errors import ConfigError

    try:
        loaded = load_settings()
    except ConfigError as exc:
        _print_issues(exc.issues, err)
        return None
    # what a bare --record / --replay stores (the cassettes' own default folder)
    record_const = parser.parse_args(["run", "--replay"]).replay
    return flag_defaults(loaded.settings, record_const)


def _plain(console: Console) -> Callable[[str], None]:
    """Print lines as they are: no rich markup or highlighting (YAML has brackets)."""

    def write(line: str) -> None:
        console.print(line, markup=False, highlight=False, soft_wrap=True)

    return write


def _load(paths: Sequence[str], err: Console, verbose: bool = False) -> Any:
    from harness.scenarios import ConfigError, display_path, load_paths

    def skipped(path: Any) -> None:
        line = f"skipped {display_path(path)}: not a scenario suite"
        err.print(line, markup=False, highlight=False, soft_wrap=True)

    try:
        return load_paths(paths, on_skip=skipped if verbose else None)
    except ConfigError as exc:
        _print_issues(exc.issues, err)
        return None


def _print_issues(issues: Sequence[Any], err: Console) -> None:
    for issue in issues:
        err.print(str(issue), markup=False, highlight=False, soft_wrap=True)
    count = len(issues)
    err.print(f"{count} configuration error{'s' if count != 1 else ''}", style="bold red")


def _run(args: argparse.Namespace, out: Console, err: Console) -> tuple[int, bool]:
    from harness.report.progress import RunProgress
    from harness.runner import RunOptions, run_scenarios
    from harness.scenarios import iter_scenarios

    if not args.paths:
        err.print(
            "no PATH given and no paths configured ([tool.harness] paths = [...] in "
            "pyproject.toml, or paths in harness.toml)",
            style="bold red",
            markup=False,
        )
        return EXIT_CONFIG, False
    chosen = _select(args, err)
    if isinstance(chosen, int):
        return chosen, False
    suites, scenarios = chosen
    try:
        redactor = _redactor(args)
    except ValueError as exc:
        err.print(f"--redact: {exc}", style="bold red", markup=False)
        return EXIT_CONFIG, False
    if not _trace_url_ok(args, err):
        return EXIT_CONFIG, False
    pipeline = _export_pipeline(args, redactor, err)
    if pipeline is False:
        return EXIT_CONFIG, False
    from harness.cassettes.session import from_args as cassette_session

    cassettes = cassette_session(args)  # --record / --replay: wrap each scenario's model
    if cassettes is not None:
        scenarios = cassettes.wrap(scenarios, iter_scenarios(suites))
    threads_before = set(threading.enumerate())
    reporter = RunProgress(
        out, len(scenarios), redactor=redactor, quiet=args.quiet, trace_url=args.trace_url
    )
    stopped_by: list[int] = []  # SIGINT or SIGTERM: exit 128 + its number, as a shell would
    options = RunOptions(
        concurrency=args.concurrency,
        repeat=args.repeat,
        timeout=args.timeout,
        fail_fast=args.fail_fast,
        progress=reporter.update,
        tracer_provider=pipeline.tracer_provider if pipeline is not None else None,
        capture_content=pipeline.capture_content if pipeline is not None else False,
        redactor=redactor,
        on_signal=stopped_by.append,
    )
    try:
        with reporter:
            result = run_scenarios(scenarios, options)
    finally:
        # spans of a Ctrl-C'd run still go out; a hung backend is cut off by the timeout
        if pipeline is not None:
            pipeline.shutdown()
    if cassettes is not None:
        result = cassettes.finish(result)  # recordings written; unused ones become warnings
    from harness.report.base import ReportFeed

    _remember_failures(result, err)
    rows = None if args.verbose else CONSOLE_ROWS
    reporters = build_reporters(_report_options(args, out, max_rows=rows), _report_failed(err))
    feed = ReportFeed.for_suite(
        reporters, result, redactor, _report_failed(err), trace_url=args.trace_url
    )
    _written(feed.run(result), out)
    lingering = any(
        t.is_alive() and not t.daemon for t in set(threading.enumerate()) - threads_before
    )
    if result.interrupted:
        return (128 + stopped_by[0] if stopped_by else EXIT_INTERRUPTED), lingering
    return (EXIT_OK if result.ok else EXIT_FAILED), lingering


def _select(args: argparse.Namespace, err: Console) -> tuple[Any, list[Any]] | int:
    """Load what the paths name and apply -k / -m / node ids / --lf / --rerun-failed.

    The suites and the selected scenarios, or the exit code: 2 for a bad flag or file, 5 when
    nothing is selected (as pytest).
    """
    from harness.errors import SelectionError
    from harness.scenarios import iter_scenarios
    from harness.selection import Selection, split_node_ids

    paths, nodes = split_node_ids(args.paths)
    try:
        selection = Selection.build(
            keywords=args.keyword,
            marks=args.marks,
            nodes=nodes,
            last_failed=args.last_failed,
            rerun_failed=args.rerun_failed,
        )
    except SelectionError as exc:
        err.print(str(exc), style="bold red", markup=False, highlight=False, soft_wrap=True)
        return EXIT_CONFIG
    suites = _load(paths, err, args.verbose)
    if suites is None:
        return EXIT_CONFIG
    loaded = list(iter_scenarios(suites))
    missing = selection.missing_nodes(loaded)
    if missing:
        for line in missing:
            err.print(line, style="bold red", markup=False, highlight=False, soft_wrap=True)
        return EXIT_CONFIG
    for note in selection.notes:
        err.print(note, style="yellow", markup=False, highlight=False)
    scenarios = selection.apply(loaded)
    if not scenarios:
        where = f" matching {selection.describe()}" if selection.narrows else ""
        err.print(f"no scenarios{where} in {' '.join(args.paths)}", style="bold red", markup=False)
        return EXIT_NO_SCENARIOS
    return suites, scenarios


def _trace_url_ok(args: argparse.Namespace, err: Console) -> bool:
    """``--trace-url`` holds ``{trace_id}`` (or is not given)."""
    if not args.trace_url:
        return True
    from harness.errors import ExportConfigError
    from harness.report.links import check_template

    try:
        check_template(args.trace_url)
    except ExportConfigError as exc:
        err.print(str(exc), style="bold red", markup=False, highlight=False, soft_wrap=True)
        return False
    return True


def _remember_failures(result: Any, err: Console) -> None:
    """Update the ``--lf`` file with this run (as pytest's cache, after every run)."""
    from harness.selection import LAST_FAILED_FILE, write_last_failed

    ran = [(f"{s.file}::{s.name}", s.status in ("failed", "error")) for s in result.scenarios]
    try:
        write_last_failed(ran)
    except OSError as exc:
        err.print(
            f"warning: cannot update {LAST_FAILED_FILE}: {exc.strerror or exc} (--lf will not "
            "know this run)",
            style="yellow",
            markup=False,
        )


_OTEL_ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def _export_pipeline(args: argparse.Namespace, redactor: Redactor, err: Console) -> Any:
    """The OTLP/trace-file pipeline; None when nothing is exported, False on a config error."""
    wanted = args.otlp_endpoint or args.trace_file
    if not wanted and not any(
        os.environ.get(name, "").strip() for name in _OTEL_ENDPOINT_VARIABLES
    ):
        return None  # no exporter configured: do not even import the SDK
    from harness.export import ExportConfigError, configure_export, parse_header

    def warn(line: str) -> None:
        err.print(f"warning: {line}", style="yellow", markup=False, highlight=False, soft_wrap=True)

    try:
        headers = dict(parse_header(item) for item in args.otlp_header)
        pipeline = configure_export(
            args.otlp_endpoint,
            args.otlp_protocol,
            capture_content=args.capture_content,  # None: opt-in to the backend, on in the file
            redactor=redactor,
            trace_file=args.trace_file,
            warn=warn,
            headers=headers or None,
        )
    except ExportConfigError as exc:
        err.print(str(exc), style="bold red", markup=False, highlight=False, soft_wrap=True)
        return False
    return pipeline if pipeline.enabled else None


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


def _report_options(
    args: argparse.Namespace,
    out: Console,
    *,
    max_rows: int | None = None,
    keep: int | None = None,
) -> ReportOptions:
    return ReportOptions(
        out,
        args.json_path,
        args.junit_xml,
        args.html_path,
        max_rows,
        keep,
        markdown_path=args.markdown_path,
        github=args.github,
        quiet=getattr(args, "quiet", False),
        verbose=getattr(args, "verbose", False),
    )


def _report_failed(err: Console) -> Callable[[Any, Exception], None]:
    """Says once that a report cannot be written (a path, or the reporter that failed)."""

    def failed(where: Any, exc: Exception) -> None:
        path = getattr(where, "path", where)
        reason = (exc.strerror or exc) if isinstance(exc, OSError) else exc
        err.print(
            f"cannot write report {path}: {reason}", style="red", markup=False, soft_wrap=True
        )

    return failed


def _written(paths: Sequence[Any], out: Console) -> None:
    for path in paths:
        out.print(f"report written: {path}", highlight=False, soft_wrap=True)


_MAX_TRACE_ROWS = 200
"""Console rows for eval-traces: beyond this only traces that did not pass are listed."""


def _eval_traces(args: argparse.Namespace, out: Console, err: Console) -> int:
    from harness.errors import SelectionError
    from harness.evaluate_traces import KEPT_RESULTS, ScenarioIndex, UnknownScenarioError
    from harness.report.base import ReportFeed
    from harness.scenarios import iter_scenarios
    from harness.selection import Selection
    from harness.workers import default_workers, evaluate_traces_in_workers

    try:
        selection = Selection.build(keywords=args.keyword)
    except SelectionError as exc:
        err.print(str(exc), style="bold red", markup=False, highlight=False, soft_wrap=True)
        return EXIT_CONFIG
    try:
        redactor = _redactor(args)
    except ValueError as exc:
        err.print(f"--redact: {exc}", style="bold red", markup=False)
        return EXIT_CONFIG
    if not _trace_url_ok(args, err):
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
    chosen = {id(s) for s in selection.apply(scenarios)} if selection.narrows else None

    def selected(scenario: Any) -> bool:
        return chosen is None or id(scenario) in chosen

    unreadable: list[Any] = []
    # the JSON and JUnit reports stream every result; the console and HTML keep the sample
    options = _report_options(args, out, max_rows=_MAX_TRACE_ROWS, keep=KEPT_RESULTS)
    feed = ReportFeed.for_stream(
        build_reporters(options, _report_failed(err)),
        redactor,
        _report_failed(err),
        trace_url=args.trace_url,
    )
    try:
        result = evaluate_traces_in_workers(
            args.files,
            scenarios,
            workers=args.workers or default_workers(),
            only=only,
            selected=selected,
            errors=unreadable,
            progress=feed.add,
            keep=KEPT_RESULTS,
        )
    except BaseException:
        feed.abort()
        raise
    _written(feed.close(result), out)
    if result.interrupted:
        return EXIT_INTERRUPTED
    if not result.total:
        err.print("no traces found in " + " ".join(args.files), style="bold red", markup=False)
        return EXIT_FAILED
    # an unreadable line may have held a failing trace: do not call the run clean
    return EXIT_OK if result.ok and not unreadable else EXIT_FAILED


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
