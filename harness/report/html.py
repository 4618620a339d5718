"""The HTML report: one self-contained page rendered from the report views.

The page is built from :mod:`harness.report.view` — values already masked and scrubbed, match
rows and argument diffs already paired — so nothing here redacts or pairs (docs/architecture.md,
"Reporter"). What it does is markup: every value goes through :func:`html.escape` (quotes too,
controls and lone surrogates replaced) and long values are shortened.

The styles, the small filter script and the page skeleton are files in ``assets/``
(``report.css``, ``report.js``, ``page.html``), read once per process and inlined: nothing is
fetched. A Content-Security-Policy (``default-src 'none'``, the script allowed by the SHA-256
of ``report.js`` only) makes the browser refuse anything else, so even a value that slipped
past escaping could neither run nor phone home. The filter reads ``data-`` attributes, so no
data is embedded in the script. Without JavaScript every scenario stays visible; the filter bar
only appears when the script runs.

:class:`HtmlReporter` keeps the views it is given in a :class:`~harness.run.results.ResultSample`
(``keep``: at most that many, those that did not pass first; ``harness eval-traces`` keeps 500)
and writes the page on ``close``. The tiles and filter chips count every result; a banner and
each group's heading say how many are not shown (the JSON and JUnit reports list every one).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import html
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from string import Template
from typing import TYPE_CHECKING

from harness.redaction import Redactor, Scrubber
from harness.report.base import ReportFeed
from harness.report.files import atomic_output
from harness.report.html_changes import (
    change_badge,
    change_buttons,
    change_header,
    changes_by_key,
    view_key,
)
from harness.report.text import rate_line, rule_flag
from harness.report.view import (
    ArgView,
    CallView,
    CheckView,
    DiffView,
    ErrorView,
    ExpectationView,
    MatchRow,
    RunView,
    ScenarioView,
    SuiteView,
    scenario_view,
    suite_view,
)
from harness.run.results import STATUSES, ResultSample, Status, SuiteResult
from harness.text import shorten

if TYPE_CHECKING:
    from harness.compare import Kind

__all__ = ["HtmlReporter", "render_html", "render_page", "write_html"]

_VALUE_LIMIT = 2000
"""Longest an argument value is shown before it is cut (a huge blob would bury the table)."""
_RESULT_LIMIT = 240
"""Longest a tool result is shown under its call."""
_OUTPUT_LIMIT = 20_000
"""Longest a final answer is shown."""
_SUBLINE_LIMIT = 240
"""Longest the reason under a card's name is shown."""

# Characters HTML cannot carry (controls, lone surrogates) and bidi embeddings, overrides and
# isolates (U+202A-U+202E, U+2066-U+2069: an RLO in one name would reverse the text after it on
# the page): shown as U+FFFD, never written raw.
_UNSAFE_CHARS = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)

_VERDICT_LABEL = {
    "ok": "match",
    "wrong_args": "wrong arguments",
    "wrong_result": "wrong result",
    "invalid": "invalid arguments",
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


def _pct(value: float) -> str:
    return f"{value * 100:.0f}%"


def _num(value: float) -> str:
    return f"{value:.2f}" if math.isfinite(value) else str(value)


# --- the assets ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Assets:
    """The files under ``assets/``, read once: what every page inlines."""

    css: str
    script: str
    page: Template
    script_hash: str
    """Base64 SHA-256 of the script, the only one the page's CSP lets run."""


def _asset_text(name: str) -> str:
    data = (resources.files("harness.report") / "assets" / name).read_bytes()
    # A browser hashes the script after turning CRLF into LF, so a checkout with CRLF endings
    # must be normalised before hashing or the CSP would block the filter.
    return data.replace(b"\r\n", b"\n").decode("utf-8")


@functools.cache
def _assets() -> _Assets:
    """The stylesheet, script and page skeleton, loaded and hashed once per process."""
    script = _asset_text("report.js")
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return _Assets(
        css=_asset_text("report.css"),
        script=script,
        page=Template(_asset_text("page.html")),
        script_hash=base64.b64encode(digest).decode("ascii"),
    )


# --- entry points --------------------------------------------------------------------------


class HtmlReporter:
    """The :class:`~harness.report.base.Reporter` that writes the page to ``path`` on close."""

    def __init__(self, path: str | os.PathLike[str], *, keep: int | None = None) -> None:
        """Write to ``path``; show at most ``keep`` results (None: every one)."""
        self.path = Path(path)
        self._kept: ResultSample[ScenarioView] = ResultSample(keep)

    def add(self, result: ScenarioView) -> None:
        """Keep ``result`` for the page, if the sample has room for it."""
        self._kept.add(result)

    def close(self, summary: SuiteView) -> Path:
        """Write the page (parents created; replaced atomically, never half-written)."""
        text = render_page(self._kept.scenarios, summary)
        self._kept = ResultSample(self._kept.limit)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_output(self.path) as out:
            out.write(text.encode("utf-8"))
        return self.path

    def abort(self) -> None:
        """Drop the kept results; nothing is written before ``close``, so nothing is left."""
        self._kept = ResultSample(self._kept.limit)


def render_page(scenarios: Sequence[ScenarioView], summary: SuiteView) -> str:
    """The report as one self-contained HTML document, from views (shown in this order)."""
    return _Page(scenarios, summary).render()


def render_html(result: SuiteResult, *, redactor: Redactor | None = None) -> str:
    """The report of a whole suite result as one HTML document (for callers holding a result)."""
    scrubber = Scrubber.for_suite(redactor, result)
    views = [scenario_view(scenario, scrubber) for scenario in result.scenarios]
    return render_page(views, suite_view(result, scrubber))


def write_html(
    result: SuiteResult, path: str | os.PathLike[str], *, redactor: Redactor | None = None
) -> Path:
    """Write the report of a whole suite result to ``path``; returns the path."""
    written = ReportFeed.for_suite([HtmlReporter(path)], result, redactor).run(result)
    return written[0]


# --- the page ------------------------------------------------------------------------------


class _Page:
    """Builds the document for the views a reporter kept and the summary it closed with."""

    def __init__(self, scenarios: Sequence[ScenarioView], summary: SuiteView) -> None:
        self.scenarios = scenarios
        self.summary = summary
        self.changes = changes_by_key(summary.comparison)  # --baseline: the cards' badges
        # What the page does not show is what the summary counted beyond what it was given:
        # the reporter's own sample decides what is kept, whatever the summary itself kept.
        kept = {status: 0 for status in STATUSES}
        for scenario in scenarios:
            kept[scenario.status] += 1
        self.omitted: dict[str, int] = {
            status: max(summary.counts.get(status, 0) - kept[status], 0) for status in STATUSES
        }

    def render(self) -> str:
        """The whole document: the page skeleton filled with this result's markup."""
        summary = self.summary
        assets = _assets()
        csp = (
            "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
            f"script-src 'sha256-{assets.script_hash}'; base-uri 'none'; form-action 'none'"
        )
        return assets.page.substitute(
            csp=_e(csp),
            title=_e(f"toolcall-harness — {summary.summary}"),
            css=assets.css,
            header=self.header(),
            tiles=self.tiles(),
            sample_note=self.sample_note(),
            buttons=self.filter_buttons(),
            changes=change_buttons(summary.comparison),
            total=len(self.scenarios),
            groups=self.groups(),
            footer=self.footer(),
            script=assets.script,
        )

    def header(self) -> str:
        """Title, the pytest-style summary line, when and how long."""
        summary = self.summary
        ok = summary.ok and not summary.interrupted
        meta = []
        if summary.started_at:
            started = datetime.fromtimestamp(summary.started_at, tz=timezone.utc)
            meta.append(f"started {started:%Y-%m-%d %H:%M:%S} UTC")
        meta.append(f"took {summary.duration:.2f}s")
        suites = list(dict.fromkeys(scenario.suite for scenario in self.scenarios))
        if suites:
            label = "suite" if len(suites) == 1 else "suites"
            meta.append(f"{label}: {', '.join(suites)}")
        banner = ""
        if summary.interrupted:
            banner = (
                '<p class="banner">Interrupted: these results are partial'
                + (f"; {summary.not_run} scenario(s) did not run" if summary.not_run else "")
                + ".</p>\n"
            )
        return (
            '<header class="top">\n<div class="brand">toolcall-harness report</div>\n'
            f'<h1 class="summary {"good" if ok else "bad"}">{_e(summary.summary)}</h1>\n'
            f'<p class="meta">{" · ".join(_e(item) for item in meta)}</p>\n'
            f"{change_header(summary.comparison)}{banner}</header>\n"
        )

    def tiles(self) -> str:
        """One tile per status with its count, and a bar of the proportions."""
        counts = self.counts()
        tiles = [
            f'<div class="tile t-{status}{" zero" if not counts[status] else ""}" '
            f'data-count="{status}"><span class="n">{counts[status]}</span>'
            f'<span class="l">{status}</span></div>'
            for status in STATUSES
        ]
        tiles.append(
            f'<div class="tile t-total" data-count="total"><span class="n">'
            f'{self.summary.total}</span><span class="l">scenarios</span></div>'
        )
        if self.summary.not_run:
            tiles.append(
                f'<div class="tile t-notrun" data-count="not_run"><span class="n">'
                f'{self.summary.not_run}</span><span class="l">not run</span></div>'
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

    def counts(self) -> dict[str, int]:
        """Per status, every result the summary counted."""
        return {status: self.summary.counts.get(status, 0) for status in STATUSES}

    def sample_note(self) -> str:
        """When the page shows a sample (``harness eval-traces``): how many are not shown."""
        hidden = sum(self.omitted.values())
        if not hidden:
            return ""
        detail = ", ".join(
            f"{self.omitted[status]} {status}" for status in STATUSES if self.omitted[status]
        )
        return (
            f'<p class="banner sample">Showing {len(self.scenarios)} of {self.summary.total} '
            f"results (those that did not pass first); {hidden} more not shown ({_e(detail)}). "
            "The counts above include them; the JSON and JUnit reports list every result.</p>\n"
        )

    def filter_buttons(self) -> str:
        """The status buttons of the filter bar (shown by the script only)."""
        counts = self.counts()
        out = [
            '<button type="button" class="chip" data-filter="all" aria-pressed="true">'
            f"all <b>{self.summary.total}</b></button>"
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
        if not self.scenarios:
            return '<p class="empty">No scenarios ran.</p>\n'
        out = []
        for key, title, statuses in _GROUPS:
            members = [(i, s) for i, s in enumerate(self.scenarios) if s.status in statuses]
            hidden = sum(self.omitted[status] for status in statuses)
            if not members:
                continue  # an empty group would only be hidden by the filter script
            cards = "".join(
                _card(index, scenario, self.changes.get(view_key(scenario)))
                for index, scenario in members
            )
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
            f"<code>{_e(self.summary.mask)}</code>.</footer>\n"
        )


# --- one scenario --------------------------------------------------------------------------


def _card(index: int, scenario: ScenarioView, change: Kind | None = None) -> str:
    """A scenario as a ``<details>`` card: the head line always, the detail on opening;
    ``change``: its class against the baseline (a badge for regressed, fixed, new)."""
    run = scenario.shown
    search = " ".join(
        [scenario.id, scenario.location, scenario.status, scenario.xfail or "", *scenario.reasons]
    ).lower()
    # Open what needs reading; passes and expected failures stay one line until clicked.
    opened = " open" if scenario.status in ("failed", "error", "xpassed") else ""
    runs = ""
    if scenario.repeat > 1 or len(scenario.runs) > 1:
        runs = (
            f'<span class="runs" title="runs passed">{scenario.passes}/{scenario.repeat}'
            " runs</span>"
        )
    head = (
        f'<summary><span class="badge s-{scenario.status}">{scenario.status}</span>'
        f"{change_badge(change)}"
        f'<span class="title"><span class="name"><span class="suite">'
        f'{_e(scenario.suite)}</span><span class="sep">::</span>'
        f"{_e(scenario.name)}</span>{_subline(scenario)}</span>"
        f'<span class="chips">{_score_chips(run)}</span>{runs}'
        f'<span class="dur">{scenario.duration:.2f}s</span></summary>'
    )
    return (
        f'<details class="scenario st-{scenario.status}" id="scenario-{index}" '
        f'data-status="{scenario.status}" data-change="{change or ""}" '
        f'data-search="{_e(search)}"{opened}>'
        f'{head}\n<div class="body">{_card_body(scenario, run)}</div></details>\n'
    )


def _subline(scenario: ScenarioView) -> str:
    """Under the name on the head line: the xfail reason, else the first failure reason."""
    if scenario.status == "passed":
        return ""
    text = scenario.xfail or (scenario.reasons[0] if scenario.reasons else "")
    if not text:
        return ""
    return f'<span class="sub">{_e(shorten(text, _SUBLINE_LIMIT))}</span>'


def _score_chips(run: RunView | None) -> str:
    """The compact ``metric 0.67`` chips on a card's head line."""
    if run is None:
        return ""
    chips = [
        f'<span class="mini {"p" if score.passed else "f"}" title="{_e(score.name)}: '
        f'{_num(score.value)} (threshold {_num(score.threshold)})">'
        f"{_e(score.name)} {_num(score.value)}</span>"
        for score in run.scores
    ]
    chips.extend(
        f'<span class="mini {_verdict(check)[0]}" '
        f'title="check {_e(check.name)}">{_e(check.name)}</span>'
        for check in run.checks
    )
    return "".join(chips)


_XFAIL_LABEL = {"xfailed": "expected to fail, and did", "xpassed": "expected to fail, but passed"}


def _card_body(scenario: ScenarioView, run: RunView | None) -> str:
    """Everything about one scenario: where, why, scores, checks, calls, answer, error."""
    parts = [_facts(scenario, run)]
    if scenario.xfail:
        label = _XFAIL_LABEL.get(scenario.status, "marked xfail")
        parts.append(f'<div class="xfail"><b>{_e(label)}:</b> {_e(scenario.xfail)}</div>')
    # Reasons the tables below already show (failing scores, checks, the error) are not
    # repeated; what remains is the scenario's own verdict, e.g. a missed pass rate.
    shown = set(run.reasons) if run is not None else set()
    rest = [reason for reason in scenario.reasons if reason not in shown]
    if rest:
        items = "".join(f"<li>{_e(reason)}</li>" for reason in rest)
        parts.append(f'<ul class="reasons">{items}</ul>')
    if len(scenario.runs) > 1:
        parts.append(_run_strip(scenario, run))
    if run is not None:
        parts.append(_run_detail(scenario, run))
    return "\n".join(part for part in parts if part)


def _facts(scenario: ScenarioView, run: RunView | None) -> str:
    """Location, runs and pass rate, and the input the agent got."""
    items = [("file", f"<code>{_e(scenario.location)}</code>")]
    if scenario.repeat > 1 or len(scenario.runs) > 1:
        observed = scenario.passes / len(scenario.runs) if scenario.runs else 0.0
        rate = (
            f"{scenario.passes}/{scenario.repeat} runs passed "
            f"({_pct(observed)}; needs {_pct(scenario.pass_rate)})"
        )
        items.append(("runs", _e(rate)))
        items.append(("pass@k", _e(rate_line(scenario))))
    if run is not None and run.input_text is not None:
        items.append(("input", _e(shorten(run.input_text, _VALUE_LIMIT))))
    if run is not None and run.turns:
        items.append(("turns", _e(_turns_text(run))))
    if run is not None and run.paused_text is not None:
        items.append(("paused", _e(shorten(run.paused_text, _VALUE_LIMIT))))
    if scenario.trace_url:
        url = _e(scenario.trace_url)
        # only a web link is clickable: a template could be anything (javascript: included)
        web = scenario.trace_url.startswith(("http://", "https://"))
        items.append(("trace", f'<a href="{url}" rel="noopener">{url}</a>' if web else url))
    rows = "".join(f"<dt>{_e(key)}</dt><dd>{value}</dd>" for key, value in items)
    return f'<dl class="facts">{rows}</dl>'


def _turns_text(run: RunView) -> str:
    """``3: 1 paused, 2 finished, 3 finished`` — how each turn of a conversation ended."""
    ends = [f"{t.index + 1} {'paused' if t.paused else 'finished'}" for t in run.turns]
    return f"{len(run.turns)}: {', '.join(ends)}"


def _run_strip(scenario: ScenarioView, shown: RunView | None) -> str:
    """One square per run (green/red), the run shown in detail outlined."""
    cells = []
    for run in scenario.runs:
        why = "; ".join(run.reasons) or "passed"
        marker = " shown" if run is shown else ""
        cells.append(
            f'<span class="run {"p" if run.passed else "f"}{marker}" '
            f'title="run {run.index + 1}: {_e(why)}">{run.index + 1}</span>'
        )
    label = f"run {shown.index + 1} shown below" if shown is not None else ""
    return f'<div class="strip">{"".join(cells)}<span class="note">{_e(label)}</span></div>'


def _run_detail(scenario: ScenarioView, run: RunView) -> str:
    """Scores, checks, match table, final answer and error of one run."""
    parts = []
    if run.scores:
        parts.append(_scores_table(run))
    if run.checks:
        parts.append(_checks_table(run))
    if run.rows:
        parts.append(_match_table(run))
    if run.error is not None:
        parts.append(_error_box(run.error, scenario.status == "error"))
    elif run.recorded and run.output_text is not None:
        answer = _e(shorten(run.output_text, _OUTPUT_LIMIT))
        parts.append(f'<h3>final answer</h3><pre class="output">{answer}</pre>')
    return "\n".join(parts)


def _scores_table(run: RunView) -> str:
    """Per metric: value with a bar, threshold, pass/fail, reason and issue codes."""
    rows = []
    for score in run.scores:
        width = min(max(score.value, 0.0), 1.0) if math.isfinite(score.value) else 0.0
        tick = min(max(score.threshold, 0.0), 1.0) if math.isfinite(score.threshold) else 0.0
        codes = "".join(f' <span class="code">{_e(code)}</span>' for code in score.codes)
        verdict = "pass" if score.passed else "fail"
        rows.append(
            f'<tr class="{verdict}"><td class="metric">{_e(score.name)}</td>'
            f'<td class="num">{_num(score.value)}</td>'
            f'<td class="meter-cell"><span class="meter"><span class="fill {verdict}" '
            f'style="width:{width * 100:.1f}%"></span><i style="left:{tick * 100:.1f}%">'
            "</i></span></td>"
            f'<td class="num muted">≥ {_num(score.threshold)}</td>'
            f'<td><span class="pill {verdict}">{verdict}</span></td>'
            f'<td class="reason">{_e(score.reason)}{codes}</td></tr>'
        )
    return (
        '<h3>scores</h3><table class="scores"><thead><tr><th>metric</th><th>value</th>'
        "<th></th><th>threshold</th><th>result</th><th>reason</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _verdict(check: CheckView) -> tuple[str, str]:
    """(chip class, verdict word) of a check: ``p``/pass, ``f``/fail, ``w``/warn."""
    if check.passed:
        return "p", "pass"
    return ("w", "warn") if check.severity == "warn" else ("f", "fail")


def _checks_table(run: RunView) -> str:
    """The forbid / no_errors / output checks and the rules (a failed ``warn`` one in yellow)."""
    rows = []
    for check in run.checks:
        verdict = _verdict(check)[1]
        code = f' <span class="code">{_e(check.code)}</span>' if check.code else ""
        rows.append(
            f'<tr class="{verdict}"><td class="metric">{_e(check.name)}</td>'
            f'<td><span class="pill {verdict}">{verdict}</span></td>'
            f'<td class="reason">{_e(check.reason)}{code}</td></tr>'
        )
    return (
        '<h3>checks</h3><table class="checks"><thead><tr><th>check</th><th>result</th>'
        f"<th>reason</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _error_box(error: ErrorView, opened: bool) -> str:
    """The exception, the phase it hit, and its traceback."""
    trace = ""
    if error.traceback:
        trace = (
            f'<details class="trace"{" open" if opened else ""}><summary>traceback</summary>'
            f"<pre>{_e(error.traceback.rstrip())}</pre></details>"
        )
    return (
        f'<div class="errorbox"><div class="etitle">error during {_e(error.phase)}'
        f'</div><pre class="emsg">{_e(error.summary())}</pre>{trace}</div>'
    )


# --- the match table -------------------------------------------------------------------------


def _match_table(run: RunView) -> str:
    """Expected call ↔ actual call (or "missing"), argument diffs, unexpected calls.

    With calls from several agents (a supervisor and its workers) an agent column says which
    agent made each call.
    """
    agents = run.several_agents
    out = []
    for row in run.rows:
        out.append(_match_row(run, row, run.row_agent(row) if agents else None))
        if row.diffs:
            out.append(_diff_row(row.diffs, 4 if agents else 3))
    agent_head = "<th>agent</th>" if agents else ""
    return (
        '<h3>calls</h3><table class="match"><thead><tr><th class="idx">#</th>'
        f"<th>expected</th><th>actual</th>{agent_head}<th>verdict</th></tr></thead>"
        f"<tbody>{''.join(out)}</tbody></table>"
    )


def _match_row(run: RunView, row: MatchRow, agent: str | None = None) -> str:
    """One table row: index, expected call, actual call (with result/error), the agent (when
    the table has that column), verdict."""
    bad = {diff.top for diff in row.diffs}
    idx = str(row.expected_index + 1) if row.expected_index is not None else "–"
    left = (
        _expectation_html(run.expected[row.expected_index], bad)
        if row.expected_index is not None
        else '<span class="none">not expected</span>'
    )
    right = (
        _call_html(run.calls[row.actual_index], bad)
        if row.actual_index is not None
        else '<span class="missing">missing</span>'
    )
    if (
        row.note
        and row.actual_index is not None
        and run.calls[row.actual_index].status == "invalid"
    ):
        right += f'<div class="callerr">{_e(row.note)}</div>'  # why it paired with nothing
    tags = "".join(f' <span class="code">{_e(tag)}</span>' for tag in row.tags)
    # the call a failed rule names: its row highlighted (red, or yellow for a `warn` rule)
    flagged = [run.checks[index] for index in row.rules]
    tags += "".join(
        f' <span class="code rule {_verdict(c)[1]}">{_e(rule_flag(c))}</span>' for c in flagged
    )
    marked = ""
    if flagged:
        marked = " r-rule" if any(not c.warned for c in flagged) else " r-rule-warn"
    verdict = row.verdict
    if verdict == "ok" and row.diffs:
        verdict_html = '<span class="verdict v-warn">match, but see arguments</span>'
    else:
        verdict_html = f'<span class="verdict v-{verdict}">{_VERDICT_LABEL[verdict]}</span>'
    agent_cell = f'<td class="agent">{_e(agent)}</td>' if agent is not None else ""
    return (
        f'<tr class="r-{verdict}{marked}"><td class="idx">{idx}</td><td>{left}</td>'
        f"<td>{right}</td>{agent_cell}<td>{verdict_html}{tags}</td></tr>"
    )


def _diff_row(diffs: Sequence[DiffView], span: int = 3) -> str:
    """The argument diffs under a row (``span`` columns wide): path, expected, actual, why."""
    rows = "".join(
        f'<tr><td class="path">{_e(diff.path or "/")}</td>'
        f'<td class="exp">{_e(shorten(diff.expected, _VALUE_LIMIT))}</td>'
        f'<td class="act">{_e(shorten(diff.actual, _VALUE_LIMIT))}</td>'
        f'<td class="why">{_e(diff.reason)}'
        + (f' <span class="src">{_e(diff.source)}</span>' if diff.source else "")
        + "</td></tr>"
        for diff in diffs
    )
    return (
        f'<tr class="diffs"><td></td><td colspan="{span}"><table class="diff">'
        "<thead><tr><th>argument</th><th>expected</th><th>actual</th><th>why</th></tr>"
        f"</thead><tbody>{rows}</tbody></table></td></tr>"
    )


def _expectation_html(expectation: ExpectationView, bad: set[str]) -> str:
    """``name(key=pattern, ...)`` as marked-up, escaped code; its label, expected result and
    ``optional`` around it when given."""
    html = _signature(expectation.name, expectation.args, bad)
    if expectation.label is not None:
        html = f'<span class="label">{_e(expectation.label)}:</span> {html}'
    result = expectation.result
    if result is not None:
        html += f'<div class="result">→ {_e(shorten(result.text, _RESULT_LIMIT))}</div>'
    if expectation.optional:
        html += '<div class="callnote">optional</div>'
    return html


def _call_html(call: CallView, bad: set[str]) -> str:
    """An actual call, plus its result or error and its status when not ``ok``."""
    extra = ""
    if call.status == "error":
        extra = f'<div class="callerr">error: {_e(call.error or "(no message)")}</div>'
    elif call.status == "requested":
        extra = '<div class="callnote">requested, not executed</div>'
    elif call.result_text is not None:
        extra = f'<div class="result">→ {_e(shorten(call.result_text, _RESULT_LIMIT))}</div>'
    return _signature(call.name, call.args, bad) + extra


def _signature(name: str, args: Sequence[ArgView], bad: set[str]) -> str:
    """``name(key=value, ...)`` with each argument wrapped, mismatched ones highlighted."""
    parts = []
    for arg in args:
        cls = "arg bad" if arg.key in bad else "arg"
        shown = _e(shorten(arg.text, _VALUE_LIMIT))
        if arg.masked:
            shown = f'<span class="masked">{shown}</span>'
        parts.append(f'<span class="{cls}"><span class="k">{_e(arg.key)}</span>={shown}</span>')
    return f'<code class="call"><span class="fn">{_e(name)}</span>({", ".join(parts)})</code>'
