"""A faster ``__init__`` for the frozen, slotted dataclasses built once per result.

A frozen dataclass's generated ``__init__`` stores each field with ``object.__setattr__``,
which looks the attribute up on the type every time; ``harness eval-traces`` builds a dozen
such objects per trace (the report views, the results), so that lookup is a measurable share of
a stream's cost. :func:`quick_init` replaces the generated ``__init__`` with one that stores
each field through its slot's own descriptor, found once, when the class is decorated. The
signature (order, defaults, keyword-only fields), the immutability and everything else
``dataclass`` generated stay as they are; tests/harness/test_frozen.py compares the two.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

__all__ = ["quick_init"]

T = TypeVar("T", bound=type)

_MISSING = dataclasses.MISSING


def quick_init(cls: T) -> T:
    """Give the frozen slotted dataclass ``cls`` an ``__init__`` that sets slots directly.

    Refuses a class this cannot serve unchanged: not a frozen slotted dataclass, a
    ``__post_init__``, an ``InitVar`` or a field left out of ``__init__``.
    """
    params = cls.__dict__.get("__dataclass_params__")
    if params is None or not params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"quick_init needs a frozen slotted dataclass, got {cls.__name__}")
    if hasattr(cls, "__post_init__") or "__dataclass_init_vars__" in cls.__dict__:
        raise TypeError(f"quick_init: {cls.__name__} has a __post_init__ or an InitVar")
    fields = dataclasses.fields(cls)
    if any(not f.init for f in fields):
        raise TypeError(f"quick_init: {cls.__name__} has a field left out of __init__")
    namespace: dict[str, Any] = {"_new_missing": _MISSING}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    for number, f in enumerate(fields):
        namespace[f"_set{number}"] = getattr(cls, f.name).__set__  # the slot's descriptor
        parameter = f.name
        if f.default is not _MISSING:
            namespace[f"_default{number}"] = f.default
            parameter += f"=_default{number}"
        elif f.default_factory is not _MISSING:
            namespace[f"_factory{number}"] = f.default_factory
            parameter += "=_new_missing"
            body.append(f"    if {f.name} is _new_missing: {f.name} = _factory{number}()")
        (keyword if f.kw_only else positional).append(parameter)
        body.append(f"    _set{number}(self, {f.name})")
    signature = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    source = f"def __init__({signature}) -> None:\n" + "\n".join(body or ["    pass"]) + "\n"
    exec(source, namespace)  # built from the class's own field names only
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    setattr(cls, "__init__", init)  # noqa: B010  # mypy refuses assigning to a method
    return cls
