"""Writing report files so that a reader never sees a half-written one."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

_ATTEMPTS = 100


@contextmanager
def atomic_output(path: Path) -> Iterator[BinaryIO]:
    """Yield a binary file that replaces ``path`` in one step when the block ends without error.

    The temporary file sits next to ``path`` (same file system, so the rename is atomic) and is
    removed if the block raises, Ctrl-C included. It is created with mode ``0666`` less the
    umask, as ``open()`` would create ``path`` (and as pytest writes its JUnit file), not the
    ``0600`` of :func:`tempfile.mkstemp`: a report is for others to read.
    """
    fd, tmp = _create_next_to(path)
    try:
        with os.fdopen(fd, "wb") as out:
            yield out
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _create_next_to(path: Path) -> tuple[int, str]:
    """A new, exclusively created file in ``path``'s folder; its descriptor and name."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(_ATTEMPTS):
        tmp = os.path.join(path.parent, f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp  # the kernel applies the umask
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name next to {path}")
