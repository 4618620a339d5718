"""``harness run``: select, run and report; span export and cassettes around the run."""

from __future__ import annotations

import argparse
import os
import threading
from dataclasses import replace
from typing import Any

from rich.console import Console

from harness.cli.common import collector_for_a_command, load_suites, make_redactor, trace_url_ok
from harness.cli.exit_codes import (
    EXIT_CONFIG,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_NO_SCENARIOS,
    EXIT_OK,
)
from harness.cli.reporters import build_reporters, print_written, report_failed, report_options
from harness.redaction import Redactor

CONSOLE_ROWS = 50
"""``harness run``: past this many scenarios the table lists only those that did not pass."""


def run_command(args: argparse.Namespace, out: Console, err: Console) -> tuple[int, bool]:
    """``harness run``: the exit code, and whether a thread of the run is still alive."""
    from harness.scenarios import iter_scenarios

    if not args.paths:
        err.print(
            "no PATH given and no paths configured ([tool.harness] paths = [...] in "
            "pyproject.toml, or paths in harness.toml)",
            style="bold red",
            markup=False,
        )
        return EXIT_CONFIG, False
    from harness.cli.compare import load_baseline

    baseline = load_baseline(args, err)  # a bad baseline stops the run before it starts
    if isinstance(baseline, int):
        return baseline, False
    chosen = _select(args, err)
    if isinstance(chosen, int):
        return chosen, False
    suites, scenarios = chosen
    try:
        redactor = make_redactor(args)
    except ValueError as exc:
        err.print(f"--redact: {exc}", style="bold red", markup=False)
        return EXIT_CONFIG, False
    if not trace_url_ok(args, err):
        return EXIT_CONFIG, False
    pipeline = _export_pipeline(args, redactor, err)
    if pipeline is False:
        return EXIT_CONFIG, False
    from harness.cassettes.session import from_args as cassette_session

    cassettes = cassette_session(args)  # --record / --replay: wrap each scenario's model
    if args.workers > 1 and not _workers_ok(pipeline, cassettes, err):
        if pipeline is not None:
            pipeline.shutdown()
        return EXIT_CONFIG, False
    if cassettes is not None:
        scenarios = cassettes.wrap(scenarios, iter_scenarios(suites))
        # a cassette is one scenario's: its wrapped model cannot serve a shared agent
        scenarios = [replace(s, agent_reuse=False) for s in scenarios]
    code, lingering = _execute(args, scenarios, redactor, pipeline, cassettes, baseline, out, err)
    from harness.cli.compare import baseline_exit_code

    return baseline_exit_code(code, baseline, args, err), lingering


def _execute(
    args: argparse.Namespace,
    scenarios: list[Any],
    redactor: Redactor,
    pipeline: Any,
    cassettes: Any,
    baseline: Any,
    out: Console,
    err: Console,
) -> tuple[int, bool]:
    """Run the selected scenarios, write every report (compared with ``baseline``, if any),
    and map the result to an exit code."""
    from harness.report.progress import RunProgress
    from harness.run.runner import RunOptions, run_scenarios

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
        k=args.k,
    )
    try:
        with reporter, collector_for_a_command():
            if args.workers > 1:
                from harness.parallel.runs import run_scenarios_in_workers

                result = run_scenarios_in_workers(scenarios, options, workers=args.workers)
            else:
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
    reporters = build_reporters(report_options(args, out, max_rows=rows), report_failed(err))
    feed = ReportFeed.for_suite(
        reporters,
        result,
        redactor,
        report_failed(err),
        trace_url=args.trace_url,
        baseline=baseline,
        k=args.k,
    )
    print_written(feed.run(result), out)
    lingering = any(
        t.is_alive() and not t.daemon for t in set(threading.enumerate()) - threads_before
    )
    if result.interrupted:
        return (128 + stopped_by[0] if stopped_by else EXIT_INTERRUPTED), lingering
    return (EXIT_OK if result.ok else EXIT_FAILED), lingering


def _workers_ok(pipeline: Any, cassettes: Any, err: Console) -> bool:
    """``-n`` runs without span export and cassettes.

    See docs/architecture.md, "Threading and concurrency contracts" (Processes).

    An exporter's threads do not survive the fork, and cassettes are recorded and checked in
    the parent's memory, which the workers' runs never reach.
    """
    what = "span export (--otlp-endpoint, --trace-file, OTEL_EXPORTER_OTLP_*)" if pipeline else ""
    if cassettes is not None:
        what = "--record/--replay"
    if not what:
        return True
    err.print(
        f"-n/--workers cannot be combined with {what}: run with -n 1",
        style="bold red",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    return False


def _select(args: argparse.Namespace, err: Console) -> tuple[Any, list[Any]] | int:
    """Load what the paths name and apply -k / -m / node ids / --lf / --rerun-failed.

    The suites and the selected scenarios, or the exit code: 2 for a bad flag or file, 5 when
    nothing is selected (as pytest).
    """
    from harness.errors import SelectionError
    from harness.run.filtering import Selection, split_node_ids
    from harness.scenarios import iter_scenarios

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
    suites = load_suites(paths, err, args.verbose)
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


def _remember_failures(result: Any, err: Console) -> None:
    """Update the ``--lf`` file with this run (as pytest's cache, after every run)."""
    from harness.run.filtering import LAST_FAILED_FILE, write_last_failed

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
    from harness.span_export import ExportConfigError, configure_export, parse_header

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
