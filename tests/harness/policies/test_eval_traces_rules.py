"""``harness eval-traces FILES --rules POLICY.yaml``: real traces of real agents against policies.

The traces come from ``harness run --trace-file`` on the demo suites (conftest.py); every count
is checked against what the live runs' own JSON reports say each trace called.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.harness.policies.conftest import Recorded

SHOP_POLICY = """
policies: shop-support
select:
  service: shop
rules:
  - name: no cancelling
    forbid: cancel_order
    {cancel}
  - name: refunds follow a lookup
    before: {{first: get_order, then: refund_order}}
    {refund}
  - name: budget
    budget: {{tool_calls: 6}}
"""


def _policy(tmp_path: Path, text: str, name: str = "policy.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _shop_policy(tmp_path: Path, cancel: str = "", refund: str = "") -> Path:
    return _policy(tmp_path, SHOP_POLICY.format(cancel=cancel, refund=refund))


def _json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _rules(report: dict[str, Any], policy: str) -> dict[str, dict[str, Any]]:
    (found,) = [p for p in report["policies"] if p["policy"] == policy]
    return {rule["rule"]: rule for rule in found["rules"]}


def _violating(recorded: Recorded, tool: str) -> set[str]:
    return {trace for trace, tools in recorded.tools.items() if tool in tools}


def _refund_without_lookup(recorded: Recorded) -> set[str]:
    out = set()
    for trace, tools in recorded.tools.items():
        if "refund_order" in tools and "get_order" not in tools[: tools.index("refund_order")]:
            out.add(trace)
    return out


def test_violations_counted_per_rule_match_what_the_runs_called(
    shop: Recorded, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.json"
    argv = ["eval-traces", str(shop.path), "--rules", str(_shop_policy(tmp_path))]
    url = "http://127.0.0.1:6006/traces/{trace_id}"
    assert main([*argv, "--json", str(report), "--examples", "10", "--trace-url", url]) == 1
    out = capsys.readouterr().out
    data = _json(report)
    assert data["traces"] == len(shop.tools) and data["unselected"] == 0
    rules = _rules(data, "shop-support")
    cancels, refunds = _violating(shop, "cancel_order"), _refund_without_lookup(shop)
    assert cancels and refunds  # the demo's traces hold both mistakes
    assert rules["no cancelling"]["violations"] == len(cancels)
    assert {e["trace_id"] for e in rules["no cancelling"]["examples"]} == cancels
    assert {e["trace_id"] for e in rules["refunds follow a lookup"]["examples"]} == refunds
    for rule in rules.values():
        assert rule["evaluated"] == len(shop.tools) and rule["unevaluable"] == 0
        assert rule["rate"] == pytest.approx(rule["violations"] / len(shop.tools))
    assert rules["budget"]["violations"] == sum(len(t) > 6 for t in shop.tools.values())
    example = rules["no cancelling"]["examples"][0]
    assert example["code"] == "forbidden_call" and example["call"]["name"] == "cancel_order"
    assert example["source"].startswith(f"{shop.path}:")
    assert example["url"] == f"http://127.0.0.1:6006/traces/{example['trace_id']}"
    # the console: the table and each example's reason with its full trace id
    assert "policy shop-support" in out and "no cancelling" in out
    assert f"trace {example['trace_id']}: #{example['call']['index']} cancel_order(" in out
    assert "rule(s) failed" not in out and "2 rules failed" in out


def test_max_rate_and_warn_decide_the_exit_code(shop: Recorded, tmp_path: Path) -> None:
    traces = str(shop.path)
    cancels = len(_violating(shop, "cancel_order")) / len(shop.tools)
    refunds = len(_refund_without_lookup(shop)) / len(shop.tools)
    tolerant = _shop_policy(tmp_path, f"max_rate: {cancels!r}", f"max_rate: {refunds!r}")
    assert main(["eval-traces", traces, "--rules", str(tolerant), "-q"]) == 0
    strict = _shop_policy(tmp_path, f"max_rate: {cancels / 2!r}", f"max_rate: {refunds!r}")
    assert main(["eval-traces", traces, "--rules", str(strict), "-q"]) == 1
    warned = _shop_policy(tmp_path, "severity: warn", "severity: warn")
    assert main(["eval-traces", traces, "--rules", str(warned), "-q"]) == 0


def test_policies_select_by_service_agent_root_attributes_and_tool(
    shop: Recorded, calc: Recorded, tmp_path: Path
) -> None:
    policy = _policy(
        tmp_path,
        """
        policies:
          - name: by service
            select: {service: "sho*"}
            rules: [{name: any, max_repeats: 50}]
          - name: by agent
            select: {agent: calculator}
            rules: [{name: any, max_repeats: 50}]
          - name: by root and tool
            select: {root: "scenario *", uses_tool: [cancel_*, nothing]}
            rules: [{name: any, max_repeats: 50}]
          - name: by attribute
            select: {attributes: {harness.suite: orders, service.name: {$regex: "^sh"}}}
            rules: [{name: any, max_repeats: 50}]
          - name: nothing
            select: {service: shop, agent: calculator}
            rules: [{name: any, max_repeats: 50}]
        """,
    )
    report = tmp_path / "r.json"
    argv = ["eval-traces", str(shop.path), str(calc.path), "--rules", str(policy)]
    assert main([*argv, "--json", str(report), "-q"]) == 0
    data = _json(report)
    selected = {p["policy"]: p["selected"] for p in data["policies"]}
    assert selected == {
        "by service": len(shop.tools),
        "by agent": len(calc.tools),
        "by root and tool": len(_violating(shop, "cancel_order")),
        "by attribute": len(shop.tools),
        "nothing": 0,
    }
    assert data["traces"] == len(shop.tools) + len(calc.tools)
    assert data["unselected"] == 0


def test_traces_no_policy_selects_are_counted_not_errors(
    shop: Recorded, calc: Recorded, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.json"
    argv = ["eval-traces", str(shop.path), str(calc.path), "--rules"]
    assert (
        main(
            [
                *argv,
                str(_shop_policy(tmp_path, "severity: warn", "severity: warn")),
                "--json",
                str(report),
            ]
        )
        == 0
    )
    assert _json(report)["unselected"] == len(calc.tools)
    assert f"{len(calc.tools)} unselected" in capsys.readouterr().out


def test_scenarios_and_rules_together_one_report(shop: Recorded, tmp_path: Path) -> None:
    from tests.support.paths import ROOT

    report = tmp_path / "r.json"
    argv = ["eval-traces", str(shop.path), "--scenarios", str(ROOT / "scenarios" / "orders.yaml")]
    tolerant = _shop_policy(tmp_path, "severity: warn", "severity: warn")
    alone = main([*argv, "-q"])  # the scenarios' own verdict decides when the rules pass
    assert main([*argv, "--rules", str(tolerant), "--json", str(report), "-q"]) == alone
    data = _json(report)
    assert len(data["scenarios"]) == len(shop.tools)  # the scenario part, as without --rules
    assert data["policy_traces"]["traces"] == len(shop.tools)
    assert [p["policy"] for p in data["policies"]] == ["shop-support"]
    failing = _shop_policy(tmp_path)
    assert main([*argv, "--rules", str(failing), "-q"]) == 1


def test_configuration_errors_exit_2_naming_file_and_line(
    shop: Recorded, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = _policy(tmp_path, "policies: p\nselect: {agnet: x}\nrules: [{name: r, forbid: x}]\n")
    assert main(["eval-traces", str(shop.path), "--rules", str(bad)]) == 2
    assert "policy.yaml:2: select: unknown key 'agnet' — did you mean 'agent'?" in (
        capsys.readouterr().err
    )
    assert main(["eval-traces", str(shop.path)]) == 2
    assert "give --scenarios PATH..., --rules POLICY..., or both" in capsys.readouterr().err


def test_no_trace_read_exits_5(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    assert main(["eval-traces", str(empty), "--rules", str(_shop_policy(tmp_path))]) == 5
    assert "no traces found" in capsys.readouterr().err


def test_examples_are_capped_and_secrets_masked(tmp_path: Path) -> None:
    from tests.harness.span_export.test_run_export import SECRET, write_secret_suite

    suite, trace = write_secret_suite(tmp_path), tmp_path / "t.jsonl"
    argv = ["run", str(suite), "-q", "--workers", "1", "--no-default-redact"]
    assert main([*argv, "--trace-file", str(trace)]) == 1
    assert SECRET in trace.read_text(encoding="utf-8")  # the file itself holds it
    policy = _policy(tmp_path, "policies: p\nrules: [{name: no api, forbid: call_api}]\n")
    report = tmp_path / "r.json"
    argv = ["eval-traces", str(trace), "--rules", str(policy), "--json", str(report)]
    assert main([*argv, "--examples", "1"]) == 1
    text = report.read_text(encoding="utf-8")
    (rule,) = _rules(_json(report), "p").values()
    assert rule["violations"] == 2 and len(rule["examples"]) == 1
    assert SECRET not in text
    assert rule["examples"][0]["call"]["args"]["api_key"] != SECRET


def test_markdown_and_github_summary_and_annotations(
    shop: Recorded,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    summary, markdown = tmp_path / "summary.md", tmp_path / "r.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    policy = _shop_policy(tmp_path, refund="severity: warn")
    argv = ["eval-traces", str(shop.path), "--rules", str(policy), "--github", "-q"]
    assert main([*argv, "--markdown", str(markdown), "--html", str(tmp_path / "r.html")]) == 1
    captured = capsys.readouterr()
    cancels, refunds = len(_violating(shop, "cancel_order")), len(_refund_without_lookup(shop))
    total = len(shop.tools)
    annotations = [line for line in captured.out.splitlines() if line.startswith("::")]
    assert annotations == [
        f"::error file={policy},line=6::policy shop-support / no cancelling: {cancels} of "
        f"{total} traces violate it ({cancels / total:.1%}25, max 0.0%25)",  # % escaped
        f"::warning file={policy},line=9::policy shop-support / refunds follow a lookup: "
        f"{refunds} of {total} traces violate it ({refunds / total:.1%}25, max 0.0%25)",
    ]
    assert "is not written for --rules alone" not in captured.err
    assert "<h2>Policies</h2>" in (tmp_path / "r.html").read_text(encoding="utf-8")
    for text in (markdown.read_text(encoding="utf-8"), summary.read_text(encoding="utf-8")):
        assert text.startswith("## Policies\n")
        assert f"| ❌ no cancelling | error | {total} | {cancels} |" in text
        assert f"| ⚠️ refunds follow a lookup | warn | {total} | {refunds} |" in text
