"""A faster ``__init__`` for the frozen, slotted dataclasses built once per result.

A frozen dataclass's generated ``__init__`` stores each field with ``object.__setattr__``,
which looks the attribute up on the type every time (about 0.1 µs a field); ``harness
eval-traces`` builds a few dozen such objects per trace (the reader's spans and calls, the
results, the report views), so that lookup was a fifth of reading a trace. :func:`quick_init`
replaces the generated ``__init__`` with one that stores each field through its slot's own
descriptor, found once, when the class is decorated, then runs ``__post_init__`` as the
generated one does. The signature (order, defaults, keyword-only fields), the immutability and
everything else ``dataclass`` generated stay as they are; tests/tracing/test_frozen.py compares
the two.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, TypeVar

__all__ = ["quick_init"]

T = TypeVar("T", bound=type)

_MISSING = dataclasses.MISSING


def quick_init(cls: T) -> T:
    """Give the frozen slotted dataclass ``cls`` an ``__init__`` that sets slots directly.

    Refuses a class this cannot serve unchanged: not a frozen slotted dataclass, an ``InitVar``
    or a field left out of ``__init__``.
    """
    params = cls.__dict__.get("__dataclass_params__")
    if params is None or not params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"quick_init needs a frozen slotted dataclass, got {cls.__name__}")
    fields = dataclasses.fields(cls)
    # the generated __init__ takes exactly the fields: no InitVar, no init=False field
    taken = list(inspect.signature(cls).parameters)
    if taken != [f.name for f in fields] or any(not f.init for f in fields):
        raise TypeError(f"quick_init: {cls.__name__}.__init__ takes more or less than its fields")
    if any(f.name == "self" or f.name.startswith("_") for f in fields):
        raise TypeError(f"quick_init: {cls.__name__} has a field named like the init's own names")
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
    post_init = getattr(cls, "__post_init__", None)
    if post_init is not None:
        namespace["_post_init"] = post_init
        body.append("    _post_init(self)")
    signature = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    source = f"def __init__({signature}) -> None:\n" + "\n".join(body or ["    pass"]) + "\n"
    exec(source, namespace)  # built from the class's own field names only
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__wrapped__ = vars(cls)["__init__"]  # the generated one, which tests compare it with
    setattr(cls, "__init__", init)  # noqa: B010  # mypy refuses assigning to a method
    return cls
