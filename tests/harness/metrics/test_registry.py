"""Metric registry: names, options, bad input, and third-party entry points."""

from __future__ import annotations

import contextlib
import math
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness import Sample, ToolCall
from harness.errors import MetricConfigError
from harness.metrics import (
    Metric,
    NoUnexpectedToolCalls,
    RagasToolCallAccuracy,
    RagasToolCallF1,
    Score,
    ToolArgumentCorrectness,
    ToolCallAccuracy,
    ToolCallF1,
    ToolCallOrder,
    ToolCallSequenceAccuracy,
    ToolSelectionAccuracy,
    get_metric,
    metric_names,
    metric_options,
    register_metric,
)
from harness.metrics.base import make_score
from harness.metrics.registry import ENTRY_POINT_GROUP, unregister_metric
from tests.support.paths import FIXTURES

BUILTINS = {
    "tool_call_accuracy": ToolCallAccuracy,
    "no_unexpected_tool_calls": NoUnexpectedToolCalls,
    "tool_call_order": ToolCallOrder,
    "tool_argument_correctness": ToolArgumentCorrectness,
    "tool_selection_accuracy": ToolSelectionAccuracy,
    "tool_call_sequence_accuracy": ToolCallSequenceAccuracy,
    "tool_call_f1": ToolCallF1,
}


def test_builtin_names_map_to_their_classes() -> None:
    assert set(BUILTINS) <= set(metric_names())
    assert metric_names() == sorted(metric_names())
    for name, cls in BUILTINS.items():
        metric = get_metric(name)
        assert type(metric) is cls
        assert metric.name == name
        assert isinstance(metric, Metric)


def test_get_metric_passes_options() -> None:
    metric = get_metric("tool_call_sequence_accuracy", order="flexible", threshold=0.5)
    assert isinstance(metric, ToolCallSequenceAccuracy)
    assert (metric.order, metric.threshold) == ("flexible", 0.5)


def test_metric_options_lists_defaults() -> None:
    assert metric_options("tool_call_accuracy") == {"threshold": 1.0}
    assert metric_options("tool_argument_correctness") == {"threshold": 0.8, "strict": False}
    assert metric_options("tool_selection_accuracy") == {"threshold": 0.8, "ordered": False}
    assert metric_options("tool_call_sequence_accuracy") == {
        "threshold": 0.8,
        "order": "strict",
        "comparator": "exact",
        "compat": None,
    }
    assert metric_options("tool_call_f1") == {"threshold": 0.8, "compat": None}


def test_unknown_metric_suggests_the_closest_name() -> None:
    with pytest.raises(MetricConfigError) as info:
        get_metric("tool_call_acuracy")
    assert (
        str(info.value) == "unknown metric 'tool_call_acuracy' — did you mean 'tool_call_accuracy'?"
    )


def test_unknown_metric_without_a_close_name_lists_them_all() -> None:
    with pytest.raises(
        MetricConfigError, match=r"unknown metric 'bleu'; known metrics: .*tool_call_f1"
    ):
        get_metric("bleu")


def test_unknown_option_lists_valid_ones() -> None:
    with pytest.raises(MetricConfigError) as info:
        get_metric("tool_argument_correctness", treshold=0.5)
    assert str(info.value) == (
        "metric 'tool_argument_correctness': unknown option 'treshold' (did you mean "
        "'threshold'?); valid options: threshold, strict"
    )


@pytest.mark.parametrize("name", sorted(BUILTINS))
@pytest.mark.parametrize("threshold", [1.5, -0.1, math.nan, "high", True, None])
def test_bad_thresholds_are_rejected_at_construction(name: str, threshold: Any) -> None:
    with pytest.raises(MetricConfigError, match=rf"{name}: threshold must be"):
        get_metric(name, threshold=threshold)


@pytest.mark.parametrize("threshold", [0, 0.0, 1, 1.0, 0.5])
def test_thresholds_on_and_inside_the_bounds_are_accepted(threshold: float) -> None:
    assert ToolCallF1(threshold=threshold).threshold == float(threshold)


# Every metric class, the Ragas ones included, with a non-default option to pass alongside.
ALL_CLASSES: list[tuple[type[Any], dict[str, Any]]] = [
    (ToolCallAccuracy, {}),
    (NoUnexpectedToolCalls, {}),
    (ToolCallOrder, {}),
    (ToolArgumentCorrectness, {"strict": True}),
    (ToolSelectionAccuracy, {"ordered": True}),
    (ToolCallSequenceAccuracy, {"order": "flexible"}),
    (ToolCallF1, {}),
    (RagasToolCallAccuracy, {"order": "flexible"}),
    (RagasToolCallF1, {}),
]


@pytest.mark.parametrize(("cls", "options"), ALL_CLASSES, ids=lambda c: getattr(c, "__name__", ""))
def test_every_metric_takes_its_threshold_positionally(
    cls: type[Any], options: dict[str, Any]
) -> None:
    # Seed 002 writes `new ToolArgumentCorrectness(0.8)`; positional was a TypeError before.
    positional = cls(0.25, **options)
    keyword = cls(threshold=0.25, **options)
    assert positional.threshold == keyword.threshold == 0.25
    for option, value in options.items():
        assert getattr(positional, option) == value
    sample = Sample(tool_calls=[ToolCall.of("f", x=1)], expected_tool_calls=[ToolCall.of("f")])
    assert positional.evaluate(sample) == keyword.evaluate(sample)
    with pytest.raises(MetricConfigError, match="threshold must be within") as info:
        cls(1.5, **options)
    assert (info.value.option, info.value.value) == ("threshold", 1.5)
    assert info.value.metric == cls.name


def test_only_the_threshold_is_positional() -> None:
    with pytest.raises(TypeError):
        ToolArgumentCorrectness(0.8, True)  # type: ignore[call-arg]


def test_compat_ragas_builds_the_ragas_classes_under_the_native_names() -> None:
    # Typed as the native class (mypy ignores what __new__ returns); the Metric protocol holds.
    sequence: Any = ToolCallSequenceAccuracy(0.5, order="flexible", compat="ragas")
    assert type(sequence) is RagasToolCallAccuracy
    assert (sequence.threshold, sequence.order, sequence.comparator) == (0.5, "flexible", "exact")
    assert (sequence.name, sequence.compat) == ("tool_call_sequence_accuracy", "ragas")
    f1: Any = ToolCallF1(threshold=0.5, compat="ragas")
    assert type(f1) is RagasToolCallF1
    assert (f1.name, f1.threshold, f1.compat) == ("tool_call_f1", 0.5, "ragas")
    # The registry maps the option the same way, and the native classes keep compat=None.
    assert type(get_metric("tool_call_f1", compat="ragas")) is RagasToolCallF1
    built: Any = get_metric("tool_call_sequence_accuracy", compat="ragas", comparator="similarity")
    assert type(built) is RagasToolCallAccuracy
    assert built.comparator == "similarity"
    assert type(get_metric("tool_call_f1", compat=None)) is ToolCallF1
    assert ToolCallF1().compat is None and ToolCallSequenceAccuracy().compat is None


def test_compat_ragas_in_yaml_builds_the_ragas_classes(tmp_path: Path) -> None:
    from harness.scenarios import load_paths

    agent = FIXTURES / "fixture_agent.py"
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        textwrap.dedent(
            f"""
            agent: {agent}:build
            model: {{provider: scripted}}
            scenarios:
              - name: one
                input: hi
                script: [{{content: done}}]
                expect: {{tool_calls: []}}
                metrics:
                  tool_call_f1: {{threshold: 0.5, compat: ragas}}
                  tool_call_sequence_accuracy: {{compat: ragas, order: flexible}}
            """
        ),
        encoding="utf-8",
    )
    (loaded,) = load_paths([suite])
    f1, sequence = loaded.scenarios[0].metrics
    assert type(f1) is RagasToolCallF1 and f1.threshold == 0.5
    assert type(sequence) is RagasToolCallAccuracy and sequence.order == "flexible"


class ConstantMetric:
    """A third-party metric: always the same value."""

    name = "constant_metric"

    def __init__(self, *, value: float = 1.0, threshold: float = 0.5) -> None:
        self.value = value
        self.threshold = threshold

    def evaluate(self, sample: Sample) -> Score:
        """Score nothing in particular."""
        return make_score(self.name, self.value, self.threshold, "constant")


@pytest.fixture
def constant_registered() -> Iterator[None]:
    register_metric(ConstantMetric)
    yield
    unregister_metric("constant_metric")


def test_register_metric_as_a_decorator_and_build_it(constant_registered: None) -> None:
    assert "constant_metric" in metric_names()
    metric = get_metric("constant_metric", value=0.25)
    score = metric.evaluate(Sample(tool_calls=[], expected_tool_calls=[]))
    assert (score.value, score.passed) == (0.25, False)
    assert metric_options("constant_metric") == {"value": 1.0, "threshold": 0.5}


def test_register_metric_refuses_a_taken_name_unless_replacing(constant_registered: None) -> None:
    class Other(ConstantMetric):
        """Another class under the same name."""

    with pytest.raises(MetricConfigError, match="already registered"):
        register_metric(Other)
    register_metric(Other, replace=True)
    assert type(get_metric("constant_metric")) is Other


def test_register_metric_needs_a_snake_case_name() -> None:
    with pytest.raises(MetricConfigError, match="snake_case"):
        register_metric(ConstantMetric, "Constant-Metric")


def test_factory_that_builds_a_non_metric_is_reported() -> None:
    register_metric(lambda: object(), "not_a_metric")
    try:
        with pytest.raises(MetricConfigError, match="lacks the Metric protocol"):
            get_metric("not_a_metric")
    finally:
        unregister_metric("not_a_metric")


# -- entry points (a real dist-info directory on sys.path, found by importlib.metadata) --------


def _install_plugin(root: Path, dist: str, entry_points: dict[str, str], module: str) -> None:
    (root / f"{dist}_plugin.py").write_text(textwrap.dedent(module))
    info = root / f"{dist}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    lines = [f"[{ENTRY_POINT_GROUP}]"] + [f"{k} = {v}" for k, v in entry_points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")


PLUGIN = """
from harness.metrics.base import make_score


class HalfMetric:
    '''Always 0.5.'''

    name = "half_metric"

    def __init__(self, *, threshold: float = 0.4) -> None:
        self.threshold = threshold

    def evaluate(self, sample):
        return make_score(self.name, 0.5, self.threshold, "half")
"""


@pytest.fixture
def plugin_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in ("half_metric", "broken_metric", "not_callable_metric"):
        with contextlib.suppress(MetricConfigError):
            unregister_metric(name)
    for module in ("halfdist_plugin", "constdist_plugin"):
        sys.modules.pop(module, None)


def test_entry_point_metric_is_listed_then_loaded_on_demand(plugin_path: Path) -> None:
    _install_plugin(plugin_path, "halfdist", {"half_metric": "halfdist_plugin:HalfMetric"}, PLUGIN)
    assert "half_metric" in metric_names()
    assert "halfdist_plugin" not in sys.modules  # listing does not import the plugin
    metric = get_metric("half_metric", threshold=0.6)
    assert (
        metric.evaluate(Sample(tool_calls=[ToolCall.of("f")], expected_tool_calls=[])).value == 0.5
    )
    assert metric.threshold == 0.6


def test_broken_entry_point_gives_an_error_naming_it(plugin_path: Path) -> None:
    _install_plugin(
        plugin_path,
        "brokendist",
        {"broken_metric": "brokendist_missing_module:Metric"},
        "",
    )
    with pytest.raises(MetricConfigError) as info:
        get_metric("broken_metric")
    message = str(info.value)
    assert "entry point 'broken_metric' = 'brokendist_missing_module:Metric'" in message
    assert "distribution brokendist" in message
    assert "ModuleNotFoundError" in message
    # The built-ins are unaffected by a broken plugin.
    assert isinstance(get_metric("tool_call_f1"), ToolCallF1)


def test_entry_point_to_a_non_callable_is_reported(plugin_path: Path) -> None:
    _install_plugin(
        plugin_path,
        "constdist",
        {"not_callable_metric": "constdist_plugin:VALUE"},
        "VALUE = 42\n",
    )
    with pytest.raises(MetricConfigError, match="not a metric class or factory"):
        get_metric("not_callable_metric")
