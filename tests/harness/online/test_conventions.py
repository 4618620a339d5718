"""The processor beside what apps already run: OpenInference's LangChain instrumentor, and the
SpanEmitter with content capture off (rules that need arguments say so, never a false verdict)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness import Sample
from harness.online import TraceResult
from harness.rules import Trajectory, evaluate_rules
from tests.harness.online.support import RULES, Pipelines, RulesPolicy, calls_turns
from tests.harness.online.test_processor import LOOKUP, REFUND
from tracing import SpanEmitter, ToolCallRecorder


@pytest.fixture
def pipes() -> Iterator[Pipelines]:
    pipes = Pipelines()
    yield pipes
    pipes.close()


def _run(callbacks: list[object], *turns: list[tuple[str, dict[str, object]]]) -> None:
    from harness.demo import orders
    from harness.models.scripted import ScriptedChatModel

    graph = orders.build(ScriptedChatModel(calls_turns(*turns)), store=orders.OrderStore())
    graph.invoke({"messages": [("user", "Refund 10 EUR on ORD-1042")]}, {"callbacks": callbacks})


def test_openinference_traces_get_the_verdicts_the_recorder_gets(pipes: Pipelines) -> None:
    from openinference.instrumentation.langchain import LangChainInstrumentor

    seen: list[TraceResult] = []
    processor = pipes.processor([RulesPolicy("support")], on_result=seen.append)
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=pipes.tracer_provider)
    recorder = ToolCallRecorder()
    try:
        _run([recorder], REFUND)
    finally:
        instrumentor.uninstrument()
    assert processor.force_flush(10_000)
    sample = Sample.from_recorder(recorder, input="Refund 10 EUR on ORD-1042")
    expected = evaluate_rules(RULES, Trajectory.from_sample(sample))
    assert [(r.result.rule, r.result.passed, r.result.code) for r in seen] == [
        (r.rule, r.passed, r.code) for r in expected
    ]
    assert not all(r.passed for r in expected)  # one rule does fail on this run
    (root,) = [s for s in pipes.spans.get_finished_spans() if s.parent is None]
    assert {record.trace_id for record in pipes.events()} == {root.context.trace_id}
    assert {record.span_id for record in pipes.events()} == {root.context.span_id}


def test_without_content_a_rule_on_arguments_is_an_error_never_a_verdict(
    pipes: Pipelines,
) -> None:
    seen: list[TraceResult] = []
    processor = pipes.processor([RulesPolicy("support")], on_result=seen.append)
    # the lookup comes first, but without arguments nobody can tell it was the same order
    _run([SpanEmitter(pipes.tracer_provider, capture_content=False)], LOOKUP, REFUND)
    assert processor.force_flush(10_000)
    by_rule = {r.result.rule: r for r in seen}
    lookup = by_rule["lookup before refund"]  # needs order_id: not captured
    assert lookup.result.error and lookup.result.code == "unevaluable"
    assert "not captured" in lookup.result.reason
    assert not lookup.violation
    assert by_rule["no cancels"].result.passed  # names alone decide it
    events = {e.attributes["gen_ai.evaluation.name"]: e.attributes for e in pipes.events()}
    assert events["rule:lookup before refund"]["error.type"] == "unevaluable"
    assert "gen_ai.evaluation.score.label" not in events["rule:lookup before refund"]
    assert pipes.counts("harness.rule.violations") == {}


def test_secret_values_never_leave_in_an_explanation(pipes: Pipelines) -> None:
    from harness.rules import load_rules
    from tests.support.agents import echo_agent, run_case

    secret = "sk-live-0123456789abcdef"
    seen: list[TraceResult] = []
    rules = load_rules([{"name": "no echo", "forbid": "echo"}])
    processor = pipes.processor([RulesPolicy("support", rules=rules)], on_result=seen.append)
    case = echo_agent(secret)
    run_case(case, "invoke", {"callbacks": [SpanEmitter(pipes.tracer_provider, True)]})
    assert processor.force_flush(10_000)
    (result,) = seen
    assert secret in result.result.reason  # the app's own callback sees what the rule saw
    (event,) = pipes.events()
    explanation = event.attributes["gen_ai.evaluation.explanation"]
    assert explanation.startswith("#1 echo(token=")
    assert secret not in explanation


def test_what_on_result_runs_in_an_instrumented_library_makes_no_new_traces(
    pipes: Pipelines,
) -> None:
    from langchain_core.runnables import RunnableLambda
    from openinference.instrumentation.langchain import LangChainInstrumentor

    alert_chain = RunnableLambda(lambda text: f"paged: {text}", name="pager")
    paged: list[str] = []

    def alert(found: TraceResult) -> None:  # an alert sent with the app's own (traced) code
        paged.append(alert_chain.invoke(found.result.rule))

    processor = pipes.processor([RulesPolicy("support")], on_result=alert)
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=pipes.tracer_provider)
    try:
        _run([], REFUND)
        assert processor.force_flush(10_000)
    finally:
        instrumentor.uninstrument()
    assert len(paged) == len(RULES)
    assert not [s for s in pipes.spans.get_finished_spans() if s.name == "pager"]
    assert len({record.trace_id for record in pipes.events()}) == 1  # the agent's trace only
