"""The plugin's ``harness_rules`` fixture, driven through pytester: a real LangGraph agent (the
orders demo) traced by the SpanEmitter into the test's own TracerProvider, a policy file, and
the test failing on a violation (in its call phase) or passing on a clean run."""

from __future__ import annotations

import pytest

from tests.harness.online.test_serve import POLICY

pytest_plugins = ["pytester"]

TESTS = """
import pytest
from opentelemetry.sdk.trace import TracerProvider

from harness.demo import orders
from harness.models.scripted import ScriptedChatModel
from tracing import SpanEmitter


def run(provider, *calls):
    script = [{"tool_calls": [{"name": n, "args": a}]} for n, a in calls]
    model = ScriptedChatModel([*script, {"content": "Done."}])
    graph = orders.build(model, store=orders.OrderStore())
    emitter = SpanEmitter(provider, capture_content=True)
    graph.invoke({"messages": [("user", "Refund 10 EUR on ORD-1042")]}, emitter.config)


REFUND = ("refund_order", {"order_id": "ORD-1042", "amount": 10.0, "reason": "scratched"})
LOOKUP = ("get_order", {"order_id": "ORD-1042"})


def test_refund_without_lookup(harness_rules):
    provider = TracerProvider()
    harness_rules(provider, "policy.yaml")
    run(provider, REFUND)


def test_lookup_then_refund(harness_rules):
    provider = TracerProvider()
    results = harness_rules(provider, "policy.yaml")
    run(provider, LOOKUP, REFUND)
    assert provider.force_flush()  # the results are filled as the worker evaluates
    assert {r.result.rule: r.violation for r in results} == {
        "lookup before refund": False,
        "no cancels": False,
    }


def test_a_policy_that_does_not_load(harness_rules):
    with pytest.raises(ValueError, match="missing.yaml"):
        harness_rules(TracerProvider(), "missing.yaml")
"""


def test_the_fixture_fails_a_test_on_a_violation_and_passes_a_clean_one(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(".yaml", policy=POLICY)
    pytester.makepyfile(test_app=TESTS)
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    text = result.stdout.str()
    assert "1 rule violation(s):" in text
    assert "support / lookup before refund:" in text
    # a failure of the test itself (call phase), not an error in its teardown
    assert "FAILED test_app.py::test_refund_without_lookup" in text
    assert "ERROR" not in text
