"""Rules through ``harness run`` on the real demo agents (orders over SQLite, travel), driven by
the scripted model: every rule kind failing and passing, suite rules replaced and switched off,
a turn's own rules, a ``warn`` rule, a rule with no verdict; then what every report says."""

from __future__ import annotations

import html
import io
import json
import re
import xml.etree.ElementTree as ET
from contextlib import redirect_stdout
from dataclasses import dataclass
from typing import Any

import pytest

from harness.cli import main

ORDERS = """
suite: rules
agent: harness.demo.orders:build
model: {provider: scripted}
defaults:
  rules:
    - name: grounded ids
      grounded: {tool: "*_order", args: [order_id]}
    - name: tool budget
      budget: {tool_calls: 4}
scenarios:
  - name: invented id
    input: "Cancel my keyboard order please, I'm Ada Lovelace"
    script:
      - tool_calls: [{name: find_customer, args: {name: Ada Lovelace}}]
      - tool_calls: [{name: cancel_order, args: {order_id: ORD-1050}}]
      - content: Cancelled.
  - name: id from a search
    input: "Cancel my open order please, I'm ada@example.com"
    script:
      - tool_calls: [{name: find_customer, args: {email: ada@example.com}}]
      - tool_calls: [{name: search_orders, args: {customer_id: C-001, status: open}}]
      - tool_calls: [{name: cancel_order, args: {order_id: ORD-1050}}]
      - content: Cancelled.
  - name: refund without a lookup
    input: "Refund 5 EUR on ORD-1042, it came late"
    script:
      - tool_calls: [{name: refund_order, args: {order_id: ORD-1042, amount: 5, reason: late}}]
      - content: Refunded.
    expect:
      rules: &lookup
        - name: lookup first
          before:
            first: {name: get_order, args: {order_id: {$same: order_id}}}
            then: refund_order
  - name: refund after a lookup
    input: "Refund 5 EUR on ORD-1042, it came late"
    script:
      - tool_calls: [{name: get_order, args: {order_id: ORD-1042}}]
      - tool_calls: [{name: refund_order, args: {order_id: ORD-1042, amount: 5, reason: late}}]
      - content: Refunded.
    expect:
      rules: *lookup
  - name: too many calls
    input: "Show me each of my orders, I'm ada@example.com"
    script: &five
      - tool_calls: [{name: find_customer, args: {email: ada@example.com}}]
      - tool_calls: [{name: search_orders, args: {customer_id: C-001}}]
      - tool_calls:
          - {name: get_order, args: {order_id: ORD-1042}}
          - {name: get_order, args: {order_id: ORD-1043}}
          - {name: get_order, args: {order_id: ORD-1050}}
      - content: Here they are.
  - name: a scenario budget replaces the suite's
    input: "Show me each of my orders, I'm ada@example.com"
    script: *five
    expect:
      rules:
        - name: tool budget
          budget: {tool_calls: 10}
  - name: suite budget switched off
    input: "Show me each of my orders, I'm ada@example.com"
    script: *five
    expect:
      disable_rules: [tool budget]
  - name: looping
    input: "Where is ORD-1042?"
    script:
      - tool_calls: [{name: get_order, args: {order_id: ORD-1042}}]
      - tool_calls: [{name: get_order, args: {order_id: ORD-1042}}]
      - tool_calls: [{name: get_order, args: {order_id: ORD-1042}}]
      - content: Delivered.
    expect:
      rules:
        - {name: no loops, max_repeats: 2}
  - name: token budget
    input: "Where is ORD-1042?"
    script:
      - tool_calls: [{name: get_order, args: {order_id: ORD-1042}}]
        usage: {input_tokens: 900, output_tokens: 100}
      - content: Delivered.
        usage: {input_tokens: 300, output_tokens: 50}
    expect:
      rules:
        - name: tokens
          budget: {total_tokens: 1000, input_tokens: 5000, model_calls: 2}
  - name: least privilege
    input: "Cancel ORD-1050 please"
    script:
      - tool_calls: [{name: get_order, args: {order_id: ORD-1050}}]
      - tool_calls: [{name: cancel_order, args: {order_id: ORD-1050}}]
      - content: Cancelled.
    expect:
      rules:
        - name: read only
          allow: [find_customer, get_order, "search_*"]
  - name: warn only
    input: "Where is ORD-1042?"
    script:
      - tool_calls: [{name: get_order, args: {order_id: ORD-1042}}]
      - content: Delivered.
    expect:
      rules:
        - {name: soft budget, budget: {model_calls: 1}, severity: warn}
        - {name: prefer search, forbid: get_order, severity: warn}
  - name: no usage reported
    model: {provider: demo}
    input: "Where is my order ORD-1042?"
    expect:
      rules:
        - {name: token cap, budget: {total_tokens: 100000}}
  - name: a turn's own rules
    # the orders agent keeps no memory: each turn plays the script from its start
    turns:
      - input: "Where is ORD-1042?"
      - input: "Where is it now, ORD-1042?"
        expect:
          rules:
            - {name: one lookup a conversation, forbid: get_order}
    script:
      - tool_calls: [{name: get_order, args: {order_id: ORD-1042}}]
      - content: Delivered.
"""

TRAVEL = """
suite: travel rules
agent: harness.demo.travel:build
model: {provider: scripted}
defaults:
  rules:
    - name: search before booking
      before: {first: search_hotels, then: book_hotel}
    - name: grounded hotel
      grounded: {tool: book_hotel, args: [hotel_id]}
scenarios:
  - name: books blind
    input: "Book me a room in Lisbon from tomorrow, 2 nights, I'm Ada Lovelace"
    script:
      - tool_calls:
          - name: book_hotel
            args: {hotel_id: LIS-01, check_in: tomorrow, nights: 2, guest_name: Ada Lovelace}
      - content: Booked.
  - name: searches then books
    input: "Book me a room in Lisbon from tomorrow, 2 nights, I'm Ada Lovelace"
    script:
      - tool_calls: [{name: search_hotels, args: {city: Lisbon, check_in: tomorrow, nights: 2}}]
      - tool_calls:
          - name: book_hotel
            args: {hotel_id: LIS-01, check_in: tomorrow, nights: 2, guest_name: Ada Lovelace}
      - content: Booked.
"""


@dataclass(frozen=True)
class Reports:
    code: int
    console: str
    annotations: str
    data: dict[str, Any]
    junit: ET.Element
    html: str
    markdown: str

    def scenario(self, name: str) -> dict[str, Any]:
        return next(s for s in self.data["scenarios"] if s["name"] == name)

    def checks(self, name: str) -> dict[str, dict[str, Any]]:
        return {check["name"]: check for check in self.scenario(name)["runs"][0]["checks"]}


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Reports:
    where = tmp_path_factory.mktemp("rules")
    (where / "orders.yaml").write_text(ORDERS, encoding="utf-8")
    (where / "travel.yaml").write_text(TRAVEL, encoding="utf-8")
    out = io.StringIO()
    summary = where / "summary.md"
    args = [
        "run",
        str(where / "orders.yaml"),
        str(where / "travel.yaml"),
        *("--json", str(where / "r.json"), "--junit-xml", str(where / "r.xml")),
        *("--html", str(where / "r.html"), "--markdown", str(where / "r.md")),
        "--github",
    ]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GITHUB_STEP_SUMMARY", str(summary))
        patch.setenv("COLUMNS", "200")
        with redirect_stdout(out):
            code = main(args)
    printed = out.getvalue()
    return Reports(
        code,
        printed,
        "\n".join(line for line in printed.splitlines() if line.startswith("::")),
        json.loads((where / "r.json").read_text(encoding="utf-8")),
        ET.parse(where / "r.xml").getroot(),
        (where / "r.html").read_text(encoding="utf-8"),
        (where / "r.md").read_text(encoding="utf-8"),
    )


def test_each_scenario_gets_the_verdict_its_rules_give(reports: Reports) -> None:
    assert reports.code == 1
    statuses = {s["name"]: s["status"] for s in reports.data["scenarios"]}
    assert statuses == {
        "invented id": "failed",
        "id from a search": "passed",
        "refund without a lookup": "failed",
        "refund after a lookup": "passed",
        "too many calls": "failed",
        "a scenario budget replaces the suite's": "passed",
        "suite budget switched off": "passed",
        "looping": "failed",
        "token budget": "failed",
        "least privilege": "failed",
        "warn only": "passed",
        "no usage reported": "error",
        "a turn's own rules": "failed",
        "books blind": "failed",
        "searches then books": "passed",
    }


def test_a_failed_rule_is_a_check_with_its_code_reason_and_call(reports: Reports) -> None:
    check = reports.checks("invented id")["rule:grounded ids"]
    assert check == {
        "name": "rule:grounded ids",
        "kind": "rule",
        "passed": False,
        "severity": "error",
        "code": "ungrounded_arg",
        "reason": "#2 cancel_order(order_id='ORD-1050'): order_id 'ORD-1050' not seen in the "
        "user's input or any earlier tool result",
        "calls": [1],
        "call_numbers": [2],
    }
    assert reports.scenario("invented id")["reasons"] == [f"rule:grounded ids: {check['reason']}"]
    failures = reports.console.split(" FAILURES ", 1)[1]
    assert f"  rule:grounded ids: {check['reason']}" in failures  # the console's FAILURES
    assert "rule:grounded ids ✗, rule:tool budget ✓" in reports.console  # the summary table
    expected = {
        ("refund without a lookup", "rule:lookup first"): (
            "missing_before",
            "#1 refund_order(order_id='ORD-1042', amount=5, reason='late'): no earlier "
            "get_order(order_id='ORD-1042')",
            [0],
        ),
        ("too many calls", "rule:tool budget"): (
            "over_budget",
            "over budget: tool_calls 5 > 4",
            [],
        ),
        ("looping", "rule:no loops"): (
            "repeated_call",
            "#3 get_order(order_id='ORD-1042'): 3 identical calls (max 2)",
            [2],
        ),
        ("token budget", "rule:tokens"): (
            "over_budget",
            "over budget: total_tokens 1,350 > 1,000",
            [],
        ),
        ("least privilege", "rule:read only"): (
            "not_allowed",
            "#2 cancel_order(order_id='ORD-1050'): not in allow [find_customer, get_order, "
            "search_*]",
            [1],
        ),
        ("books blind", "rule:search before booking"): (
            "missing_before",
            "#1 book_hotel(hotel_id='LIS-01', check_in='tomorrow', nights=2, guest_name='Ada "
            "Lovelace'): no earlier search_hotels",
            [0],
        ),
    }
    for (scenario, name), (code, reason, calls) in expected.items():
        check = reports.checks(scenario)[name]
        assert (check["passed"], check["code"], check["reason"], check["calls"]) == (
            False,
            code,
            reason,
            calls,
        ), scenario
    passing = reports.checks("searches then books")
    assert all(check["passed"] for check in passing.values())
    assert set(passing) == {"rule:search before booking", "rule:grounded hotel"}


def test_suite_rules_come_first_and_are_replaced_or_switched_off_by_name(
    reports: Reports,
) -> None:
    assert list(reports.checks("invented id")) == ["rule:grounded ids", "rule:tool budget"]
    assert list(reports.checks("looping")) == [
        "rule:grounded ids",
        "rule:tool budget",
        "rule:no loops",
    ]
    replaced = reports.checks("a scenario budget replaces the suite's")["rule:tool budget"]
    assert (replaced["passed"], replaced["reason"]) == (True, "within budget")
    assert list(reports.checks("suite budget switched off")) == ["rule:grounded ids"]


def test_a_turns_rules_score_that_turns_calls(reports: Reports) -> None:
    checks = reports.checks("a turn's own rules")
    turn = checks["rule:one lookup a conversation"]
    # the turn's own numbering in the reason, the run's call in `calls` (the table's row)
    assert turn["reason"] == "turn2: #1 get_order(order_id='ORD-1042'): forbidden by get_order"
    assert (turn["passed"], turn["calls"], turn["call_numbers"]) == (False, [1], [2])
    assert checks["rule:grounded ids"]["passed"]  # the suite's rules score the whole run


def test_a_warn_rule_is_reported_and_counted_but_never_fails(reports: Reports) -> None:
    checks = reports.checks("warn only")
    soft, prefer = checks["rule:soft budget"], checks["rule:prefer search"]
    assert (soft["passed"], soft["severity"], soft["reason"]) == (
        False,
        "warn",
        "over budget: model_calls 2 > 1",
    )
    assert (prefer["passed"], prefer["severity"], prefer["calls"]) == (False, "warn", [0])
    assert reports.scenario("warn only")["reasons"] == []
    assert reports.data["rule_warnings"] == 2
    assert reports.data["summary"].startswith("6 passed, 8 failed, 1 error, 2 warnings in")
    assert "WARN rules::warn only - rule:soft budget: over budget: model_calls 2 > 1" in (
        reports.console
    )


def test_a_rule_with_no_verdict_makes_the_run_an_error(reports: Reports) -> None:
    scenario = reports.scenario("no usage reported")
    run = scenario["runs"][0]
    message = "rule:token cap: cannot be decided: total_tokens: no model turn reported token usage"
    assert run["error"]["type"] == "RuleUnevaluable"
    assert run["error"]["message"] == message
    assert scenario["reasons"] == [f"error (scoring): RuleUnevaluable: {message}"]
    check = reports.checks("no usage reported")["rule:token cap"]
    assert (check["passed"], check["code"]) == (False, "unevaluable")


def _case(reports: Reports, name: str) -> ET.Element:
    return next(case for case in reports.junit.iter("testcase") if case.get("name") == name)


def test_junit_names_the_rule_the_call_and_the_warnings(reports: Reports) -> None:
    failure = _case(reports, "invented id").find("failure")
    assert failure is not None and failure.text is not None
    assert failure.get("message", "").startswith(
        "rule:grounded ids: #2 cancel_order(order_id='ORD-1050')"
    )
    lines = failure.text.splitlines()
    table = lines.index("calls:")
    row = next(i for i in range(table, len(lines)) if "cancel_order(order_id=" in lines[i])
    assert lines[row + 1].strip() == "✗ rule:grounded ids"  # under the offending call's row
    warned = _case(reports, "warn only")
    assert warned.find("failure") is None and warned.find("error") is None
    out = warned.findtext("system-out") or ""
    assert "warning: rule:soft budget: over budget: model_calls 2 > 1" in out
    assert "⚠ rule:prefer search (warn)" in out
    error = _case(reports, "no usage reported").find("error")
    assert error is not None and error.get("type") == "RuleUnevaluable"


def _rows(page: str, call: str) -> list[str]:
    """The class of each match-table row whose actual call shows ``call`` (escaped)."""
    found = []
    for match in re.finditer(r'<tr class="(r-[^"]*)">(.*?)</tr>', page):
        if call in html.unescape(re.sub(r"<[^>]+>", "", match.group(2))):
            found.append(match.group(1))
    return found


def test_html_highlights_the_offending_call_row(reports: Reports) -> None:
    page = reports.html
    assert "r-unexpected r-rule" in _rows(page, "cancel_order(order_id='ORD-1050')")
    assert "r-unexpected r-rule-warn" in _rows(page, "get_order(order_id='ORD-1042')")
    assert '<span class="code rule fail">✗ rule:grounded ids</span>' in page
    assert '<span class="pill warn">warn</span>' in page
    assert "2 warnings" in page


def test_markdown_and_github_show_failures_and_warnings_apart(reports: Reports) -> None:
    text = reports.markdown
    assert (
        "| passed | failed | error | warnings |\n|---:|---:|---:|---:|\n| 6 | 8 | 1 | 2 |" in text
    )
    assert "rule:grounded ids: #2 cancel_order(order_id='ORD-1050')" in text
    assert "✗ rule:grounded ids" in text
    assert "| <code>rule:soft budget</code> | <code>rules::warn only</code>" in text
    warnings = [line for line in reports.annotations.splitlines() if line.startswith("::warning")]
    assert len(warnings) == 2
    assert "title=WARN rules%3A%3Awarn only::rule:soft budget: over budget" in warnings[0]
    errors = [line for line in reports.annotations.splitlines() if line.startswith("::error")]
    assert any("rule:grounded ids: #2 cancel_order" in line for line in errors)
