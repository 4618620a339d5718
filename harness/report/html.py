"""The HTML report: one self-contained page rendered from the same result model as the others.

Nothing is fetched: styles and the small filter script are inline, and a Content-Security-Policy
(``default-src 'none'``, the script allowed by its hash only) makes the browser refuse anything
else, so even a value that slipped past escaping could neither run nor phone home. Every value
from a run goes through :func:`html.escape` (quotes too); argument, result and output values are
redacted first, and secret values seen under redacted keys are scrubbed from free text (reasons,
tracebacks) as well. The filter reads ``data-`` attributes, so no data is embedded in the script.
Without JavaScript every scenario stays visible; the filter bar only appears when the script runs.

A sampled result (``harness eval-traces`` keeps at most 500 results in memory, those that did
not pass first, see :class:`~harness.result.ResultSample`) shows the kept ones as cards; the
tiles and filter chips count every result, and a banner and each group's heading say how many
are not shown (the JSON and JUnit reports, written as the results stream, list every one).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness.expectation import Expectation
from harness.redaction import Redactor
from harness.report import MatchRow, match_rows
from harness.report.files import atomic_output
from harness.result import (
    STATUSES,
    CheckResult,
    ErrorInfo,
    RunResult,
    ScenarioResult,
    Status,
    SuiteResult,
    jsonable,
)
from harness.values import ABSENT, ArgDiff, Matcher
from tracing.records import ToolCall

__all__ = ["render_html", "write_html"]

_VALUE_LIMIT = 2000
"""Longest an argument value is shown before it is cut (a huge blob would bury the table)."""
_RESULT_LIMIT = 240
"""Longest a tool result is shown under its call."""
_OUTPUT_LIMIT = 20_000
_SECRET_MIN = 3
"""Shorter secret values are not scrubbed from free text: masking every "1" would garble it."""

# Characters HTML cannot carry (controls, lone surrogates): shown as U+FFFD, never written raw.
_UNSAFE_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")

_STATUS_LABEL: dict[Status, str] = {
    "passed": "passed",
    "failed": "failed",
    "error": "error",
    "xfailed": "xfailed",
    "xpassed": "xpassed",
}
_VERDICT_LABEL = {
    "ok": "match",
    "wrong_args": "wrong arguments",
    "missing": "missing",
    "unexpected": "unexpected",
}
_GROUPS: tuple[tuple[str, str, tuple[Status, ...]], ...] = (
    ("problems", "Failures and errors", ("failed", "error")),
    ("expected", "Expected failures (xfail)", ("xpassed", "xfailed")),
    ("passed", "Passed", ("passed",)),
)


def _e(value: object) -> str:
    """Escape any value for HTML text or a quoted attribute."""
    return html.escape(_UNSAFE_CHARS.sub("\ufffd", str(value)), quote=True)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _pct(value: float) -> str:
    return f"{value * 100:.0f}%"


def _num(value: float) -> str:
    return f"{value:.2f}" if math.isfinite(value) else str(value)


# --- the page ------------------------------------------------------------------------------


def render_html(result: SuiteResult, *, redactor: Redactor | None = None) -> str:
    """The report as one self-contained HTML document (string)."""
    return _Page(result, redactor or Redactor()).render()


def write_html(
    result: SuiteResult, path: str | os.PathLike[str], *, redactor: Redactor | None = None
) -> None:
    """Write the report to ``path`` (parents created; replaced atomically, never half-written)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = render_html(result, redactor=redactor)
    with atomic_output(target) as out:
        out.write(text.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class _Diff:
    """One argument difference, ready to show: redacted, with where it came from."""

    path: str
    expected: str
    actual: str
    why: str
    masked: bool
    source: str = ""

    @property
    def top(self) -> str:
        """The top-level argument the diff sits under (for highlighting it in the call)."""
        return _pointer(self.path)[0] if self.path else ""


def _pointer(path: str) -> list[str]:
    """JSON-pointer segments, unescaped (``~1`` is ``/``, ``~0`` is ``~``)."""
    return [part.replace("~1", "/").replace("~0", "~") for part in path.split("/")[1:]] or [""]


class _Page:
    """Builds the document for one suite result with one redactor."""

    def __init__(self, result: SuiteResult, redactor: Redactor) -> None:
        self.result = result
        self.redactor = redactor
        self.secrets = _secret_values(result, redactor)

    # --- text helpers --------------------------------------------------------------------

    def text(self, value: object) -> str:
        """Free text (reasons, messages, tracebacks): secrets scrubbed, then escaped."""
        return _e(self.scrub(str(value)))

    def scrub(self, text: str) -> str:
        """Replace any secret value seen under a redacted key with the mask."""
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, self.redactor.mask)
        return text

    def value(self, value: Any, limit: int = _VALUE_LIMIT) -> str:
        """A redacted argument/result value as escaped text (matchers in their ``$`` form)."""
        return _e(_cut(self.scrub(_show(self.redactor.redact(value))), limit))

    def prose(self, value: Any, limit: int = _OUTPUT_LIMIT) -> str:
        """An input or final answer: a string as it is (no quotes), anything else as a value."""
        if not isinstance(value, str):
            return self.value(value, limit)
        return _e(_cut(self.scrub(self.redactor.redact_text(value)), limit))

    # --- document ------------------------------------------------------------------------

    def render(self) -> str:
        """The whole document."""
        result = self.result
        body = "".join(
            (
                self.header(),
                self.tiles(),
                self.sample_note(),
                _FILTER_BAR.format(buttons=self.filter_buttons(), total=len(result.scenarios)),
                self.groups(),
                self.footer(),
            )
        )
        script_hash = base64.b64encode(hashlib.sha256(_SCRIPT.encode()).digest()).decode()
        csp = (
            "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
            f"script-src 'sha256-{script_hash}'; base-uri 'none'; form-action 'none'"
        )
        title = f"toolcall-harness — {result.summary_line()}"
        return (
            "<!DOCTYPE html>\n"
            '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{_e(csp)}">\n'
            '<meta name="referrer" content="no-referrer">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            '<meta name="generator" content="toolcall-harness">\n'
            f"<title>{_e(title)}</title>\n<style>{_CSS}</style>\n</head>\n"
            f'<body>\n<main class="page">\n{body}</main>\n'
            f"<script>{_SCRIPT}</script>\n</body>\n</html>\n"
        )

    def header(self) -> str:
        """Title, the pytest-style summary line, when and how long."""
        result = self.result
        ok = result.ok and not result.interrupted
        meta = []
        if result.started_at:
            started = datetime.fromtimestamp(result.started_at, tz=timezone.utc)
            meta.append(f"started {started:%Y-%m-%d %H:%M:%S} UTC")
        meta.append(f"took {result.duration:.2f}s")
        suites = result.suites
        if suites:
            label = "suite" if len(suites) == 1 else "suites"
            meta.append(f"{label}: {', '.join(suites)}")
        banner = ""
        if result.interrupted:
            banner = (
                '<p class="banner">Interrupted: these results are partial'
                + (f"; {result.not_run} scenario(s) did not run" if result.not_run else "")
                + ".</p>\n"
            )
        return (
            '<header class="top">\n<div class="brand">toolcall-harness report</div>\n'
            f'<h1 class="summary {"good" if ok else "bad"}">'
            f"{self.text(result.summary_line())}</h1>\n"
            f'<p class="meta">{" · ".join(self.text(item) for item in meta)}</p>\n'
            f"{banner}</header>\n"
        )

    def tiles(self) -> str:
        """One tile per status with its count, and a bar of the proportions."""
        counts = self.result.counts
        total = self.result.total
        tiles = [
            f'<div class="tile t-{status}{" zero" if not counts[status] else ""}" '
            f'data-count="{status}"><span class="n">{counts[status]}</span>'
            f'<span class="l">{_STATUS_LABEL[status]}</span></div>'
            for status in STATUSES
        ]
        tiles.append(
            f'<div class="tile t-total" data-count="total"><span class="n">{total}</span>'
            '<span class="l">scenarios</span></div>'
        )
        if self.result.not_run:
            tiles.append(
                f'<div class="tile t-notrun" data-count="not_run"><span class="n">'
                f'{self.result.not_run}</span><span class="l">not run</span></div>'
            )
        bar = "".join(
            f'<span class="b-{status}" style="flex-grow:{counts[status]}" '
            f'title="{counts[status]} {status}"></span>'
            for status in STATUSES
            if counts[status]
        )
        return (
            f'<section class="tiles" aria-label="counts">{"".join(tiles)}</section>\n'
            f'<div class="bar" aria-hidden="true">{bar}</div>\n'
        )

    def sample_note(self) -> str:
        """When the result is a sample (``harness eval-traces``): how many are not shown."""
        result = self.result
        hidden = result.omitted_total
        if not hidden:
            return ""
        detail = ", ".join(
            f"{result.omitted.get(status, 0)} {status}"
            for status in STATUSES
            if result.omitted.get(status, 0)
        )
        return (
            f'<p class="banner sample">Showing {len(result.scenarios)} of {result.total} '
            f"results (those that did not pass first); {hidden} more not shown ({_e(detail)}). "
            "The counts above include them; the JSON and JUnit reports list every result.</p>\n"
        )

    def filter_buttons(self) -> str:
        """The status buttons of the filter bar (shown by the script only)."""
        counts = self.result.counts
        out = [
            '<button type="button" class="chip" data-filter="all" aria-pressed="true">'
            f"all <b>{self.result.total}</b></button>"
        ]
        for status in STATUSES:
            disabled = "" if counts[status] else " disabled"
            out.append(
                f'<button type="button" class="chip c-{status}" data-filter="{status}" '
                f'aria-pressed="false"{disabled}>{status} <b>{counts[status]}</b></button>'
            )
        return "".join(out)

    def groups(self) -> str:
        """The scenario cards, grouped: failures first, then xfail/xpass, then passes."""
        scenarios = self.result.scenarios
        if not scenarios:
            return '<p class="empty">No scenarios ran.</p>\n'
        out = []
        for key, title, statuses in _GROUPS:
            members = [(i, s) for i, s in enumerate(scenarios) if s.status in statuses]
            hidden = sum(self.result.omitted.get(status, 0) for status in statuses)
            if not members:
                continue  # an empty group would only be hidden by the filter script
            cards = "".join(self.card(index, scenario) for index, scenario in members)
            more = f' <span class="more">+{hidden} not shown</span>' if hidden else ""
            out.append(
                f'<section class="group g-{key}" data-group="{key}">\n'
                f'<h2>{_e(title)} <span class="count">{len(members)}</span>{more}</h2>\n'
                f"{cards}</section>\n"
            )
        out.append('<p class="empty" id="no-match" hidden>No scenario matches the filter.</p>\n')
        return "".join(out)

    def footer(self) -> str:
        """Where the report came from."""
        return (
            '<footer class="foot">Generated by toolcall-harness. Self-contained: no scripts, '
            "fonts or images are fetched. Values under secret-looking keys are shown as "
            f"<code>{_e(self.redactor.mask)}</code>.</footer>\n"
        )

    # --- one scenario ----------------------------------------------------------------------

    def card(self, index: int, scenario: ScenarioResult) -> str:
        """A scenario as a ``<details>`` card: the head line always, the detail on opening."""
        run = scenario.first_failing_run()
        search = " ".join(
            [
                scenario.id,
                scenario.location,
                scenario.status,
                scenario.xfail or "",
                *scenario.reasons,
            ]
        ).lower()
        # Open what needs reading; passes and expected failures stay one line until clicked.
        opened = " open" if scenario.status in ("failed", "error", "xpassed") else ""
        chips = self.score_chips(run)
        runs = ""
        if scenario.repeat > 1 or len(scenario.runs) > 1:
            runs = (
                f'<span class="runs" title="runs passed">{scenario.passes}/{scenario.repeat}'
                " runs</span>"
            )
        head = (
            f'<summary><span class="badge s-{scenario.status}">{scenario.status}</span>'
            f'<span class="title"><span class="name"><span class="suite">'
            f'{self.text(scenario.suite)}</span><span class="sep">::</span>'
            f"{self.text(scenario.name)}</span>{self.subline(scenario)}</span>"
            f'<span class="chips">{chips}</span>{runs}'
            f'<span class="dur">{scenario.duration:.2f}s</span></summary>'
        )
        body = self.card_body(scenario, run)
        return (
            f'<details class="scenario st-{scenario.status}" id="scenario-{index}" '
            f'data-status="{scenario.status}" data-search="{self.text(search)}"{opened}>'
            f'{head}\n<div class="body">{body}</div></details>\n'
        )

    def subline(self, scenario: ScenarioResult) -> str:
        """Under the name on the head line: the xfail reason, else the first failure reason."""
        if scenario.status == "passed":
            return ""
        text = (
            scenario.xfail if scenario.xfail else (scenario.reasons[0] if scenario.reasons else "")
        )
        if not text:
            return ""
        return f'<span class="sub">{self.text(_cut(text, 240))}</span>'

    def score_chips(self, run: RunResult | None) -> str:
        """The compact ``metric 0.67`` chips on a card's head line."""
        if run is None:
            return ""
        chips = [
            f'<span class="mini {"p" if score.passed else "f"}" title="{self.text(score.name)}: '
            f'{_num(score.value)} (threshold {_num(score.threshold)})">'
            f"{self.text(score.name)} {_num(score.value)}</span>"
            for score in run.scores
        ]
        chips.extend(
            f'<span class="mini {"p" if check.passed else "f"}" '
            f'title="check {self.text(check.name)}">{self.text(check.name)}</span>'
            for check in run.checks
        )
        return "".join(chips)

    def card_body(self, scenario: ScenarioResult, run: RunResult | None) -> str:
        """Everything about one scenario: where, why, scores, checks, calls, answer, error."""
        parts = [self.facts(scenario, run)]
        if scenario.xfail:
            label = (
                "expected to fail, and did"
                if scenario.status == "xfailed"
                else (
                    "expected to fail, but passed"
                    if scenario.status == "xpassed"
                    else "marked xfail"
                )
            )
            parts.append(
                f'<div class="xfail"><b>{_e(label)}:</b> {self.text(scenario.xfail)}</div>'
            )
        # Reasons the tables below already show (failing scores, checks, the error) are not
        # repeated; what remains is the scenario's own verdict, e.g. a missed pass rate.
        shown = set(run.reasons()) if run is not None else set()
        rest = [reason for reason in scenario.reasons if reason not in shown]
        if rest:
            items = "".join(f"<li>{self.text(reason)}</li>" for reason in rest)
            parts.append(f'<ul class="reasons">{items}</ul>')
        if len(scenario.runs) > 1:
            parts.append(self.run_strip(scenario, run))
        if run is not None:
            parts.append(self.run_detail(scenario, run))
        return "\n".join(part for part in parts if part)

    def facts(self, scenario: ScenarioResult, run: RunResult | None) -> str:
        """Location, runs and pass rate, duration, and the input the agent got."""
        items = [("file", f"<code>{self.text(scenario.location)}</code>")]
        if scenario.repeat > 1 or len(scenario.runs) > 1:
            rate = (
                f"{scenario.passes}/{scenario.repeat} runs passed "
                f"({_pct(scenario.observed_rate)}; needs {_pct(scenario.pass_rate)})"
            )
            items.append(("runs", _e(rate)))
        sample = run.sample if run is not None else None
        if sample is not None and sample.input is not None:
            items.append(("input", self.prose(sample.input, _VALUE_LIMIT)))
        rows = "".join(f"<dt>{_e(key)}</dt><dd>{value}</dd>" for key, value in items)
        return f'<dl class="facts">{rows}</dl>'

    def run_strip(self, scenario: ScenarioResult, shown: RunResult | None) -> str:
        """One square per run (green/red), the run shown in detail outlined."""
        cells = []
        for run in scenario.runs:
            why = "; ".join(run.reasons()) or "passed"
            marker = " shown" if run is shown else ""
            cells.append(
                f'<span class="run {"p" if run.passed else "f"}{marker}" '
                f'title="run {run.index + 1}: {self.text(why)}">{run.index + 1}</span>'
            )
        label = f"run {shown.index + 1} shown below" if shown is not None else ""
        return f'<div class="strip">{"".join(cells)}<span class="note">{_e(label)}</span></div>'

    def run_detail(self, scenario: ScenarioResult, run: RunResult) -> str:
        """Scores, checks, match table, final answer and error of one run."""
        parts = []
        if run.scores:
            parts.append(self.scores_table(run))
        if run.checks:
            parts.append(self.checks_table(run))
        table = self.match_table(run)
        if table:
            parts.append(table)
        if run.error is not None:
            parts.append(self.error_box(run.error, scenario.status == "error"))
        elif run.sample is not None and run.output is not None:
            parts.append(f'<h3>final answer</h3><pre class="output">{self.prose(run.output)}</pre>')
        return "\n".join(parts)

    def scores_table(self, run: RunResult) -> str:
        """Per metric: value with a bar, threshold, pass/fail, reason and issue codes."""
        rows = []
        for score in run.scores:
            width = min(max(score.value, 0.0), 1.0) if math.isfinite(score.value) else 0.0
            tick = min(max(score.threshold, 0.0), 1.0) if math.isfinite(score.threshold) else 0.0
            codes = "".join(f' <span class="code">{self.text(code)}</span>' for code in score.codes)
            verdict = "pass" if score.passed else "fail"
            rows.append(
                f'<tr class="{verdict}"><td class="metric">{self.text(score.name)}</td>'
                f'<td class="num">{_num(score.value)}</td>'
                f'<td class="meter-cell"><span class="meter"><span class="fill {verdict}" '
                f'style="width:{width * 100:.1f}%"></span><i style="left:{tick * 100:.1f}%">'
                "</i></span></td>"
                f'<td class="num muted">≥ {_num(score.threshold)}</td>'
                f'<td><span class="pill {verdict}">{verdict}</span></td>'
                f'<td class="reason">{self.text(score.reason)}{codes}</td></tr>'
            )
        return (
            '<h3>scores</h3><table class="scores"><thead><tr><th>metric</th><th>value</th>'
            "<th></th><th>threshold</th><th>result</th><th>reason</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>"
        )

    def checks_table(self, run: RunResult) -> str:
        """The forbid / no_errors / output checks."""
        rows = []
        for check in run.checks:
            verdict = "pass" if check.passed else "fail"
            code = f' <span class="code">{self.text(check.code)}</span>' if check.code else ""
            rows.append(
                f'<tr class="{verdict}"><td class="metric">{self.text(check.name)}</td>'
                f'<td><span class="pill {verdict}">{verdict}</span></td>'
                f'<td class="reason">{self.text(check.reason)}{code}</td></tr>'
            )
        return (
            '<h3>checks</h3><table class="checks"><thead><tr><th>check</th><th>result</th>'
            f"<th>reason</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )

    def error_box(self, error: ErrorInfo, opened: bool) -> str:
        """The exception, the phase it hit, and its traceback."""
        trace = ""
        if error.traceback:
            trace = (
                f'<details class="trace"{" open" if opened else ""}><summary>traceback</summary>'
                f"<pre>{self.text(error.traceback.rstrip())}</pre></details>"
            )
        return (
            f'<div class="errorbox"><div class="etitle">error during {self.text(error.phase)}'
            f'</div><pre class="emsg">{self.text(error.summary())}</pre>{trace}</div>'
        )

    # --- the match table -----------------------------------------------------------------

    def match_table(self, run: RunResult) -> str:
        """Expected call ↔ actual call (or "missing"), argument diffs, unexpected calls."""
        sample = run.sample
        if sample is None:
            return ""
        rows = match_rows(run, redactor=self.redactor)
        if not rows:
            return ""
        expected = sample.expected_tool_calls
        calls = run.calls
        metric_diffs = _metric_diffs(run)
        flagged = _flagged_calls(run.checks)
        out = []
        for row in rows:
            exp = expected[row.expected_index] if row.expected_index is not None else None
            call = calls[row.actual_index] if row.actual_index is not None else None
            diffs = self.row_diffs(row, exp, call, metric_diffs)
            out.append(self.match_row(row, exp, call, diffs, flagged))
            if diffs:
                out.append(self.diff_row(diffs))
        return (
            '<h3>calls</h3><table class="match"><thead><tr><th class="idx">#</th>'
            "<th>expected</th><th>actual</th><th>verdict</th></tr></thead>"
            f"<tbody>{''.join(out)}</tbody></table>"
        )

    def row_diffs(
        self,
        row: MatchRow,
        exp: Expectation | None,
        call: ToolCall | None,
        metric_diffs: Mapping[tuple[int, int], Sequence[tuple[str, ArgDiff]]],
    ) -> list[_Diff]:
        """The argument diffs of a paired row: the expectation's own, then metrics' extras."""
        if row.expected_index is None or row.actual_index is None or exp is None or call is None:
            return []
        seen: set[tuple[str, str]] = set()
        out: list[_Diff] = []
        if row.verdict == "wrong_args":
            for diff in exp.check(call).diffs:
                seen.add((diff.path, diff.code))
                out.append(self.diff(diff))
        key = (row.expected_index, row.actual_index)
        for source, diff in metric_diffs.get(key, ()):
            if (diff.path, diff.code) in seen:
                continue
            seen.add((diff.path, diff.code))
            out.append(self.diff(diff, source))
        return out

    def diff(self, diff: ArgDiff, source: str = "") -> _Diff:
        """Redact one ArgDiff; its message is dropped when it would show a masked value."""
        masked = any(self.redactor.matches(part) for part in _pointer(diff.path) if part)
        if masked:
            mask = self.redactor.mask
            return _Diff(diff.path, mask, mask, f"{diff.code} (value masked)", True, source)
        expected = self.redactor.redact(diff.expected)
        actual = self.redactor.redact(diff.actual)
        changed = expected is not diff.expected or actual is not diff.actual
        why = f"{diff.code} (value masked)" if changed else diff.message
        return _Diff(
            diff.path,
            _cut(self.scrub(_show(expected)), _VALUE_LIMIT),
            _cut(self.scrub(_show(actual)), _VALUE_LIMIT),
            self.scrub(why),
            changed,
            source,
        )

    def match_row(
        self,
        row: MatchRow,
        exp: Expectation | None,
        call: ToolCall | None,
        diffs: Sequence[_Diff],
        flagged: Mapping[int, list[str]],
    ) -> str:
        """One table row: index, expected call, actual call (with result/error), verdict."""
        bad = {diff.top for diff in diffs}
        idx = str(row.expected_index + 1) if row.expected_index is not None else "–"
        left = (
            self.expectation_html(exp, bad)
            if exp is not None
            else '<span class="none">not expected</span>'
        )
        right = (
            self.call_html(call, bad)
            if call is not None
            else '<span class="missing">missing</span>'
        )
        tags = ""
        if row.actual_index is not None:
            tags = "".join(
                f' <span class="code">{self.text(tag)}</span>'
                for tag in flagged.get(row.actual_index, [])
            )
        verdict = row.verdict
        if verdict == "ok" and diffs:
            verdict_html = '<span class="verdict v-warn">match, but see arguments</span>'
        else:
            verdict_html = f'<span class="verdict v-{verdict}">{_VERDICT_LABEL[verdict]}</span>'
        return (
            f'<tr class="r-{verdict}"><td class="idx">{idx}</td><td>{left}</td>'
            f"<td>{right}</td><td>{verdict_html}{tags}</td></tr>"
        )

    def diff_row(self, diffs: Sequence[_Diff]) -> str:
        """The argument diffs under a row: path, expected, actual, why."""
        rows = "".join(
            f'<tr><td class="path">{_e(diff.path or "/")}</td>'
            f'<td class="exp">{_e(diff.expected)}</td><td class="act">{_e(diff.actual)}</td>'
            f'<td class="why">{_e(diff.why)}'
            + (f' <span class="src">{_e(diff.source)}</span>' if diff.source else "")
            + "</td></tr>"
            for diff in diffs
        )
        return (
            '<tr class="diffs"><td></td><td colspan="3"><table class="diff">'
            "<thead><tr><th>argument</th><th>expected</th><th>actual</th><th>why</th></tr>"
            f"</thead><tbody>{rows}</tbody></table></td></tr>"
        )

    def expectation_html(self, exp: Expectation, bad: set[str]) -> str:
        """``name(key=pattern, ...)`` as marked-up, redacted, escaped code."""
        return self.signature(exp.name, self.redactor.redact(dict(exp.args)), bad)

    def call_html(self, call: ToolCall, bad: set[str]) -> str:
        """An actual call, plus its result or error and its status when not ``ok``."""
        code = self.signature(call.name, self.redactor.redact(dict(call.args)), bad)
        extra = ""
        if call.status == "error":
            extra = f'<div class="callerr">error: {self.text(call.error or "(no message)")}</div>'
        elif call.status == "requested":
            extra = '<div class="callnote">requested, not executed</div>'
        elif call.result is not None:
            extra = f'<div class="result">→ {self.prose(call.result, _RESULT_LIMIT)}</div>'
        return code + extra

    def signature(self, name: str, args: Mapping[str, Any], bad: set[str]) -> str:
        """``name(key=value, ...)`` with each argument wrapped, mismatched ones highlighted."""
        parts = []
        for key, value in args.items():
            cls = "arg bad" if str(key) in bad else "arg"
            shown = self.value(value)
            if isinstance(value, str) and value == self.redactor.mask:
                shown = f'<span class="masked">{shown}</span>'
            parts.append(
                f'<span class="{cls}"><span class="k">{self.text(key)}</span>={shown}</span>'
            )
        return (
            f'<code class="call"><span class="fn">{self.text(name)}</span>'
            f"({', '.join(parts)})</code>"
        )


# --- helpers over the result model ---------------------------------------------------------


def _show(value: Any) -> str:
    """Plain text for a value, as Python writes it (like the reasons and the console table)."""
    if value is ABSENT:
        return "<absent>"
    if isinstance(value, Matcher):
        return value.describe()
    if isinstance(value, (Mapping, list, tuple)):
        return repr(jsonable(value))  # matchers nested inside show in their `$` form
    return repr(value)


def _metric_diffs(run: RunResult) -> dict[tuple[int, int], list[tuple[str, ArgDiff]]]:
    """Argument diffs that failing metrics recorded per (expected, actual) pair."""
    out: dict[tuple[int, int], list[tuple[str, ArgDiff]]] = {}
    for score in run.scores:
        if score.passed:
            continue
        for pair in score.details.pairs:
            for diff in pair.diffs:
                out.setdefault((pair.expected_index, pair.actual_index), []).append(
                    (score.name, diff)
                )
    return out


_CHECK_TAG = {"unexpected_call": "forbidden", "tool_error": "tool error", "wrong_output": ""}


def _flagged_calls(checks: Iterable[CheckResult]) -> dict[int, list[str]]:
    """Call index -> tags of the failing checks that name it (``forbidden``, ``tool error``)."""
    out: dict[int, list[str]] = {}
    for check in checks:
        if check.passed:
            continue
        tag = _CHECK_TAG.get(check.code or "", check.name)
        if not tag:
            continue
        for index in check.calls:
            out.setdefault(index, []).append(tag)
    return out


def _secret_values(result: SuiteResult, redactor: Redactor) -> tuple[str, ...]:
    """String forms of every value sitting under a redacted key in any call, longest first."""
    found: set[str] = set()
    for scenario in result.scenarios:
        for run in scenario.runs:
            sample = run.sample
            if sample is None:
                continue
            for call in run.calls:
                _collect(call.args, redactor, found, False)
                _collect(call.result, redactor, found, False)
            for exp in sample.expected_tool_calls:
                _collect(exp.args, redactor, found, False)
    return tuple(sorted((s for s in found if len(s) >= _SECRET_MIN), key=len, reverse=True))


def _collect(value: Any, redactor: Redactor, found: set[str], secret: bool, depth: int = 0) -> None:
    if depth > 50:
        return  # pathological nesting: the structured views still redact it
    if isinstance(value, Mapping):
        for key, item in value.items():
            hit = secret or (isinstance(key, str) and redactor.matches(key))
            _collect(item, redactor, found, hit, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _collect(item, redactor, found, secret, depth + 1)
    elif isinstance(value, str) and not secret:
        stripped = value.lstrip()
        if stripped[:1] in ("{", "[") and redactor.redact_text(value) is not value:
            with contextlib.suppress(ValueError):
                _collect(json.loads(value), redactor, found, False, depth + 1)
    elif secret and value is not None and not isinstance(value, (bool, Matcher)):
        found.add(str(value))
        if not isinstance(value, str):
            found.add(repr(value))


# --- static assets -------------------------------------------------------------------------

_FILTER_BAR = """<div class="filters" id="filters" hidden>
<input type="search" id="filter-text" aria-label="filter scenarios" autocomplete="off"
 spellcheck="false" placeholder="Filter by name, suite or reason  ( / )">
<div class="chipset" role="group" aria-label="status">{buttons}</div>
<div class="tools"><span id="shown" aria-live="polite">{total} of {total} shown</span>
<button type="button" class="link" id="expand">expand all</button>
<button type="button" class="link" id="collapse">collapse all</button></div>
</div>
"""

_CSS = """
:root{--bg:#f6f7f9;--card:#fff;--fg:#1f2328;--muted:#656d76;--line:#d8dee4;--soft:#eef1f4;
--pass:#1a7f37;--pass-bg:#dafbe1;--fail:#cf222e;--fail-bg:#ffebe9;--err:#a40e26;
  --err-bg:#ffd8d3;
--xf:#9a6700;--xf-bg:#fff4d4;--xp:#8250df;--xp-bg:#fbefff;--accent:#0969da;
--mono:ui-monospace,SFMono-Regular,"SF Mono",Menlo,Consolas,"Liberation Mono",
  "DejaVu Sans Mono",monospace;
--sans:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue","Liberation Sans",
  "DejaVu Sans",Arial,sans-serif}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--card:#161b22;--fg:#e6edf3;
  --muted:#8d96a0;
--line:#30363d;--soft:#1f2630;--pass:#3fb950;--pass-bg:#12261a;--fail:#f85149;--fail-bg:#2d1215;
--err:#ff7b72;--err-bg:#3a1418;--xf:#d29922;--xf-bg:#2b2111;--xp:#bc8cff;--xp-bg:#251a38;
  --accent:#4493f8}}
*{box-sizing:border-box}[hidden]{display:none!important}
html{background:var(--bg);color:var(--fg);font:14px/1.5 var(--sans);
  -webkit-text-size-adjust:100%}
body{margin:0}.page{max-width:1440px;margin:0 auto;padding:24px 24px 48px}
code,pre,.mono{font-family:var(--mono);font-size:12.5px}
pre{white-space:pre-wrap;word-break:break-word;margin:0}
.top .brand{color:var(--muted);font-size:12px;letter-spacing:.08em;text-transform:uppercase;
  font-weight:600}
h1.summary{margin:4px 0 2px;font-size:22px;font-weight:650}
h1.summary.good{color:var(--pass)}h1.summary.bad{color:var(--fail)}
.meta{margin:0;color:var(--muted)}
.banner{background:var(--xf-bg);color:var(--xf);border:1px solid var(--xf);border-radius:6px;
  padding:8px 12px;margin:12px 0 0}
.tiles{display:flex;gap:10px;margin:18px 0 8px;flex-wrap:wrap}
.tile{background:var(--card);border:1px solid var(--line);border-top:3px solid var(--muted);
  border-radius:8px;padding:8px 14px;min-width:104px;display:flex;flex-direction:column}
.tile .n{font-size:24px;font-weight:650;line-height:1.2;font-variant-numeric:tabular-nums}
.tile .l{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.05em}
.tile.zero .n{color:var(--muted);opacity:.55}
.t-passed{border-top-color:var(--pass)}.t-passed .n{color:var(--pass)}
.t-failed{border-top-color:var(--fail)}.t-failed .n{color:var(--fail)}
.t-error{border-top-color:var(--err)}.t-error .n{color:var(--err)}
.t-xfailed{border-top-color:var(--xf)}.t-xfailed .n{color:var(--xf)}
.t-xpassed{border-top-color:var(--xp)}.t-xpassed .n{color:var(--xp)}
.t-total{margin-left:auto}
.bar{display:flex;height:6px;border-radius:3px;overflow:hidden;background:var(--soft);
  margin-bottom:16px}
.bar span{display:block;flex-basis:0}
.b-passed{background:var(--pass)}.b-failed{background:var(--fail)}
.b-error{background:var(--err)}
.b-xfailed{background:var(--xf)}.b-xpassed{background:var(--xp)}
.filters{position:sticky;top:0;z-index:5;background:var(--bg);padding:10px 0;display:flex;
  gap:10px;align-items:center;flex-wrap:wrap;border-bottom:1px solid var(--line);
  margin-bottom:8px}
.filters input{flex:1 1 280px;font:inherit;padding:7px 10px;border:1px solid var(--line);
  border-radius:6px;background:var(--card);color:var(--fg)}
.filters input:focus{outline:2px solid var(--accent);outline-offset:-1px}
.chipset{display:flex;gap:6px;flex-wrap:wrap}
.chip{font:inherit;font-size:13px;border:1px solid var(--line);background:var(--card);
  color:var(--fg);border-radius:999px;padding:3px 11px;cursor:pointer}
.chip b{font-weight:600;margin-left:2px;font-variant-numeric:tabular-nums}
.chip[aria-pressed=true]{background:var(--fg);color:var(--bg);border-color:var(--fg)}
.chip:disabled{opacity:.4;cursor:default}
.chip.c-passed b{color:var(--pass)}.chip.c-failed b{color:var(--fail)}
.chip.c-error b{color:var(--err)}
.chip.c-xfailed b{color:var(--xf)}.chip.c-xpassed b{color:var(--xp)}
.chip[aria-pressed=true] b{color:inherit}
.tools{display:flex;gap:12px;align-items:center;color:var(--muted);font-size:13px}
.link{font:inherit;background:none;border:0;color:var(--accent);cursor:pointer;padding:0}
h2{font-size:15px;margin:22px 0 8px;font-weight:650}
h2 .count{color:var(--muted);font-weight:500;margin-left:4px}
h2 .more{color:var(--muted);font-weight:400;font-size:12px;margin-left:6px}
h3{font-size:12px;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);
  margin:14px 0 6px;font-weight:600}
.scenario{background:var(--card);border:1px solid var(--line);
  border-left:4px solid var(--muted);border-radius:8px;margin:0 0 8px;overflow:hidden}
.st-passed{border-left-color:var(--pass)}.st-failed{border-left-color:var(--fail)}
.st-error{border-left-color:var(--err)}
.st-xfailed{border-left-color:var(--xf)}.st-xpassed{border-left-color:var(--xp)}
.scenario>summary{display:flex;gap:10px;align-items:center;padding:9px 14px;cursor:pointer;
  list-style:none}
.scenario>summary::-webkit-details-marker{display:none}
.scenario>summary::before{content:"▸";color:var(--muted);font-size:11px;width:10px;
  transition:transform .12s}
.scenario[open]>summary::before{transform:rotate(90deg)}
.scenario>summary:hover{background:var(--soft)}
.badge{font-size:11px;font-weight:650;text-transform:uppercase;letter-spacing:.04em;
  padding:2px 8px;border-radius:4px;min-width:64px;text-align:center}
.s-passed{color:var(--pass);background:var(--pass-bg)}.s-failed{color:var(--fail);
  background:var(--fail-bg)}
.s-error{color:var(--err);background:var(--err-bg)}.s-xfailed{color:var(--xf);
  background:var(--xf-bg)}
.s-xpassed{color:var(--xp);background:var(--xp-bg)}
.title{display:flex;flex-direction:column;min-width:0;flex:0 1 auto}
.sub{font-size:12.5px;color:var(--muted);overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.st-failed .sub,.st-error .sub{color:var(--fail)}
.name{font-weight:600;min-width:0;overflow:hidden;text-overflow:ellipsis;
  white-space:nowrap}
.suite{color:var(--muted);font-weight:500}.sep{color:var(--muted);margin:0 2px}
.chips{display:flex;gap:4px;flex-wrap:wrap;flex:1 1 auto;justify-content:flex-end}
.mini{font-family:var(--mono);font-size:11px;padding:1px 6px;border-radius:4px;
  white-space:nowrap}
.mini.p{color:var(--pass);background:var(--pass-bg)}.mini.f{color:var(--fail);
  background:var(--fail-bg)}
.runs{font-size:12px;color:var(--muted);white-space:nowrap}
.dur{font-size:12px;color:var(--muted);font-variant-numeric:tabular-nums;min-width:44px;
  text-align:right}
.body{padding:2px 16px 14px 38px;border-top:1px solid var(--soft)}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:10px 0 0}
.facts dt{color:var(--muted)}.facts dd{margin:0;word-break:break-word}
.xfail{margin:10px 0 0;padding:7px 12px;background:var(--xf-bg);color:var(--xf);
  border-radius:6px}
.st-xpassed .xfail{background:var(--xp-bg);color:var(--xp)}
.reasons{margin:10px 0 0;padding:8px 12px 8px 28px;background:var(--fail-bg);border-radius:6px;
  color:var(--fg)}
.st-xfailed .reasons,.st-xpassed .reasons{background:var(--soft)}
.reasons li{margin:2px 0;word-break:break-word}
.strip{display:flex;gap:4px;align-items:center;margin:10px 0 0}
.run{width:22px;height:22px;border-radius:4px;font-size:11px;display:inline-flex;
  align-items:center;justify-content:center;color:#fff}
.run.p{background:var(--pass)}.run.f{background:var(--fail)}
.run.shown{outline:2px solid var(--fg);outline-offset:1px}
.strip .note{color:var(--muted);font-size:12px;margin-left:8px}
table{border-collapse:collapse;width:100%}
th{font-weight:600;color:var(--muted);font-size:12px;text-align:left;padding:4px 8px;
  border-bottom:1px solid var(--line)}
td{padding:5px 8px;border-bottom:1px solid var(--soft);vertical-align:top}
.num{font-family:var(--mono);font-size:12.5px;text-align:right;white-space:nowrap;
  font-variant-numeric:tabular-nums}
.muted{color:var(--muted)}
.metric{font-family:var(--mono);font-size:12.5px;white-space:nowrap}
.reason{word-break:break-word}
table.scores td.reason,table.checks td.reason{width:65%}
.meter-cell{width:90px}
.meter{position:relative;display:block;height:6px;background:var(--soft);border-radius:3px;
  margin-top:8px}
.meter .fill{position:absolute;left:0;top:0;bottom:0;border-radius:3px}
.fill.pass{background:var(--pass)}.fill.fail{background:var(--fail)}
.meter i{position:absolute;top:-3px;bottom:-3px;width:2px;margin-left:-1px;background:var(--fg);
  opacity:.6}
.pill{font-size:11px;font-weight:650;text-transform:uppercase;padding:1px 7px;
  border-radius:999px}
.pill.pass{color:var(--pass);background:var(--pass-bg)}.pill.fail{color:var(--fail);
  background:var(--fail-bg)}
.code{font-family:var(--mono);font-size:11px;color:var(--muted);border:1px solid var(--line);
  border-radius:4px;padding:0 5px;margin-left:6px;white-space:nowrap}
table.match td{font-size:13px}
table.match>thead th:nth-child(2),table.match>thead th:nth-child(3){width:40%}
table.diff{width:auto;min-width:50%;max-width:100%}
.idx{width:28px;color:var(--muted);text-align:right;font-variant-numeric:tabular-nums}
.call{word-break:break-word}
.call .fn{font-weight:650}
.call .k{color:var(--muted)}
.call .arg.bad{background:var(--fail-bg);border-radius:3px;
  box-shadow:0 0 0 1px var(--fail) inset;padding:0 2px}
.masked{color:var(--muted);font-style:italic}
.result{font-family:var(--mono);font-size:12px;color:var(--muted);margin-top:2px;
  word-break:break-word}
.callerr{font-family:var(--mono);font-size:12px;color:var(--fail);margin-top:2px;
  word-break:break-word}
.callnote{font-size:12px;color:var(--muted)}
.missing{color:var(--fail);font-weight:650;font-style:italic}
.none{color:var(--muted);font-style:italic}
.verdict{font-size:12px;font-weight:600;white-space:nowrap}
.v-ok{color:var(--pass)}.v-wrong_args,.v-missing{color:var(--fail)}
.v-unexpected,.v-warn{color:var(--xf)}
tr.r-missing>td,tr.r-wrong_args>td{background:color-mix(in srgb,var(--fail-bg) 45%,transparent)}
tr.r-unexpected>td{background:color-mix(in srgb,var(--xf-bg) 45%,transparent)}
tr.diffs>td{padding-top:0;border-bottom:1px solid var(--line)}
table.diff{margin:2px 0 6px;background:var(--card);border:1px solid var(--line);
  border-radius:6px}
table.diff th{font-size:11px}
table.diff td{font-family:var(--mono);font-size:12px;word-break:break-word}
table.diff .path{white-space:nowrap;font-weight:600}
table.diff .exp{color:var(--pass);background:var(--pass-bg)}
table.diff .act{color:var(--fail);background:var(--fail-bg)}
table.diff .why{font-family:var(--sans);color:var(--muted)}
.src{font-family:var(--mono);font-size:11px;border:1px solid var(--line);border-radius:4px;
  padding:0 4px}
pre.output{background:var(--soft);padding:8px 10px;border-radius:6px;max-height:320px;
  overflow:auto}
.errorbox{margin:12px 0 0;border:1px solid var(--err);border-radius:6px;overflow:hidden}
.etitle{background:var(--err-bg);color:var(--err);font-weight:650;padding:5px 10px;
  font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.emsg{padding:8px 10px;color:var(--err)}
.trace summary{cursor:pointer;padding:4px 10px;color:var(--muted);font-size:12px}
.trace pre{padding:8px 10px;background:var(--soft);max-height:420px;overflow:auto;
  font-size:12px}
.empty{color:var(--muted);text-align:center;padding:28px 0}
.foot{margin-top:28px;color:var(--muted);font-size:12px;border-top:1px solid var(--line);
  padding-top:10px}
@media (max-width:760px){.chips{display:none}.body{padding-left:14px}.t-total{margin-left:0}}
@media print{.filters{display:none!important}.scenario{break-inside:avoid}}
"""

# The only script: shows the filter bar and filters cards by their data- attributes.
_SCRIPT = """
(function () {
  "use strict";
  var bar = document.getElementById("filters");
  if (!bar) { return; }
  var input = document.getElementById("filter-text");
  var shown = document.getElementById("shown");
  var empty = document.getElementById("no-match");
  var cards = Array.prototype.slice.call(document.querySelectorAll("details.scenario"));
  var groups = Array.prototype.slice.call(document.querySelectorAll("section.group"));
  var buttons = Array.prototype.slice.call(bar.querySelectorAll("button[data-filter]"));
  var status = "all";
  function apply() {
    var words = input.value.toLowerCase().split(/\\s+/).filter(Boolean);
    var count = 0;
    cards.forEach(function (card) {
      var text = card.getAttribute("data-search") || "";
      var ok = (status === "all" || card.getAttribute("data-status") === status) &&
        words.every(function (word) { return text.indexOf(word) !== -1; });
      card.hidden = !ok;
      if (ok) { count += 1; }
    });
    groups.forEach(function (group) {
      var all = group.querySelectorAll("details.scenario").length;
      var left = group.querySelectorAll("details.scenario:not([hidden])").length;
      var label = group.querySelector("h2 .count");
      if (label) { label.textContent = left === all ? String(all) : left + " of " + all; }
      group.hidden = left === 0;
    });
    buttons.forEach(function (button) {
      button.setAttribute("aria-pressed", String(button.getAttribute("data-filter") === status));
    });
    shown.textContent = count + " of " + cards.length + " shown";
    if (empty) { empty.hidden = count !== 0 || cards.length === 0; }
  }
  buttons.forEach(function (button) {
    button.addEventListener("click", function () {
      var wanted = button.getAttribute("data-filter");
      status = (wanted === status && wanted !== "all") ? "all" : wanted;
      apply();
    });
  });
  input.addEventListener("input", apply);
  document.getElementById("expand").addEventListener("click", function () {
    cards.forEach(function (card) { if (!card.hidden) { card.open = true; } });
  });
  document.getElementById("collapse").addEventListener("click", function () {
    cards.forEach(function (card) { card.open = false; });
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "/" && document.activeElement !== input) {
      event.preventDefault();
      input.focus();
    } else if (event.key === "Escape" && document.activeElement === input) {
      input.value = "";
      apply();
    }
  });
  bar.hidden = false;
  apply();
})();
"""
