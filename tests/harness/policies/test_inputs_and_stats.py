"""The policy pass reads what the scenarios read, once; its ``stats`` and ``--per-trace`` parts.

Real traces of the demo agents (conftest.py); the figures are checked against what the live
runs' reports say each trace called, and against a naive recomputation from the read runs.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.parallel import LocalPool
from harness.parallel.traces import evaluate_traces_in_workers
from harness.policies import PolicyReport, evaluate_policies, iter_trace_runs, load_policies
from harness.policies.run import PolicyPass
from harness.scenarios import iter_scenarios, load_paths
from tests.harness.policies.conftest import Recorded
from tests.harness.policies.test_eval_traces_rules import _json, _rules, _shop_policy, _violating
from tests.support.paths import ROOT

ORDERS = str(ROOT / "scenarios" / "orders.yaml")


def test_stdin_is_read_once_for_scenarios_and_rules(shop: Recorded, tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    policy = _shop_policy(tmp_path, "severity: warn", "severity: warn")
    argv = ["-m", "harness.cli", "eval-traces", "-", "--rules", str(policy), "--scenarios"]
    with shop.path.open("rb") as stdin:
        done = subprocess.run(
            [sys.executable, *argv, ORDERS, "--json", str(report), "-q"],
            stdin=stdin,
            capture_output=True,
            timeout=300,
            cwd=ROOT,
        )
    assert done.returncode in (0, 1), done.stderr.decode()
    data = _json(report)
    assert len(data["scenarios"]) == len(shop.tools)
    assert data["policy_traces"]["traces"] == len(shop.tools)
    rules = _rules(data, "shop-support")
    assert rules["no cancelling"]["violations"] == len(_violating(shop, "cancel_order"))
    assert {e["source"].split(":")[0] for e in rules["no cancelling"]["examples"]} == {"<stdin>"}


def test_stdin_alone_reaches_the_policies(shop: Recorded, tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    argv = ["-m", "harness.cli", "eval-traces", "-", "--rules", str(_shop_policy(tmp_path))]
    with shop.path.open("rb") as stdin:
        done = subprocess.run(
            [sys.executable, *argv, "--json", str(report), "-q"],
            stdin=stdin,
            capture_output=True,
            timeout=300,
            cwd=ROOT,
        )
    assert done.returncode == 1, done.stderr.decode()
    assert _json(report)["traces"] == len(shop.tools)


def test_the_workers_report_equals_one_process(shop: Recorded, tmp_path: Path) -> None:
    policies = load_policies([str(_shop_policy(tmp_path))])
    alone = evaluate_policies([str(shop.path)], policies, examples=50, per_trace=True)
    suites = load_paths([ORDERS], runnable=False)
    scenarios = list(iter_scenarios(suites))
    merged = PolicyReport(policies, examples=50, per_trace=True)
    result = evaluate_traces_in_workers(
        [str(shop.path)],
        scenarios,
        executor=LocalPool(2),
        policy=PolicyPass(merged),
        slice_bytes=4096,  # many slices, so traces straddle cuts
    )
    assert sum(result.counts.values()) == len(shop.tools)
    assert merged.to_json() == alone.to_json()
    assert merged.traces == len(shop.tools)


def _runs(recorded: Recorded) -> list[Any]:
    warnings: list[str] = []
    runs = [run for run, _ in iter_trace_runs(recorded.path, warnings)]
    assert not warnings
    return runs


def test_stats_count_calls_tokens_and_latency(
    shop: Recorded, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.json"
    argv = ["eval-traces", str(shop.path), "--rules", str(_shop_policy(tmp_path))]
    assert main([*argv, "--json", str(report)]) == 1
    out = capsys.readouterr().out
    assert f"figures over {len(shop.tools)} traces" in out
    assert "tool calls / trace" in out and "get_order ms" in out
    stats = _json(report)["stats"]
    counts = [len(tools) for tools in shop.tools.values()]
    calls = stats["per_trace"]["tool_calls"]
    assert stats["traces"] == calls["count"] == len(counts)
    assert calls["mean"] == pytest.approx(statistics.fmean(counts))
    assert calls["max"] == max(counts)
    assert calls["p50"] == pytest.approx(
        statistics.quantiles(counts, n=100, method="inclusive")[49]
    )
    per_tool = stats["latency_ms"]["per_tool"]
    names = [name for tools in shop.tools.values() for name in tools]
    assert {name: figure["count"] for name, figure in per_tool.items()} == {
        name: names.count(name) for name in set(names)
    }
    runs = _runs(shop)
    took = sorted(c.duration_ns / 1e6 for run in runs for c in run.calls)
    tools = stats["latency_ms"]["tools"]
    assert tools["count"] == len(took) and tools["max"] == pytest.approx(took[-1])
    expected = statistics.quantiles(took, n=100, method="inclusive")
    assert tools["p95"] == pytest.approx(expected[94])
    assert tools["p99"] == pytest.approx(expected[98])
    models = [m for run in runs for m in run.model_calls or ()]
    assert stats["per_trace"]["model_calls"]["mean"] == pytest.approx(len(models) / len(runs))
    assert stats["latency_ms"]["models"]["count"] == len(models)
    reported = [m.total_tokens for m in models if m.total_tokens is not None]
    if reported:  # the demo model reports usage: tokens per trace
        assert stats["per_trace"]["total_tokens"]["mean"] * stats["per_trace"]["total_tokens"][
            "count"
        ] == pytest.approx(sum(reported))


def test_per_trace_results_name_each_trace_its_policies_and_rules(
    shop: Recorded, calc: Recorded, tmp_path: Path
) -> None:
    report = tmp_path / "r.json"
    argv = ["eval-traces", str(shop.path), str(calc.path), "--rules", str(_shop_policy(tmp_path))]
    assert main([*argv, "--json", str(report), "-q"]) == 1
    assert "per_trace" not in _json(report)
    assert main([*argv, "--json", str(report), "-q", "--per-trace"]) == 1
    entries = _json(report)["per_trace"]
    selected = [e["trace_id"] for e in entries if e["policies"]]
    assert len(selected) == len(shop.tools) and set(selected) == set(shop.tools)
    assert {e["trace_id"] for e in entries if not e["policies"]} == set(calc.tools)
    cancels = _violating(shop, "cancel_order")
    for entry in entries:
        if not entry["policies"]:
            assert entry["rules"] == []
            continue
        (cancel,) = [r for r in entry["rules"] if r["rule"] == "no cancelling"]
        failed = entry["trace_id"] in cancels
        assert cancel == {
            "policy": "shop-support",
            "rule": "no cancelling",
            "result": "fail" if failed else "pass",
            "code": "forbidden_call" if failed else None,
        }


def test_examples_default_to_five(shop: Recorded, tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    policy = tmp_path / "p.yaml"
    policy.write_text("policies: p\nrules: [{name: any call, forbid: '*'}]\n", encoding="utf-8")
    assert main(["eval-traces", str(shop.path), "--rules", str(policy), "--json", str(report)]) == 1
    (rule,) = _rules(_json(report), "p").values()
    assert rule["violations"] > 5 and len(rule["examples"]) == 5


def test_the_markdown_summary_shows_the_population_figures(shop: Recorded, tmp_path: Path) -> None:
    from harness.policies.markdown import render_markdown

    report = evaluate_policies([str(shop.path)], load_policies([str(_shop_policy(tmp_path))]))
    text = render_markdown(report)
    stats = report.stats.to_json()
    assert f"### Figures over {len(shop.tools)} traces\n" in text
    table = text[text.index("### Figures over") :].split("\n\n")[1].splitlines()
    rows = {line.split(" | ")[0].lstrip("| "): line.rstrip(" |").split(" | ")[1:] for line in table}
    calls = stats["per_trace"]["tool_calls"]
    assert rows["tool calls / trace"] == [
        str(len(shop.tools)),
        *(f"{calls[key]:.1f}" for key in ("mean", "p50", "p95", "p99", "max")),
    ]
    assert int(rows["model calls / trace"][0]) == len(shop.tools)
    assert "tokens / trace" in rows and "model latency ms" in rows
    tools = {name for names in shop.tools.values() for name in names}
    per_tool = stats["latency_ms"]["per_tool"]
    for name in tools:
        cells = rows[f"↳ `{name}` ms"]
        assert cells[0] == str(per_tool[name]["count"])
        assert cells[3] == f"{per_tool[name]['p95']:.1f}"
    shown = [label for label in rows if label.startswith("↳")]
    p95 = [float(rows[label][3]) for label in shown]
    assert p95 == sorted(p95, reverse=True)  # the slowest tools first
