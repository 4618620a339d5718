"""quick_init (tracing/frozen.py) builds what the dataclass's own __init__ builds."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness.evaluate_traces as evaluate_traces
import harness.report.view.model as views
import harness.result as results
import tracing.otlp_reader as otlp_reader
import tracing.records as records
import tracing.span_view as span_view
from tracing.frozen import quick_init


def _twins() -> tuple[type, type]:
    """The same frozen slotted dataclass twice: as generated, and with quick_init."""

    def make() -> type:
        @dataclass(frozen=True, slots=True)
        class Sample:
            a: int
            b: str = "b"
            c: list[int] = field(default_factory=list)
            d: tuple[int, ...] = ()
            e: Any = field(default=None, kw_only=True)

        return Sample

    return make(), quick_init(make())


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((1,), {}), ((1, "x"), {}), ((1, "x", [2], (3,)), {"e": 4}), ((), {"a": 5, "c": [6]})],
)
def test_the_same_object_from_the_same_arguments(args: tuple[Any, ...], kwargs: dict) -> None:
    plain, quick = _twins()
    one, two = plain(*args, **kwargs), quick(*args, **kwargs)
    assert dataclasses.astuple(one) == dataclasses.astuple(two)
    assert repr(one).split("(", 1)[1] == repr(two).split("(", 1)[1]


def test_each_default_factory_call_gives_a_new_value() -> None:
    _, quick = _twins()
    first, second = quick(1), quick(1)
    assert first.c == [] and first.c is not second.c


def test_the_object_stays_frozen_and_the_call_checked() -> None:
    plain, quick = _twins()
    made = quick(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.a = 2  # type: ignore[misc]
    for cls in (plain, quick):
        with pytest.raises(TypeError):
            cls()  # a is required
        with pytest.raises(TypeError):
            cls(1, "x", [], (), None)  # e is keyword-only
        with pytest.raises(TypeError):
            cls(1, f=2)


def test_classes_it_cannot_serve_are_refused() -> None:
    @dataclass(slots=True)
    class Mutable:
        a: int

    @dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclass(frozen=True, slots=True)
    class WithInitVar:
        a: int
        b: dataclasses.InitVar[int]

        def __post_init__(self, b: int) -> None:
            pass

    @dataclass(frozen=True, slots=True)
    class NotInInit:
        a: int
        b: int = field(init=False, default=0)

    @dataclass(frozen=True, slots=True)
    class Private:
        _a: int

    for cls in (Mutable, NoSlots, WithInitVar, NotInInit, Private, dict):
        with pytest.raises(TypeError, match="quick_init"):
            quick_init(cls)


def test_post_init_runs_after_the_fields_are_set() -> None:
    seen: list[tuple[int, str]] = []

    def make() -> type:
        @dataclass(frozen=True, slots=True)
        class Checked:
            a: int
            b: str = "b"

            def __post_init__(self) -> None:
                if self.a < 0:
                    raise ValueError(f"a must be positive, got {self.a}")
                seen.append((self.a, self.b))

        return Checked

    plain, quick = make(), quick_init(make())
    assert dataclasses.astuple(quick(1, "x")) == dataclasses.astuple(plain(1, "x"))
    assert seen == [(1, "x"), (1, "x")]
    for cls in (plain, quick):
        with pytest.raises(ValueError, match="a must be positive, got -1"):
            cls(-1)


def _expected_signature(cls: type) -> list[tuple[str, Any, Any]]:
    keyword, plain = inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD
    out = []
    for f in dataclasses.fields(cls):
        default = f.default if f.default is not dataclasses.MISSING else inspect.Parameter.empty
        out.append((f.name, keyword if f.kw_only else plain, default))
    return out


def _quick(cls: Any) -> bool:
    code = getattr(cls.__init__, "__code__", None)
    return dataclasses.is_dataclass(cls) and code is not None and "_set0" in code.co_names


QUICK = [
    cls
    for module in (views, results, records, span_view, otlp_reader, evaluate_traces)
    for cls in vars(module).values()
    if isinstance(cls, type) and cls.__module__ == module.__name__ and _quick(cls)
]


def test_the_hot_path_classes_use_it_with_their_own_signature() -> None:
    names = {cls.__name__ for cls in QUICK}
    assert {"ScenarioView", "RunView", "CallView", "ScenarioResult", "RunResult"} <= names
    assert {"ToolCall", "Attempt", "SpanView", "OtlpTrace", "RecordedTrace"} <= names
    for cls in QUICK:
        parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
        got = [(p.name, p.kind, p.default) for p in parameters]
        expected = _expected_signature(cls)
        # a default_factory shows as the sentinel in the quick signature
        for (name, kind, default), (e_name, e_kind, e_default) in zip(got, expected, strict=True):
            assert (name, kind) == (e_name, e_kind), cls
            if e_default is not inspect.Parameter.empty:
                assert default == e_default, (cls, name)


_ANY = st.none() | st.booleans() | st.integers() | st.text(max_size=8) | st.just({})


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_every_quick_class_builds_what_its_generated_init_builds(data: st.DataObject) -> None:
    """Any field values: the same fields set, or the same error (ToolCall checks its own)."""
    for cls in QUICK:
        values = [data.draw(_ANY) for _ in dataclasses.fields(cls)]
        made = object.__new__(cls)
        try:
            cls.__init__.__wrapped__(made, *values)
        except Exception as exc:
            with pytest.raises(type(exc)) as got:
                cls(*values)
            assert str(got.value) == str(exc)
            continue
        quick = cls(*values)
        for f in dataclasses.fields(cls):
            assert getattr(quick, f.name) is getattr(made, f.name), (cls, f.name)
