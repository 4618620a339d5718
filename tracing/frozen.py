"""Left only for ``harness/evaluate_traces.py``, which is being rewritten on another branch.

``quick_init`` replaced a frozen dataclass's ``__init__`` with generated source; that trick is
gone (issue 31: no trick without a measurement), and this decorator now returns the class as it
is. Delete this module with its last use.
"""

from __future__ import annotations

from typing import TypeVar

__all__ = ["quick_init"]

T = TypeVar("T", bound=type)


def quick_init(cls: T) -> T:
    """Return ``cls`` unchanged (the dataclass's own ``__init__`` stays)."""
    return cls
