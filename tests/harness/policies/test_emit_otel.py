"""``eval-traces --rules --emit-otel``: each trace's rule results, as the SDK's OTLP/HTTP log
exporter sends them to a local OTLP sink on 127.0.0.1 (the online tests' sink), linked to the
trace's root span, with the online processor's attributes; secrets scrubbed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.harness.online.test_serve import _attributes, _events, _sink
from tests.harness.policies.conftest import Recorded
from tests.harness.policies.test_eval_traces_rules import _shop_policy, _violating
from tests.support.paths import ROOT
from tracing.otlp.reader import OtlpJsonReader


def _eval(argv: list[str], port: int) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ)
    env.pop("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", None)
    env["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{port}"
    env["OTEL_SERVICE_NAME"] = "policy-checks"
    command = [sys.executable, "-m", "harness.cli", "eval-traces", *argv, "--emit-otel", "-q"]
    return subprocess.run(command, env=env, capture_output=True, timeout=300, cwd=ROOT)


def test_every_rule_result_is_an_event_on_its_traces_root_span(
    shop: Recorded, calc: Recorded, tmp_path: Path
) -> None:
    roots = {
        trace.trace_id: trace.root.span_id
        for trace in OtlpJsonReader(shop.path).iter_traces()
        if trace.root is not None
    }
    assert set(roots) == set(shop.tools)
    with _sink() as sink:
        port = sink.server_address[1]
        argv = [str(shop.path), str(calc.path), "--rules", str(_shop_policy(tmp_path))]
        done = _eval(argv, port)
        assert done.returncode == 1, done.stderr.decode()
        events = _events(sink)
    # three rules on each shop trace; the calculator's traces are selected by no policy
    assert len(events) == 3 * len(shop.tools)
    cancels = _violating(shop, "cancel_order")
    seen: dict[str, set[str]] = {}
    for record in events:
        trace_id, span_id = record.trace_id.hex(), record.span_id.hex()
        assert roots[trace_id] == span_id
        attributes = _attributes(record)
        assert record.event_name == "gen_ai.evaluation.result"
        assert attributes["harness.policy"] == "shop-support"
        seen.setdefault(trace_id, set()).add(attributes["gen_ai.evaluation.name"])
        if attributes["gen_ai.evaluation.name"] == "rule:no cancelling":
            failed = trace_id in cancels
            assert attributes["gen_ai.evaluation.score.label"] == ("fail" if failed else "pass")
            assert attributes["gen_ai.evaluation.score.value"] == (0.0 if failed else 1.0)
            if failed:
                assert "cancel_order" in attributes["gen_ai.evaluation.explanation"]
    assert seen == {
        t: {"rule:no cancelling", "rule:refunds follow a lookup", "rule:budget"} for t in shop.tools
    }


def test_with_scenarios_the_events_come_from_the_one_reading(
    shop: Recorded, tmp_path: Path
) -> None:
    scenarios = str(ROOT / "scenarios" / "orders.yaml")
    with _sink() as sink:
        policy = _shop_policy(tmp_path, "severity: warn", "severity: warn")
        argv = [str(shop.path), "--scenarios", scenarios, "--rules", str(policy)]
        done = _eval(argv, sink.server_address[1])
        assert done.returncode in (0, 1), done.stderr.decode()
        events = _events(sink)
    assert len(events) == 3 * len(shop.tools)
    labels = [_attributes(e).get("gen_ai.evaluation.score.label") for e in events]
    assert labels.count("warn") == len(_violating(shop, "cancel_order")) + sum(
        1
        for tools in shop.tools.values()
        if "refund_order" in tools and "get_order" not in tools[: tools.index("refund_order")]
    )


def test_emit_otel_needs_rules(shop: Recorded) -> None:
    done = _eval([str(shop.path), "--scenarios", str(ROOT / "scenarios" / "orders.yaml")], 9)
    assert done.returncode == 2
    assert b"--emit-otel sends the results of --rules" in done.stderr
