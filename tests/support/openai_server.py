"""A local stand-in for the OpenAI Chat Completions API, on 127.0.0.1, for the real client.

``langchain-openai`` talks to it exactly as to the real service: ``POST /v1/chat/completions``
with JSON or SSE streaming (tool-call argument deltas split across chunks, parallel calls in
one reply), keep-alive connections (what made a second pytest item fail with "Event loop is
closed"), and these failure modes, picked by the request's ``model``:

``gpt-4o-mini`` (any other name too)  the demo model's policy answers (``harness.models.demo``)
``malformed``   first turn: a tool call whose arguments are not JSON; then the demo policy
``rate-limited``  HTTP 429 with an OpenAI-style error body
``broken``      HTTP 500
``hang``        sends nothing until the client gives up (at most ``HANG_SECONDS``)
``garbage``     HTTP 200 whose body is not JSON

A model given a script (``StandIn.script(model, replies)``, tests/support/scripted_replies.py)
answers with those replies in order, on Chat Completions and on the Responses API
(``POST /v1/responses``, JSON or streamed), for frameworks other than LangChain.

Tool-call ids are fresh random ones on every reply, as the real service's are, so a test sees
that cassette keys do not depend on them. Every request is kept (body and headers) for tests
that check what the client sent. ``serving()`` is the body of a test module's fixture: the
server starts with it and stops after it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from harness.models.demo import ToolSpec, decide
from tests.support.scripted_replies import (
    DONE,
    Reply,
    chat_calls,
    responses_body,
    responses_events,
)

HANG_SECONDS = 10.0
"""The longest a ``hang`` request is held open (the server never waits forever)."""

API_KEY = "sk-standin-0123456789abcdef"
"""The key tests give the client; a cassette must never contain it."""


def _to_messages(raw: list[Mapping[str, Any]]) -> list[BaseMessage]:
    """OpenAI wire messages as LangChain messages (what the demo policy reads)."""
    messages: list[BaseMessage] = []
    for message in raw:
        role = message.get("role")
        content = message.get("content") or ""
        if isinstance(content, list):
            content = "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
        if role in ("system", "developer"):
            messages.append(SystemMessage(content))
        elif role == "user":
            messages.append(HumanMessage(content))
        elif role == "assistant":
            calls = []
            for call in message.get("tool_calls") or ():
                try:
                    args = json.loads(call["function"]["arguments"] or "{}")
                except ValueError:
                    args = {}
                calls.append({"name": call["function"]["name"], "args": args, "id": call["id"]})
            messages.append(AIMessage(content=content, tool_calls=calls))
        elif role == "tool":
            # the wire carries no status: LangGraph's ToolNode starts error results "Error"
            status = "error" if content.startswith("Error") else "success"
            messages.append(
                ToolMessage(content, tool_call_id=message.get("tool_call_id", ""), status=status)
            )
    return messages


def _reply(body: Mapping[str, Any], scripted: Reply | None) -> tuple[str, list[dict[str, Any]]]:
    """(content, tool calls as wire dicts with fresh ids) for one request."""
    if scripted is not None:
        return scripted.text, chat_calls(scripted)
    messages = _to_messages(body.get("messages") or [])
    if body.get("model") == "malformed" and not any(isinstance(m, AIMessage) for m in messages):
        call = {"name": "get_weather", "arguments": '{"city": "Berlin", "day": '}
        return "", [{"id": f"call_{uuid.uuid4().hex[:20]}", "type": "function", "function": call}]
    specs = [ToolSpec.from_openai(tool) for tool in body.get("tools") or ()]
    answer = decide(messages, specs)
    calls = [
        {
            "id": f"call_{uuid.uuid4().hex[:20]}",
            "type": "function",
            "function": {"name": c["name"], "arguments": json.dumps(c["args"])},
        }
        for c in answer.tool_calls
    ]
    return str(answer.content), calls


def _usage(body: Mapping[str, Any], content: str, calls: list[dict[str, Any]]) -> dict[str, int]:
    prompt = sum(len(str(m.get("content") or "")) for m in body.get("messages") or ()) // 4 + 1
    completion = (len(content) + sum(len(c["function"]["arguments"]) for c in calls)) // 4 + 1
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _split(text: str, parts: int) -> list[str]:
    size = max(1, -(-len(text) // parts))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the real service
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the tests read ``StandIn.requests`` instead."""

    def _send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if status == 429:
            self.send_header("Retry-After", "0")
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        standin = self.server.standin
        standin.note(self.path, dict(self.headers.items()), body)
        scripted = standin.next_reply(body.get("model"))
        if self.path.endswith("/responses"):
            self._responses(body, scripted or Reply(DONE))
            return
        if not self.path.endswith("/chat/completions"):
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        model = body.get("model")
        if model == "rate-limited":
            error = {"message": "Rate limit reached for requests", "type": "requests"}
            self._send_json(429, {"error": {**error, "code": "rate_limit_exceeded"}})
        elif model == "broken":
            self._send_json(500, {"error": {"message": "The server had an error", "type": "x"}})
        elif model == "hang":
            self.server.standin.hang()
            self.close_connection = True
        elif model == "garbage":
            data = b"<html>not json</html>"
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif body.get("stream"):
            self._stream(body, scripted)
        else:
            self._complete(body, scripted)

    def _responses(self, body: Mapping[str, Any], scripted: Reply) -> None:
        """The Responses API: one ``Response`` object, or its events when streamed."""
        if not body.get("stream"):
            answer = responses_body(body, scripted)
            self.server.standin.served(body, answer["usage"])
            self._send_json(200, answer)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in responses_events(body, scripted):
            if event["type"] == "response.completed":
                self.server.standin.served(body, event["response"]["usage"])
            self._event(event)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _complete(self, body: Mapping[str, Any], scripted: Reply | None) -> None:
        content, calls = _reply(body, scripted)
        message: dict[str, Any] = {"role": "assistant", "content": content or None}
        if calls:
            message["tool_calls"] = calls
        choice = {
            "index": 0,
            "message": message,
            "finish_reason": "tool_calls" if calls else "stop",
        }
        self._send_json(
            200,
            {
                "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model"),
                "choices": [choice],
                "usage": self.server.standin.served(body, _usage(body, content, calls)),
            },
        )

    def _event(self, payload: Any) -> None:
        data = f"data: {payload if isinstance(payload, str) else json.dumps(payload)}\n\n"
        raw = data.encode()
        self.wfile.write(f"{len(raw):x}\r\n".encode() + raw + b"\r\n")
        self.wfile.flush()

    def _stream(self, body: Mapping[str, Any], scripted: Reply | None) -> None:
        content, calls = _reply(body, scripted)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        base = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model"),
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        self._event(chunk({"role": "assistant", "content": ""}))
        for piece in _split(content, 4) if content else ():
            self._event(chunk({"content": piece}))
        # each call: a head delta (id, name, empty arguments), then its arguments in 3 parts;
        # the parts of parallel calls are interleaved, as the real service may send them
        for index, call in enumerate(calls):
            head = {"index": index, "id": call["id"], "type": "function"}
            head["function"] = {"name": call["function"]["name"], "arguments": ""}
            self._event(chunk({"tool_calls": [head]}))
        parts = [_split(call["function"]["arguments"], 3) for call in calls]
        for step in range(3):
            for index, pieces in enumerate(parts):
                if step < len(pieces):
                    delta = {"index": index, "function": {"arguments": pieces[step]}}
                    self._event(chunk({"tool_calls": [delta]}))
        self._event(chunk({}, "tool_calls" if calls else "stop"))
        if (body.get("stream_options") or {}).get("include_usage"):
            usage = self.server.standin.served(body, _usage(body, content, calls))
            self._event({**base, "choices": [], "usage": usage})
        self._event("[DONE]")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    standin: StandIn

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet about clients that hang up (a timed-out request, a closed loop's socket)."""
        error = sys.exc_info()[1]
        if not isinstance(error, (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class StandIn:
    """The stand-in server: ``url`` for ``base_url``, ``requests`` as received."""

    def __init__(self) -> None:
        """Bind to a free port on 127.0.0.1 (nothing is served until :meth:`start`)."""
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.standin = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.requests: list[dict[str, Any]] = []
        self._scripts: dict[str, list[Reply]] = {}
        self.usage: list[tuple[str, dict[str, Any]]] = []
        """(model, usage) of every reply that reported usage, as sent."""

    @property
    def url(self) -> str:
        """The ``base_url`` to give the client (``http://127.0.0.1:<port>/v1``)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def note(self, path: str, headers: dict[str, str], body: Any) -> None:
        """Keep one request."""
        with self._lock:
            self.requests.append({"path": path, "headers": headers, "body": body})

    def served(self, body: Mapping[str, Any], usage: dict[str, Any]) -> dict[str, Any]:
        """Note the usage a reply reports (returned unchanged)."""
        with self._lock:
            self.usage.append((str(body.get("model")), usage))
        return usage

    def script(self, model: str, replies: Sequence[Reply]) -> None:
        """Answer requests for ``model`` with these replies in order, then with DONE."""
        with self._lock:
            self._scripts[model] = list(replies)

    def next_reply(self, model: Any) -> Reply | None:
        """The next scripted reply of ``model`` (DONE once used up); None for an unscripted
        model (the demo policy and the failure modes answer it)."""
        with self._lock:
            replies = self._scripts.get(model) if isinstance(model, str) else None
            if replies is None:
                return None
            return replies.pop(0) if replies else Reply(DONE)

    def count(self) -> int:
        """How many requests arrived so far."""
        with self._lock:
            return len(self.requests)

    def hang(self) -> None:
        """Hold a request open until the server stops or HANG_SECONDS pass."""
        self._stopping.wait(HANG_SECONDS)

    def start(self) -> StandIn:
        """Serve on a daemon thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Release hung requests, stop serving, close the socket."""
        self._stopping.set()
        if self._thread.is_alive():
            self._server.shutdown()  # waits for serve_forever, so only once it runs
        self._server.server_close()


def serving() -> Iterator[StandIn]:
    """Start a stand-in, yield it, stop it: the body of a test module's fixture."""
    standin = StandIn().start()
    try:
        yield standin
    finally:
        standin.stop()


# --- a small project recorded through the stand-in (tests of record, replay and draft) --------

HARNESS = Path(sys.executable).parent / "harness"
ROOT = Path(__file__).resolve().parents[2]

PROMPT = "You are a weather assistant. Use get_weather for every city the user names, then answer."
TOOL_DOC = "Current weather for a city."

AGENT = '''
from langchain_core.tools import tool
from harness.demo import build_tool_agent

PROMPT = {prompt!r}


@tool
def get_weather(city: str) -> dict:
    """{doc}"""
    return {{"city": city, "summary": f"{{city}}: 21 C, sunny."}}


def build(model):
    return build_tool_agent(model, [get_weather], system_prompt=PROMPT, name="weather")
'''

SUITE = """
suite: weather
agent: {agent}:build
model: {{provider: openai, model: {model}, base_url: "{url}", max_retries: 0, timeout: 10{more}}}
scenarios:
  - name: weather in Berlin
    input: Weather in Berlin?
    expect:
      tool_calls: [{{name: get_weather, args: {{city: Berlin}}}}]
  - name: weather in Oslo
    input: What is the weather in Oslo today?
    expect:
      tool_calls: [{{name: get_weather, args: {{city: Oslo}}}}]
"""


def write_project(
    where: Path,
    url: str,
    *,
    prompt: str = PROMPT,
    doc: str = TOOL_DOC,
    agent: str = "agent",
    model: str = "gpt-4o-mini",
    more: str = "",
) -> Path:
    """An agent file and a two-scenario suite naming it; returns the suite's path."""
    (where / f"{agent}.py").write_text(AGENT.format(prompt=prompt, doc=doc), encoding="utf-8")
    suite = where / "weather.yaml"
    body = SUITE.format(agent=f"{agent}.py", model=model, url=url, more=more)
    suite.write_text(textwrap.dedent(body), encoding="utf-8")
    return suite


def record(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``harness run ... --record`` as a user runs it: a new process with the key set."""
    env = {**os.environ, "OPENAI_API_KEY": API_KEY, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [str(HARNESS), "run", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
