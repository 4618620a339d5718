"""A fuzz of the policy loader: mutated policy documents and mangled policy files either load
or raise one ConfigError of located issues — never a traceback, never a hang (hypothesis's
per-example deadline) — and whatever loads selects and evaluates a hostile trace without raising.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.policies import PolicyReport, load_policies
from tests.harness.policies.test_load import GOOD
from tests.harness.rules.test_load_fuzz import HOSTILE, SETTINGS, mutate, values
from tests.harness.scenarios.test_loader_fuzz import MUTATIONS
from tracing.otel.trace_run import TraceRun

DOCUMENT: dict[str, Any] = yaml.safe_load(GOOD)
NAMED: dict[str, Any] = {
    "policies": "one",
    **{k: DOCUMENT["policies"][0][k] for k in ("select", "rules")},
}
RUN = TraceRun(
    trace_id="f" * 32,
    calls=HOSTILE.calls,
    user_inputs=HOSTILE.user_inputs,
    model_calls=HOSTILE.model_calls,
    duration=HOSTILE.duration,
    service="shop-1",
    agent="orders",
    root_name="scenario x",
    root_attributes={"tier": 2, "deployment.environment": ["prod", None], "x": float("nan")},
    resource={"service.name": "shop-1", "tier": {"a": 1}},
    not_captured=HOSTILE.not_captured,
)


def _load(path: Path) -> None:
    try:
        policies = load_policies([path])
    except ConfigError as exc:
        assert exc.issues
        for issue in exc.issues:
            assert issue.file == "p.yaml" and issue.message, str(issue)
        return
    report = PolicyReport(policies)
    results = report.add(RUN)
    assert report.traces == 1
    for result in results:
        assert result.code != "rule_error", result.reason
    for stats in report.policies:
        assert stats.selection_errors == 0


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("policy-fuzz")


@st.composite
def documents(draw: st.DrawFn) -> Any:
    document: Any = draw(st.sampled_from([DOCUMENT, NAMED]))
    for _ in range(draw(st.integers(1, 4))):
        document = mutate(document, draw)
    return document if draw(st.integers(0, 9)) else draw(values)


@SETTINGS
@given(documents())
def test_a_mutated_policy_document_loads_or_is_located_issues(
    folder: Path, monkeypatch: pytest.MonkeyPatch, document: Any
) -> None:
    monkeypatch.chdir(folder)
    path = folder / "p.yaml"
    try:
        text = yaml.safe_dump(document, allow_unicode=True)
    except yaml.YAMLError:
        return  # bytes and the like: no YAML text to write
    path.write_text(text, encoding="utf-8")
    _load(path)


@SETTINGS
@given(st.lists(MUTATIONS, min_size=1, max_size=4))
def test_a_mangled_policy_file_loads_or_is_located_issues(
    folder: Path, monkeypatch: pytest.MonkeyPatch, mutations: Any
) -> None:
    monkeypatch.chdir(folder)
    data = GOOD.encode()
    for mutation in mutations:
        data = mutation(data)
    path = folder / "p.yaml"
    path.write_bytes(data)
    _load(path)
