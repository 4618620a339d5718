"""Writing report files so that a reader never sees a half-written one."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO


@contextmanager
def atomic_output(path: Path) -> Iterator[BinaryIO]:
    """Yield a binary file that replaces ``path`` in one step when the block ends without error.

    The temporary file sits next to ``path`` (same file system, so the rename is atomic) and is
    removed if the block raises, Ctrl-C included.
    """
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            yield out
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
