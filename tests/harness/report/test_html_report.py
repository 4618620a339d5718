"""The HTML report as a document: counts, match tables, escaping, self-containment, redaction.

A real suite runs through the real runner (scripted model, the fixture LangGraph agent); a
hand-built result carries arbitrary text into every field for the escaping property. The page
in a real browser is tested in tests/e2e/browser/.
"""

from __future__ import annotations

import base64
import hashlib
import re
import textwrap
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.metrics.base import Details, Issue, Pair, Score
from harness.redaction import Redactor, Scrubber
from harness.report.base import Reporter, ReportFeed
from harness.report.html import HtmlReporter, render_html, render_page, write_html
from harness.report.view import scenario_view, suite_view
from harness.run.results import (
    STATUSES,
    CheckResult,
    ErrorInfo,
    RunResult,
    ScenarioResult,
    SuiteResult,
)
from harness.run.runner import RunOptions, run_scenarios
from harness.sample import Sample
from harness.scenarios import load_file
from harness.values import ArgDiff
from tests.support.paths import FIXTURES, ROOT
from tracing.records import ToolCall

AGENT_FILE = FIXTURES / "fixture_agent.py"
INJECTION = "<script>alert(1)</script>"

SUITE = f"""
suite: html
agent: {AGENT_FILE}:build
model: {{provider: scripted}}
scenarios:
  - name: adds
    input: "What is 2 + 3?"
    script: [{{tool_calls: [{{name: add, args: {{a: 2, b: 3}}}}]}}, {{content: "5"}}]
    expect: {{tool_calls: [{{name: add, args: {{a: 2, b: 3}}}}]}}
  - name: wrong args
    input: "What is 2 + 3?"
    script:
      - tool_calls:
          - {{name: add, args: {{a: 2, b: 4}}}}
          - {{name: lookup, args: {{key: alpha, api_key: sk-live-123456}}}}
      - content: "6 <b>bold</b>"
    expect:
      tool_calls:
        - {{name: add, args: {{a: 2, b: 3}}}}
        - {{name: delete_account, args: {{account_id: {{$type: integer}}}}}}
  - name: injected argument
    input: "look it up"
    script:
      - tool_calls: [{{name: lookup, args: {{key: "{INJECTION}"}}}}]
      - content: "done"
    expect: {{tool_calls: [{{name: lookup, args: {{key: alpha}}}}]}}
  - name: "<img src=x onerror=alert(2)> in a name"
    input: x
    script: [{{tool_calls: [{{name: add, args: {{a: 1, b: 1}}}}]}}, {{content: "2"}}]
    expect: {{tool_calls: [add]}}
  - name: known gap
    input: x
    xfail: the demo agent never looks anything up
    script: [{{content: nothing}}]
    expect: {{tool_calls: [lookup]}}
  - name: hangs
    input: x
    script: [{{content: ok}}]
    timeout: 0.000001
  - name: crashes
    agent: {AGENT_FILE}:build_strict
    input: x
    script: [{{tool_calls: [{{name: explode, args: {{reason: boom}}}}]}}, {{content: never}}]
  - name: repeated
    input: "2 + 3"
    repeat: 3
    script: [{{tool_calls: [{{name: add, args: {{a: 2, b: 3}}}}]}}, {{content: "5"}}]
    expect: {{tool_calls: [add]}}
"""


def run_report_suite(directory: Path) -> SuiteResult:
    """Run the suite above for real (the browser test uses it too)."""
    path = directory / "html.yaml"
    path.write_text(textwrap.dedent(SUITE), encoding="utf-8")
    return run_scenarios(list(load_file(path).scenarios), RunOptions())


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> SuiteResult:
    return run_report_suite(tmp_path_factory.mktemp("html"))


@pytest.fixture(scope="module")
def page(result: SuiteResult) -> str:
    return render_html(result)


class _Tags(HTMLParser):
    """Start tags with their attributes, and the text outside script/style."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self._raw = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in ("script", "style"):
            self._raw += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._raw -= 1

    def handle_data(self, data: str) -> None:
        if not self._raw:
            self.text.append(data)


def parse(document: str) -> _Tags:
    parser = _Tags()
    parser.feed(document)
    parser.close()
    return parser


def cards(page: str) -> list[dict[str, str | None]]:
    """The attributes of every scenario card."""
    return [
        attrs
        for tag, attrs in parse(page).tags
        if tag == "details" and "scenario" in (attrs.get("class") or "").split()
    ]


def card(page: str, name: str) -> str:
    """The HTML of one scenario card, found by its (escaped) name."""
    for chunk in page.split('<details class="scenario')[1:]:
        if f"</span>{name}</span>" in chunk:
            return chunk
    raise AssertionError(f"no card for scenario {name!r}")


# --- counts and structure ------------------------------------------------------------------


def test_counts_and_summary_line_match_the_result(result: SuiteResult, page: str) -> None:
    assert result.counts == {"passed": 3, "failed": 2, "error": 2, "xfailed": 1, "xpassed": 0}
    for status in STATUSES:
        tile = re.search(rf'data-count="{status}"><span class="n">(\d+)</span>', page)
        assert tile is not None, status
        assert int(tile.group(1)) == result.counts[status]
        button = re.search(rf'data-filter="{status}"[^>]*>{status} <b>(\d+)</b>', page)
        assert button is not None and int(button.group(1)) == result.counts[status]
    assert f'data-count="total"><span class="n">{len(result.scenarios)}<' in page
    assert result.summary_line() in page
    statuses = Counter(attrs["data-status"] for attrs in cards(page))
    assert dict(statuses) == {k: v for k, v in result.counts.items() if v}


def test_failures_come_first_then_xfail_then_passes(page: str) -> None:
    order = [page.index(f'data-group="{key}"') for key in ("problems", "expected", "passed")]
    assert order == sorted(order)
    problems = page[order[0] : order[1]]
    assert 'data-status="passed"' not in problems and 'data-status="failed"' in problems


def test_failed_scenario_shows_its_match_table_with_argument_diffs(page: str) -> None:
    html = card(page, "wrong args")
    assert " open" in html.split(">", 1)[0]  # failures start expanded
    assert '<span class="verdict v-wrong_args">wrong arguments</span>' in html
    assert '<td class="path">/b</td><td class="exp">3</td><td class="act">4</td>' in html
    assert '<span class="arg bad"><span class="k">b</span>=4</span>' in html  # highlighted
    assert '<span class="missing">missing</span>' in html  # delete_account never called
    assert "delete_account" in html and "$type" in html
    assert '<span class="verdict v-unexpected">unexpected</span>' in html  # the lookup
    assert "tool_call_accuracy" in html and '<span class="pill fail">fail</span>' in html
    assert "6 &lt;b&gt;bold&lt;/b&gt;" in html  # the final answer, as text


def test_scores_show_value_threshold_and_verdict(page: str) -> None:
    html = card(page, "adds")
    row = re.search(r'<tr class="pass"><td class="metric">tool_call_accuracy</td>(.*?)</tr>', html)
    assert row is not None
    assert '<td class="num">1.00</td>' in row.group(1)
    assert "≥ 1.00" in row.group(1) and '<span class="pill pass">pass</span>' in row.group(1)
    assert " open" not in html.split(">", 1)[0]  # passes start collapsed


def test_error_shows_phase_message_and_traceback(page: str) -> None:
    html = card(page, "crashes")
    assert "error during run" in html
    assert "explode failed: boom" in html
    trace = re.search(
        r'<details class="trace" open><summary>traceback</summary><pre>(.*?)</pre>', html, re.S
    )
    assert trace is not None and "Traceback (most recent call last)" in trace.group(1)
    assert "did not finish within the timeout" in card(page, "hangs")


def test_xfail_reason_is_shown_apart(page: str) -> None:
    html = card(page, "known gap")
    assert "expected to fail, and did:</b> the demo agent never looks anything up" in html
    assert '<span class="sub">the demo agent never looks anything up</span>' in html


def test_repeat_shows_runs_and_pass_rate(page: str) -> None:
    html = card(page, "repeated")
    assert "3/3 runs passed (100%; needs 100%)" in html
    assert html.count('<span class="run p') == 3


def test_empty_result_renders() -> None:
    page = render_html(SuiteResult())
    assert "No scenarios ran." in page and "no scenarios ran in 0.00s" in page


def test_interrupted_run_says_so() -> None:
    page = render_html(SuiteResult(interrupted=True, not_run=4))
    assert "Interrupted: these results are partial; 4 scenario(s) did not run." in page
    assert 'data-count="not_run"><span class="n">4<' in page


# --- self-contained and escaped ------------------------------------------------------------


def test_page_is_self_contained(page: str) -> None:
    tags = parse(page).tags
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*https?://""", page, re.IGNORECASE)
    assert not re.search(r"url\(\s*['\"]?\s*https?:", page, re.IGNORECASE)
    assert "<link" not in page.lower() and "@import" not in page
    assert not [tag for tag, attrs in tags if tag == "script" and "src" in attrs]
    assert not [tag for tag, _ in tags if tag in ("img", "iframe", "object", "embed", "link")]
    assert [tag for tag, _ in tags].count("script") == 1


def test_content_security_policy_allows_only_the_inline_script(page: str) -> None:
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert csp is not None
    policy = csp.group(1)
    assert "default-src &#x27;none&#x27;" in policy
    script = page[page.index("<script>") + len("<script>") : page.index("</script>")]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src &#x27;sha256-{digest}&#x27;" in policy


def test_script_argument_is_text_not_markup(page: str) -> None:
    assert INJECTION not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<img" not in page and "&lt;img src=x onerror=alert(2)&gt;" in page
    parsed = parse(page)
    assert INJECTION in "".join(parsed.text)  # a reader sees the argument as it was sent
    assert not [a for _, attrs in parsed.tags for a in attrs if a.startswith("on")]


def test_filter_data_is_escaped_in_attributes(page: str) -> None:
    searches = [attrs["data-search"] for attrs in cards(page)]
    assert any("<img src=x onerror=alert(2)>" in (s or "") for s in searches)  # decoded
    assert 'data-search="html::&lt;img src=x onerror=alert(2)&gt; in a name' in page


ASSETS = ROOT / "harness" / "report" / "assets"


def _element(page: str, tag: str) -> str:
    return page[page.index(f"<{tag}>") + len(tag) + 2 : page.index(f"</{tag}>")]


def test_page_inlines_the_asset_files_and_hashes_the_script_file(page: str) -> None:
    """The CSS and JS come from report/assets/ verbatim; the CSP allows that file's hash."""
    script = (ASSETS / "report.js").read_bytes()
    assert _element(page, "script").encode() == script
    assert _element(page, "style").encode() == (ASSETS / "report.css").read_bytes()
    digest = base64.b64encode(hashlib.sha256(script).digest()).decode()
    assert f"sha256-{digest}" in page
    assert "${" not in page  # every placeholder of page.html was filled


@pytest.mark.parametrize("name", ["report.css", "report.js", "page.html"])
def test_assets_cannot_break_out_of_their_element(name: str) -> None:
    """Inlined raw, an asset must not end its element early nor carry CRLF (hash drift)."""
    data = (ASSETS / name).read_bytes()
    assert b"\r" not in data
    if name != "page.html":
        assert not re.search(rb"</(?:script|style)", data, re.IGNORECASE)
        assert not re.search(rb"https?:|@import|url\(", data, re.IGNORECASE)


_TEXT = st.text(min_size=1, max_size=40).filter(lambda s: s.strip() != "***")


def crafted(text: str) -> SuiteResult:
    """A result with ``text`` in every field a report shows."""
    calls = [
        ToolCall(text, {"q": text}, status="ok", result=text),
        ToolCall("other", {"q": text}, status="error", error=text),
    ]
    sample = Sample(
        input=text,
        tool_calls=calls,
        expected_tool_calls=[{"name": text, "args": {"q": "expected " + text}}, "absent"],
        output=text,
    )
    diff = ArgDiff("/q", "expected " + text, text, "wrong_args", text)
    score = Score(
        text,
        0.25,
        0.5,
        False,
        text,
        Details(pairs=(Pair(0, 0, (diff,)),), issues=(Issue("wrong_args", text, 0, 0),)),
    )
    run = RunResult(
        0,
        False,
        sample,
        scores=(score,),
        checks=(CheckResult("no_errors", False, text, "tool_error", (1,)),),
        error=None,
    )
    crashed = RunResult(1, False, None, error=ErrorInfo(text, text, text, "run"))
    scenarios = (
        ScenarioResult(text, text, text, 3, "failed", (run,), reasons=(text,)),
        ScenarioResult(text, text, text, None, "error", (crashed,), reasons=(text,)),
        ScenarioResult(text, text, text, 1, "xfailed", (run, run), 2, 0.5, text, (text,)),
    )
    return SuiteResult(scenarios=scenarios, started_at=1.0, duration=1.0)


def _shape(document: str) -> list[tuple[str, tuple[str, ...]]]:
    return [(tag, tuple(sorted(attrs))) for tag, attrs in parse(document).tags]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_TEXT)
def test_any_text_anywhere_changes_no_markup(text: str) -> None:
    baseline = _shape(render_html(crafted("x")))
    document = render_html(crafted(text))
    assert _shape(document) == baseline  # the text never adds, drops or reshapes an element
    document.encode("utf-8")  # lone surrogates and controls were replaced, so it can be written


def test_crafted_result_shows_every_field(tmp_path: Path) -> None:
    text = "</script><b onmouseover=x>'\"&"
    page = render_html(crafted(text))
    visible = "".join(parse(page).text)
    assert visible.count(text) >= 10  # names, reasons, args, result, error, traceback, output
    assert text not in page


# --- redaction -----------------------------------------------------------------------------


def test_secret_arguments_are_masked_everywhere(page: str) -> None:
    assert "sk-live-123456" not in page
    assert '<span class="k">api_key</span>=<span class="masked">&#x27;***&#x27;</span>' in page


def test_secret_values_are_scrubbed_from_free_text() -> None:
    call = ToolCall("login", {"user": "ada", "passwd": "hunter2-secret"}, result="ok")
    sample = Sample(input="log in", tool_calls=[call], output="I used hunter2-secret to log in")
    run = RunResult(0, False, sample, error=ErrorInfo("E", "bad passwd hunter2-secret", "tb"))
    scenario = ScenarioResult("s", "n", "f.yaml", 1, "error", (run,), reasons=("hunter2-secret",))
    page = render_html(SuiteResult(scenarios=(scenario,)))
    assert "hunter2-secret" not in page
    assert "ada" in page


def test_json_string_arguments_are_redacted_inside() -> None:
    call = ToolCall("send", {"payload": '{"token": "tok-998877", "to": "bob"}'})
    sample = Sample(tool_calls=[call])
    scenario = ScenarioResult("s", "n", "f", None, "failed", (RunResult(0, False, sample),))
    page = render_html(SuiteResult(scenarios=(scenario,)))
    assert "tok-998877" not in page and "bob" in page


def test_custom_redactor_keys(result: SuiteResult) -> None:
    page = render_html(result, redactor=Redactor(["key"]))
    html = card(page, "injected argument")
    assert '<span class="k">key</span>=<span class="masked">&#x27;***&#x27;</span>' in html
    assert "alert(1)" not in page  # the injected value sat under `key`: scrubbed everywhere


def _match_table(page: str) -> str:
    start = page.index('<table class="match">')
    return page[start : page.index("</tbody></table>", start)]


def test_custom_redact_keys_mask_the_match_table_cells() -> None:
    """A ``--redact`` key (not in the default list) is masked in both cells of the table."""
    call = ToolCall("charge", {"card_number": "4111-2222-3333", "amount": 5})
    expected = {"name": "charge", "args": {"card_number": "4111-2222-3333", "amount": 6}}
    sample = Sample(tool_calls=[call], expected_tool_calls=[expected])
    run = RunResult(0, False, sample)
    suite = SuiteResult(scenarios=(ScenarioResult("s", "n", "f", 1, "failed", (run,)),))
    plain = _match_table(render_html(suite))
    assert plain.count("4111-2222-3333") == 2  # not a default key: shown on both sides
    table = _match_table(render_html(suite, redactor=Redactor(["card_number"])))
    assert "4111-2222-3333" not in table
    masked = '<span class="k">card_number</span>=<span class="masked">&#x27;***&#x27;</span>'
    assert table.count(masked) == 2
    assert '<td class="path">/amount</td>' in table  # the real mismatch is still shown
    assert "wrong arguments" in table


def test_a_sampled_result_says_how_many_it_does_not_show() -> None:
    """eval-traces keeps a bounded sample: tiles count everything, a banner tells the rest."""
    run = RunResult(0, False, Sample(tool_calls=[ToolCall("add", {"a": 1})]))
    kept = ScenarioResult("s", "n", "f", 1, "failed", (run,))
    result = SuiteResult(scenarios=(kept,), omitted={"passed": 7, "failed": 2})
    page = render_html(result)
    assert result.total == 10 and result.counts["failed"] == 3
    assert "Showing 1 of 10 results" in page and "9 more not shown (7 passed, 2 failed)" in page
    assert 'data-count="total"><span class="n">10<' in page
    assert 'data-count="failed"><span class="n">3<' in page
    assert '<span class="count">1</span> <span class="more">+2 not shown</span>' in page
    assert page.count('<details class="scenario') == 1
    assert "more not shown" not in render_html(SuiteResult(scenarios=(kept,)))


def test_diff_under_a_secret_key_shows_no_values() -> None:
    call = ToolCall("auth", {"token": "tok-abc-123"})
    sample = Sample(
        tool_calls=[call], expected_tool_calls=[{"name": "auth", "args": {"token": "x"}}]
    )
    page = render_html(
        SuiteResult(
            scenarios=(ScenarioResult("s", "n", "f", 1, "failed", (RunResult(0, False, sample),)),)
        )
    )
    assert "tok-abc-123" not in page
    assert '<td class="path">/token</td><td class="exp">***</td><td class="act">***</td>' in page
    assert "wrong_args (value masked)" in page


# --- writing -------------------------------------------------------------------------------


def test_write_html_creates_folders_and_leaves_no_temp_file(
    result: SuiteResult, tmp_path: Path
) -> None:
    target = tmp_path / "out" / "deeper" / "report.html"
    write_html(result, target)
    assert target.read_text(encoding="utf-8") == render_html(result)
    assert [p.name for p in target.parent.iterdir()] == ["report.html"]
    write_html(SuiteResult(), target)  # replaces the old report
    assert "No scenarios ran." in target.read_text(encoding="utf-8")


def test_write_html_survives_unencodable_text(tmp_path: Path) -> None:
    sample = Sample(output="half a pair \ud800 and a NUL \x00")
    scenario = ScenarioResult("s", "n", "f", 1, "passed", (RunResult(0, True, sample),))
    write_html(SuiteResult(scenarios=(scenario,)), tmp_path / "r.html")
    assert "half a pair \ufffd and a NUL \ufffd" in (tmp_path / "r.html").read_text("utf-8")


# --- the reporter --------------------------------------------------------------------------


def _scenario(name: str, passed: bool) -> ScenarioResult:
    run = RunResult(0, passed, Sample(input=name, tool_calls=[ToolCall("add", {"a": 1})]))
    return ScenarioResult("s", name, "f.yaml", 1, "passed" if passed else "failed", (run,))


def test_reporter_streams_a_bounded_sample_and_counts_the_rest(tmp_path: Path) -> None:
    """Fed one result at a time (eval-traces), it keeps ``keep`` views, failures first."""
    target = tmp_path / "out" / "report.html"
    reporter: Reporter = HtmlReporter(target, keep=1)
    feed = ReportFeed.for_stream([reporter])
    results = (_scenario("first", True), _scenario("broken", False), _scenario("last", True))
    for one in results:
        feed.add(one)
    assert not target.exists()  # nothing is written before close
    assert feed.close(SuiteResult(scenarios=results)) == [target]
    page = target.read_text(encoding="utf-8")
    assert [attrs["data-status"] for attrs in cards(page)] == ["failed"]
    assert "Showing 1 of 3 results" in page and "2 more not shown (2 passed)" in page
    assert 'data-count="passed"><span class="n">2<' in page
    assert '<span class="more">+2 not shown</span>' not in page  # the passed group is empty


def test_aborted_reporter_writes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    reporter = HtmlReporter(target)
    feed = ReportFeed.for_suite([reporter], SuiteResult(scenarios=(_scenario("a", False),)))
    feed.add(_scenario("a", False))
    feed.abort()
    assert list(tmp_path.iterdir()) == []


def test_page_shows_what_the_view_holds_and_masks_nothing_itself() -> None:
    """Redaction is the view's: a view built without keys shows the secret, a mask is its own."""
    call = ToolCall("login", {"password": "pw-4455", "user": "ada"})
    suite = SuiteResult(
        scenarios=(
            ScenarioResult(
                "s",
                "n",
                "f",
                1,
                "failed",
                (RunResult(0, False, Sample(tool_calls=[call], output="used pw-4455")),),
            ),
        )
    )

    def page_with(redactor: Redactor) -> str:
        scrubber = Scrubber.for_suite(redactor, suite)
        views = [scenario_view(s, scrubber) for s in suite.scenarios]
        return render_page(views, suite_view(suite, scrubber))

    unmasked = page_with(Redactor(()))
    assert unmasked.count("pw-4455") == 2  # the argument and the final answer
    masked = page_with(Redactor(["password"], mask="[hidden]"))
    assert "pw-4455" not in masked
    assert '<span class="masked">&#x27;[hidden]&#x27;</span>' in masked
    assert "used [hidden]" in masked and "<code>[hidden]</code>" in masked  # footer: view's mask


def test_write_html_returns_the_path_it_wrote(tmp_path: Path) -> None:
    target = tmp_path / "r.html"
    assert write_html(SuiteResult(), target) == target
