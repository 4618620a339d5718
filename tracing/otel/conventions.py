"""Attribute names of the three span conventions that carry tool calls, in one table.

Checked against the instrumentations' own sources (versions in the ``dev`` extra):

* OTel GenAI semantic conventions, as written by ``tracing.SpanEmitter`` and the official
  ``opentelemetry-instrumentation-genai-langchain`` (``opentelemetry.util.genai``): a tool span
  has ``gen_ai.operation.name = execute_tool``, ``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
  opt-in ``gen_ai.tool.call.arguments`` (a JSON object) / ``gen_ai.tool.call.result``, and
  ``error.type`` on failure. A chat span (``gen_ai.operation.name = chat``) carries the requested
  calls, with content capture on, in ``gen_ai.output.messages``: a JSON list of messages whose
  ``parts`` include ``{"type": "tool_call", "id", "name", "arguments"}``.
* OpenInference (``openinference-instrumentation-langchain``): a tool span has
  ``openinference.span.kind = TOOL`` (``AGENT`` instead when the tool's name contains "agent",
  so ``tool.name`` is the reliable marker), ``tool.name``, ``input.value`` (the JSON of the
  structured input, but a bare string when the input has one string-valued key) and
  ``output.value`` (the JSON of the returned ``ToolMessage``, whose ``data`` holds
  ``tool_call_id`` and ``status``). No call id sits on the span itself. An ``LLM`` span lists the
  requested calls flattened: ``llm.output_messages.N.message.tool_calls.M.tool_call.id`` /
  ``.function.name`` / ``.function.arguments``.
* Traceloop / OpenLLMetry (``opentelemetry-instrumentation-langchain``): a tool span has
  ``traceloop.span.kind = tool``, ``traceloop.entity.name`` and ``traceloop.entity.input`` = JSON
  ``{"input_str", "inputs", "kwargs": {"tool_call_id"}, "tags", "metadata"}``,
  ``traceloop.entity.output`` = JSON ``{"output": <ToolMessage, LangChain-serialised>, "kwargs"}``.
  It also sets ``gen_ai.operation.name = execute_tool`` with ``gen_ai.tool.call.arguments`` holding
  that same envelope, so it must be recognised before the GenAI convention. Its chat spans carry
  ``gen_ai.output.messages`` (0.4x+) or, in older releases, the flattened
  ``gen_ai.completion.N.tool_calls.M.id`` / ``.name`` / ``.arguments``.

What the rules of docs/capture.md need beyond a call: the LangGraph thread, to join the runs of
one conversation (``gen_ai.conversation.id``; OpenInference ``session.id``; Traceloop
``traceloop.association.properties.thread_id``), the namespace and node a call ran in (Traceloop
association properties; OpenInference's ``metadata`` JSON; SpanEmitter writes the agent path
itself, ``harness.agent.path``, and ``harness.langgraph.node``), and where LangGraph paused a run
(an ``exception`` event or ``error.type`` naming ``GraphInterrupt``, in every convention).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

ConventionName = Literal["genai", "openinference", "traceloop"]

ERROR_TYPE = "error.type"
EXCEPTION_EVENT = "exception"
EXCEPTION_MESSAGE = "exception.message"
EXCEPTION_TYPE = "exception.type"

GENAI_OPERATION = "gen_ai.operation.name"
GENAI_OUTPUT_MESSAGES = "gen_ai.output.messages"
GENAI_CHAT_OPERATIONS = frozenset(("chat", "text_completion", "generate_content"))

OPENINFERENCE_METADATA = "metadata"
TRACELOOP_NODE = "traceloop.association.properties.langgraph_node"
TRACELOOP_NAMESPACE = "traceloop.association.properties.langgraph_checkpoint_ns"

AGENT_PATH = "harness.agent.path"
"""SpanEmitter: the agent path of a tool or chat span's run (docs/capture.md "What it records")."""
LANGGRAPH_NODE = "harness.langgraph.node"
"""SpanEmitter: the LangGraph node of a tool or chat span's run."""
RUN_ORIGIN = "harness.run.origin"
"""SpanEmitter, on a top-level run's span: where the run started (``task:<hex>`` for an asyncio
task, else ``thread:<hex>``). Runs of one origin follow one another; concurrent ones differ."""
STRUCTURED_OUTPUT_EVENT = "harness.structured_output"
"""SpanEmitter: an event on an agent's span when a run of it returned a ``structured_response``
(tracing/langchain/final_answer.py); ``STRUCTURED_CALL_IDS`` lists the calls its state answered, and
those no tool ran are the structured-output bookkeeping calls, not tool calls."""
STRUCTURED_CALL_IDS = "harness.tool_call.ids"
STRUCTURED_RESPONSE_KEY = "structured_response"
"""The state key LangChain v1's ``create_agent`` fills when it has a ``response_format``."""
SCENARIO_NAME = "harness.scenario"
"""Attribute carrying the scenario name on the span made by ``SpanEmitter.start_scenario``."""
AGENT_NAME = "gen_ai.agent.name"

CONVERSATION_KEYS = (
    "gen_ai.conversation.id",
    "session.id",
    "traceloop.association.properties.thread_id",
)
"""Where each convention puts the LangGraph thread id (GenAI, OpenInference, Traceloop)."""

INTERRUPT_TYPES = ("GraphInterrupt", "NodeInterrupt")
"""Exception class names (``error.type`` / ``exception.type`` tails) of a LangGraph pause."""


@dataclass(frozen=True, slots=True)
class Convention:
    """Where one convention puts each part of a tool call on its spans."""

    name: ConventionName
    kind_key: str
    """The attribute that tells the span's kind."""
    tool_kind: str
    """The value of ``kind_key`` on a tool span."""
    tool_name: tuple[str, ...]
    """Attributes holding the tool's name, tried in order; any one of them marks a tool span."""
    call_id: str | None
    """Attribute with the model's tool call id on the tool span (None: not on the span)."""
    arguments: str
    result: str
    chat_kind: str
    """The value of ``kind_key`` (GenAI: ``gen_ai.operation.name``) on a chat span."""
    requested_pattern: re.Pattern[str] | None
    """Flattened requested-call attributes on a chat span: groups message, call, field."""
    requested_fields: Mapping[str, str]
    """Field suffix in ``requested_pattern`` -> ``id`` / ``name`` / ``arguments``."""
    lossy_arguments: bool
    """True when the tool span's arguments can lose their parameter names (prefer the request)."""
    node: str | None
    """Attribute with the LangGraph node of the run, when the convention records it."""
    namespace: str | None = None
    """Attribute with the run's LangGraph checkpoint namespace, when the convention records it."""
    more_arguments: tuple[str, ...] = ()
    """Where other producers of the convention put the arguments when ``arguments`` is absent
    (tracing/otel/producers.py names them)."""
    more_results: tuple[str, ...] = ()
    """Likewise for the result."""


GENAI = Convention(
    name="genai",
    kind_key=GENAI_OPERATION,
    tool_kind="execute_tool",
    tool_name=("gen_ai.tool.name",),
    call_id="gen_ai.tool.call.id",
    arguments="gen_ai.tool.call.arguments",
    result="gen_ai.tool.call.result",
    chat_kind="chat",
    requested_pattern=None,
    requested_fields={},
    lossy_arguments=False,
    node=LANGGRAPH_NODE,
    # Google ADK's schema 1 (its default before 2.0), Pydantic AI's formats before version 3
    more_arguments=("gcp.vertex.agent.tool_call_args", "tool_arguments"),
    more_results=("gcp.vertex.agent.tool_response", "tool_response"),
)

OPENINFERENCE = Convention(
    name="openinference",
    kind_key="openinference.span.kind",
    tool_kind="TOOL",
    tool_name=("tool.name",),
    call_id=None,
    arguments="input.value",
    result="output.value",
    chat_kind="LLM",
    requested_pattern=re.compile(
        r"^llm\.output_messages\.(\d+)\.message\.tool_calls\.(\d+)\.tool_call\."
        r"(id|function\.name|function\.arguments)$"
    ),
    requested_fields={
        "id": "id",
        "function.name": "name",
        "function.arguments": "arguments",
    },
    lossy_arguments=True,
    node=None,
)

TRACELOOP = Convention(
    name="traceloop",
    kind_key="traceloop.span.kind",
    tool_kind="tool",
    tool_name=("traceloop.entity.name", "gen_ai.tool.name"),
    call_id=None,
    arguments="traceloop.entity.input",
    result="traceloop.entity.output",
    chat_kind="chat",
    requested_pattern=re.compile(
        r"^gen_ai\.completion\.(\d+)\.tool_calls\.(\d+)\.(id|name|arguments)$"
    ),
    requested_fields={"id": "id", "name": "name", "arguments": "arguments"},
    lossy_arguments=False,
    node=TRACELOOP_NODE,
    namespace=TRACELOOP_NAMESPACE,
    # OpenLLMetry's OpenAI Agents SDK instrumentation writes no entity input or output
    more_arguments=("gen_ai.tool.call.arguments",),
    more_results=("gen_ai.tool.call.result",),
)

CONVENTIONS: tuple[Convention, ...] = (TRACELOOP, OPENINFERENCE, GENAI)
"""Detection order: Traceloop first, since its tool spans also carry GenAI attributes."""

SpanRole = Literal["tool", "chat"]

CallSpanKind = tuple[SpanRole, Convention]
"""What :func:`classify` tells of a tool or chat span: its role and convention."""


_TRACELOOP_KIND = TRACELOOP.kind_key
_OPENINFERENCE_KIND = OPENINFERENCE.kind_key
_OPENINFERENCE_TOOL_NAME = OPENINFERENCE.tool_name[0]
_TRACELOOP_TOOL = TRACELOOP.tool_kind
_OPENINFERENCE_TOOL = OPENINFERENCE.tool_kind
_OPENINFERENCE_CHAT = OPENINFERENCE.chat_kind
_GENAI_TOOL = GENAI.tool_kind
_TOOL_TRACELOOP: CallSpanKind = ("tool", TRACELOOP)
_TOOL_OPENINFERENCE: CallSpanKind = ("tool", OPENINFERENCE)
_TOOL_GENAI: CallSpanKind = ("tool", GENAI)
_CHAT_OPENINFERENCE: CallSpanKind = ("chat", OPENINFERENCE)
_CHAT_TRACELOOP: CallSpanKind = ("chat", TRACELOOP)
_CHAT_GENAI: CallSpanKind = ("chat", GENAI)


def classify(attributes: Mapping[str, Any]) -> CallSpanKind | None:
    """Tell whether a span is a tool span or a chat span, and of which convention."""
    # Every span read goes through here once: the conventions' keys are module constants
    # and the answers shared tuples, so a span costs a few dict look-ups.
    get = attributes.get
    if get(_TRACELOOP_KIND) == _TRACELOOP_TOOL:
        return _TOOL_TRACELOOP
    if _OPENINFERENCE_TOOL_NAME in attributes:
        return _TOOL_OPENINFERENCE
    openinference_kind = get(_OPENINFERENCE_KIND)
    if openinference_kind == _OPENINFERENCE_TOOL:
        return _TOOL_OPENINFERENCE
    operation = get(GENAI_OPERATION)
    if operation == _GENAI_TOOL:
        return _TOOL_GENAI
    if openinference_kind == _OPENINFERENCE_CHAT:
        return _CHAT_OPENINFERENCE
    if operation in GENAI_CHAT_OPERATIONS:
        # Traceloop's chat spans carry no traceloop.span.kind; the legacy flattened
        # completions tell them apart from a GenAI chat span.
        if GENAI_OUTPUT_MESSAGES not in attributes and any(
            key.startswith("gen_ai.completion.") for key in attributes
        ):
            return _CHAT_TRACELOOP
        return _CHAT_GENAI
    if get("llm.request.type") == "chat":
        return _CHAT_TRACELOOP
    return None
