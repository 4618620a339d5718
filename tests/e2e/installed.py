"""The README's quick start, run as a new user runs it: built wheel, fresh virtualenv, a shell.

The wheel is built from the files the sdist ships; a fresh virtualenv is made outside the
repository and the README's "Install and start" console block runs in it line by line, in
``bash -e``, with only that virtualenv's scripts and the system's (``/usr/bin:/bin``) on the
PATH: its ``pip install`` line installs toolcall-harness from the built wheel (``--find-links``)
and the dependencies from the package index. pytest-xdist's workers share one build: the first
to take the lock builds, the others wait for it and read what it left.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

from tests.support.paths import ROOT

README = ROOT / "README.md"

# What the sdist ships (MANIFEST.in): the wheel is built from exactly these.
SDIST_FILES = ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in")
SDIST_PACKAGES = ("harness", "tracing")

SYSTEM_PATH = ("/usr/bin", "/bin")
"""The PATH besides the virtualenv's scripts: no other Python, pip, harness or pytest."""

_SHELL = re.compile(r"<!-- readme-test: shell -->\s*```console\n(?P<code>.*?)```", re.S)


def shell_block() -> str:
    """The README's "Install and start" console block, as written."""
    match = _SHELL.search(README.read_text(encoding="utf-8"))
    assert match is not None, "README.md has no <!-- readme-test: shell --> console block"
    return match["code"]


def bin_dir(venv: Path) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin")


def user_env(venv: Path, find_links: Path | None = None) -> dict[str, str]:
    """An activated virtualenv's environment: nothing pointing at the repository or its venv."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("PYTEST_")
        and key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "COLUMNS", "PATH")
    }
    env["PYTHONIOENCODING"] = "utf-8"
    env["COLUMNS"] = "100"  # the README's width
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = os.pathsep.join((str(bin_dir(venv)), *SYSTEM_PATH))
    if find_links is not None:  # toolcall-harness from the built wheel, the rest from the index
        env["PIP_FIND_LINKS"] = " ".join((str(find_links), *env.get("PIP_FIND_LINKS", "").split()))
    return env


def run(
    args: list[str], cwd: Path, env: dict[str, str], timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        check=False,
    )


def checked(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    """``result`` if it exited 0; else fail with the end of what it printed."""
    if result.returncode != 0:
        tail = "\n".join([*result.stdout.splitlines()[-40:], *result.stderr.splitlines()[-40:]])
        raise AssertionError(f"{result.args!r} exited {result.returncode}:\n{tail}")
    return result


def source_key() -> str:
    """A hash of every file the wheel is built from: one build per source, per session."""
    digest = hashlib.sha256()
    files = [ROOT / name for name in SDIST_FILES]
    for package in SDIST_PACKAGES:
        files += sorted(p for p in (ROOT / package).rglob("*") if "__pycache__" not in p.parts)
    for path in files:
        if path.is_file():
            digest.update(str(path.relative_to(ROOT)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class QuickStart:
    """What running the quick start left: its virtualenv, its folder and what it printed."""

    venv: Path
    folder: Path
    stdout: str

    @property
    def python(self) -> str:
        return str(bin_dir(self.venv) / "python")

    def env(self) -> dict[str, str]:
        return user_env(self.venv)


def build_quick_start(work: Path) -> QuickStart:
    """Build the wheel under ``work``, make a fresh virtualenv and run the README block in it."""
    shutil.rmtree(work, ignore_errors=True)  # what an interrupted build left
    source = work / "source"  # a copy, so building never writes into the working tree
    for package in SDIST_PACKAGES:
        shutil.copytree(
            ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    for name in SDIST_FILES:
        shutil.copy2(ROOT / name, source / name)
    dist = work / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    build_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    checked(
        run([*pip, "wheel", "--quiet", "--no-deps", "-w", str(dist), str(source)], work, build_env)
    )
    (wheel,) = dist.glob("*.whl")
    venv = work / "venv"
    checked(run([sys.executable, "-m", "venv", str(venv)], work, build_env))
    folder = work / "start"  # an empty folder outside the repository
    folder.mkdir()
    bash = shutil.which("bash", path=os.pathsep.join(SYSTEM_PATH))
    assert bash is not None, "the quick start needs bash in /usr/bin or /bin"
    result = run([bash, "-e", "-c", shell_block()], folder, user_env(venv, dist), timeout=900)
    checked(result)
    started = QuickStart(venv, folder, result.stdout)
    _check_installed_from(wheel, started)
    return started


def _check_installed_from(wheel: Path, started: QuickStart) -> None:
    """The venv's harness is the built wheel's, not a release of the same name from the index."""
    code = "import harness, pathlib; print(pathlib.Path(harness.__file__).parent.parent)"
    found = checked(run([started.python, "-c", code], started.folder, started.env()))
    site = Path(found.stdout.strip())
    assert site.is_relative_to(started.venv), found.stdout
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.endswith(".py"):
                assert (site / name).read_bytes() == archive.read(name), name


def shared_quick_start(shared: Path) -> QuickStart:
    """The session's quick start: built by the first worker to get here, read by the others.

    ``shared`` is a folder every xdist worker of the session sees. A failed build is recorded
    too, so the other workers report its error instead of building again.
    """
    from filelock import FileLock

    key = source_key()
    work = shared / f"quickstart-{key}"
    outcome = shared / f"quickstart-{key}.json"
    with FileLock(str(shared / f"quickstart-{key}.lock")):
        if not outcome.exists():
            try:
                started = build_quick_start(work)
            except Exception as exc:
                outcome.write_text(json.dumps({"error": str(exc)}), encoding="utf-8")
                raise
            recorded = {"venv": str(started.venv), "folder": str(started.folder)}
            recorded["stdout"] = started.stdout
            outcome.write_text(json.dumps(recorded), encoding="utf-8")
    data = json.loads(outcome.read_text(encoding="utf-8"))
    if "error" in data:
        raise AssertionError(f"the quick start failed in another worker:\n{data['error']}")
    return QuickStart(Path(data["venv"]), Path(data["folder"]), data["stdout"])
