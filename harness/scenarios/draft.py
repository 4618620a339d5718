"""``harness draft``: a scenario skeleton from a recorded run (docs/scenarios.md).

The input is a cassette (``harness run --record``), an OTLP JSON trace file (``--trace-file``)
or a JSON report (``--json``). The draft holds the run's input, its model, and one expected call
per call the agent made, in order. Values that would make a brittle test — uuids, timestamps
and dates, ids with digits, long free text — become tolerant matchers (``{$regex: ...}``,
``{$type: string}``) with a comment saying what was there. An argument equal to a value an
earlier call returned, and not in the user's words, becomes ``{$ref: <label>.result.<path>}``
and that call gets the ``id:`` label, so the draft survives fixture ids changing (docs/metrics.md,
Data flow). The result loads with ``harness validate`` as written (given the agent), and passes
against the replay it came from.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.errors import DraftError, HarnessError

if TYPE_CHECKING:
    from tracing.otel.span_view import SpanView

__all__ = ["Draft", "DraftError", "add_parser", "command", "draft_file", "render", "tolerant"]


# --- volatile values -------------------------------------------------------------------------

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_ID = re.compile(r"^(?=.*\d)(?=.*[A-Za-z])[A-Za-z0-9][A-Za-z0-9_.:-]{2,}$")
_UUID_PATTERN = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
_LONG_TEXT = 40
"""Characters (or 8 words) past which a string is free text the model may word differently."""


@dataclass(frozen=True, slots=True)
class Tolerant:
    """A value as the draft writes it, and what it replaced (None: kept as it was)."""

    value: Any
    was: str | None = None


def _id_pattern(text: str) -> str:
    """``ORD-1042`` -> ``^ORD-\\d+$``: the letters kept, every digit run any digits."""
    parts = re.split(r"(\d+)", text)
    return "^" + "".join(r"\d+" if p.isdigit() else _escape(p) for p in parts if p) + "$"


def _escape(text: str) -> str:
    # only what a regular expression gives a meaning to (re.escape also escapes '-' and '_')
    return re.sub(r"([.^$*+?{}\[\]\\|()])", r"\\\1", text)


def tolerant(value: Any) -> Tolerant:
    """``value`` itself, or a matcher for it when it looks volatile (and what it was)."""
    if isinstance(value, str):
        shown = repr(value) if len(value) <= 60 else repr(value[:57] + "...")
        if value == "***":
            return Tolerant({"$type": "string"}, "masked in the recording")
        if _UUID.match(value):
            pattern = (
                r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
            )
            return Tolerant({"$regex": pattern}, f"{shown} (a uuid)")
        if _TIMESTAMP.match(value):
            return Tolerant({"$regex": r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}"}, f"{shown} (a time)")
        if _DATE.match(value):
            return Tolerant({"$regex": r"^\d{4}-\d{2}-\d{2}$"}, f"{shown} (a date)")
        if _ID.match(value):
            return Tolerant({"$regex": _id_pattern(value)}, f"{shown} (an id)")
        if len(value) > _LONG_TEXT or len(value.split()) >= 8:
            return Tolerant({"$type": "string"}, f"{shown} (free text)")
        return Tolerant(value)
    if isinstance(value, Mapping):
        inner = {str(k): tolerant(v) for k, v in value.items()}
        notes = [f"{k}: {t.was}" for k, t in inner.items() if t.was is not None]
        return Tolerant({k: t.value for k, t in inner.items()}, "; ".join(notes) or None)
    if isinstance(value, list):
        items = [tolerant(v) for v in value]
        notes = [f"[{i}]: {t.was}" for i, t in enumerate(items) if t.was is not None]
        return Tolerant([t.value for t in items], "; ".join(notes) or None)
    return Tolerant(value)


# --- the draft -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Draft:
    """What a skeleton holds: where it came from, the agent, model, input, calls, answer."""

    source: str
    suite: str
    name: str
    agent: str | None
    model: Any
    input: Any
    calls: tuple[tuple[str, Mapping[str, Any]], ...]
    answer: str | None = None
    results: tuple[Any, ...] = ()
    """What each call returned, by position (None: not recorded); the source of ``$ref``s."""


def _split_id(scenario: str) -> tuple[str, str]:
    suite, sep, name = scenario.partition("::")
    return (suite, name) if sep else ("drafted", scenario)


def _model_spec(provider: str, model: str, params: Mapping[str, Any]) -> Any:
    if provider == "toolcall-harness-demo":
        return {"provider": "demo"}
    if params:
        return {"provider": provider, "model": model, **params}
    return f"{provider}:{model}" if model else provider


def _input_of(messages: Sequence[Mapping[str, Any]]) -> Any:
    """``input: text`` for one user message, else the conversation (system prompts left out)."""
    said = [m for m in messages if m.get("role") in ("user", "assistant")]
    if len(said) == 1 and said[0].get("role") == "user":
        return str(said[0].get("text", ""))
    return [{"role": m["role"], "content": str(m.get("text", ""))} for m in said]


def _from_cassette(text: str, where: str, name: str | None) -> Draft:
    from harness.cassettes import load_cassette

    cassette = load_cassette(text, where)
    if not cassette.recordings:
        raise DraftError(f"{where}: the cassette has no recorded turns")
    chain = [cassette.recordings[0]]
    for recording in cassette.recordings[1:]:  # the first conversation only (repeat: N)
        context = chain[-1].context()
        if list(recording.messages[: len(context)]) != context:
            break
        chain.append(recording)
    calls = tuple(
        (str(call["name"]), dict(call["args"]))
        for recording in chain
        for call in recording.response.tool_calls
    )
    returned = {
        message.get("tool_call_id"): message.get("text")
        for recording in chain
        for message in recording.messages
        if message.get("role") == "tool" and message.get("status", "success") == "success"
    }
    last = chain[-1].response
    answer = last.content if isinstance(last.content, str) and not last.tool_calls else None
    suite, scenario = _split_id(cassette.scenario)
    identity = chain[0].identity
    return Draft(
        source=where,
        suite=suite,
        name=name or scenario,
        agent=cassette.agent,
        model=_model_spec(identity.provider, identity.model, identity.params),
        input=_input_of(chain[0].messages),
        calls=calls,
        answer=answer,
        # the cassette numbers a conversation's calls call_1, call_2, ... (harness.cassettes.key)
        results=tuple(returned.get(f"call_{n}") for n in range(1, len(calls) + 1)),
    )


def _suite_file(file: str | None) -> Mapping[str, Any]:
    """The top of the suite a report names, when that file is still there."""
    if not file or not Path(file).is_file():
        return {}
    import yaml  # here: the CLI's parser imports this module for `add_parser`

    try:
        data = yaml.safe_load(Path(file).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    return data if isinstance(data, Mapping) else {}


def _agent_path(agent: Any, file: str | None) -> str | None:
    """The suite's agent spec, a ``file.py:...`` path made relative to the current folder."""
    if not isinstance(agent, str):
        return None
    target, sep, attribute = agent.rpartition(":")
    if file and sep and target.endswith(".py") and not Path(target).is_absolute():
        return f"{Path(file).parent / target}:{attribute}"
    return agent


def _pick(items: Sequence[Mapping[str, Any]], name: str | None, where: str) -> Mapping[str, Any]:
    if not items:
        raise DraftError(f"{where}: no scenario results in it")
    if name is None:
        return items[0]
    for item in items:
        if name in (item.get("name"), f"{item.get('suite')}::{item.get('name')}"):
            return item
    names = ", ".join(sorted({f"{i.get('suite')}::{i.get('name')}" for i in items})[:10])
    raise DraftError(f"{where}: --scenario {name!r} is not in it (it has: {names})")


def _from_results(data: Mapping[str, Any], where: str, name: str | None) -> Draft:
    result = _pick(list(data.get("scenarios") or ()), name, where)
    runs = result.get("runs") or [{}]
    run = runs[0]
    suite_file = result.get("file")
    top = _suite_file(suite_file)
    scenario = next(
        (
            s
            for s in top.get("scenarios") or ()
            if isinstance(s, Mapping) and s.get("name") == result.get("name")
        ),
        {},
    )
    given = scenario.get("input") if "input" in scenario else scenario.get("messages")
    recorded = list(run.get("tool_calls") or ())
    calls = tuple((str(c["name"]), dict(c.get("args") or {})) for c in recorded)
    output = run.get("output")
    return Draft(
        source=where,
        suite=str(result.get("suite") or "drafted"),
        name=str(result.get("name") or "drafted"),
        agent=_agent_path(scenario.get("agent") or top.get("agent"), suite_file),
        model=scenario.get("model") or top.get("model"),
        input=given if given is not None else "TODO: the user's message",
        calls=calls,
        answer=output if isinstance(output, str) else None,
        results=tuple(c.get("result") if c.get("status") == "ok" else None for c in recorded),
    )


def _from_traces(path: Path, name: str | None) -> Draft:
    from harness.traces.evaluate import iter_recorded_traces

    chosen = None
    for trace in iter_recorded_traces(path):
        if name is None or name in (trace.scenario, f"{trace.suite}::{trace.scenario}"):
            chosen = trace
            break
    if chosen is None:
        wanted = f" of scenario {name!r}" if name else ""
        raise DraftError(f"{path}: no trace{wanted} in it")
    chats = _chat_spans(chosen.spans)
    given = _trace_input(chats)
    agent = chosen.root.attributes.get(_AGENT_ATTRIBUTE) if chosen.root is not None else None
    return Draft(
        source=str(path),
        suite=chosen.suite or "drafted",
        name=name if name and "::" not in name else (chosen.scenario or "drafted"),
        agent=agent if isinstance(agent, str) and agent else None,
        model=_trace_model(chats),
        input=given if given is not None else _NO_INPUT,
        calls=tuple((call.name, dict(call.args)) for call in chosen.calls),
        answer=chosen.output if isinstance(chosen.output, str) else None,
        results=tuple(call.result if call.status == "ok" else None for call in chosen.calls),
    )


_AGENT_ATTRIBUTE = "harness.agent.spec"
"""The scenario's ``agent:``, on the root span ``harness run`` writes (harness.run.runner)."""

_NO_INPUT = "TODO: the user's message (traces keep it only with --capture-content)"


def _chat_spans(spans: Sequence[SpanView]) -> list[SpanView]:
    """The trace's model calls, first asked first."""
    from tracing.otel.span_reading import relevant_role

    chats = [span for span in spans if relevant_role(span.attributes) == "chat"]
    return sorted(chats, key=lambda span: span.start_ns)


def _trace_model(chats: Sequence[SpanView]) -> Any:
    """The model spec of the first chat span that names its model (GenAI attributes)."""
    from tracing.otel.genai_attributes import PROVIDER_NAME, REQUEST_MODEL

    for span in chats:
        model = span.attributes.get(REQUEST_MODEL)
        if isinstance(model, str) and model:
            provider = span.attributes.get(PROVIDER_NAME)
            if not isinstance(provider, str) or not provider:
                return model  # init_chat_model infers the provider from the name
            return _model_spec(provider, model, {})
    return None


def _trace_input(chats: Sequence[SpanView]) -> Any:
    """The first model call's messages as ``input:`` (or ``messages:``); None without content.

    Written by SpanEmitter with content capture: ``gen_ai.input.messages``, GenAI
    ``{"role", "parts": [{"type": "text", "content"}]}`` messages.
    """
    from tracing.otel.genai_attributes import INPUT_MESSAGES

    for span in chats:
        text = span.attributes.get(INPUT_MESSAGES)
        if not isinstance(text, str):
            continue
        try:
            messages = json.loads(text)
        except ValueError:
            continue
        if isinstance(messages, list):
            said = [_message_text(m) for m in messages if isinstance(m, Mapping)]
            return _input_of(said) if said else None
    return None


def _message_text(message: Mapping[str, Any]) -> dict[str, Any]:
    """``{"role", "text"}`` (as cassettes keep messages) of one GenAI message."""
    parts = message.get("parts")
    texts = [
        str(part.get("content", ""))
        for part in (parts if isinstance(parts, list) else ())
        if isinstance(part, Mapping) and part.get("type") == "text"
    ]
    return {"role": message.get("role"), "text": "".join(texts)}


def draft_file(path: Path, scenario: str | None = None) -> Draft:
    """The draft for a cassette, a trace file or a JSON report (told apart by content)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DraftError(f"{path}: cannot read: {exc.strerror}") from None
    head = text.lstrip()
    if head.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None  # one JSON object per line: an OTLP JSON trace file
        if isinstance(data, Mapping) and "scenarios" in data and "schema_version" in data:
            return _from_results(data, str(path), scenario)
        return _from_traces(path, scenario)
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise DraftError(f"{path}: neither a cassette, a trace file nor a report: {exc}") from None
    if isinstance(data, Mapping) and "turns" in data and "format" in data:
        return _from_cassette(text, str(path), scenario)
    raise DraftError(
        f"{path}: neither a cassette (format/turns), an OTLP JSON trace file nor a JSON report"
    )


# --- data flow -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DataFlow:
    """Which calls get an ``id:`` label, and which arguments a ``$ref`` to an earlier result."""

    labels: Mapping[int, str]
    refs: Mapping[tuple[int, str], str]
    """(call position, argument) -> the ``$ref`` target, ``<label>.result.<path>``."""


def data_flow(draft: Draft) -> DataFlow:
    """Each top-level argument equal to a value an earlier call returned (the latest such call,
    the first path in it), unless the user's words hold it: a literal the user gave stays one."""
    said = _said(draft.input)
    labels: dict[int, str] = {}
    refs: dict[tuple[int, str], str] = {}
    returned = [_parsed(result) for result in draft.results]
    for position, (_, args) in enumerate(draft.calls):
        for key, value in args.items():
            if not _flows(value) or _in_words(value, said):
                continue
            for source in range(min(position, len(returned)) - 1, -1, -1):
                path = _path_to(returned[source], value)
                if path is not None:
                    label = labels.setdefault(source, _label(draft.calls, source))
                    refs[(position, str(key))] = ".".join((label, "result", *path))
                    break
    return DataFlow(labels, refs)


def _said(given: Any) -> str:
    """The user's words in the input (a text, or a conversation's user messages)."""
    if isinstance(given, str):
        return given
    if isinstance(given, list):
        return "\n".join(
            str(m.get("content", ""))
            for m in given
            if isinstance(m, Mapping) and m.get("role") == "user"
        )
    return ""


def _flows(value: Any) -> bool:
    """A value worth tracing to a result: a non-empty string or a finite number (not a bool)."""
    if isinstance(value, str):
        return bool(value.strip())
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _in_words(value: Any, said: str) -> bool:
    if isinstance(value, str):
        return value in said
    forms = {str(value), f"{value:g}"} | ({str(int(value))} if float(value).is_integer() else set())
    return any(re.search(rf"(?<![\w.,-]){re.escape(form)}(?![\w]|[.,]\d)", said) for form in forms)


def _parsed(result: Any) -> Any:
    """A result as data: a JSON object or array text parsed; other text has no paths (None)."""
    if isinstance(result, str):
        if result.lstrip()[:1] not in ("{", "["):
            return None
        try:
            return json.loads(result)
        except ValueError:
            return None
    return result


def _path_to(data: Any, value: Any, path: tuple[str, ...] = ()) -> tuple[str, ...] | None:
    """The first path (keys, list indices) at which ``data`` holds ``value``, or None."""
    if isinstance(data, Mapping):
        for key, item in data.items():
            if isinstance(key, str) and key and "." not in key:
                found = _path_to(item, value, (*path, key))
                if found is not None:
                    return found
        return None
    if isinstance(data, list | tuple):
        for index, item in enumerate(data):
            found = _path_to(item, value, (*path, str(index)))
            if found is not None:
                return found
        return None
    if isinstance(data, bool) or isinstance(value, bool):
        return None
    if isinstance(value, str):
        return path if isinstance(data, str) and data == value else None
    return path if isinstance(data, int | float) and data == value else None


def _label(calls: Sequence[tuple[str, Mapping[str, Any]]], position: int) -> str:
    """``search_orders``; ``get_order_2`` for the second of several calls of one tool."""
    name = calls[position][0]
    label = re.sub(r"[^A-Za-z0-9_-]", "_", name)
    if not re.match(r"[A-Za-z_]", label):
        label = "_" + label
    same = [i for i, (other, _) in enumerate(calls) if other == name]
    return label if len(same) == 1 else f"{label}_{same.index(position) + 1}"


# --- rendering -------------------------------------------------------------------------------


# no ',' '[' ']' '{' '}': a plain scalar must also read back inside a flow mapping
_PLAIN = re.compile(r"^[A-Za-z_$][A-Za-z0-9 _.'/-]*$")
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"}


def _string(text: str) -> str:
    """A string as YAML: plain when it reads back the same, else quoted."""
    plain = _PLAIN.match(text) and text.lower() not in _YAML_WORDS and text == text.strip()
    if plain and " #" not in text:
        return text
    if "\n" in text or any(ord(c) < 32 for c in text):
        return json.dumps(text, ensure_ascii=False)
    return "'" + text.replace("'", "''") + "'"


def _flow(value: Any) -> str:
    """A value as YAML flow text: ``{$regex: '^ORD-\\d+$'}``, ``[a, b]``, ``Berlin``."""
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_string(str(k))}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return json.dumps(value)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _key(key: str) -> str:
    return _string(key)


def _comment(text: str) -> str:
    return " ".join(text.split())


def render(draft: Draft, *, agent: str | None = None) -> str:
    """The skeleton as YAML text, with a comment at each value the draft made tolerant."""
    lines = [
        f"# Drafted by `harness draft` from {draft.source}.",
        "# Review every expectation before you rely on it: it says what the agent did, not what it",
        "# should do. Values that looked volatile became matchers; each says what was there.",
        f"suite: {_flow(draft.suite)}",
    ]
    chosen_agent = agent or draft.agent
    if chosen_agent:
        lines.append(f"agent: {_flow(chosen_agent)}")
    else:
        lines.append('agent: "TODO: module:callable"   # the recording does not name the agent')
    if draft.model is not None:
        lines.append(f"model: {_flow(draft.model)}")
    lines += ["scenarios:", f"  - name: {_flow(draft.name)}"]
    if isinstance(draft.input, list):
        lines.append("    messages:")
        lines += [f"      - {_flow(message)}" for message in draft.input]
    else:
        lines.append(f"    input: {_flow(draft.input)}")
    lines.append("    expect:")
    if not draft.calls:
        lines.append("      tool_calls: []   # the agent called no tool")
    else:
        flow = data_flow(draft)
        lines.append("      tool_calls:")
        for position, (name, args) in enumerate(draft.calls):
            lines.append(f"        - name: {_flow(name)}")
            if position in flow.labels:
                lines.append(f"          id: {flow.labels[position]}")
            if not args:
                continue
            lines.append("          args:")
            for key, value in args.items():
                target = flow.refs.get((position, str(key)))
                kept = (
                    tolerant(value) if target is None else Tolerant({"$ref": target}, _shown(value))
                )
                note = f"   # was {_comment(kept.was)}" if kept.was else ""
                lines.append(f"            {_key(str(key))}: {_flow(kept.value)}{note}")
    if draft.answer:
        shown = draft.answer if len(draft.answer) <= 100 else draft.answer[:97] + "..."
        lines.append(f"      # final answer was: {_comment(repr(shown))}")
        lines.append("      output: {$type: string}")
    return "\n".join(lines) + "\n"


# --- the command -----------------------------------------------------------------------------


def add_parser(commands: Any) -> None:
    """The ``draft`` subcommand on the CLI's subparsers."""
    parser = commands.add_parser(
        "draft",
        help="write a scenario skeleton from a cassette, a trace file or a JSON report",
    )
    parser.add_argument("source", metavar="CASSETTE|TRACE-FILE|RESULTS.json")
    parser.add_argument(
        "--scenario", metavar="NAME", help="which scenario (NAME or suite::NAME) to draft"
    )
    parser.add_argument("--agent", metavar="SPEC", help="module:callable, when the input lacks it")
    parser.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")


def command(args: argparse.Namespace, write: Any, warn: Any) -> int:
    """Run ``harness draft``: 0 written, 2 the input cannot be drafted from."""
    try:
        draft = draft_file(Path(args.source), args.scenario)
    except (DraftError, HarnessError) as exc:
        warn(str(exc))
        return 2
    text = render(draft, agent=args.agent)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        write(f"draft written: {args.output}")
    else:
        write(text.rstrip("\n"))
    if not (args.agent or draft.agent):
        warn("the input does not name the agent: set `agent:` (or pass --agent) before running")
    if isinstance(draft.input, str) and draft.input.startswith("TODO:"):
        warn("the input does not keep the user's message: set `input:` before running")
    return 0
