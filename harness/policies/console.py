"""``harness eval-traces --rules``: load the policy files, score, print, write JSON, exit code.

The console shows one table per policy (rule, severity, evaluated, violations, rate, examples),
then the reasons of each violating rule's examples, the population's figures
(:mod:`harness.policies.stats`) and one summary line. ``--html`` writes the sections of
:mod:`harness.policies.html`, ``--emit-otel`` sends the results (:mod:`harness.policies.emit`).
The JSON report gets the policy part (:meth:`PolicyReport.to_json`): as the whole document
when no scenarios were given, else as the ``policies`` and ``policy_traces`` keys added to the
scenario report; ``--markdown`` and GitHub's job summary a ``## Policies`` section, GitHub an
annotation on the line of each failing rule (:mod:`harness.policies.markdown`).
Exit codes: 0 every rule within its ``max_rate``, 1 an ``error`` rule above it, 2 a
configuration error (the policy files), 5 no trace read, 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from harness.cli.exit_codes import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_NO_SCENARIOS,
    EXIT_OK,
)
from harness.policies.load import load_policies
from harness.policies.markdown import github_annotations, write_markdown
from harness.policies.policy import Policy
from harness.policies.report import PolicyReport, PolicyStats
from harness.policies.run import PolicyPass, evaluate_policies, evaluate_policies_in_workers
from harness.policies.stats import figure_rows
from harness.redaction import Redactor
from harness.report.files import atomic_output
from harness.text import plural

if TYPE_CHECKING:
    from harness.parallel.executor import Executor

__all__ = ["load_or_print", "policy_pass", "print_report", "score_policies", "write_json"]

JSON_SCHEMA_VERSION = 1


def load_or_print(paths: Sequence[str], err: Console) -> list[Policy] | None:
    """The policies of ``paths``; None (every issue printed) when one does not load."""
    from harness.cli.common import print_issues
    from harness.errors import ConfigError

    try:
        return load_policies(paths)
    except ConfigError as exc:
        print_issues(exc.issues, err)
        return None


def policy_pass(
    args: argparse.Namespace, policies: Sequence[Policy], redactor: Redactor
) -> PolicyPass:
    """The ``--rules`` pass that another reading of the inputs feeds (``--scenarios`` too)."""
    report = PolicyReport(
        policies, examples=args.examples, redactor=redactor, per_trace=args.per_trace
    )
    return PolicyPass(report, _emitter(args, redactor))


def _emitter(args: argparse.Namespace, redactor: Redactor) -> Any:
    if not getattr(args, "emit_otel", False):
        return None
    from harness.policies.emit import ResultEmitter

    return ResultEmitter(redactor)


def score_policies(
    args: argparse.Namespace,
    policies: Sequence[Policy],
    inputs: Sequence[Any],
    redactor: Redactor,
    out: Console,
    err: Console,
    *,
    scored: PolicyPass | None = None,
    executor: Executor | None = None,
) -> int:
    """``eval-traces --rules``: score ``inputs`` (paths and sources of :func:`tracing.otlp.
    inputs.trace_inputs`), report, and return the exit code.

    ``scored``: the pass the scenario reading fed (each trace read once); the scenario reports
    were written already, and the JSON and Markdown files get the policy part added to them.
    ``executor``: where trace files are scored (None: in this process).
    """
    from harness.report.github import github_enabled

    beside_scenarios = scored is not None
    if not beside_scenarios and args.junit_xml:
        err.print(
            "warning: --junit-xml is not written for --rules alone: the policy report is "
            "the console, --json, --html, --markdown and the GitHub summary",
            style="yellow",
            markup=False,
        )
    if scored is None:
        emitter = _emitter(args, redactor)
        # files: cut for the executor, as with --scenarios; standard input, --logs, --from and
        # --emit-otel (it sends from this process) are read here (no executor)
        if executor is not None and emitter is None:
            report = evaluate_policies_in_workers(
                [str(item) for item in inputs],
                policies,
                executor=executor,
                examples=args.examples,
                redactor=redactor,
                per_trace=args.per_trace,
            )
        else:
            report = evaluate_policies(
                inputs,
                policies,
                examples=args.examples,
                redactor=redactor,
                progress=emitter,
                per_trace=args.per_trace,
            )
    else:
        report, emitter = scored.report, scored.progress
    if emitter is not None:
        _close(emitter, err)
    for warning in report.warnings:
        err.print(
            f"warning: {warning}", style="yellow", markup=False, highlight=False, soft_wrap=True
        )
    print_report(report, out, quiet=args.quiet, trace_url=args.trace_url)
    if args.json_path:
        write_json(
            report, args.json_path, beside_scenarios=beside_scenarios, trace_url=args.trace_url
        )
    if args.html_path:
        from harness.policies.html import write_html

        write_html(
            report, args.html_path, beside_scenarios=beside_scenarios, trace_url=args.trace_url
        )
    if args.markdown_path:
        write_markdown(
            report, args.markdown_path, append=beside_scenarios, trace_url=args.trace_url
        )
    if github_enabled(args.github):
        _github(report, out, args.trace_url)
    if report.interrupted:
        return EXIT_INTERRUPTED
    if not report.traces:
        names = " ".join(str(item) for item in inputs)
        err.print("no traces found in " + names, style="bold red", markup=False)
        return EXIT_NO_SCENARIOS
    return EXIT_FAILED if report.failed else EXIT_OK


def _close(emitter: Any, err: Console) -> None:
    """Send the queued events; say what could not be sent."""
    if not emitter.close():
        err.print(
            "warning: --emit-otel: the evaluation events were not all exported within 30 s "
            "(is the OTLP endpoint of OTEL_EXPORTER_OTLP_ENDPOINT up?)",
            style="yellow",
            markup=False,
        )
    if emitter.failed:
        err.print(
            f"warning: --emit-otel: the events of {plural(emitter.failed, 'trace')} could not "
            "be made",
            style="yellow",
            markup=False,
        )


def _github(report: PolicyReport, out: Console, trace_url: str | None) -> None:
    """Annotations on stdout; the Markdown section added to ``$GITHUB_STEP_SUMMARY``."""
    for line in github_annotations(report):
        out.file.write(line + "\n")
    summary = os.environ.get("GITHUB_STEP_SUMMARY", "").strip()
    if summary:
        write_markdown(report, summary, append=True, trace_url=trace_url)


def print_report(
    report: PolicyReport, out: Console, *, quiet: bool = False, trace_url: str | None = None
) -> None:
    """One table per policy, the examples' reasons, then the summary line."""
    if not quiet:
        for stats in report.policies:
            out.print(_table(stats, trace_url))
            _print_examples(stats, out, trace_url)
        if report.traces:
            out.print(_stats_table(report.stats.to_json()))
    out.print(
        _summary(report),
        style="bold red" if report.failed else "bold green",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def _where(stats: PolicyStats) -> str:
    policy = stats.policy
    return f"{policy.path}:{policy.line}" if policy.line else str(policy.path)


def _table(stats: PolicyStats, trace_url: str | None) -> Table:
    policy = stats.policy
    title = (
        f"policy {escape(policy.name)} ({escape(_where(stats))}): "
        f"{plural(stats.selected, 'trace')} selected ({escape(policy.select.describe())})"
    )
    table = Table(title=title, title_justify="left")
    for header, justify in (
        ("rule", "left"),
        ("severity", "left"),
        ("evaluated", "right"),
        ("violations", "right"),
        ("rate", "right"),
        ("max", "right"),
        ("examples", "left"),
    ):
        table.add_column(header, justify=justify)  # type: ignore[arg-type]
    for rule in stats.rules:
        verdict = "red" if rule.failed else ("yellow" if rule.violations else "green")
        # short ids here, the full ones on the example lines below the table
        examples = " ".join(_link(e.trace_id, trace_url, 8) for e in rule.examples)
        if rule.unevaluable:
            examples = (examples + "; " if examples else "") + f"{rule.unevaluable} unevaluable"
        table.add_row(
            escape(rule.rule),
            rule.severity,
            str(rule.evaluated),
            f"[{verdict}]{rule.violations}[/]",
            f"[{verdict}]{rule.rate:.1%}[/]",
            f"{rule.max_rate:.1%}",
            examples,
        )
    return table


def _stats_table(stats: dict[str, Any]) -> Table:
    """The population's figures: per trace, then latencies (ms), overall and per tool."""
    table = Table(title=f"figures over {plural(stats['traces'], 'trace')}", title_justify="left")
    for header in ("", "count", "mean", "p50", "p95", "p99", "max"):
        table.add_column(header, justify="left" if not header else "right")
    for row in figure_rows(stats):
        table.add_row(escape(("  " if row.tool else "") + row.label), *row.cells)
    return table


def _link(trace_id: str, trace_url: str | None, width: int) -> str:
    shown = escape(trace_id[:width])
    if not trace_url:
        return shown
    from harness.report.links import trace_link

    return f"[link={escape(trace_link(trace_url, trace_id))}]{shown}[/link]"


def _print_examples(stats: PolicyStats, out: Console, trace_url: str | None) -> None:
    for rule in stats.rules:
        for example in rule.examples:
            line = (
                f"  {stats.policy.name} / {rule.rule}: trace {example.trace_id}: {example.reason}"
            )
            if trace_url:
                from harness.report.links import trace_link

                line += f" ({trace_link(trace_url, example.trace_id)})"
            out.print(line, markup=False, highlight=False, soft_wrap=True)


def _summary(report: PolicyReport) -> str:
    selected = report.traces - report.unselected
    head = (
        f"{plural(report.traces, 'trace')}: {selected} selected by a policy, "
        f"{report.unselected} unselected"
    )
    failed = [
        f"{stats.policy.name} / {rule.rule} {rule.violations}/{rule.evaluated} "
        f"({rule.rate:.1%} > {rule.max_rate:.1%})"
        for stats in report.policies
        for rule in stats.rules
        if rule.failed
    ]
    warned = sum(stats.warned for stats in report.policies)
    tail = (
        f"; {plural(len(failed), 'rule')} failed: " + ", ".join(failed)
        if failed
        else ("; every rule within its max_rate")
    )
    if warned:
        tail += f"; {plural(warned, 'warn violation')}"
    if report.interrupted:
        tail += " (interrupted)"
    return head + tail


def write_json(
    report: PolicyReport,
    path: str | os.PathLike[str],
    *,
    beside_scenarios: bool = False,
    trace_url: str | None = None,
) -> None:
    """Write the policy part to ``path``: the whole file, or keys added to a scenario report
    (``trace_url``: each example gets its ``url``)."""
    data = report.to_json()
    if trace_url:
        from harness.report.links import trace_link

        for policy in data["policies"]:
            for rule in policy["rules"]:
                for example in rule["examples"]:
                    example["url"] = trace_link(trace_url, example["trace_id"])
    target = Path(path)
    if beside_scenarios and target.is_file():
        document: dict[str, Any] = json.loads(target.read_text(encoding="utf-8"))
        document["policies"] = data.pop("policies")
        document["policy_traces"] = data
    else:
        document = {"schema_version": JSON_SCHEMA_VERSION, **data}
    with atomic_output(target) as out:
        out.write((json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
