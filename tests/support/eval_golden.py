"""The suite and the folder of the eval-traces golden reports (tests/fixtures/traces)."""

from __future__ import annotations

from tests.support.paths import FIXTURES

GOLDEN = FIXTURES / "traces" / "eval_golden"

SUITE = """suite: bench
agent: {agent}:build
model: {{provider: demo}}
scenarios:
  - name: weather
    input: weather in Berlin
    expect:
      tool_calls: [{{name: get_weather, args: {{city: Berlin}}}}, get_time]
      forbid: [delete]
  - name: refund
    input: refund order 7
    expect:
      tool_calls:
        - {{name: get_order, args: {{order_id: 7}}}}
        - {{name: refund, args: {{order_id: 7}}}}
      order: strict
  - name: login
    input: log in as bob
    expect:
      tool_calls: [{{name: login, args: {{user: bob}}}}]
      forbid: [delete]
"""
