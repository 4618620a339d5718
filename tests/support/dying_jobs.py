"""Jobs whose Dask worker process dies for real (``os._exit``, as the out-of-memory killer ends
one), for tests/harness/parallel/test_dask_executor.py.

Apart from that test module, so that a worker unpickling them imports this small module, not
the test module and everything it imports.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def times_ten(shard: int, channel: Any) -> int:
    """A job that kills its worker process on shard 3, every time (a poison shard)."""
    if shard == 3:
        os._exit(1)
    return shard * 10


@dataclass(frozen=True)
class DiesOnce:
    """A job whose worker dies the first time shard 3 runs (a marker file remembers it)."""

    marker: str

    def __call__(self, shard: int, channel: Any) -> int:
        """``shard * 10``, after dying once on shard 3."""
        if shard == 3 and not os.path.exists(self.marker):
            Path(self.marker).touch()
            os._exit(1)
        return shard * 10


@dataclass(frozen=True)
class DiesOnSlice:
    """A job as ``job``, but its worker process dies on the slice from ``line``, however often
    it is tried."""

    job: Any
    line: int

    def __call__(self, part: Any, channel: Any) -> Any:
        """``job``'s result, or the end of this process."""
        if part.first_line == self.line:
            os._exit(1)
        return self.job(part, channel)


def sleeps(shard: int, channel: Any) -> int:
    """A job that takes ``shard`` seconds (a worker can be taken away from it meanwhile)."""
    import time

    time.sleep(shard)
    return shard
