"""RuleProcessor in a real OTel SDK pipeline: the orders demo agent (LangGraph, real tools over
SQLite, the scripted chat model) traced by the SpanEmitter, events into an in-memory log exporter
and counters into an in-memory metric reader."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import format_span_id, format_trace_id

from harness import Sample
from harness.errors import ConfigError
from harness.online import RuleProcessor, TraceResult
from harness.rules import Forbid, Rule, Trajectory, evaluate_rules
from harness.rules.patterns import CallPattern
from tests.harness.online.support import RULES, Pipelines, RulesPolicy, run_orders
from tracing import ToolCallRecorder
from tracing.otel.trace_run import TraceRun

REFUND = [("refund_order", {"order_id": "ORD-1042", "amount": 10.0, "reason": "scratched"})]
LOOKUP = [("get_order", {"order_id": "ORD-1042"})]


@pytest.fixture
def pipes() -> Iterator[Pipelines]:
    pipes = Pipelines()
    yield pipes
    pipes.close()


def _root(pipes: Pipelines) -> Any:
    roots = [s for s in pipes.spans.get_finished_spans() if s.parent is None]
    assert len(roots) == 1, roots
    return roots[0]


def _by_rule(pipes: Pipelines) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for record in pipes.events():
        assert record.attributes is not None
        out[str(record.attributes["gen_ai.evaluation.name"])] = record
    return out


def test_events_counters_and_on_result_say_what_the_rules_say(pipes: Pipelines) -> None:
    seen: list[TraceResult] = []
    processor = pipes.processor([RulesPolicy("support")], on_result=seen.append)
    recorder = ToolCallRecorder()
    run_orders(pipes.tracer_provider, "Refund 10 EUR on ORD-1042", REFUND, recorder=recorder)
    assert processor.force_flush(10_000)

    # what the same rules say on the recorder's view of the same run (the callback path)
    sample = Sample.from_recorder(recorder, input="Refund 10 EUR on ORD-1042")
    expected = {r.rule: r for r in evaluate_rules(RULES, Trajectory.from_sample(sample))}
    assert not expected["lookup before refund"].passed  # the run does violate one rule
    assert expected["no loops"].passed and expected["no cancels"].passed

    root = _root(pipes)
    events = _by_rule(pipes)
    assert set(events) == {f"rule:{name}" for name in expected}
    for name, result in expected.items():
        record = events[f"rule:{name}"]
        assert record.event_name == "gen_ai.evaluation.result"
        assert record.trace_id == root.context.trace_id
        assert record.span_id == root.context.span_id
        attributes = record.attributes
        assert attributes["gen_ai.evaluation.score.label"] == ("pass" if result.passed else "fail")
        assert attributes["gen_ai.evaluation.score.value"] == (1.0 if result.passed else 0.0)
        # a pass carries no explanation unless asked (explain_passes): nobody acts on it
        assert attributes.get("gen_ai.evaluation.explanation") == (
            None if result.passed else result.reason
        )
        assert attributes["harness.policy"] == "support"
        assert attributes["harness.trace.complete"] is True

    evaluations = pipes.counts("harness.rule.evaluations")
    assert evaluations == {(("policy", "support"), ("rule", name)): 1 for name in expected}
    violations = pipes.counts("harness.rule.violations")
    assert violations == {(("policy", "support"), ("rule", "lookup before refund")): 1}

    assert [(r.result, r.policy) for r in seen] == [(r, "support") for r in expected.values()]
    assert {r.trace_id for r in seen} == {format_trace_id(root.context.trace_id)}
    assert {r.span_id for r in seen} == {format_span_id(root.context.span_id)}
    assert [r.violation for r in seen] == [not r.passed for r in expected.values()]


def test_explain_passes_puts_the_reason_on_passing_events_too(pipes: Pipelines) -> None:
    seen: list[TraceResult] = []
    processor = pipes.processor(
        [RulesPolicy("support")], on_result=seen.append, explain_passes=True
    )
    run_orders(pipes.tracer_provider, "Look up ORD-1042", LOOKUP)
    assert processor.force_flush(10_000)
    events = _by_rule(pipes)
    assert seen and all(r.result.passed for r in seen)
    for item in seen:
        explanation = events[f"rule:{item.result.rule}"].attributes["gen_ai.evaluation.explanation"]
        assert explanation == item.result.reason


def test_only_the_policies_that_select_the_trace_are_evaluated(pipes: Pipelines) -> None:
    processor = pipes.processor(
        [RulesPolicy("orders only", agent="orders"), RulesPolicy("billing", agent="billing")]
    )
    run_orders(pipes.tracer_provider, "Look up ORD-1042", LOOKUP)
    assert processor.force_flush(10_000)
    policies = {record.attributes["harness.policy"] for record in pipes.events()}
    assert policies == {"orders only"}
    assert len(pipes.events()) == len(RULES)


def test_policy_files_select_from_the_root_before_and_after_the_read(
    pipes: Pipelines, tmp_path: Path
) -> None:
    pytest.importorskip("harness.policies", reason="policy files come with harness.policies")
    first = TracerProvider()
    memory = InMemorySpanExporter()
    first.add_span_processor(SimpleSpanProcessor(memory))
    run_orders(first, "Look up ORD-1042", LOOKUP)
    (root,) = [span for span in memory.get_finished_spans() if span.parent is None]
    policy = tmp_path / "policies.yaml"
    body = "\n".join(f"  - {{name: {n}, max_repeats: 1}}" for n in ("no loops",))
    policy.write_text(
        f"""policies:
- name: this root
  select: {{root: "{root.name}", agent: orders}}
  rules:
{body}
- name: other service
  select: {{service: "billing-*"}}
  rules:
{body}
- name: other agent, same root
  select: {{root: "{root.name}", agent: billing}}
  rules:
{body}
""",
        encoding="utf-8",
    )
    processor = pipes.processor([policy])
    run_orders(pipes.tracer_provider, "Look up ORD-1042", LOOKUP)
    assert processor.force_flush(10_000)
    assert {record.attributes["harness.policy"] for record in pipes.events()} == {"this root"}


class _Raising(Forbid):
    """A rule kind with a bug: it raises on every trajectory."""

    def passes_by_names(self, counts: Any) -> bool:
        return False  # never decided by the names alone: evaluate always runs

    def evaluate(self, trajectory: Trajectory) -> Any:
        raise KeyError("boom")


class _BrokenPolicy(RulesPolicy):
    def evaluate(self, run: TraceRun) -> Any:
        raise RuntimeError("policy bug")


def test_a_raising_rule_is_an_error_event_and_the_other_rules_still_run(
    pipes: Pipelines, caplog: pytest.LogCaptureFixture
) -> None:
    rules = (*RULES, Rule("buggy", _Raising(CallPattern("x"))))
    processor = pipes.processor([_BrokenPolicy("broken"), RulesPolicy("support", rules=rules)])
    run_orders(pipes.tracer_provider, "Refund 10 EUR on ORD-1042", REFUND)  # never raises here
    assert processor.force_flush(10_000)

    events = _by_rule(pipes)
    assert set(events) == {f"rule:{r.name}" for r in rules}  # nothing of the broken policy
    buggy = events["rule:buggy"].attributes
    assert buggy["error.type"] == "rule_error"
    assert "gen_ai.evaluation.score.label" not in buggy
    assert "KeyError" in buggy["gen_ai.evaluation.explanation"]
    assert events["rule:lookup before refund"].attributes["gen_ai.evaluation.score.label"] == (
        "fail"
    )
    assert pipes.counts("harness.rule.errors") == {(("policy", "broken"), ("stage", "policy")): 1}
    assert pipes.counts("harness.rule.violations") == {
        (("policy", "support"), ("rule", "lookup before refund")): 1
    }  # an error result is not a violation
    assert "RuntimeError: policy bug" in caplog.text


def test_a_raising_on_result_is_counted_and_every_event_still_goes_out(
    pipes: Pipelines, caplog: pytest.LogCaptureFixture
) -> None:
    def alert(result: TraceResult) -> None:
        raise ConnectionError("pager down")

    processor = pipes.processor([RulesPolicy("support")], on_result=alert)
    run_orders(pipes.tracer_provider, "Refund 10 EUR on ORD-1042", REFUND)
    assert processor.force_flush(10_000)
    assert len(pipes.events()) == len(RULES)
    assert pipes.counts("harness.rule.errors") == {
        (("policy", "support"), ("stage", "on_result")): len(RULES)
    }
    assert "ConnectionError: pager down" in caplog.text


def test_a_trace_over_max_spans_is_dropped_counted_and_warned_once(
    pipes: Pipelines, caplog: pytest.LogCaptureFixture
) -> None:
    processor = pipes.processor([RulesPolicy("support")], max_spans_per_trace=3)
    with caplog.at_level(logging.WARNING, logger="harness.online"):
        run_orders(pipes.tracer_provider, "Refund 10 EUR on ORD-1042", REFUND)
        run_orders(pipes.tracer_provider, "Refund 10 EUR on ORD-1042", REFUND)
    assert processor.force_flush(10_000)
    assert len(pipes.spans.get_finished_spans()) > 2 * 3  # each run made more spans than 3
    assert pipes.events() == []
    assert pipes.counts("harness.rule.dropped") == {(("reason", "max_spans_per_trace"),): 2}
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "max_spans_per_trace" in warnings[0].getMessage()


def test_more_open_traces_than_allowed_drops_the_oldest(pipes: Pipelines) -> None:
    seen: list[TraceResult] = []
    processor = pipes.processor([RulesPolicy("support")], on_result=seen.append, max_open_traces=1)
    tracer = pipes.tracer_provider.get_tracer("app")
    request = tracer.start_span("request A")  # the app's request span, still open
    with tracer.start_as_current_span("handler", context=_in(request)):
        run_orders(pipes.tracer_provider, "Look up ORD-1042", LOOKUP)
    run_orders(pipes.tracer_provider, "Refund 10 EUR on ORD-1042", REFUND)  # a second trace
    request.end()  # the root of the dropped trace ends late: not evaluated, not counted twice
    assert processor.force_flush(10_000)
    assert pipes.counts("harness.rule.dropped") == {(("reason", "max_open_traces"),): 1}
    traces = {r.trace_id for r in seen}
    assert traces == {format_trace_id(_root_named(pipes, "invoke_agent").context.trace_id)}


def _in(span: Any) -> Any:
    from opentelemetry.trace import set_span_in_context

    return set_span_in_context(span)


def _root_named(pipes: Pipelines, prefix: str) -> Any:
    (root,) = [
        s
        for s in pipes.spans.get_finished_spans()
        if s.parent is None and s.name.startswith(prefix)
    ]
    return root


def test_a_full_queue_drops_new_traces_with_a_count(pipes: Pipelines) -> None:
    entered, release = threading.Event(), threading.Event()

    def slow(result: TraceResult) -> None:
        entered.set()
        release.wait(10)

    processor = pipes.processor([RulesPolicy("support")], on_result=slow, queue_size=1)
    run_orders(pipes.tracer_provider, "Look up ORD-1042", LOOKUP)
    assert entered.wait(10)  # the worker is busy with the first trace
    run_orders(pipes.tracer_provider, "Look up ORD-1042", LOOKUP)  # waits in the queue
    run_orders(pipes.tracer_provider, "Look up ORD-1042", LOOKUP)  # no room: dropped
    release.set()
    assert processor.force_flush(10_000)
    assert pipes.counts("harness.rule.dropped") == {(("reason", "queue_full"),): 1}
    assert len({record.trace_id for record in pipes.events()}) == 2


def test_a_trace_whose_root_never_ends_is_evaluated_at_the_timeout(pipes: Pipelines) -> None:
    done = threading.Event()
    seen: list[TraceResult] = []

    def collect(result: TraceResult) -> None:
        seen.append(result)
        if len(seen) == len(RULES):
            done.set()

    pipes.processor([RulesPolicy("support")], on_result=collect, trace_timeout=0.2)
    tracer = pipes.tracer_provider.get_tracer("app")
    request = tracer.start_span("request")  # never ended
    with tracer.start_as_current_span("handler", context=_in(request)) as handler:
        run_orders(pipes.tracer_provider, "Refund 10 EUR on ORD-1042", REFUND)
    assert done.wait(10)
    assert {r.complete for r in seen} == {False}
    assert {r.trace_id for r in seen} == {format_trace_id(handler.get_span_context().trace_id)}
    assert {r.span_id for r in seen} == {format_span_id(handler.get_span_context().span_id)}
    by_rule = {r.result.rule: r.result for r in seen}
    assert not by_rule["lookup before refund"].passed  # read from what arrived
    assert {e.attributes["harness.trace.complete"] for e in pipes.events()} == {False}


def test_shutdown_evaluates_open_traces_and_stops_taking_spans(pipes: Pipelines) -> None:
    seen: list[TraceResult] = []
    processor = pipes.processor([RulesPolicy("support")], on_result=seen.append)
    tracer = pipes.tracer_provider.get_tracer("app")
    request = tracer.start_span("request")
    with tracer.start_as_current_span("handler", context=_in(request)):
        run_orders(pipes.tracer_provider, "Refund 10 EUR on ORD-1042", REFUND)
    processor.shutdown()
    assert len(seen) == len(RULES) and {r.complete for r in seen} == {False}
    assert processor.force_flush(1_000) is False  # per the SDK: nothing after shutdown
    request.end()
    run_orders(pipes.tracer_provider, "Look up ORD-1042", LOOKUP)
    assert len(seen) == len(RULES)
    processor.shutdown()  # twice: a no-op


def test_shutdown_counts_what_it_could_not_evaluate_in_time(pipes: Pipelines) -> None:
    entered, release = threading.Event(), threading.Event()

    def slow(result: TraceResult) -> None:
        entered.set()
        release.wait(10)

    processor = pipes.processor([RulesPolicy("support")], on_result=slow)
    run_orders(pipes.tracer_provider, "Look up ORD-1042", LOOKUP)
    assert entered.wait(10)
    run_orders(pipes.tracer_provider, "Look up ORD-1042", LOOKUP)
    run_orders(pipes.tracer_provider, "Look up ORD-1042", LOOKUP)
    processor.shutdown(timeout_millis=200)
    assert pipes.counts("harness.rule.dropped") == {(("reason", "shutdown"),): 2}
    release.set()


def test_bad_arguments_are_clear_errors_at_construction(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"policies\[0\] is a int, not a policy"):
        RuleProcessor([7])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match=r"missing\.yaml: no such file or directory"):
        RuleProcessor(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("policies: p\nrules:\n  - {name: r, forbidd: x}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.yaml:3: .*did you mean 'forbid'"):
        RuleProcessor([bad])
    with pytest.raises(ValueError, match="queue_size must be positive, got 0"):
        RuleProcessor([], queue_size=0)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_gets_its_own_worker(pipes: Pipelines) -> None:
    seen: list[TraceResult] = []
    processor = pipes.processor([RulesPolicy("support")], on_result=seen.append)
    read, write = os.pipe()
    pid = os.fork()  # a pre-forking server (gunicorn --preload) set up before the fork
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        code = 1
        try:
            run_orders(pipes.tracer_provider, "Refund 10 EUR on ORD-1042", REFUND)
            flushed = processor.force_flush(5_000)
            os.write(write, f"{flushed} {len(seen)}".encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    answer = os.read(read, 100).decode()
    os.close(read)
    assert os.waitstatus_to_exitcode(status) == 0
    assert answer == f"True {len(RULES)}"
    assert seen == []  # the parent saw nothing of the child's trace


def test_no_violations_fails_a_test_with_each_violation_and_passes_a_clean_run(
    pipes: Pipelines,
) -> None:
    from harness.online.testing import no_violations

    with no_violations(pipes.tracer_provider, [RulesPolicy("support")]) as results:
        run_orders(pipes.tracer_provider, "Look up ORD-1042", LOOKUP)
    assert len(results) == len(RULES) and all(r.result.passed for r in results)

    with (
        pytest.raises(AssertionError, match="1 rule violation") as failure,
        no_violations(pipes.tracer_provider, [RulesPolicy("support")]),
    ):
        run_orders(pipes.tracer_provider, "Refund 10 EUR on ORD-1042", REFUND)
    message = str(failure.value)
    assert "support / lookup before refund: #1 refund_order(" in message
    assert "no loops" not in message  # only what failed

    with pytest.raises(KeyError), no_violations(pipes.tracer_provider, [RulesPolicy("s")]):
        raise KeyError("the test's own error goes on")


def test_root_grace_takes_the_spans_that_arrive_after_the_root(pipes: Pipelines) -> None:
    from tracing import SpanView

    run_orders(pipes.tracer_provider, "Refund 10 EUR on ORD-1042", REFUND)  # no processor yet
    spans = pipes.spans.get_finished_spans()
    views = [(SpanView.from_readable(s), dict(s.resource.attributes)) for s in spans]
    views.sort(key=lambda item: item[0].parent_id is not None)  # the root arrives first

    def verdicts(grace: float) -> dict[str, bool]:
        done = threading.Event()
        seen: list[TraceResult] = []

        def collect(result: TraceResult) -> None:
            seen.append(result)
            if len(seen) == len(RULES):
                done.set()

        processor = RuleProcessor([RulesPolicy("support")], on_result=collect, root_grace=grace)
        try:
            for view, resource in views:  # as harness serve receives them
                processor.receive(view, resource)
            assert done.wait(10)
        finally:
            processor.shutdown()
        assert {r.complete for r in seen} == {True}
        return {r.result.rule: r.result.passed for r in seen}

    assert verdicts(0.3)["lookup before refund"] is False  # the refund arrived in the grace
    assert verdicts(0.0)["lookup before refund"] is True  # read at the root: no call yet
