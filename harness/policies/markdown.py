"""The policy report as Markdown (``--markdown FILE``, GitHub's job summary) and as GitHub
annotations on the policy file's lines (``--github``, or inside GitHub Actions)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from harness.policies.report import PolicyReport, PolicyStats, RuleStats
from harness.policies.stats import figure_rows
from harness.report.files import atomic_output
from harness.text import plural

__all__ = ["github_annotations", "render_markdown", "write_markdown"]


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _examples(rule: RuleStats, trace_url: str | None) -> str:
    if not rule.examples:
        return ""
    from harness.report.links import trace_link

    shown = []
    for example in rule.examples:
        text = f"`{example.trace_id}`"
        if trace_url:
            text = f"[{text}]({trace_link(trace_url, example.trace_id)})"
        shown.append(text)
    return "<br>".join(shown)


def _policy(stats: PolicyStats, trace_url: str | None) -> list[str]:
    policy = stats.policy
    lines = [
        f"### {'❌' if stats.failed else '✅'} {_cell(policy.name)}",
        "",
        f"{plural(stats.selected, 'trace')} selected ({_cell(policy.select.describe())}), "
        f"`{_cell(str(policy.path))}:{policy.line or 1}`",
        "",
        "| rule | severity | evaluated | violations | rate | max | unevaluable | examples |",
        "|---|---|--:|--:|--:|--:|--:|---|",
    ]
    for rule in stats.rules:
        mark = "❌ " if rule.failed else ("⚠️ " if rule.violations else "")
        lines.append(
            f"| {mark}{_cell(rule.rule)} | {rule.severity} | {rule.evaluated} | "
            f"{rule.violations} | {rule.rate:.1%} | {rule.max_rate:.1%} | {rule.unevaluable} | "
            f"{_examples(rule, trace_url)} |"
        )
    reasons = [
        f"- {_cell(rule.rule)}: `{example.trace_id}`: {_cell(example.reason)}"
        for rule in stats.rules
        for example in rule.examples
    ]
    return [*lines, "", *reasons, *([""] if reasons else [])]


def render_markdown(report: PolicyReport, *, trace_url: str | None = None) -> str:
    """A ``## Policies`` section: the counts, then a table per policy and its examples."""
    selected = report.traces - report.unselected
    lines = [
        "## Policies",
        "",
        f"{plural(report.traces, 'trace')}: {selected} selected by a policy, "
        f"{report.unselected} unselected.",
        "",
    ]
    for stats in report.policies:
        lines.extend(_policy(stats, trace_url))
    if report.traces:
        lines.extend(_figures(report.stats.to_json()))
    return "\n".join(lines) + "\n"


def _figures(stats: dict[str, Any]) -> list[str]:
    """The population's figures (:func:`~harness.policies.stats.figure_rows`), one table."""
    rows = figure_rows(stats)
    if not rows:
        return []
    lines = [
        f"### Figures over {plural(stats['traces'], 'trace')}",
        "",
        "| | count | mean | p50 | p95 | p99 | max |",
        "|---|--:|--:|--:|--:|--:|--:|",
    ]
    for row in rows:
        name = _cell(row.tool or "").replace("`", "'")
        label = f"↳ `{name}` ms" if row.tool else row.label
        lines.append(f"| {label} | {' | '.join(row.cells)} |")
    return [*lines, ""]


def write_markdown(
    report: PolicyReport,
    path: str | os.PathLike[str],
    *,
    append: bool = False,
    trace_url: str | None = None,
) -> None:
    """Write the section to ``path``, or add it after what is there (``append``)."""
    text = render_markdown(report, trace_url=trace_url)
    target = Path(path)
    if append and target.is_file():
        with target.open("a", encoding="utf-8") as out:
            out.write("\n" + text)
        return
    with atomic_output(target) as binary:
        binary.write(text.encode("utf-8"))


def github_annotations(report: PolicyReport) -> list[str]:
    """GitHub workflow commands: an error on each failing rule's line, a warning on each
    ``warn`` rule with violations."""
    out: list[str] = []
    for stats in report.policies:
        for rule in stats.rules:
            if not (rule.failed or (rule.severity == "warn" and rule.violations)):
                continue
            level = "error" if rule.failed else "warning"
            where = f"file={stats.policy.path},line={rule.line or stats.policy.line or 1}"
            message = (
                f"policy {stats.policy.name} / {rule.rule}: {rule.violations} of "
                f"{rule.evaluated} traces violate it ({rule.rate:.1%}, max {rule.max_rate:.1%})"
            )
            out.append(f"::{level} {where}::{_escape(message)}")
    return out


def _escape(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
