"""Everything under tests/e2e/ is end to end: subprocesses, the CLI, the wheel, the browser."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.installed import QuickStart, shared_quick_start

_HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def quick_start(tmp_path_factory: pytest.TempPathFactory) -> QuickStart:
    """The README's quick start, run once per session from the built wheel (tests.e2e.installed).

    Under pytest-xdist every worker's temporary folder sits in the session's one folder, where
    the first worker builds and the others wait for it (pytest-xdist's documented recipe).
    """
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    return shared_quick_start(shared)
