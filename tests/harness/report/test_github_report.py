"""GitHub Actions output: workflow-command annotations, the job summary, ``--markdown``.

The annotation lines are checked against the format GitHub documents for workflow commands
(``::error file={name},line={line},title={title}::{message}``) and the escaping its toolkit
applies (``@actions/core`` ``command.ts``: ``%`` ``\\r`` ``\\n`` in the message, and also ``:``
``,`` in properties).
"""

from __future__ import annotations

import io
import re
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import unquote

import pytest

from harness.cli import main
from harness.report.github import annotation, escape_data, escape_property, github_enabled
from tests.support.paths import FIXTURES, ROOT

AGENT_FILE = FIXTURES / "fixture_agent.py"
SCENARIOS = ROOT / "scenarios"

# GitHub's documented shape: `::error` + optional ` key=value,key=value` + `::` + message
COMMAND = re.compile(r"^::(?P<kind>error|warning|notice)(?: (?P<props>[^:]*))?::(?P<msg>.*)$")
PROPERTY = re.compile(r"^(?P<key>file|line|endLine|col|endColumn|title)=(?P<value>[^,]*)$")


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """A workflow command line, decoded as the runner does; fails on anything malformed."""
    found = COMMAND.match(line)
    assert found is not None, line
    props: dict[str, str] = {}
    if found["props"]:
        for item in found["props"].split(","):
            prop = PROPERTY.match(item)
            assert prop is not None, item
            props[prop["key"]] = unquote(prop["value"])
    assert not re.search(r"[\r\n]", found["msg"])
    return found["kind"], props, unquote(found["msg"])


def test_escaping_follows_the_toolkit() -> None:
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a::b, c\n") == "a%3A%3Ab%2C c%0A"
    line = annotation("error", "x: 1, y\n2%", file="dir/a,b.yaml", line=7, title="FAILED s::n")
    assert line == "::error file=dir/a%2Cb.yaml,line=7,title=FAILED s%3A%3An::x: 1, y%0A2%25"
    assert parse_command(line) == (
        "error",
        {"file": "dir/a,b.yaml", "line": "7", "title": "FAILED s::n"},
        "x: 1, y\n2%",
    )
    assert annotation("notice", "plain") == "::notice::plain"


def test_enabled_on_github_actions_or_with_the_flag() -> None:
    assert github_enabled(False, {"GITHUB_ACTIONS": "true"})
    assert not github_enabled(False, {"GITHUB_ACTIONS": "false"})
    assert not github_enabled(False, {})
    assert github_enabled(True, {})


def _suite(folder: Path) -> Path:
    path = folder / "calc.yaml"
    body = """
    - name: adds
      input: x
      script: [{tool_calls: [{name: add, args: {a: 1, b: 2}}]}, {content: done}]
      expect: {tool_calls: [{name: add, args: {a: 1, b: 2}}]}
    - name: "wrong, with: a comma"
      input: x
      script: [{tool_calls: [{name: add, args: {a: 1, b: 9}}]}, {content: "50% | <b>"}]
      expect:
        tool_calls: [{name: add, args: {a: 1, b: 2}}]
        output: {$contains: "100%"}
    """
    path.write_text(
        f"suite: calc\nagent: {AGENT_FILE}:build\nmodel: {{provider: scripted}}\nscenarios:\n"
        + textwrap.indent(textwrap.dedent(body).lstrip("\n"), "  "),
        encoding="utf-8",
    )
    return path


def test_a_run_on_github_annotates_each_failure_at_its_yaml_line_and_writes_the_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _suite(tmp_path)
    summary = tmp_path / "step_summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    assert main(["run", str(suite)]) == 1
    commands = [line for line in capsys.readouterr().out.splitlines() if line.startswith("::")]
    assert len(commands) == 1
    kind, props, message = parse_command(commands[0])
    assert kind == "error"
    assert props == {"file": "calc.yaml", "line": "9", "title": "FAILED calc::wrong, with: a comma"}
    assert message.splitlines()[0].startswith("tool_call_accuracy 0.00 < 1.00")
    assert "does not match $contains '100%'" in message
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n")  # appended, never overwritten
    assert "## ❌ toolcall-harness: 1 passed, 1 failed" in text
    assert "| passed | failed |" in text and "| 1 | 1 |" in text
    assert "<code>calc::wrong, with: a comma</code>" in text and "<details>" in text
    # the agent's answer cannot break the table or inject markup
    assert "50% &#124; &lt;b&gt;" in text and "<b>" not in text


def test_markdown_writes_the_same_summary_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    out = tmp_path / "deep" / "summary.md"
    assert main(["run", str(_suite(tmp_path)), "--markdown", str(out)]) == 1
    text = out.read_text(encoding="utf-8")
    failures = text.split("| status | scenario | where | first reason |", 1)[1]
    rows = [line for line in failures.splitlines()[2:] if line.startswith("| FAILED")]
    assert len(rows) == 1 and "calc.yaml:9" in rows[0] and "tool_call_accuracy 0.00" in rows[0]
    assert "| # | expected | actual | verdict |" in text  # the match table in the <details>
    assert "❌ wrong args" in text and "/b: " in text


def test_github_flag_outside_actions_only_annotates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert main(["run", str(_suite(tmp_path)), "--github"]) == 1
    assert any(line.startswith("::error ") for line in capsys.readouterr().out.splitlines())


def test_trace_url_links_failures_in_console_junit_markdown_html(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    template = "http://localhost:6006/projects/default/traces/{trace_id}"
    reports = tmp_path / "r"
    code = main(
        [
            "run",
            str(_suite(tmp_path)),
            "--trace-file",
            str(tmp_path / "spans.jsonl"),
            "--trace-url",
            template,
            "--junit-xml",
            str(reports / "junit.xml"),
            "--markdown",
            str(reports / "summary.md"),
            "--html",
            str(reports / "report.html"),
        ]
    )
    assert code == 1
    out = capsys.readouterr().out
    found = re.search(r"trace: (http://localhost:6006/projects/default/traces/[0-9a-f]{32})", out)
    assert found is not None, out
    url = found[1]
    junit = ET.parse(reports / "junit.xml").getroot()
    failure = junit.find(".//failure")
    assert failure is not None and failure.text is not None and url in failure.text
    assert f"[trace]({url})" in (reports / "summary.md").read_text(encoding="utf-8")
    assert f'<a href="{url}" rel="noopener">' in (reports / "report.html").read_text("utf-8")


def test_trace_url_needs_the_placeholder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(_suite(tmp_path)), "--trace-url", "http://x/traces"]) == 2
    assert "has no {trace_id}" in capsys.readouterr().err


def test_demo_suites_summary_is_well_formed(tmp_path: Path) -> None:
    from harness.report.markdown import render_markdown
    from harness.report.view import SuiteView

    summary = SuiteView(0.0, 1.0, False, 0, True, {"passed": 2}, {}, ("a | b",), "2 passed", "*")
    text = render_markdown(summary, [])
    assert text.splitlines()[0] == "## ✅ toolcall-harness: 2 passed"
    assert "> ⚠️ a &#124; b" in text
    stream = io.StringIO()
    from harness.report.github import GithubReporter

    reporter = GithubReporter(stream, summary_file=str(tmp_path / "s.md"), environ={})
    reporter.close(summary)
    assert stream.getvalue() == ""
    assert (tmp_path / "s.md").read_text(encoding="utf-8").startswith("## ✅")
