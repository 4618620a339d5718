"""quick_init (harness/frozen.py) builds what the dataclass's own __init__ builds."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from typing import Any

import pytest

import harness.report.view.model as views
import harness.result as results
from harness.frozen import quick_init


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

    @dataclass(frozen=True, slots=True)
    class Checked:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclass(frozen=True, slots=True)
    class Derived:
        a: int
        b: int = field(init=False, default=0)

    for cls in (Mutable, Checked, Derived):
        with pytest.raises(TypeError, match="quick_init"):
            quick_init(cls)


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
    for module in (views, results)
    for cls in vars(module).values()
    if isinstance(cls, type) and cls.__module__ == module.__name__ and _quick(cls)
]


def test_the_hot_path_classes_use_it_with_their_own_signature() -> None:
    names = {cls.__name__ for cls in QUICK}
    assert {"ScenarioView", "RunView", "CallView", "ScenarioResult", "RunResult"} <= names
    for cls in QUICK:
        parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
        got = [(p.name, p.kind, p.default) for p in parameters]
        expected = _expected_signature(cls)
        # a default_factory shows as the sentinel in the quick signature
        for (name, kind, default), (e_name, e_kind, e_default) in zip(got, expected, strict=True):
            assert (name, kind) == (e_name, e_kind), cls
            if e_default is not inspect.Parameter.empty:
                assert default == e_default, (cls, name)
