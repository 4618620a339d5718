"""Cassette modes and file names: no imports beyond the standard library (the pytest plugin
reads them at startup, when it must stay inert)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal, get_args

__all__ = ["DEFAULT_DIR", "MODES", "Mode", "cassette_path", "slug"]

Mode = Literal["record", "missing", "replay"]
MODES: tuple[Mode, ...] = get_args(Mode)

DEFAULT_DIR = Path("cassettes")
"""Where cassettes go when neither the flag nor the suite's ``cassettes:`` names a folder."""

_UNSAFE = re.compile(r"[^a-z0-9]+")


def slug(text: str) -> str:
    """A file-name-safe name: ``Weather in Berlin`` -> ``weather-in-berlin``."""
    return _UNSAFE.sub("-", text.lower()).strip("-") or "unnamed"


def cassette_path(root: Path, suite: str, name: str) -> Path:
    """``<root>/<suite>/<scenario>.yaml``."""
    return root / slug(suite) / f"{slug(name)}.yaml"
