"""The pytest plugin's ``--harness-baseline BASE.json``: scenario items compared as the session
ends, as ``harness run --baseline`` compares a run.

The flags are declared by :mod:`harness.pytest_plugin` (pytest alone); :func:`configure`
registers a :class:`BaselinePlugin` when one is given (a report that cannot be read is a usage
error before any test runs); :func:`record_result` hands it each scenario item's result.
At the end the plugin prints the "Compared with baseline" block in the terminal summary and,
when ``--harness-fail-on`` counts what it found, turns a passing session's exit status into 1.
"""

from __future__ import annotations

import io
from collections.abc import Generator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pytest

from harness.compare.baseline import RunBaseline
from harness.compare.comparison import FailOn

if TYPE_CHECKING:
    from harness.run.results import ScenarioResult, Status

__all__ = ["BASELINE_FLAG", "BaselinePlugin", "configure", "record_result"]

BASELINE_FLAG = "--harness-baseline"
_PLUGIN = "harness-baseline"


def configure(config: pytest.Config) -> None:
    """Register the comparison when ``--harness-baseline`` is given; a usage error (naming
    the file and why) when its report cannot be read or the options are out of range."""
    path = config.getoption(BASELINE_FLAG, default=None)
    if not path or config.pluginmanager.has_plugin(_PLUGIN):
        return
    if getattr(config, "workerinput", None) is not None:
        return  # an xdist worker: the controller compares
    from harness.compare.load import load_report
    from harness.errors import ReportError

    if getattr(config.option, "numprocesses", None):
        raise pytest.UsageError(
            f"{BASELINE_FLAG} compares results held in this process: run without -n"
        )
    alpha = config.getoption("--harness-alpha")
    k = config.getoption("--harness-k")
    if not 0 < alpha < 1:
        raise pytest.UsageError(f"--harness-alpha: expected a level between 0 and 1, got {alpha}")
    if k is not None and k < 1:
        raise pytest.UsageError(f"--harness-k: expected a number >= 1, got {k}")
    try:
        report = load_report(path)
    except ReportError as exc:
        raise pytest.UsageError(f"{BASELINE_FLAG}: {exc}") from None
    fail_on = config.getoption("--harness-fail-on")
    plugin = BaselinePlugin(RunBaseline(report, alpha=alpha, k=k), fail_on)
    config.pluginmanager.register(plugin, _PLUGIN)


def record_result(config: pytest.Config, result: ScenarioResult, xfail: str | None) -> None:
    """Hand a scenario item's result to the comparison, if there is one; ``xfail``: the
    scenario's own mark (the item ran without it, pytest's mark judged it)."""
    plugin = config.pluginmanager.get_plugin(_PLUGIN)
    if not isinstance(plugin, BaselinePlugin):
        return
    if xfail is not None and result.status in ("passed", "failed"):
        status: Status = "xpassed" if result.status == "passed" else "xfailed"
        result = replace(result, status=status, xfail=xfail)
    plugin.baseline.add_result(result)


class BaselinePlugin:
    """Holds the baseline and the results; compares, prints and sets the exit status."""

    def __init__(self, baseline: RunBaseline, fail_on: FailOn) -> None:
        """Compare with ``baseline``; ``fail_on`` as ``--harness-fail-on``."""
        self.baseline = baseline
        self.fail_on = fail_on

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """Compare; a passing session fails when ``--harness-fail-on`` counts what changed."""
        comparison = self.baseline.compare()
        if comparison is None:
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
            return
        if exitstatus == pytest.ExitCode.OK and comparison.fails(self.fail_on):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> Generator[None, None, None]:
        """The "Compared with baseline" block (or why there is none) after pytest's short
        summary (the outermost wrapper: the terminal reporter prints that after its yield)."""
        yield
        if self.baseline.error is not None:
            terminalreporter.write_line(str(self.baseline.error), red=True, bold=True)
            return
        comparison = self.baseline.comparison
        if comparison is None:
            return
        from rich.console import Console

        from harness.compare.console import console_block

        buffer = io.StringIO()
        console = Console(
            file=buffer,
            width=terminalreporter._tw.fullwidth,
            force_terminal=terminalreporter.hasmarkup,
            no_color=not terminalreporter.hasmarkup,
            highlight=False,
        )
        console.print(console_block(comparison))
        terminalreporter.write(buffer.getvalue())
