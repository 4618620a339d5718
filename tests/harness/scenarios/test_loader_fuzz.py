"""A fuzz of the loader: any mutation of a shipped suite loads, or is a located ConfigError.

Mutations of the files in scenarios/: byte flips, inserted control characters, deleted spans,
duplicated or dropped lines, indentation moved. Never another exception, never a slow load
(hypothesis's per-example deadline). ``HARNESS_FUZZ_EXAMPLES=4000`` runs the big fuzz by hand.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.scenarios import ConfigError, load_paths
from tests.support.paths import ROOT

SHIPPED = sorted((ROOT / "scenarios").glob("*.yaml"))
CONTROL = ["\x00", "\x07", "\x08", "\x1b", "\x7f", "\ufeff", "\uffff", "\r", "\t", "\x85"]
EXAMPLES = int(os.environ.get("HARNESS_FUZZ_EXAMPLES", "120"))

Mutation = Callable[[bytes], bytes]


@st.composite
def flip(draw: st.DrawFn) -> Mutation:
    where, byte = draw(st.floats(0, 1)), draw(st.integers(0, 255))

    def apply(data: bytes) -> bytes:
        at = int(where * (len(data) - 1))
        return data[:at] + bytes([byte]) + data[at + 1 :]

    return apply


@st.composite
def insert_control(draw: st.DrawFn) -> Mutation:
    where, char = draw(st.floats(0, 1)), draw(st.sampled_from(CONTROL))

    def apply(data: bytes) -> bytes:
        at = int(where * len(data))
        return data[:at] + char.encode("utf-8") + data[at:]

    return apply


@st.composite
def delete_span(draw: st.DrawFn) -> Mutation:
    where, length = draw(st.floats(0, 1)), draw(st.integers(1, 40))

    def apply(data: bytes) -> bytes:
        at = int(where * len(data))
        return data[:at] + data[at + length :]

    return apply


@st.composite
def line_edit(draw: st.DrawFn) -> Mutation:
    where = draw(st.floats(0, 1))
    kind = draw(st.sampled_from(["duplicate", "drop", "indent", "dedent"]))
    width = draw(st.integers(1, 6))

    def apply(data: bytes) -> bytes:
        lines = data.splitlines(keepends=True)
        if not lines:
            return data
        at = int(where * (len(lines) - 1))
        line = lines[at]
        if kind == "duplicate":
            lines.insert(at, line)
        elif kind == "drop":
            del lines[at]
        elif kind == "indent":
            lines[at] = b" " * width + line
        else:
            lines[at] = line[min(width, len(line) - len(line.lstrip(b" "))) :]
        return b"".join(lines)

    return apply


MUTATIONS = st.one_of(flip(), insert_control(), delete_span(), line_edit())


@st.composite
def mutants(draw: st.DrawFn) -> tuple[Path, bytes]:
    """A shipped suite with one to four mutations applied."""
    source = draw(st.sampled_from(SHIPPED))
    data = source.read_bytes()
    for mutation in draw(st.lists(MUTATIONS, min_size=1, max_size=4)):
        data = mutation(data)
    return source, data


def outcome(source: Path, data: bytes, folder: Path) -> str:
    """Load the mutant; 'loaded' or 'config error', after checking every issue is located."""
    path = folder / source.name
    path.write_bytes(data)
    try:
        load_paths([path])
    except ConfigError as exc:
        for issue in exc.issues:
            assert issue.line is not None and issue.line >= 1, str(issue)
            assert re.match(rf".*{re.escape(source.name)}:\d+: ", str(issue)), str(issue)
        return "config error"
    return "loaded"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # a suite's agent is a module path (harness.demo...), so the mutant may sit anywhere
    for source in SHIPPED:  # the first load imports the agents: not part of any deadline
        with contextlib.suppress(ConfigError):
            load_paths([source])
    return tmp_path_factory.mktemp("fuzz")


def test_shipped_suites_are_there() -> None:
    assert len(SHIPPED) >= 3


@settings(
    max_examples=EXAMPLES,
    deadline=timedelta(seconds=5),  # a load takes milliseconds; 5 s leaves room for busy CI
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=EXAMPLES <= 200,  # the committed run is the same every time; the big one is not
)
@given(mutants())
def test_a_mutated_suite_loads_or_is_a_located_config_error(
    folder: Path, mutant: tuple[Path, bytes]
) -> None:
    source, data = mutant
    assert outcome(source, data, folder) in ("loaded", "config error")
