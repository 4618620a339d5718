"""The comparison in the other reports: the JSON ``comparison`` section, the Markdown summary,
GitHub annotations. Pure functions of a :class:`~harness.compare.comparison.Comparison`.

The JSON section lists every scenario that is not ``unchanged`` (the counts cover all of
them), so a 100,000-trace comparison stays the size of what changed. The Markdown leads with
the headline (``3 regressions, 1 fix``) and escapes every value from a report as the run's
Markdown summary does. Each regression becomes an ``::error`` annotation at its YAML line.
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping
from typing import Any

from harness.compare.comparison import (
    KINDS,
    LABELS,
    ArgChange,
    CallChange,
    Comparison,
    Kind,
    ScenarioChange,
)
from harness.compare.report import Call, ReportScenario
from harness.compare.stats import Rate
from harness.compare.text import detail_lines, side_text, summary_text
from harness.text import shorten
from harness.values import ABSENT

__all__ = ["MAX_ROWS", "comparison_json", "github_annotations", "markdown_lines", "rate_json"]

MAX_ROWS = 100
"""Changes listed in the Markdown table (GitHub caps a step summary at 1 MiB)."""

_CELL = 160
_MESSAGE_LIMIT = 4000

_MARK: Mapping[Kind, str] = {
    "regressed": "🔴",
    "fixed": "🟢",
    "still_failing": "🟠",
    "not_significant": "🟡",
    "changed": "🟡",
    "added": "🆕",
    "removed": "➖",
    "unchanged": "⚪",
}


# --- JSON --------------------------------------------------------------------------------------


def comparison_json(comparison: Comparison) -> dict[str, Any]:
    """The ``comparison`` section of a JSON report (and the file ``harness compare --json``
    writes under that key)."""
    return {
        "base": comparison.base,
        "head": comparison.head,
        "alpha": comparison.alpha,
        "k": comparison.k,
        "summary": comparison.headline(),
        "counts": dict(comparison.counts),
        "notes": list(comparison.notes),
        "scenarios": [
            _change_json(change) for change in comparison.scenarios if change.kind != "unchanged"
        ],
    }


def _change_json(change: ScenarioChange) -> dict[str, Any]:
    scenario = change.scenario
    data: dict[str, Any] = {
        "id": scenario.id,
        "suite": scenario.suite,
        "name": scenario.name,
        "file": scenario.file,
        "line": scenario.line,
        "change": change.kind,
        "changed": list(change.changed),
        "base": _side_json(change.base),
        "head": _side_json(change.head),
    }
    if scenario.trace_id:
        data["trace_id"] = scenario.trace_id
    if change.rates is not None:
        rates = change.rates
        data["rates"] = {
            "base": rate_json(rates.base),
            "head": rate_json(rates.head),
            "p_drop": rates.p_drop,
            "p_rise": rates.p_rise,
            "significant": (rates.direction < 0 and rates.dropped)
            or (rates.direction > 0 and rates.rose),
        }
    if change.scores:
        data["scores"] = [
            {"name": s.name, "base": s.base, "head": s.head, "delta": s.delta}
            for s in change.scores
        ]
    if change.reasons_changed:
        data["reasons"] = {
            "added": list(change.reasons_added),
            "removed": list(change.reasons_removed),
        }
    if change.call is not None:
        data["first_call"] = _call_change_json(change.call)
    return data


def _side_json(scenario: ReportScenario | None) -> dict[str, Any] | None:
    if scenario is None:
        return None
    return {"status": scenario.status, "runs": scenario.runs, "passes": scenario.passes}


def rate_json(rate: Rate) -> dict[str, Any]:
    """A pass rate as the JSON reports write it: counts, rate, interval, pass@1, pass@k,
    pass^k."""
    return {
        "passes": rate.passes,
        "runs": rate.runs,
        "rate": rate.value,
        "interval": [rate.low, rate.high],
        "k": rate.k,
        "pass_at_1": rate.value,
        "pass_at_k": rate.pass_at_k,
        "pass_hat_k": rate.pass_hat_k,
    }


def _call_json(call: Call | None) -> dict[str, Any] | None:
    if call is None:
        return None
    return {"name": call.name, "args": dict(call.args), "turn": call.turn}


def _arg_json(change: ArgChange) -> dict[str, Any]:
    data: dict[str, Any] = {"path": change.path}
    if change.base is not ABSENT:  # the side that lacks the argument has no key
        data["base"] = change.base
    if change.head is not ABSENT:
        data["head"] = change.head
    return data


def _call_change_json(change: CallChange) -> dict[str, Any]:
    return {
        "position": change.index + 1,
        "base": _call_json(change.base),
        "head": _call_json(change.head),
        "args": [_arg_json(arg) for arg in change.args],
    }


# --- Markdown ----------------------------------------------------------------------------------


def _cell(text: str, limit: int = _CELL) -> str:
    """One table cell: shortened, HTML-escaped, ``|`` and line breaks neutralised."""
    shown = html.escape(shorten(text, limit), quote=False)
    return shown.replace("|", "&#124;").replace("\r", "").replace("\n", "<br>")


def markdown_lines(comparison: Comparison, *, title: str = "Compared with baseline") -> list[str]:
    """The Markdown summary: the headline as a heading, notes, a table of the changes, and
    the details of each regression in a collapsible block."""
    lines = [f"### {_cell(title)}: {_cell(comparison.headline())}", ""]
    lines += [f"> {_cell(note)}" for note in comparison.notes]
    if comparison.notes:
        lines.append("")
    changes = [c for c in comparison.ordered() if c.kind != "unchanged"]
    if not changes:
        return lines
    lines += [
        "| change | scenario | before | after | what changed |",
        "| --- | --- | --- | --- | --- |",
    ]
    for change in changes[:MAX_ROWS]:
        lines.append(
            f"| {_MARK[change.kind]} {LABELS[change.kind]} | <code>{_cell(change.id)}</code> "
            f"| {side_text(change.base)} | {side_text(change.head)} "
            f"| {_cell(summary_text(change))} |"
        )
    if len(changes) > MAX_ROWS:
        lines.append(f"\n{len(changes) - MAX_ROWS} more changes not listed (see the JSON report)")
    lines.append("")
    for change in comparison.of_kind("regressed")[:MAX_ROWS]:
        body = "<br>".join(_cell(line, 400) for line in detail_lines(change))
        lines += [
            f"<details><summary>{_cell(change.id)}</summary>",
            "",
            body,
            "",
            "</details>",
        ]
    counts = ", ".join(
        f"{comparison.counts[kind]} {LABELS[kind]}" for kind in KINDS if comparison.counts[kind]
    )
    lines += ["", f"<sub>{_cell(comparison.base)} → {_cell(comparison.head)}: {counts}</sub>"]
    return lines


# --- GitHub ------------------------------------------------------------------------------------


def github_annotations(
    comparison: Comparison, environ: Mapping[str, str] | None = None
) -> list[str]:
    """An ``::error`` workflow command per regression, at its scenario's YAML line (relative
    to ``GITHUB_WORKSPACE`` of ``environ``, default the process's, as the run's own
    annotations; at most :data:`~harness.report.github.MAX_ANNOTATIONS`, then one
    ``::notice`` for the rest)."""
    # imported here: the reporters may import this module (a run's Markdown and GitHub
    # reports), and a module-level import of theirs would then be circular
    from harness.report.github import MAX_ANNOTATIONS, annotation, workspace_path

    environment = os.environ if environ is None else environ

    regressions = comparison.of_kind("regressed")
    out = []
    for change in regressions[:MAX_ANNOTATIONS]:
        scenario = change.scenario
        message = shorten("\n".join(detail_lines(change)), _MESSAGE_LIMIT)
        out.append(
            annotation(
                "error",
                message,
                file=workspace_path(scenario.file, environment) if scenario.file else None,
                line=scenario.line,
                title=f"REGRESSED {scenario.id}",
            )
        )
    if len(regressions) > MAX_ANNOTATIONS:
        more = len(regressions) - MAX_ANNOTATIONS
        out.append(annotation("notice", f"{more} more regressions not annotated (see the summary)"))
    return out
