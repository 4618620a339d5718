"""The README's Python examples run as written and print what the README says they print."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"

# A tested example is a ```python block right after `<!-- readme-test: NAME -->`; when the text
# after it says "prints" and shows a plain ``` block, that block is the exact expected output.
_EXAMPLE = re.compile(
    r"<!-- readme-test: (?P<name>[\w-]+) -->\s*```python\n(?P<code>.*?)```"
    r"(?:\s*prints\s*```\n(?P<out>.*?)```)?",
    re.S,
)


def _examples() -> list[tuple[str, str, str | None]]:
    text = README.read_text(encoding="utf-8")
    return [(m["name"], m["code"], m["out"]) for m in _EXAMPLE.finditer(text)]


def test_readme_has_tested_examples() -> None:
    assert {name for name, _, _ in _examples()} >= {"sample"}


@pytest.mark.parametrize(("name", "code", "expected"), _examples(), ids=lambda v: str(v)[:20])
def test_readme_example_runs_as_written(
    name: str, code: str, expected: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(compile(code, f"README.md:{name}", "exec"), {"__name__": f"readme_{name}"})
    if expected is not None:
        assert buffer.getvalue() == expected
