"""Every report names a call whose arguments were not JSON as the likely cause of the failure.

``harness run`` drives a real agent through the real ``langchain-openai`` client against the
local stand-in (``tests/support/openai_server.py``), whose ``malformed`` model answers the first
turn with a ``get_weather`` call whose arguments are cut off mid-JSON. LangChain records it in
``AIMessage.invalid_tool_calls``, the recorder as an ``invalid`` call, and the expected
``get_weather(city='Berlin')`` is unmatched. The console FAILURES section, the JSON report,
JUnit, HTML and Markdown all render from the one view model, and each says why.
"""

from __future__ import annotations

import contextlib
import html
import io
import json
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Iterator

import pytest

from harness.cli import main
from tests.support.openai_server import API_KEY, StandIn, serving, write_project

pytest.importorskip("langchain_openai")

CUT_OFF = '{"city": "Berlin", "day": '  # what the stand-in's ``malformed`` model sends
CAUSE = f"get_weather: the model's arguments were not valid JSON: {CUT_OFF!r}"

SUITE = """
suite: weather
agent: agent.py:build
model: {{provider: openai, model: malformed, base_url: "{url}", max_retries: 0, timeout: 10}}
scenarios:
  - name: weather in Berlin
    input: Weather in Berlin?
    expect:
      tool_calls: [{{name: get_weather, args: {{city: Berlin}}}}]
    metrics:
      tool_call_accuracy: {{}}
      tool_argument_correctness: {{}}
      tool_call_f1: {{}}
      tool_call_sequence_accuracy: {{}}
      no_unexpected_tool_calls: {{}}
"""


@pytest.fixture(scope="module")
def standin() -> Iterator[StandIn]:
    """The stand-in server for this module."""
    yield from serving()


@pytest.fixture(scope="module")
def reports(standin: StandIn, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """One ``harness run`` writing every report; what it printed as ``console``."""
    where = tmp_path_factory.mktemp("invalid")
    write_project(where, standin.url)  # the agent file: a real tool loop over get_weather
    suite = where / "weather.yaml"
    suite.write_text(textwrap.dedent(SUITE.format(url=standin.url)), encoding="utf-8")
    files = {"--json": "r.json", "--junit-xml": "r.xml", "--html": "r.html", "--markdown": "r.md"}
    flags = [arg for flag, name in files.items() for arg in (flag, str(where / name))]
    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", API_KEY)
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            code = main(["run", str(suite), *flags])
    assert code == 1, printed.getvalue()
    texts = {flag: (where / name).read_text(encoding="utf-8") for flag, name in files.items()}
    texts["console"] = printed.getvalue()
    return texts


def test_the_console_failure_names_the_cause_in_reasons_and_table(reports: dict[str, str]) -> None:
    text = reports["console"]
    failures = text[text.index("FAILURES") :]
    assert (
        "tool_call_accuracy 0.00 < 1.00: 0/1 expected calls matched; missing: "
        f"get_weather(city='Berlin'); likely cause: {CAUSE}"
    ) in failures
    assert f"no such call was made. Likely cause: {CAUSE}." in failures
    # the table pairs the expectation with its unreadable stand-in and says why
    row = next(line for line in failures.splitlines() if line.strip().startswith("1  get_weather"))
    assert row.rstrip().endswith("[invalid]  invalid args")
    assert f"  {CAUSE}" in failures
    assert "missing argument 'city'" not in failures  # no diff of arguments it never had


def test_the_json_report_carries_the_cause_per_score(reports: dict[str, str]) -> None:
    (run,) = json.loads(reports["--json"])["scenarios"][0]["runs"]
    assert run["tool_calls"][0]["status"] == "invalid"
    for score in run["scores"]:
        assert not score["passed"], score["name"]
        assert CAUSE in score["reason"], score["name"]
        assert "invalid_args" in score["codes"]
        causes = [i for i in score["details"]["issues"] if i["code"] == "invalid_args"]
        assert causes == [{"code": "invalid_args", "message": CAUSE, "expected": None, "actual": 0}]


def test_junit_html_and_markdown_name_it_too(reports: dict[str, str]) -> None:
    (case,) = ET.fromstring(reports["--junit-xml"]).iter("testcase")
    failure = case.find("failure")
    assert failure is not None
    assert f"likely cause: {CAUSE}" in failure.get("message", "")
    assert "invalid args" in (failure.text or "")
    page = html.unescape(reports["--html"])
    assert f"likely cause: {CAUSE}" in page
    assert 'class="verdict v-invalid">invalid arguments<' in page
    assert f'<div class="callerr">{CAUSE}</div>' in page
    markdown = reports["--markdown"]
    assert "❌ invalid args<br>" in markdown and "likely cause: get_weather" in markdown
