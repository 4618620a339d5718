"""Labels, ``after``, ``$ref``, ``result`` and optional calls end to end: the orders demo agent
over its SQLite data, driven by the scripted model through ``harness run``, and every report."""

from __future__ import annotations

import contextlib
import io
import json
import textwrap
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from harness.cli import main
from tests.support.paths import AGENT_FILE

ORDERS = """
suite: flows
agent: harness.demo.orders:build
model: {provider: scripted}
scenarios:
  # the ids come from the tools' results: no literal order id in the expectations
  - name: cancel the newest order
    input: "Cancel my most recent order, my email is ada@example.com"
    script:
      - tool_calls: [{name: find_customer, args: {email: ada@example.com}}]
      - tool_calls: [{name: search_orders, args: {customer_id: C-001}}]
      - tool_calls: [{name: cancel_order, args: {order_id: ORD-1050}}]
      - content: "Cancelled order ORD-1050"
    expect:
      tool_calls:
        - {id: customer, name: find_customer, args: {email: ada@example.com}}
        - id: orders
          name: search_orders
          args: {customer_id: {$ref: customer.result.customer_id}}
          after: customer
        - name: cancel_order
          args: {order_id: {$ref: orders.result.0.order_id}}
          after: orders
          result: {$subset: {status: cancelled}}
        - {name: get_order, optional: true, after: orders}

  # a refund of what the lookup says was paid, after the lookup
  - name: full refund of what was paid
    input: "Refund order ORD-1042 in full, it arrived broken"
    script:
      - tool_calls: [{name: get_order, args: {order_id: ORD-1042}}]
      - tool_calls:
          [{name: refund_order, args: {order_id: ORD-1042, amount: 89.9, reason: broken}}]
      - content: "Refunded 89.90 EUR"
    expect:
      tool_calls:
        - {id: lookup, name: get_order, args: {order_id: ORD-1042}}
        - name: refund_order
          args:
            order_id: {$ref: lookup.result.order_id}
            amount: {$ref: lookup.result.amount_paid}
          after: lookup

  # the agent cancels first and looks the orders up after: order, data flow and result fail
  - name: cancel before looking
    input: "Cancel my most recent order, my email is ada@example.com"
    script:
      - tool_calls: [{name: find_customer, args: {email: ada@example.com}}]
      - tool_calls: [{name: cancel_order, args: {order_id: ORD-1050}}]
      - tool_calls: [{name: search_orders, args: {customer_id: C-001}}]
      - content: "Cancelled order ORD-1050"
    expect:
      tool_calls:
        - {id: customer, name: find_customer, args: {email: ada@example.com}}
        - id: orders
          name: search_orders
          args: {customer_id: {$ref: customer.result.customer_id}}
          after: customer
        - name: cancel_order
          args: {order_id: {$ref: orders.result.1.order_id}}
          after: orders
          result: {$subset: {status: shipped}}

  # the lookup the refund's $ref names was made for another order: the ref has no value
  - name: refund of an order never looked up
    input: "Refund 5 EUR on ORD-1042"
    script:
      - tool_calls: [{name: get_order, args: {order_id: ORD-1043}}]
      - tool_calls: [{name: refund_order, args: {order_id: ORD-1042, amount: 5, reason: late}}]
      - content: "Refunded"
    expect:
      tool_calls:
        - {id: lookup, name: get_order, args: {order_id: ORD-1042}}
        - name: refund_order
          args: {order_id: {$ref: lookup.result.order_id}}
"""

FIXTURE = f"""
suite: text
agent: {AGENT_FILE}:build
model: {{provider: scripted}}
scenarios:
  # lookup returns plain text: a path into it is the scenario's error, never a pass or fail
  - name: a path into text
    input: x
    script:
      - tool_calls: [{{name: lookup, args: {{key: alpha}}}}]
      - tool_calls: [{{name: add, args: {{a: 3, b: 4}}}}]
      - content: done
    expect:
      tool_calls:
        - {{id: look, name: lookup}}
        - {{name: add, args: {{a: {{$ref: look.result.value}}}}}}
  # add returns 3, which ToolNode writes as the text 3: it stands for the number too
  - name: a number's text
    input: x
    script:
      - tool_calls: [{{name: add, args: {{a: 1, b: 2}}}}]
      - tool_calls: [{{name: add, args: {{a: 3, b: 4}}}}]
      - content: done
    expect:
      tool_calls:
        - {{id: sum, name: add, args: {{a: 1}}, result: 3}}
        - {{name: add, args: {{a: {{$ref: sum.result}}}}, after: sum, result: "7"}}
"""


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("flows")
    suites = []
    for name, text in (("flows.yaml", ORDERS), ("text.yaml", FIXTURE)):
        path = folder / name
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        suites.append(str(path))
    out = {kind: folder / f"r.{kind}" for kind in ("json", "xml", "html", "md")}
    console = io.StringIO()
    with contextlib.redirect_stdout(console):
        code = main(
            [
                "run",
                *suites,
                "--json",
                str(out["json"]),
                "--junit-xml",
                str(out["xml"]),
                "--html",
                str(out["html"]),
                "--markdown",
                str(out["md"]),
            ]
        )
    data = json.loads(out["json"].read_text(encoding="utf-8"))
    return {
        "code": code,
        "console": console.getvalue(),
        "json": {s["name"]: s for s in data["scenarios"]},
        "xml": out["xml"].read_text(encoding="utf-8"),
        "html": out["html"].read_text(encoding="utf-8"),
        "md": out["md"].read_text(encoding="utf-8"),
    }


def scores(scenario: dict[str, Any]) -> dict[str, float]:
    return {score["name"]: score["value"] for score in scenario["runs"][0]["scores"]}


def test_verdicts(reports: dict[str, Any]) -> None:
    statuses = {name: s["status"] for name, s in reports["json"].items()}
    assert statuses == {
        "cancel the newest order": "passed",
        "full refund of what was paid": "passed",
        "cancel before looking": "failed",
        "refund of an order never looked up": "failed",
        "a path into text": "error",
        "a number's text": "passed",
    }
    assert reports["code"] == 1


def test_a_correct_flow_scores_its_order_and_drops_the_absent_optional_call(
    reports: dict[str, Any],
) -> None:
    scenario = reports["json"]["cancel the newest order"]
    assert scores(scenario) == {"tool_call_accuracy": 1.0, "tool_call_partial_order": 1.0}
    run = scenario["runs"][0]
    # get_order was optional and never called: the resolved sample has three expectations
    assert [(e["name"], e.get("id"), e.get("after")) for e in run["expected_tool_calls"]] == [
        ("find_customer", "customer", None),
        ("search_orders", "orders", ["customer"]),
        ("cancel_order", None, ["orders"]),
    ]
    assert run["expected_tool_calls"][1]["args"] == {
        "customer_id": {"$ref": "customer.result.customer_id"}
    }
    assert run["expected_tool_calls"][2]["result"] == {"$subset": {"status": "cancelled"}}


def test_a_broken_flow_is_explained_in_every_report(reports: dict[str, Any]) -> None:
    scenario = reports["json"]["cancel before looking"]
    assert scores(scenario) == {"tool_call_accuracy": 2 / 3, "tool_call_partial_order": 0.5}
    accuracy = scenario["runs"][0]["scores"][0]["details"]
    diffs = [d for p in accuracy["pairs"] for d in p["diffs"]]
    assert diffs == []  # the cancel is unmatched: its diffs are the closest mismatch's issues
    codes = {issue["code"] for issue in accuracy["issues"]}
    assert {"missing_call", "wrong_args", "wrong_result"} <= codes
    # the console: the pattern as written, the resolved value in the diff, the result's diff
    console = reports["console"]
    assert "orders: search_orders(customer_id=$ref customer.result.cust" in console
    assert (
        "/order_id: order_id='ORD-1050', expected 'ORD-1043' ($ref orders.result.1.order_id)"
        in console
    )
    assert "result/status: result.status='cancelled', expected 'shipped'" in console
    assert "broken: 'orders' before cancel_order: cancel_order not matched" in console
    # JUnit carries the same table; HTML and Markdown show the diffs too
    testcase = next(
        case
        for case in ET.fromstring(reports["xml"]).iter("testcase")
        if case.get("name") == "cancel before looking"
    )
    assert "expected 'ORD-1043' ($ref orders.result.1.order_id)" in ET.tostring(testcase, "unicode")
    assert "$ref orders.result.1.order_id" in reports["html"]
    assert (
        "expected &#x27;ORD-1043&#x27;" in reports["html"]
        or "expected 'ORD-1043'" in reports["html"]
    )
    assert "result/status" in reports["md"] and "$ref orders.result.1.order_id" in reports["md"]


def test_a_ref_whose_source_is_not_paired_fails_with_unresolved_ref(
    reports: dict[str, Any],
) -> None:
    scenario = reports["json"]["refund of an order never looked up"]
    issues = scenario["runs"][0]["scores"][0]["details"]["issues"]
    unresolved = [i for i in issues if i["code"] == "unresolved_ref"]
    assert [i["message"] for i in unresolved] == [
        "refund_order: order_id: $ref lookup.result.order_id is unresolved: no call was paired "
        "with 'lookup'."
    ]
    assert "is unresolved: no call was paired with 'lookup'" in reports["console"]


def test_a_path_into_text_is_the_scenarios_error(reports: dict[str, Any]) -> None:
    error = reports["json"]["a path into text"]["runs"][0]["error"]
    assert (error["type"], error["phase"]) == ("RefError", "scoring")
    assert error["message"] == (
        "$ref look.result.value: the result of call #1 lookup (paired with 'look') is not a JSON "
        "object or array, so it has no value: 'first'"
    )
