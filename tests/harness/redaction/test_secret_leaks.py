"""Secrets that used to leave the process, and text that used to drive the terminal.

Real LangGraph ReAct graphs (tests/support/agents.py) with real tools, driven by the scripted
model, run through ``harness run``; the trace file, a real OTLP/HTTP endpoint on 127.0.0.1 and
every report are searched for the secret.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from harness.redaction import BUILTIN_VALUE_PATTERNS, MASK, Redactor, Scrubber
from harness.report.view import printable
from tests.support.paths import ROOT

HARNESS = Path(sys.executable).parent / "harness"

PASSWORD = "Hunter2-Correct-Horse"
ANSWER = "the vault code is 9931-ALPHA"
HEADER_KEY = "KEY-5f1c9e0b7a"
COOKIE = "sess-77d2c1"
OPENAI = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2"
GITHUB = "ghp_" + "x" * 36
AWS = "AKIA" + "ABCDEFGHIJKLMNOP"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"

AGENT_MODULE = f'''
from langchain_core.tools import tool
from tests.support.agents import build_react_graph


@tool
def login(user: str, password: str) -> str:
    """Log in (always refused, quoting the password: a real service's error does)."""
    raise PermissionError(f"login refused for {{user}} with password {{password}}")


@tool
def fetch(url: str) -> str:
    """Fetch a URL; echoes the request headers it sent, as plain text."""
    return (
        "HTTP/1.1 401 Unauthorized\\n"
        "x-api-key: {HEADER_KEY}\\n"
        "Set-Cookie: session={COOKIE}; Path=/\\n"
        "\\nbody: denied"
    )


@tool
def note(text: str) -> str:
    """Store a note (secrets under an innocent key)."""
    return "stored: " + text


def build(model):
    return build_react_graph(model, [login, fetch, note])
'''


def _project(tmp_path: Path, scenarios: str) -> Path:
    (tmp_path / "leaky_agent.py").write_text(AGENT_MODULE, encoding="utf-8")
    suite = tmp_path / "leaky.yaml"
    suite.write_text(
        "suite: leaky\nagent: leaky_agent.py:build\nmodel: {provider: scripted}\n"
        "scenarios:\n" + scenarios,
        encoding="utf-8",
    )
    return suite


LOGIN = f"""\
  - name: login refused
    input: log in
    script:
      - tool_calls: [{{name: login, args: {{user: ada, password: {PASSWORD}}}}}]
      - content: could not log in
    expect: {{tool_calls: [login]}}
"""
ANSWERS = f"""\
  - name: wrong answer
    input: what is the code
    script: [{{content: "{ANSWER}"}}]
    expect: {{output: {{$contains: "never"}}}}
"""
HEADERS = """\
  - name: echoed headers
    input: fetch it
    script:
      - tool_calls: [{name: fetch, args: {url: "https://example.test/x"}}]
      - content: denied
    expect: {tool_calls: [{name: nothing}]}
"""
NOTES = f"""\
  - name: innocent keys
    input: remember these
    script:
      - tool_calls:
          - {{name: note, args: {{text: "keys {OPENAI} {GITHUB} {AWS} {JWT}"}}}}
      - content: noted
    expect: {{tool_calls: [{{name: nothing}}]}}
"""


def _wire(server: ThreadingHTTPServer) -> list[Any]:
    """Every span received (protobuf Span messages)."""
    return [
        span
        for body in server.bodies  # type: ignore[attr-defined]
        for resource_spans in ExportTraceServiceRequest.FromString(body).resource_spans
        for scope_spans in resource_spans.scope_spans
        for span in scope_spans.spans
    ]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _run(tmp_path: Path, suite: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(HARNESS), "run", str(suite), *flags],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
        env=_env(),
    )


def _reports(tmp_path: Path) -> list[str]:
    return [
        "--json",
        str(tmp_path / "r.json"),
        "--junit-xml",
        str(tmp_path / "r.xml"),
        "--html",
        str(tmp_path / "r.html"),
        "--trace-file",
        str(tmp_path / "t.json"),
    ]


def _written(tmp_path: Path) -> dict[str, bytes]:
    return {
        name: (tmp_path / name).read_bytes() for name in ("r.json", "r.xml", "r.html", "t.json")
    }


def test_a_secret_quoted_in_a_tools_exception_reaches_no_span_without_content_capture(
    tmp_path: Path, receiver: ThreadingHTTPServer
) -> None:
    suite = _project(tmp_path, LOGIN)
    url = f"http://127.0.0.1:{receiver.server_address[1]}"
    proc = _run(
        tmp_path, suite, *_reports(tmp_path), "--otlp-endpoint", url, "--no-capture-content"
    )
    assert proc.returncode in (0, 1), proc.stderr
    secret = PASSWORD.encode()
    for name, data in _written(tmp_path).items():
        assert secret not in data, name
    assert PASSWORD not in proc.stdout + proc.stderr
    bodies = b"".join(receiver.bodies)  # type: ignore[attr-defined]
    assert bodies and secret not in bodies
    # the failure is still there, masked: status message and exception event
    tool = next(s for s in _wire(receiver) if s.name == "execute_tool login")
    assert tool.status.message == f"login refused for ada with password {MASK}"
    (event,) = [e for e in tool.events if e.name == "exception"]
    attributes = {a.key: a.value.string_value for a in event.attributes}
    assert attributes["exception.message"] == f"login refused for ada with password {MASK}"
    assert PASSWORD not in attributes["exception.stacktrace"]
    lines = (tmp_path / "t.json").read_text(encoding="utf-8").splitlines()
    assert f"password {MASK}" in "".join(lines)


def test_the_final_answer_is_not_sent_without_content_capture(
    tmp_path: Path, receiver: ThreadingHTTPServer
) -> None:
    suite = _project(tmp_path, ANSWERS)
    url = f"http://127.0.0.1:{receiver.server_address[1]}"
    proc = _run(tmp_path, suite, "--otlp-endpoint", url, "--trace-file", str(tmp_path / "t.json"),
                "--no-capture-content")  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    bodies = b"".join(receiver.bodies)  # type: ignore[attr-defined]
    assert bodies and b"9931-ALPHA" not in bodies
    assert b"9931-ALPHA" not in (tmp_path / "t.json").read_bytes()
    root = next(s for s in _wire(receiver) if s.name == "scenario wrong answer")
    assert root.status.message == "failed"
    failures = [e for e in root.events if e.name == "harness.failure"]
    assert failures and all(not e.attributes for e in failures)
    # the report, local, still says why
    assert ANSWER in proc.stdout


def test_with_content_capture_the_reason_goes_out_and_headers_in_text_are_masked(
    tmp_path: Path, receiver: ThreadingHTTPServer
) -> None:
    suite = _project(tmp_path, ANSWERS + HEADERS)
    url = f"http://127.0.0.1:{receiver.server_address[1]}"
    proc = _run(tmp_path, suite, *_reports(tmp_path), "--otlp-endpoint", url, "--capture-content")
    assert proc.returncode == 1, proc.stderr
    bodies = b"".join(receiver.bodies)  # type: ignore[attr-defined]
    assert b"9931-ALPHA" in bodies  # content capture on: the reason quotes the answer
    for name, data in {**_written(tmp_path), "wire": bodies}.items():
        assert HEADER_KEY.encode() not in data, name
        assert COOKIE.encode() not in data, name
    result = next(s for s in _wire(receiver) if s.name == "execute_tool fetch")
    text = next(a.value.string_value for a in result.attributes if a.key.endswith("call.result"))
    assert f"x-api-key: {MASK}" in text and f"Set-Cookie: {MASK}" in text
    assert "body: denied" in text  # the rest of the text is kept


def test_value_patterns_are_opt_in_and_mask_everywhere(tmp_path: Path) -> None:
    suite = _project(tmp_path, NOTES)
    proc = _run(tmp_path, suite, *_reports(tmp_path))
    assert OPENAI.encode() in (tmp_path / "r.json").read_bytes()  # not asked for: kept
    (tmp_path / "t.json").unlink()  # the trace file is appended to
    proc = _run(tmp_path, suite, *_reports(tmp_path), "--redact-pattern", "builtin")
    assert proc.returncode == 1, proc.stderr
    for name, data in _written(tmp_path).items():
        for token in (OPENAI, GITHUB, AWS, JWT):
            assert token.encode() not in data, (name, token)
    assert b"keys *** *** *** ***" in (tmp_path / "r.json").read_bytes()


def test_value_pattern_specs() -> None:
    redactor = Redactor(value_patterns=["builtin:aws", r"ACME-\d{6}"])
    text = f"id {AWS} and ACME-123456 but not ACME-12 or {OPENAI}"
    assert redactor.redact_text(text) == f"id {MASK} and {MASK} but not ACME-12 or {OPENAI}"
    assert redactor.redact({"note": [text]}) == {"note": [redactor.redact_text(text)]}
    assert Scrubber(redactor).text(text) == redactor.mask_values(text)
    assert Redactor([], value_patterns=["builtin"]).enabled
    assert set(BUILTIN_VALUE_PATTERNS) == {"openai", "github", "aws", "jwt"}
    for bad in ("(", "x*", "builtin:nope"):
        with pytest.raises(ValueError):
            Redactor(value_patterns=[bad])


@pytest.mark.parametrize(
    "key",
    [
        "private_key",
        "privateKey",
        "client_secret",
        "credentials",
        "Credential",
        "cookie",
        "Set-Cookie",
        "x-api-key",
        "X-Api-Key",
        "proxy-authorization",
    ],
)
def test_default_keys_cover_headers_and_keys(key: str) -> None:
    assert Redactor().matches(key)
    assert Redactor().redact({key: "v"}) == {key: MASK}


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("Authorization: Bearer abc.def", f"Authorization: {MASK}"),
        ("curl -H 'x-api-key: k-123' /v1", "curl -H 'x-api-key: ***' /v1"),
        ("GET /x?api_key=k-123&page=2", f"GET /x?api_key={MASK}&page=2"),
        (
            "called with {'password': 'hunter22', 'user': 'ada'}",
            "called with {'password': '***', 'user': 'ada'}",
        ),
        ('{"token": "abc" broken json', f'{{"token": "{MASK}" broken json'),
        ("max_tokens: 12 and tokenizer=bpe", "max_tokens: 12 and tokenizer=bpe"),
        ("1token=abc", "1token=abc"),
    ],
)  # fmt: skip
def test_secret_keys_in_free_text(text: str, shown: str) -> None:
    assert Redactor().redact_text(text) == shown


def test_bidi_overrides_and_controls_never_reach_the_terminal_or_the_page(tmp_path: Path) -> None:
    name = "invoice \u202egnp.exe"
    scenarios = f"""\
  - name: "{name}"
    input: "x\\u001b[31m"
    script: [{{content: "done \\u2066isolated\\u2069 \\u001b]0;title\\u0007"}}]
    expect: {{output: never}}
  - name: next one
    input: x
    script: [{{content: done}}]
    expect: {{output: done}}
"""
    suite = _project(tmp_path, scenarios)
    proc = _run(tmp_path, suite, "--html", str(tmp_path / "r.html"))
    assert proc.returncode == 1, proc.stderr
    for char in ("\u202e", "\u2066", "\u2069", "\x1b", "\x07"):
        assert char not in proc.stdout, repr(char)
    assert "invoice \\u202egnp.exe" in proc.stdout
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "\u202e" not in page and "\u2066" not in page and "\x1b" not in page
    assert printable("a\u202eb\tc\nd") == "a\\u202eb\tc\nd"


def test_reports_are_written_with_the_umask_mode(tmp_path: Path) -> None:
    suite = _project(tmp_path, ANSWERS)
    old = os.umask(0o022)
    try:
        proc = _run(tmp_path, suite, *_reports(tmp_path))
    finally:
        os.umask(old)
    assert proc.returncode == 1, proc.stderr
    for name in ("r.json", "r.xml", "r.html", "t.json"):
        mode = stat.S_IMODE((tmp_path / name).stat().st_mode)
        assert mode == 0o644, (name, oct(mode))
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert data["scenarios"][0]["status"] == "failed"
