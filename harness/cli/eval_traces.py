"""``harness eval-traces``: score recorded traces against scenarios and policies, streamed."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from harness.cli.common import collector_for_a_command, load_suites, make_redactor, trace_url_ok
from harness.cli.exit_codes import EXIT_CONFIG, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK
from harness.cli.reporters import build_reporters, print_written, report_failed, report_options
from harness.redaction import Redactor

_MAX_TRACE_ROWS = 200
"""Console rows for eval-traces: beyond this only traces that did not pass are listed."""


def eval_traces_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    """``harness eval-traces``: score the trace files against the scenarios; the exit code."""
    from harness.errors import SelectionError
    from harness.run.filtering import Selection
    from harness.scenarios import iter_scenarios
    from harness.traces.evaluate import ScenarioIndex, UnknownScenarioError

    try:
        selection = Selection.build(keywords=args.keyword)
    except SelectionError as exc:
        err.print(str(exc), style="bold red", markup=False, highlight=False, soft_wrap=True)
        return EXIT_CONFIG
    try:
        redactor = make_redactor(args)
    except ValueError as exc:
        err.print(f"--redact: {exc}", style="bold red", markup=False)
        return EXIT_CONFIG
    if not trace_url_ok(args, err):
        return EXIT_CONFIG
    from harness.cli.compare import baseline_exit_code, load_baseline
    from tracing.otlp.inputs import InputError, trace_inputs

    baseline = load_baseline(args, err)
    if isinstance(baseline, int):
        return baseline
    try:
        inputs = trace_inputs(
            args.files, logs=args.logs, pull=args.pull, since=args.since, until=args.until
        )
    except InputError as exc:
        err.print(str(exc), style="bold red", markup=False, highlight=False, soft_wrap=True)
        return EXIT_CONFIG
    if not args.scenarios and not args.rules:
        err.print("give --scenarios PATH..., --rules POLICY..., or both", style="bold red")
        return EXIT_CONFIG
    if args.emit_otel and not _can_emit(args, err):
        return EXIT_CONFIG
    if args.rules:
        from harness.policies.console import load_or_print

        policies = load_or_print(args.rules, err)
        if policies is None:
            return EXIT_CONFIG
        if not args.scenarios:
            return _policies_alone(args, policies, inputs, redactor, out, err)
    suites = load_suites(args.scenarios, err, args.verbose, runnable=False)
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
    policy = None
    # --rules: scored on the scenarios' reading of each trace (every input read once)
    if args.rules and policies is not None:
        from harness.policies.console import policy_pass

        policy = policy_pass(args, policies, redactor)
    code = _score(args, inputs, scenarios, only, chosen, redactor, baseline, out, err, policy)
    code = baseline_exit_code(code, baseline, args, err)
    if policy is None or policies is None or code in (EXIT_INTERRUPTED, EXIT_CONFIG):
        return code
    from harness.policies.console import score_policies

    return max(code, score_policies(args, policies, inputs, redactor, out, err, scored=policy))


def _can_emit(args: argparse.Namespace, err: Console) -> bool:
    """``--emit-otel`` sends the ``--rules`` results through the ``[otlp]`` extra's exporter."""
    if not args.rules:
        err.print("--emit-otel sends the results of --rules: give --rules POLICY...", style="red")
        return False
    try:
        import opentelemetry.exporter.otlp.proto.http._log_exporter  # noqa: F401
    except ImportError:
        err.print(
            "--emit-otel needs the OTLP exporter: pip install 'toolcall-harness[otlp]'",
            style="bold red",
            markup=False,
        )
        return False
    return True


def _policies_alone(
    args: argparse.Namespace,
    policies: Any,
    inputs: list[Any],
    redactor: Redactor,
    out: Console,
    err: Console,
) -> int:
    """``--rules`` without ``--scenarios``: trace files on the ``--workers`` / ``--executor``,
    as the scenario pass does; the exit code."""
    from harness.policies.console import score_policies

    files = all(isinstance(item, str) for item in inputs)  # else stdin, --logs, --from
    executor = _executor(args, err, bool(args.emit_otel)) if files else None
    if executor is False:
        return EXIT_CONFIG
    try:
        return score_policies(args, policies, inputs, redactor, out, err, executor=executor)
    finally:
        if executor is not None and hasattr(executor, "close"):
            executor.close()  # a Dask client, and the local cluster it started


def _score(
    args: argparse.Namespace,
    inputs: list[Any],
    scenarios: list[Any],
    only: Any,
    chosen: set[int] | None,
    redactor: Redactor,
    baseline: Any,
    out: Console,
    err: Console,
    policy: Any = None,
) -> int:
    """Stream every trace through the workers into the reports; the exit code.

    ``inputs``: paths and sources (:func:`tracing.otlp.inputs.trace_inputs`); ``only``: the
    ``--scenario`` that scores every trace; ``chosen``: the ids of the ``-k`` selection (None:
    every scenario); ``policy``: the ``--rules`` pass, fed the same reading of each trace.
    """
    from harness.parallel.traces import evaluate_traces_in_workers
    from harness.report.base import ReportFeed
    from harness.traces.evaluate import KEPT_RESULTS, evaluate_traces

    def selected(scenario: Any) -> bool:
        return chosen is None or id(scenario) in chosen

    # --emit-otel sends from this process: the workers only return counts
    emitting = policy is not None and policy.progress is not None
    files = all(isinstance(item, str) for item in inputs)  # else stdin, --logs, --from
    executor = _executor(args, err, emitting) if files else None
    if executor is False:
        return EXIT_CONFIG
    unreadable: list[Any] = []
    # the JSON and JUnit reports stream every result; the console and HTML keep the sample
    rows = None if args.verbose else _MAX_TRACE_ROWS
    options = report_options(args, out, max_rows=rows, keep=KEPT_RESULTS)
    feed = ReportFeed.for_stream(
        build_reporters(options, report_failed(err)),
        redactor,
        report_failed(err),
        trace_url=args.trace_url,
        baseline=baseline,
        k=args.k,
    )
    try:
        with collector_for_a_command():
            if executor is not None:  # files: cut for the workers
                result = evaluate_traces_in_workers(
                    inputs,
                    scenarios,
                    executor=executor,
                    only=only,
                    selected=selected,
                    progress=feed.add,
                    errors=unreadable,
                    keep=KEPT_RESULTS,
                    policy=policy,
                )
            else:  # standard input, --logs, --from: read in this process
                result = evaluate_traces(
                    inputs,
                    scenarios,
                    only=only,
                    selected=selected,
                    progress=feed.add,
                    errors=unreadable,
                    keep=KEPT_RESULTS,
                    on_trace=policy,
                )
    except BaseException:
        feed.abort()
        raise
    finally:
        if executor is not None and hasattr(executor, "close"):
            executor.close()  # a Dask client, and the local cluster it started
    print_written(feed.close(result), out)
    if result.interrupted:
        return EXIT_INTERRUPTED
    if not result.total:
        names = " ".join(str(item) for item in inputs)
        err.print(f"no traces found in {names}", style="bold red", markup=False)
        return EXIT_FAILED
    # an unreadable line may have held a failing trace: do not call the run clean
    return EXIT_OK if result.ok and not unreadable else EXIT_FAILED


def _executor(args: argparse.Namespace, err: Console, emitting: bool) -> Any:
    """The ``--executor`` the ``--workers`` run on, or False after printing why it cannot.

    ``emitting``: ``--emit-otel`` sends from this process, so the local pool is one process.
    """
    from harness.errors import ExecutorError
    from harness.parallel import LocalPool, default_workers

    workers = args.workers or default_workers()
    if emitting:
        return LocalPool(1)
    if args.executor == "local":
        return LocalPool(workers)
    from harness.parallel.dask import DaskExecutor  # distributed only when asked for

    try:
        if args.executor == "dask":
            return DaskExecutor.local(workers)
        return DaskExecutor.connect(args.executor)
    except ExecutorError as exc:
        err.print(str(exc), style="bold red", markup=False, highlight=False, soft_wrap=True)
        return False
