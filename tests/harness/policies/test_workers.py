"""``--rules`` alone on the local pool: the report of ``--workers 2`` is that of one process.

Real traces of the demo agents (conftest.py), cut into many small slices so that traces
straddle the cuts and complete only at a slice's end: the parent mends and merges what the
workers read, in input order.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.parallel import LocalPool
from harness.parallel.shards import fixed_sizes, iter_slices
from harness.policies import evaluate_policies, load_policies
from harness.policies.run import evaluate_policies_in_workers
from tests.harness.policies.conftest import Recorded
from tests.harness.policies.test_eval_traces_rules import _shop_policy


def span_per_line(source: Path, target: Path) -> Path:
    """The real trace file as the SDK's ``SimpleSpanProcessor`` writes it for an app serving
    one request at a time: one span a line, each in its own resource and scope, a trace's
    spans together (the harness runs scenarios at once and writes their spans on one line)."""
    traces: dict[str, list[str]] = {}
    for line in source.read_text(encoding="utf-8").splitlines():
        for resource in json.loads(line)["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    one = {**scope, "spans": [span]}
                    request = {"resourceSpans": [{**resource, "scopeSpans": [one]}]}
                    traces.setdefault(span["traceId"], []).append(json.dumps(request) + "\n")
    target.write_text("".join(line for lines in traces.values() for line in lines), "utf-8")
    return target


def test_the_workers_report_equals_one_process(shop: Recorded, tmp_path: Path) -> None:
    policies = load_policies([str(_shop_policy(tmp_path))])
    lines = str(span_per_line(shop.path, tmp_path / "spans.jsonl"))
    paths = [lines, lines]  # two files: the second repeats every trace id
    assert len(list(iter_slices(paths, fixed_sizes(4096)))) > 4
    alone = evaluate_policies(paths, policies, examples=50, per_trace=True)
    merged = evaluate_policies_in_workers(
        paths, policies, executor=LocalPool(2), examples=50, per_trace=True, slice_bytes=4096
    )
    assert merged.to_json() == alone.to_json()
    assert merged.traces == 2 * len(shop.tools)
    assert any(rule.violations for stats in merged.policies for rule in stats.rules)


def _report(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_rules_alone_with_workers_gives_the_one_process_json(
    shop: Recorded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # small slices (the pool's sizes are megabytes), so this file is cut into many
    monkeypatch.setattr("harness.parallel.shards.SLICE_BYTES", 6_000)
    monkeypatch.setattr("harness.parallel.shards._MIN_SLICE_BYTES", 3_000)
    policy = _shop_policy(tmp_path)
    lines = span_per_line(shop.path, tmp_path / "spans.jsonl")
    argv = ["eval-traces", str(lines), "--rules", str(policy), "-q", "--per-trace"]
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    assert main([*argv, "--workers", "1", "--json", str(one)]) == 1
    assert main([*argv, "--workers", "2", "--json", str(two)]) == 1
    assert _report(two) == _report(one)
    assert _report(one)["traces"] == len(shop.tools)
