"""pytest plugin entry point (registered through ``pytest11``); inert unless its options are used."""

from __future__ import annotations
