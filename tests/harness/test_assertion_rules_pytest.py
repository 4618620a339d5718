"""What pytest shows for expect_tools' rules: docs/pytest.md's example runs as written, a failed
rule prints its reason and the calls, a warn rule lands in the warnings summary."""

from __future__ import annotations

import re

import pytest

from tests.support.paths import DOCS

pytest_plugins = ["pytester"]

_BLOCK = re.compile(r"<!-- readme-test: pytest-rules -->\s*```python\n(?P<code>.*?)```", re.S)


def docs_example() -> str:
    """The tested python block of docs/pytest.md's "Rules and ordered calls"."""
    match = _BLOCK.search((DOCS / "pytest.md").read_text(encoding="utf-8"))
    assert match is not None, "docs/pytest.md has no <!-- readme-test: pytest-rules --> block"
    return match["code"]


def test_the_docs_example_passes_as_written_and_warns_once(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_docs_rules=docs_example())
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(
        [
            "*RuleWarning: expect_tools(...).max_calls(2, severity='warn'): rule:max_calls 2: "
            "#3 cancel_order(order_id='ORD-1050'): 3 calls of * (max 2)",
        ]
    )


def test_the_docs_example_fails_when_the_agent_invents_the_id(pytester: pytest.Pytester) -> None:
    # the agent cancels without searching: the order id comes from nowhere
    code = docs_example()
    search = (
        '    {"tool_calls": [{"name": "search_orders", "args": {"customer_id": "C-001", '
        '"status": "open"}}]},\n'
    )
    assert search in code
    invented = code.replace(search, "").replace('label="search", after="find"', "optional=True")
    invented = invented.replace('order_id={"$ref": "search.result.0.order_id"}, after="search"', "")
    assert invented.count("\n") < code.count("\n")
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_docs_rules=invented)
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E*AssertionError: expect_tools(...).grounded('cancel_order', 'order_id') failed:",
            "E*  rule:grounded order_id of cancel_order: #2 cancel_order(order_id='ORD-1050'): "
            "order_id 'ORD-1050' not seen in the user's input or any earlier tool result",
            "E*expected 2 calls, the agent made 2 calls:",  # the absent optional call dropped
            "E*✗ rule:grounded order_id of cancel_order",
            "E*the agent's calls, in order:",
            "E*1. find_customer(email='ada@example.com')",
            "E*2. cancel_order(order_id='ORD-1050')",
            "*harness: recorded tool calls*",
        ]
    )
    assert "harness/assertions.py" not in result.stdout.str()


def test_an_undecided_token_budget_fails_the_test(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(
        test_budget="""
        from harness.assertions import expect_tools
        from harness.demo.orders import build

        def test_budget(tool_recorder, harness_model):
            agent = build(model=harness_model("demo"))  # reports no token usage
            question = {"messages": [("user", "Where is my order ORD-1042?")]}
            agent.invoke(question, tool_recorder.config)
            expect_tools(tool_recorder).within_budget(tool_calls=3, total_tokens=6000)
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E*within_budget(tool_calls=3, total_tokens=6000) failed:",
            "E*rule:budget tool_calls 3, total_tokens 6000: cannot be decided: total_tokens: "
            "no model turn reported token usage",
        ]
    )
