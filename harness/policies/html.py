"""The policy report as HTML (``eval-traces --rules --html FILE``).

A section per policy: its rules sorted by violation rate (highest first), each violating
example a ``<details>`` that opens to the trace's call table (the offending calls marked). The
values were masked when the examples were taken (:class:`~harness.policies.report.Example`);
here every value goes through the HTML reporter's escaping, and the page inlines its stylesheet
under the same Content-Security-Policy (no script: ``<details>`` opens without one). Beside
``--scenarios`` the sections go into the scenario page, before its end, which stays as it is.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from harness.policies.report import Example, PolicyReport, PolicyStats, RuleStats
from harness.report.files import atomic_output
from harness.report.html import _assets, _e
from harness.text import plural

__all__ = ["render_policies", "render_policy_page", "write_html"]

_VALUE_LIMIT = 300
"""Characters of an argument list shown in a call table cell."""

_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"


def _short(text: str) -> str:
    return text if len(text) <= _VALUE_LIMIT else text[: _VALUE_LIMIT - 1] + "…"


def _args(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def _link(trace_id: str, trace_url: str | None) -> str:
    shown = f"<code>{_e(trace_id)}</code>"
    if not trace_url:
        return shown
    from harness.report.links import trace_link

    return f'<a href="{_e(trace_link(trace_url, trace_id))}" rel="noreferrer">{shown}</a>'


def _call_table(example: Example) -> str:
    if not example.calls:
        return '<p class="muted">the trace has no tool calls</p>'
    rows = []
    for call in example.calls:
        blamed = call["index"] in example.offending
        mark = ' class="s-failed"' if blamed else ""
        error = call.get("error")
        rows.append(
            f'<tr{mark}><td class="num">{call["index"]}</td>'
            f'<td class="metric">{_e(call["name"])}</td>'
            f'<td class="mono reason">{_e(_short(_args(call["args"])))}</td>'
            f"<td>{_e(call['status'])}</td>"
            f'<td class="reason">{_e(_short(str(error))) if error else ""}</td></tr>'
        )
    head = "<tr><th>#</th><th>tool</th><th>arguments</th><th>status</th><th>error</th></tr>"
    return f'<table class="calls">{head}{"".join(rows)}</table>'


def _example(example: Example, trace_url: str | None) -> str:
    where = f' <span class="muted">{_e(example.source)}</span>' if example.source else ""
    return (
        '<details class="scenario st-failed"><summary>'
        f'<span class="title"><span class="name">trace {_link(example.trace_id, trace_url)}'
        f'{where}</span><span class="sub">{_e(example.reason)}</span></span></summary>'
        f'<div class="body">{_call_table(example)}</div></details>'
    )


def _rule_row(rule: RuleStats) -> str:
    status = "s-failed" if rule.failed else ("s-xfailed" if rule.violations else "s-passed")
    verdict = "fail" if rule.failed else ("warn" if rule.violations else "pass")
    return (
        f'<tr><td><span class="badge {status}">{verdict}</span></td>'
        f'<td class="name">{_e(rule.rule)}</td><td>{_e(rule.severity)}</td>'
        f'<td class="num">{rule.evaluated}</td><td class="num">{rule.violations}</td>'
        f'<td class="num">{rule.rate:.1%}</td><td class="num">{rule.max_rate:.1%}</td>'
        f'<td class="num">{rule.unevaluable}</td></tr>'
    )


def _policy(stats: PolicyStats, trace_url: str | None) -> str:
    policy = stats.policy
    ordered = sorted(stats.rules, key=lambda rule: (-rule.rate, -rule.violations))
    head = (
        "<tr><th></th><th>rule</th><th>severity</th><th>evaluated</th><th>violations</th>"
        "<th>rate</th><th>max</th><th>unevaluable</th></tr>"
    )
    table = f'<table class="rules">{head}{"".join(_rule_row(r) for r in ordered)}</table>'
    examples = []
    for rule in ordered:
        if rule.examples:
            shown = "".join(_example(example, trace_url) for example in rule.examples)
            more = rule.violations - len(rule.examples)
            note = f' <span class="more">{more} more</span>' if more > 0 else ""
            examples.append(f"<h3>{_e(rule.rule)}{note}</h3>{shown}")
    where = f"{policy.path}:{policy.line}" if policy.line else str(policy.path)
    return (
        f'<section class="policy" id="policy-{_e(policy.name)}">'
        f'<h2>policy {_e(policy.name)} <span class="count">'
        f"{_e(plural(stats.selected, 'trace'))} selected</span>"
        f'<span class="more">{_e(policy.select.describe())} · {_e(where)}</span></h2>'
        f"{table}{''.join(examples)}</section>"
    )


def render_policies(report: PolicyReport, *, trace_url: str | None = None) -> str:
    """The policies' sections (a fragment: the page's, or the scenario page's)."""
    selected = report.traces - report.unselected
    line = (
        f"{plural(report.traces, 'trace')}: {selected} selected by a policy, "
        f"{report.unselected} unselected"
    )
    sections = "".join(_policy(stats, trace_url) for stats in report.policies)
    return f'<div class="policies"><h2>Policies</h2><p class="meta">{_e(line)}</p>{sections}</div>'


def render_policy_page(report: PolicyReport, *, trace_url: str | None = None) -> str:
    """A whole page of the policy report, with the HTML report's styles."""
    verdict = "bad" if report.failed else "good"
    title = "policy rules failed" if report.failed else "every rule within its max_rate"
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_e(_CSP)}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>toolcall-harness — {_e(title)}</title>\n<style>{_assets().css}</style>\n"
        '</head>\n<body>\n<main class="page"><header class="top"><div class="brand">'
        f'toolcall-harness</div><h1 class="summary {verdict}">{_e(title)}</h1></header>\n'
        f"{render_policies(report, trace_url=trace_url)}\n</main>\n</body>\n</html>\n"
    )


def write_html(
    report: PolicyReport,
    path: str | os.PathLike[str],
    *,
    beside_scenarios: bool = False,
    trace_url: str | None = None,
) -> None:
    """Write the page to ``path``, or put the sections into the scenario page there."""
    target = Path(path)
    if beside_scenarios and target.is_file():
        page = target.read_text(encoding="utf-8")
        cut = page.rfind("</main>")
        if cut >= 0:
            text = page[:cut] + render_policies(report, trace_url=trace_url) + page[cut:]
            with atomic_output(target) as out:
                out.write(text.encode("utf-8"))
            return
    with atomic_output(target) as out:
        out.write(render_policy_page(report, trace_url=trace_url).encode("utf-8"))
