"""The error tree: every error the harness raises on purpose is a HarnessError with context."""

from __future__ import annotations

import importlib
import inspect
import pickle
import pkgutil

import pytest

import harness
from harness import errors
from harness.errors import (
    ExportConfigError,
    HarnessError,
    MetricConfigError,
    ModelConfigError,
    SampleError,
    ScriptError,
    UnknownScenarioError,
)

# Documented in harness/errors.py as outside the tree on purpose.
OUTSIDE = {"harness.pytest_plugin.ScenarioFailure", "harness.report.view.details._Fallback"}


def _harness_exception_classes() -> dict[str, type[Exception]]:
    """Every Exception class defined in a harness module (warnings aside), by qualified name.

    BaseException-only signals (``harness.run.isolation.LoopBlocked``) are control flow that an
    agent's ``except Exception`` must not swallow, so they cannot be HarnessErrors.
    """
    found: dict[str, type[Exception]] = {}
    for info in pkgutil.walk_packages(harness.__path__, "harness."):
        module = importlib.import_module(info.name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(obj, Exception)
                and not issubclass(obj, Warning)
                and obj.__module__.startswith("harness.")
            ):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return found


def test_every_harness_error_class_is_a_harness_error_defined_in_errors() -> None:
    classes = _harness_exception_classes()
    assert len(classes) >= 9, sorted(classes)  # the walk really found the tree
    strays = {name for name, cls in classes.items() if not issubclass(cls, HarnessError)}
    assert strays == OUTSIDE
    elsewhere = sorted(
        name
        for name, cls in classes.items()
        if name not in OUTSIDE and cls.__module__ != "harness.errors"
    )
    # One tree, in one module: the raising module imports (and re-exports) its class.
    assert elsewhere == [], f"define these in harness/errors.py and import them: {elsewhere}"


# A failed provider call or a worker process that died is no fault of the input: no ValueError.
NOT_VALUE_ERRORS = {"HarnessError", "ProviderError", "WorkerLost", "ExecutorError"}


def test_the_docstring_draws_every_error_and_input_errors_are_value_errors() -> None:
    doc = errors.__doc__ or ""
    for name in errors.__all__:
        cls = getattr(errors, name)
        assert issubclass(cls, HarnessError)
        assert issubclass(cls, ValueError) == (name not in NOT_VALUE_ERRORS), name
        if cls is not HarnessError:
            assert f"── {name} " in doc, name


def test_defining_modules_re_export_the_same_classes() -> None:
    from harness.models import ModelConfigError as from_models
    from harness.models.scripted import ScriptError as from_scripted
    from harness.span_export import ExportConfigError as from_export
    from harness.traces.evaluate import UnknownScenarioError as from_traces

    assert from_export is ExportConfigError
    assert from_traces is UnknownScenarioError
    assert from_models is ModelConfigError
    assert from_scripted is ScriptError


def test_metric_config_error_carries_metric_option_and_value() -> None:
    from harness.metrics import ToolCallSequenceAccuracy

    with pytest.raises(MetricConfigError) as info:
        ToolCallSequenceAccuracy(order="loose")
    assert (info.value.metric, info.value.option, info.value.value) == (
        "tool_call_sequence_accuracy",
        "order",
        "loose",
    )


def test_export_config_error_carries_the_setting_and_its_source() -> None:
    from harness.span_export import resolve_target

    with pytest.raises(ExportConfigError) as info:
        resolve_target(None, None, {"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"})
    assert (info.value.source, info.value.value) == (
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "localhost:4318",
    )
    assert isinstance(info.value, HarnessError)


def test_script_error_is_a_harness_error_and_says_where() -> None:
    from harness.models.scripted import ScriptedChatModel

    with pytest.raises(HarnessError) as info:
        ScriptedChatModel([{"tool_calls": [{"args": {}}]}])
    assert isinstance(info.value, ScriptError)
    assert info.value.where is not None
    assert str(info.value).startswith(info.value.where)


def test_sample_error_names_the_metric() -> None:
    from harness import Sample
    from harness.metrics import ToolCallAccuracy

    with pytest.raises(SampleError) as info:
        ToolCallAccuracy().evaluate(Sample(tool_calls=[], expected_tool_calls=[]))
    assert info.value.metric == "tool_call_accuracy"


def test_context_survives_pickling() -> None:
    # Errors cross process boundaries (pytest-xdist workers); the attributes must come along.
    error = MetricConfigError("bad", metric="m", option="threshold", value=2)
    copy = pickle.loads(pickle.dumps(error))
    assert (str(copy), copy.metric, copy.option, copy.value) == ("bad", "m", "threshold", 2)
