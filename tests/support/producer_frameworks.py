"""Each producer: a real framework, its real instrumentation, against the OpenAI stand-in.

``PRODUCERS[name](provider, url)`` instruments the process (instrumentors patch globally, so
tests/support/producer_run.py runs one producer per process) and returns a function running one
agent turn: ``run(prompt, model) -> the framework's answer``. Each is written the way the
framework's documentation writes an agent with tools; the only stand-in is the model server.
Network safety: LiteLLM reads its bundled model map (``LITELLM_LOCAL_MODEL_COST_MAP``), and the
OpenAI Agents SDK's own exporter (which posts to OpenAI) is removed before OpenLLMetry adds its
processor.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from typing import Any

from opentelemetry.sdk.trace import TracerProvider

from tests.support.openai_server import API_KEY
from tests.support.producer_cases import TOOLS

Run = Callable[[str, str], Any]
"""One agent turn: (prompt, model name) -> the framework's final answer."""

AGENT = "calc"
"""The agent's name, in every framework that names one."""
INSTRUCTIONS = "Use the tools to answer; answer briefly."


def _agents_sdk(provider: TracerProvider, url: str, instrumentor: str, api: str) -> Run:
    from agents import (
        Agent,
        Runner,
        function_tool,
        set_default_openai_api,
        set_default_openai_client,
        set_trace_processors,
    )
    from openai import AsyncOpenAI

    set_trace_processors([])  # no export to OpenAI from a test
    if instrumentor == "openinference":
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
    else:
        os.environ["TRACELOOP_TRACE_CONTENT"] = "true"
        from opentelemetry.instrumentation.openai_agents import (  # type: ignore[no-redef]
            OpenAIAgentsInstrumentor,
        )
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    set_default_openai_client(AsyncOpenAI(base_url=url, api_key=API_KEY, max_retries=0))
    set_default_openai_api(api)  # type: ignore[arg-type]
    tools = [function_tool(fn) for fn in TOOLS.values()]

    def run(prompt: str, model: str) -> Any:
        agent = Agent(name=AGENT, instructions=INSTRUCTIONS, tools=tools, model=model)
        return Runner.run_sync(agent, prompt).final_output

    return run


def _pydantic_ai(provider: TracerProvider, url: str, version: int | None) -> Run:
    from pydantic_ai import Agent, InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    settings: dict[str, Any] = {"tracer_provider": provider}
    if version is not None:
        settings["version"] = version
    Agent.instrument_all(InstrumentationSettings(**settings))
    openai = OpenAIProvider(base_url=url, api_key=API_KEY)

    def run(prompt: str, model: str) -> Any:
        agent = Agent(
            OpenAIChatModel(model, provider=openai),
            name=AGENT,
            instructions=INSTRUCTIONS,
            tools=list(TOOLS.values()),
        )
        return agent.run_sync(prompt).output

    return run


def _openai_loop(provider: TracerProvider, url: str) -> Run:
    """The tool-calling loop of OpenAI's function-calling guide under OpenInference."""
    from openinference.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(tracer_provider=provider)
    return openai_loop(provider, url)


def openai_loop(provider: TracerProvider, url: str) -> Run:
    """The tool-calling loop of OpenAI's function-calling guide, inside one span of the app's
    (the OpenAI client instrumented already)."""
    from openai import OpenAI

    client = OpenAI(base_url=url, api_key=API_KEY, max_retries=0)
    tracer = provider.get_tracer("app")
    schemas = [
        {
            "type": "function",
            "function": {"name": name, "parameters": {"type": "object", "properties": {}}},
        }
        for name in TOOLS
    ]

    def run(prompt: str, model: str) -> Any:
        messages: list[Any] = [
            {"role": "system", "content": INSTRUCTIONS},
            {"role": "user", "content": prompt},
        ]
        with tracer.start_as_current_span(AGENT):
            for _ in range(8):
                reply = client.chat.completions.create(
                    model=model, messages=messages, tools=schemas
                )
                message = reply.choices[0].message
                messages.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    return message.content
                for tool_call in message.tool_calls:
                    function = tool_call.function  # type: ignore[union-attr]
                    try:
                        output = json.dumps(TOOLS[function.name](**json.loads(function.arguments)))
                    except Exception as exc:
                        output = f"Error: {type(exc).__name__}: {exc}"
                    messages.append(
                        {"role": "tool", "tool_call_id": tool_call.id, "content": output}
                    )
        return None

    return run


def _smolagents(provider: TracerProvider, url: str) -> Run:
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor
    from smolagents import OpenAIServerModel, ToolCallingAgent, tool

    SmolagentsInstrumentor().instrument(tracer_provider=provider)
    tools = [tool(fn) for fn in TOOLS.values()]

    def run(prompt: str, model: str) -> Any:
        server = OpenAIServerModel(model_id=model, api_base=url, api_key=API_KEY)
        agent = ToolCallingAgent(tools=tools, model=server, max_steps=4, verbosity_level=0)
        return agent.run(prompt)

    return run


def _register_litellm_model(model: str) -> str:
    """Declare the stand-in's model to LiteLLM (what a user does for a model it does not
    know), so LlamaIndex sees a function-calling model."""
    import litellm

    name = f"openai/{model}"
    litellm.register_model(
        {name: {"litellm_provider": "openai", "mode": "chat", "supports_function_calling": True}}
    )
    return name


def _llamaindex(provider: TracerProvider, url: str) -> Run:
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.llms.litellm import LiteLLM
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    LlamaIndexInstrumentor().instrument(tracer_provider=provider)

    def run(prompt: str, model: str) -> Any:
        llm = LiteLLM(model=_register_litellm_model(model), api_base=url, api_key=API_KEY)
        agent = FunctionAgent(
            name=AGENT, tools=list(TOOLS.values()), llm=llm, system_prompt=INSTRUCTIONS
        )

        async def turn() -> Any:
            return str(await agent.run(prompt))

        return asyncio.run(turn())

    return run


def _adk(provider: TracerProvider, url: str, schema: str) -> Run:
    if schema == "1":
        os.environ["ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN"] = "1"
    else:
        os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
    from opentelemetry import trace

    trace.set_tracer_provider(provider)  # ADK writes its spans through the global provider
    from google.adk.agents import LlmAgent
    from google.adk.models.lite_llm import LiteLlm
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    def run(prompt: str, model: str) -> Any:
        llm = LiteLlm(model=f"openai/{model}", api_base=url, api_key=API_KEY)
        agent = LlmAgent(
            name=AGENT, model=llm, instruction=INSTRUCTIONS, tools=list(TOOLS.values())
        )
        runner = InMemoryRunner(agent=agent, app_name="producers")

        async def turn() -> Any:
            session = await runner.session_service.create_session(
                app_name="producers", user_id="user"
            )
            message = types.Content(role="user", parts=[types.Part(text=prompt)])
            answer = None
            async for event in runner.run_async(
                user_id="user", session_id=session.id, new_message=message
            ):
                if event.is_final_response() and event.content and event.content.parts:
                    answer = event.content.parts[0].text
            return answer

        return asyncio.run(turn())

    return run


def _langgraph(provider: TracerProvider, url: str) -> Run:
    """LangChain v1's ``create_agent`` (a LangGraph graph) on ``ChatOpenAI``, instrumented by
    OpenInference: the tools as LangChain's docs write them."""
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from openinference.instrumentation.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument(tracer_provider=provider)
    tools = [tool(fn) for fn in TOOLS.values()]

    def run(prompt: str, model: str) -> Any:
        llm = ChatOpenAI(model=model, base_url=url, api_key=API_KEY, max_retries=0)  # type: ignore[arg-type]
        agent = create_agent(llm, tools, system_prompt=INSTRUCTIONS, name=AGENT)
        state = agent.invoke({"messages": [{"role": "user", "content": prompt}]})
        return state["messages"][-1].content

    return run


PRODUCERS: dict[str, Callable[[TracerProvider, str], Run]] = {
    "langgraph-openinference": _langgraph,
    "agents-openinference": lambda p, u: _agents_sdk(p, u, "openinference", "responses"),
    "agents-openinference-chat": lambda p, u: _agents_sdk(
        p, u, "openinference", "chat_completions"
    ),
    "agents-openllmetry": lambda p, u: _agents_sdk(p, u, "openllmetry", "responses"),
    "pydantic-ai": lambda p, u: _pydantic_ai(p, u, None),
    "pydantic-ai-v2": lambda p, u: _pydantic_ai(p, u, 2),
    "pydantic-ai-v6": lambda p, u: _pydantic_ai(p, u, 6),
    "openai-loop": _openai_loop,
    "smolagents": _smolagents,
    "llamaindex": _llamaindex,
    "adk": lambda p, u: _adk(p, u, "2"),
    "adk-schema1": lambda p, u: _adk(p, u, "1"),
}
"""Producer name -> its setup (see the module docstring)."""

MODULES = {
    "langgraph-openinference": "openinference.instrumentation.langchain",
    "agents-openinference": "openinference.instrumentation.openai_agents",
    "agents-openinference-chat": "openinference.instrumentation.openai_agents",
    "agents-openllmetry": "opentelemetry.instrumentation.openai_agents",
    "pydantic-ai": "pydantic_ai",
    "pydantic-ai-v2": "pydantic_ai",
    "pydantic-ai-v6": "pydantic_ai",
    "openai-loop": "openinference.instrumentation.openai",
    "smolagents": "openinference.instrumentation.smolagents",
    "llamaindex": "llama_index.llms.litellm",
    "adk": "google.adk",
    "adk-schema1": "google.adk",
}
"""The module each producer needs (its test skips when it cannot be imported)."""
