"""The Markdown summary: counts, a table of failures with their first reason, a match table each.

GitHub's job summary (``$GITHUB_STEP_SUMMARY``, :mod:`harness.report.github`), ``--markdown
FILE`` for GitLab or a PR comment. GitHub-flavoured Markdown: tables, and a collapsible
``<details>`` per failure with its match table. Every value from a run is HTML-escaped and
``|`` is written as ``&#124;`` so a tool argument cannot break the table or inject markup.

Memory stays bounded on a stream (``harness eval-traces``): at most :data:`MAX_FAILURES`
failures are kept in detail; the counts cover every result.
"""

from __future__ import annotations

import html
import os
from pathlib import Path

from harness.report.files import atomic_output
from harness.report.text import call_text, expectation_text, rate_line, rule_flag, warning_lines
from harness.report.view import MatchRow, RunView, ScenarioView, SuiteView
from harness.run.results import STATUSES
from harness.text import shorten

__all__ = ["MAX_FAILURES", "MarkdownReporter", "MarkdownSummary", "render_markdown"]

MAX_FAILURES = 100
"""Failures detailed in one summary (GitHub caps a step summary at 1 MiB)."""

_REASON = 200
"""Widest the first reason is in the failures table."""
_CELL = 120

_VERDICT = {
    "ok": "✅ ok",
    "wrong_args": "❌ wrong args",
    "wrong_result": "❌ wrong result",
    "invalid": "❌ invalid args",
    "missing": "❌ missing",
    "unexpected": "⚠️ not expected",
}


def _cell(text: str, limit: int = _CELL) -> str:
    """One table cell: shortened, escaped, ``|`` and line breaks neutralised."""
    shown = html.escape(shorten(text, limit), quote=False)
    return shown.replace("|", "&#124;").replace("\r", "").replace("\n", "<br>")


def _code(text: str, limit: int = _CELL) -> str:
    return f"<code>{_cell(text, limit)}</code>"


class MarkdownSummary:
    """Collects the views a summary needs: the failures (bounded), in arrival order."""

    def __init__(self, limit: int = MAX_FAILURES) -> None:
        """Detail at most ``limit`` failures."""
        self.limit = limit
        self.failures: list[ScenarioView] = []
        self.expected: list[ScenarioView] = []
        """xfailed and xpassed, listed apart (bounded like the failures)."""
        self.warned: list[ScenarioView] = []
        """Results with a failed ``warn`` rule, whatever their status (bounded likewise)."""
        self.repeated: list[ScenarioView] = []
        """Results run more than once, for their pass rates (bounded likewise)."""
        self.more = 0

    def add(self, view: ScenarioView) -> None:
        """Keep ``view`` if it did not pass, or warned, or was repeated, and there is room."""
        if view.warnings and len(self.warned) < self.limit:
            self.warned.append(view)
        if view.repeated and len(self.repeated) < self.limit:
            self.repeated.append(view)
        if view.status in ("xfailed", "xpassed"):
            if len(self.expected) < self.limit:
                self.expected.append(view)
            return
        if view.status not in ("failed", "error"):
            return
        if len(self.failures) < self.limit:
            self.failures.append(view)
        else:
            self.more += 1

    def render(self, summary: SuiteView, title: str = "toolcall-harness") -> str:
        """The whole Markdown document."""
        return render_markdown(
            summary,
            self.failures,
            more=self.more,
            title=title,
            expected=self.expected,
            warned=self.warned,
            repeated=self.repeated,
        )


def render_markdown(
    summary: SuiteView,
    failures: list[ScenarioView],
    *,
    more: int = 0,
    title: str = "toolcall-harness",
    expected: list[ScenarioView] | None = None,
    warned: list[ScenarioView] | None = None,
    repeated: list[ScenarioView] | None = None,
) -> str:
    """The comparison with the baseline (its headline leads), counts, the failures table, one
    collapsible match table per failure, the pass rates of repeated scenarios
    (``repeated``), the failed ``warn`` rules (``warned``), then the xfail outcomes
    (``expected``) in one collapsed table."""
    comparison = summary.comparison
    fails = comparison is not None and bool(comparison.counts["regressed"])
    icon = "✅" if summary.ok and not summary.interrupted and not fails else "❌"
    headline = summary.summary
    if comparison is not None:
        headline = f"{comparison.headline()} · {headline}"
    lines = [f"## {icon} {html.escape(title)}: {html.escape(headline)}", ""]
    if comparison is not None:
        from harness.compare import markdown_lines

        lines += [*markdown_lines(comparison), ""]
    statuses = [s for s in STATUSES if summary.counts.get(s)]
    header = [*statuses, *(["not run"] if summary.not_run else [])]
    header += ["warnings"] if summary.rule_warnings else []
    if header:
        counts = [str(summary.counts[s]) for s in statuses]
        counts += [str(summary.not_run)] if summary.not_run else []
        counts += [str(summary.rule_warnings)] if summary.rule_warnings else []
        lines += [
            "| " + " | ".join(header) + " |",
            "|" + "---:|" * len(header),
            "| " + " | ".join(counts) + " |",
            "",
        ]
    if failures:
        lines += _failure_table(failures)
        if more:
            lines += [f"…and {more} more failed or errored, not detailed here.", ""]
        for view in failures:
            lines += _details(view)
    if repeated:
        lines += _rates_table(repeated)
    if warned:
        lines += _warnings_table(warned)
    if expected:
        lines += _expected_table(expected)
    for warning in summary.warnings:
        lines.append(f"> ⚠️ {_cell(warning, 400)}")
    if summary.warnings:
        lines.append("")
    return "\n".join(lines)


def _failure_table(failures: list[ScenarioView]) -> list[str]:
    linked = any(view.trace_url for view in failures)
    head = "| status | scenario | where | first reason |" + (" trace |" if linked else "")
    rule = "|---|---|---|---|" + ("---|" if linked else "")
    rows = [head, rule]
    for view in failures:
        first = view.reasons[0] if view.reasons else ""
        row = (
            f"| {view.status.upper()} | {_code(view.id)} | {_code(view.location)} | "
            f"{_cell(first, _REASON)} |"
        )
        if linked:
            row += f" {_link(view.trace_url)} |"
        rows.append(row)
    return [*rows, ""]


def _rates_table(views: list[ScenarioView]) -> list[str]:
    """Repeated scenarios: pass rate, its Wilson interval, pass@k and pass^k."""
    rows = ["| scenario | status | pass rate, pass@k, pass^k |", "|---|---|---|"]
    for view in views:
        rows.append(f"| {_code(view.id)} | {view.status} | {_cell(rate_line(view), _REASON)} |")
    return [*rows, ""]


def _warnings_table(views: list[ScenarioView]) -> list[str]:
    """Failed ``warn`` rules: reported, never failing the run."""
    rows = ["| ⚠️ warning | scenario | where | reason |", "|---|---|---|---|"]
    for view in views:
        for check in view.warnings:
            rows.append(
                f"| {_code(check.name)} | {_code(view.id)} | {_code(view.location)} | "
                f"{_cell(check.reason, _REASON)} |"
            )
    return [*rows, ""]


def _expected_table(views: list[ScenarioView]) -> list[str]:
    """xfailed / xpassed scenarios: they do not fail the run, so they stay folded."""
    counts = {
        status: sum(1 for v in views if v.status == status) for status in ("xfailed", "xpassed")
    }
    label = ", ".join(f"{n} {status}" for status, n in counts.items() if n)
    lines = [
        "<details>",
        f"<summary>{label}: expected to fail, not counted as failures</summary>",
        "",
        "| status | scenario | where | why it is expected to fail |",
        "|---|---|---|---|",
    ]
    for view in views:
        lines.append(
            f"| {view.status.upper()} | {_code(view.id)} | {_code(view.location)} | "
            f"{_cell(view.xfail or '', _REASON)} |"
        )
    return [*lines, "", "</details>", ""]


def _link(url: str | None) -> str:
    if not url:
        return ""
    if not url.startswith(("http://", "https://")):
        return _cell(url)
    return f"[trace]({url.replace(' ', '%20').replace(')', '%29')})"


def _details(view: ScenarioView) -> list[str]:
    run = view.shown
    lines = [
        "<details>",
        f"<summary>{_code(view.id)} — {_cell(view.location)}</summary>",
        "",
    ]
    lines += [f"- {_cell(reason, 400)}" for reason in view.reasons]
    lines += [f"- ⚠️ warning: {_cell(line, 400)}" for line in warning_lines(view)]
    if view.trace_url:
        lines.append(f"- trace: {_link(view.trace_url)}")
    lines.append("")
    if run is not None and run.rows:
        if view.repeat > 1:
            lines += [f"run {run.index + 1} of {view.repeat}:", ""]
        lines += _match_table(run)
    if run is not None and run.output_text is not None and run.error is None:
        lines += [f"final answer: {_code(run.output_text, 300)}", ""]
    lines += ["</details>", ""]
    return lines


def _match_table(run: RunView) -> list[str]:
    lines = ["| # | expected | actual | verdict |", "|---:|---|---|---|"]
    for row in run.rows:
        number = str(row.expected_index + 1) if row.expected_index is not None else "-"
        verdict = _VERDICT[row.verdict]
        notes = _notes(row)
        notes += [rule_flag(run.checks[index]) for index in row.rules]
        if notes:
            verdict += "<br>" + "<br>".join(_cell(note) for note in notes)
        lines.append(f"| {number} | {_expected(run, row)} | {_actual(run, row)} | {verdict} |")
    return [*lines, ""]


def _notes(row: MatchRow) -> list[str]:
    # a full match's diffs are metrics' extras, as in the plain-text table: not listed
    wrong = row.verdict in ("wrong_args", "wrong_result")
    notes = [f"{d.path}: {d.reason}" for d in row.diffs if not d.source] if wrong else []
    if row.note:
        notes.append(row.note)
    notes.extend(row.tags)
    return notes


def _expected(run: RunView, row: MatchRow) -> str:
    if row.expected_index is None:
        return "—"
    return _code(expectation_text(run.expected[row.expected_index]))


def _actual(run: RunView, row: MatchRow) -> str:
    if row.actual_index is None:
        return "—"
    call = run.calls[row.actual_index]
    status = f" [{call.status}]" if call.status in ("error", "requested", "invalid") else ""
    return _code(call_text(call) + status)


class MarkdownReporter:
    """``--markdown FILE``: the summary written (atomically) when the run closes."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        """Report to ``path`` (parents created now: an unwritable place fails early)."""
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._summary = MarkdownSummary()

    def add(self, result: ScenarioView) -> None:
        """Keep ``result`` if it is a failure the summary details."""
        self._summary.add(result)

    def close(self, summary: SuiteView) -> Path:
        """Write the document; returns its path."""
        text = self._summary.render(summary)
        with atomic_output(self.path) as out:
            out.write(text.encode("utf-8"))
        self._summary = MarkdownSummary()
        return self.path

    def abort(self) -> None:
        """Write nothing."""
        self._summary = MarkdownSummary()
