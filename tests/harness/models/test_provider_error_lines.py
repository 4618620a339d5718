"""A provider error or a cassette miss is one line on the console; the traceback is kept for -v.

``harness run`` drives the real ``langchain-openai`` client against the local stand-in
(``tests/support/openai_server.py``): a 500, and a port nothing listens on. The console and
JUnit show one line naming the model, the endpoint (no credentials) and the cause; the JSON
report keeps the traceback, and ``-v`` prints it. An agent's own exception keeps its traceback
on the console: that one is a bug the user has to read.
"""

from __future__ import annotations

import json
import sys
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.support.openai_server import API_KEY, StandIn, serving, write_project
from tests.support.paths import FIXTURES

pytest.importorskip("langchain_openai")

pytest_plugins = ["pytester"]

FIXTURE_AGENT = FIXTURES / "fixture_agent.py"
PASSWORD = "hunter2-not-for-print"


@pytest.fixture(scope="module")
def standin() -> Iterator[StandIn]:
    """The stand-in server for this module."""
    yield from serving()


@pytest.fixture(scope="module")
def refused() -> str:
    """A ``base_url`` on which nothing listens (bound, never served, closed)."""
    closed = StandIn()
    url = closed.url
    closed.stop()
    return url


def with_password(url: str) -> str:
    return url.replace("http://", f"http://user:{PASSWORD}@")


def run(
    cwd: Path, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, dict[str, Any]]:
    """``harness run`` in this process: (exit code, console output, the JSON report)."""
    report = cwd / "report.json"
    code = main(["run", *args, "--json", str(report)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err, json.loads(report.read_text(encoding="utf-8"))


def run_error(report: dict[str, Any]) -> dict[str, Any]:
    (scenario,) = report["scenarios"]
    error: dict[str, Any] = scenario["runs"][0]["error"]
    return error


def assert_no_secret(text: str) -> None:
    assert PASSWORD not in text and API_KEY not in text


# --- a provider error through harness run --------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "cause"),
    [("broken", "Error code: 500 - The server had an error"), ("m", "Connection error.")],
    ids=["http-500", "connection-refused"],
)
def test_a_provider_error_is_one_line_with_the_traceback_kept(
    tmp_path: Path,
    standin: StandIn,
    refused: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    model: str,
    cause: str,
) -> None:
    url = standin.url if model == "broken" else refused
    suite = write_project(tmp_path, with_password(url), model=model, more=f", api_key: {API_KEY}")
    monkeypatch.chdir(tmp_path)
    where = f"model openai:{model} at {url}: "

    code, out, report = run(tmp_path, capsys, str(suite), "-k", "berlin", "--junit-xml", "j.xml")
    assert code == 1
    lines = [line for line in out.splitlines() if where in line]
    assert len(lines) == 2, out  # the reason line, and the short summary's
    assert lines[0].startswith(f"  error (run): ProviderError: {where}") and cause in lines[0]
    assert "Traceback" not in out and "site-packages" not in out
    assert_no_secret(out)

    error = run_error(report)
    assert error["type"] == "ProviderError" and error["message"].startswith(where)
    # the JSON report keeps the whole chain: the SDK's exception, then the harness's line
    trace = error["traceback"]
    assert trace.startswith("Traceback (most recent call last)")
    assert "direct cause of the following exception" in trace and cause in trace
    assert_no_secret(trace)

    (case,) = ET.parse(tmp_path / "j.xml").getroot().iter("testcase")
    (junit_error,) = case.iter("error")
    assert junit_error.get("type") == "ProviderError"
    assert where in (junit_error.text or "") and "Traceback" not in (junit_error.text or "")

    code, verbose, _ = run(tmp_path, capsys, str(suite), "-k", "berlin", "-v")
    assert code == 1
    assert "Traceback (most recent call last)" in verbose and where in verbose
    assert_no_secret(verbose)


def test_an_agents_own_exception_keeps_its_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = tmp_path / "crash.yaml"
    suite.write_text(
        textwrap.dedent(
            f"""
            suite: s
            agent: {FIXTURE_AGENT}:build_strict
            model: {{provider: scripted}}
            scenarios:
              - name: crash
                input: explode
                script: [{{tool_calls: [{{name: explode, args: {{reason: bad}}}}]}}]
                expect: {{tool_calls: [explode]}}
            """
        ),
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    code, out, report = run(tmp_path, capsys, str(suite))
    assert code == 1
    assert run_error(report)["type"] == "ValueError"
    assert "Traceback (most recent call last)" in out and "explode failed: bad" in out


# --- a cassette miss under --replay ------------------------------------------------------------


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No key, and the provider's packages cannot be imported (replay never needs them)."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for module in [m for m in sys.modules if m.split(".")[0] in ("langchain_openai", "openai")]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, "langchain_openai", None)
    monkeypatch.setitem(sys.modules, "openai", None)


def test_a_cassette_miss_is_one_line_with_the_traceback_kept(
    tmp_path: Path,
    standin: StandIn,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    offline: None,
) -> None:
    suite = write_project(tmp_path, standin.url)  # nothing recorded
    monkeypatch.chdir(tmp_path)
    miss = "CassetteMiss: no recording for turn 1 of weather::weather in Berlin in "
    code, out, report = run(tmp_path, capsys, str(suite), "-k", "berlin", "--replay")
    assert code == 1
    assert f"  error (run): {miss}" in out and "--record" in out
    assert "Traceback" not in out

    error = run_error(report)
    assert error["type"] == "CassetteMiss"
    assert "Traceback (most recent call last)" in error["traceback"]

    code, verbose, _ = run(tmp_path, capsys, str(suite), "-k", "berlin", "--replay", "-v")
    assert code == 1 and miss in verbose
    assert "Traceback (most recent call last)" in verbose


# --- the pytest plugin ---------------------------------------------------------------------------

BLOCK_PROVIDER = """
import sys

sys.modules["langchain_openai"] = None  # replay must not need the provider's package
sys.modules["openai"] = None
"""


def test_pytest_shows_the_line_and_the_traceback_only_when_asked(
    pytester: pytest.Pytester, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    suite = write_project(
        pytester.path,
        with_password(standin.url),
        model="broken",
        more=f", api_key: {API_KEY}",
    )
    where = f"model openai:broken at {standin.url}: "
    args = ("--harness-scenarios", "-p", "no:cacheprovider", "-k", "berlin", str(suite))
    short = pytester.runpytest_subprocess(*args)
    short.assert_outcomes(failed=1)
    text = short.stdout.str()
    assert f"error (run): ProviderError: {where}" in text and "Error code: 500" in text
    assert "Traceback" not in text
    assert_no_secret(text)

    long = pytester.runpytest_subprocess(*args, "-v")
    long.assert_outcomes(failed=1)
    assert "Traceback (most recent call last)" in long.stdout.str()
    assert_no_secret(long.stdout.str())

    # a cassette miss: one line, and its traceback under --tb=long
    write_project(pytester.path, standin.url)
    pytester.makeconftest(BLOCK_PROVIDER)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    miss = "CassetteMiss: no recording for turn 1 of weather::weather in Berlin"
    replayed = pytester.runpytest_subprocess(*args, "--harness-replay")
    replayed.assert_outcomes(failed=1)
    assert miss in replayed.stdout.str() and "Traceback" not in replayed.stdout.str()
    traced = pytester.runpytest_subprocess(*args, "--harness-replay", "--tb=long")
    traced.assert_outcomes(failed=1)
    assert miss in traced.stdout.str()
    assert "Traceback (most recent call last)" in traced.stdout.str()
