"""The ``harness`` argument parser: one small function per subcommand, in ``--help`` order."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from harness import __version__
from harness.redaction import DEFAULT_REDACT_KEYS

# argparse keeps the type of ``add_subparsers`` private
Subcommands = Any


def build_parser(defaults: Mapping[str, Any] | None = None) -> argparse.ArgumentParser:
    """The argument parser of every subcommand; ``defaults``: the settings' flag defaults."""
    parser = argparse.ArgumentParser(
        prog="harness",
        description="Run YAML tool-call scenarios against LangChain / LangGraph agents.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = _run_parser(commands)
    evaluate = _eval_traces_parser(commands)
    if defaults:
        run.set_defaults(**defaults)
        evaluate.set_defaults(**defaults)
    from harness.cli.compare import add_parser as add_compare_parser

    add_compare_parser(commands)
    _validate_parser(commands)
    _metrics_parser(commands)
    _schema_parser(commands)
    _draft_parser(commands)
    _init_parser(commands)
    from harness.cli.serve import add_parser as add_serve_parser

    add_serve_parser(commands)
    return parser


def _run_parser(commands: Subcommands) -> argparse.ArgumentParser:
    """``harness run``: selection, concurrency, reports, cassettes, output, span export."""
    run: argparse.ArgumentParser = commands.add_parser("run", help="run scenario files and report")
    _run_selection_arguments(run)
    _run_execution_arguments(run)
    _report_arguments(run)
    from harness.cassettes.session import add_arguments as add_cassette_arguments

    add_cassette_arguments(run)
    _run_output_arguments(run)
    _run_export_arguments(run)
    return run


def _run_selection_arguments(run: argparse.ArgumentParser) -> None:
    """The paths and node ids, ``-k``, and the flags of :mod:`harness.run.filtering` (-m, --lf)."""
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
    from harness.run.filtering import add_arguments as add_selection_arguments

    add_selection_arguments(run)


def _run_execution_arguments(run: argparse.ArgumentParser) -> None:
    """``--concurrency``, ``-n``, ``--repeat``, ``--timeout``."""
    run.add_argument(
        "--concurrency",
        type=_positive_int,
        default=8,
        metavar="N",
        help="scenarios run at once (default 8); with -n, in all the workers together",
    )
    run.add_argument(
        "-n",
        "--workers",
        type=_positive_int,
        default=1,
        metavar="N",
        help="run the scenarios in N worker processes, each taking a contiguous part of the "
        "selection (default 1); the results, reports and exit code are those of one process. "
        "Not with span export or --record/--replay",
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


def _run_output_arguments(run: argparse.ArgumentParser) -> None:
    """``-x`` (``-v`` and ``-q`` are report flags)."""
    run.add_argument(
        "-x",
        "--fail-fast",
        action="store_true",
        help="start no new scenario after the first failure or error",
    )


def _run_export_arguments(run: argparse.ArgumentParser) -> None:
    """The "OpenTelemetry export" group: endpoint, protocol, content capture, trace file."""
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


def _eval_traces_parser(commands: Subcommands) -> argparse.ArgumentParser:
    """``harness eval-traces``: trace files, the scenarios that score them, reports."""
    evaluate: argparse.ArgumentParser = commands.add_parser(
        "eval-traces",
        help="score recorded traces (files, standard input or Phoenix) against scenarios",
        epilog="Files are read as a stream, and memory stays flat however many traces they "
        "hold: the JSON and JUnit reports are written as each trace is scored and list every "
        "one; the console and the HTML report show at most 500 results (those that did not "
        "pass first) with the counts of all of them.",
    )
    evaluate.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="trace files or globs, - for standard input: OTLP JSON (lines or one document), "
        "Tempo or Jaeger JSON exports, the Collector's protobuf (format: proto), gzipped or not; "
        "the format is found by content",
    )
    evaluate.add_argument(
        "--logs",
        action="append",
        default=[],
        metavar="FILE",
        help="OTLP log files (resourceLogs) whose events (GenAI messages written as log events) "
        "join their spans by trace and span id",
    )
    evaluate.add_argument(
        "--from",
        dest="pull",
        metavar="URL",
        help="pull the traces from a running Phoenix: phoenix://HOST:PORT/PROJECT "
        "(needs toolcall-harness[phoenix]; the key from PHOENIX_API_KEY)",
    )
    evaluate.add_argument(
        "--since", metavar="WHEN", help="with --from: traces started since (24h, 7d, or ISO time)"
    )
    evaluate.add_argument(
        "--until", metavar="WHEN", help="with --from: traces started before (30m, or ISO time)"
    )
    evaluate.add_argument(
        "--scenarios",
        nargs="+",
        metavar="PATH",
        help="scenario files or folders whose expectations score the traces",
    )
    evaluate.add_argument(
        "--rules",
        nargs="+",
        metavar="POLICY",
        help="policy files (or folders of them): score every trace against each policy that "
        "selects it (docs/production-traces.md); with or without --scenarios",
    )
    evaluate.add_argument(
        "--examples",
        type=_positive_int,
        default=5,
        metavar="N",
        help="--rules: violating trace ids kept per rule (default: 5)",
    )
    evaluate.add_argument(
        "--per-trace",
        action="store_true",
        help="--rules: the --json report lists each trace's policies and rule results",
    )
    evaluate.add_argument(
        "--emit-otel",
        action="store_true",
        help="--rules: send each trace's rule results as gen_ai.evaluation.result events to "
        "the OTLP endpoint of OTEL_EXPORTER_OTLP_* (needs the [otlp] extra)",
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
    evaluate.add_argument(
        "--executor",
        default="local",
        metavar="WHERE",
        help="where the --workers run: local (processes here, the default), dask (a local Dask "
        "cluster of --workers processes) or dask://HOST:PORT (a running Dask scheduler; the "
        "files must be readable there); needs toolcall-harness[dask] (docs/scale.md)",
    )
    _report_arguments(evaluate)
    return evaluate


def _validate_parser(commands: Subcommands) -> None:
    """``harness validate PATH...``."""
    validate = commands.add_parser(
        "validate", help="check scenario files and their expectations against the agents' tools"
    )
    validate.add_argument("paths", nargs="+", metavar="PATH")


def _metrics_parser(commands: Subcommands) -> None:
    """``harness metrics``: no arguments."""
    commands.add_parser("metrics", help="list the metrics with their options and defaults")


def _schema_parser(commands: Subcommands) -> None:
    """``harness schema [--policies]``."""
    schema = commands.add_parser(
        "schema", help="print the JSON Schema (2020-12) of the scenario format, for editors"
    )
    schema.add_argument(
        "--policies", action="store_true", help="the schema of a policy file (eval-traces --rules)"
    )


def _draft_parser(commands: Subcommands) -> None:
    """``harness draft``: its arguments live with the command, in :mod:`harness.scenarios.draft`."""
    from harness.scenarios.draft import add_parser as add_draft_parser

    add_draft_parser(commands)


def _init_parser(commands: Subcommands) -> None:
    """``harness init [DIR]``."""
    init = commands.add_parser("init", help="write a starter project (agent, suite, pytest test)")
    init.add_argument("directory", nargs="?", default=".", metavar="DIR", help="default: .")


def _report_arguments(parser: argparse.ArgumentParser) -> None:
    """``-v``, ``-q``, the report files and the redaction options: the same on every command
    that reports (run, eval-traces)."""
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="list the YAML files that are not suites, every result in the console table, and "
        "the traceback of a provider error or cassette miss",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="print only the summary line (and errors)"
    )
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
    from harness.cli.compare import add_baseline_arguments

    add_baseline_arguments(parser)


def _value_pattern(text: str) -> str:
    """A ``--redact-pattern``, checked now (a bad regex is a usage error, exit 2)."""
    from harness.redaction import compile_value_patterns

    try:
        compile_value_patterns([text])
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _positive_int(text: str) -> int:
    """A count flag: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    """A seconds flag: a number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds as a number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {value:g}")
    return value
