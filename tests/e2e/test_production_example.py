"""The shipped production example: `make demo`'s last command over examples/traces/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT / "examples" / "traces" / "production.jsonl.gz"
POLICIES = ROOT / "scenarios" / "policies.yaml"

# What the committed file holds: the demo agents' traces (scripts/production_traces.sh),
# counted by the rules of scenarios/policies.yaml.
EXPECTED = {
    "orders-support": (
        108,
        {
            "grounded order ids": 6,
            "no loops": 6,
            "refunds follow a lookup": 24,
            "call budget": 0,
        },
    ),
    "refunds": (30, {"one refund per request": 0}),
    "travel-desk": (
        108,
        {"never wipe bookings": 12, "hotel ids from a search": 0, "weather before booking": 12},
    ),
    "calculator": (60, {"no loops": 0, "budget": 0}),
}


def test_make_demo_runs_the_example_through_eval_traces() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    demo = makefile.split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    command = (
        "harness eval-traces examples/traces/production.jsonl.gz --rules scenarios/policies.yaml"
    )
    assert command in demo, demo


def test_example_policies_count_the_shipped_violations_and_exit_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "policies.json"
    code = main(["eval-traces", str(TRACES), "--rules", str(POLICIES), "-q", "--json", str(report)])
    summary = capsys.readouterr().out
    # the violations are there, within each rule's max_rate or a warning: the demo passes
    assert code == 0, summary
    assert "324 traces: 276 selected by a policy, 48 unselected" in summary
    data = json.loads(report.read_text(encoding="utf-8"))
    assert (data["traces"], data["unselected"], data["ok"], data["warnings"]) == (324, 48, True, [])
    found = {
        p["policy"]: (p["selected"], {r["rule"]: r["violations"] for r in p["rules"]})
        for p in data["policies"]
    }
    assert found == EXPECTED
    # each violating rule names example traces of the file, with the offending call
    for policy in data["policies"]:
        for rule in policy["rules"]:
            assert bool(rule["examples"]) == bool(rule["violations"]), rule
            for example in rule["examples"]:
                assert "production.jsonl.gz:" in example["source"], example
                assert example["call"]["name"], example


def test_a_stricter_max_rate_fails_the_run(tmp_path: Path) -> None:
    strict = tmp_path / "strict.yaml"
    text = POLICIES.read_text(encoding="utf-8")
    strict.write_text(text.replace("max_rate: 0.15", "max_rate: 0.05"), encoding="utf-8")
    assert main(["eval-traces", str(TRACES), "--rules", str(strict), "-q"]) == 1
