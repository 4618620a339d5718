"""The pytest plugin's ``--harness-baseline``: scenario items of the demo travel suite compared
with ``harness run``'s JSON report of main, in a real pytest process (pytester)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.harness.compare.conftest import TravelPair
from tests.support.paths import SCENARIOS

pytest_plugins = ["pytester"]

INI = "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"


def _session(pytester: pytest.Pytester, suite: Path, *args: str) -> pytest.RunResult:
    pytester.makeini(INI)
    shutil.copy(suite, pytester.path / "travel.yaml")
    return pytester.runpytest_subprocess(
        "--harness-scenarios", "-p", "no:randomly", "-p", "no:cacheprovider", *args
    )


def test_the_changed_suite_is_compared_as_the_session_ends(
    pytester: pytest.Pytester, travel_pair: TravelPair
) -> None:
    result = _session(pytester, travel_pair.head_suite, "--harness-baseline", str(travel_pair.base))
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert out.index("short test summary info") < out.index("Compared with baseline")
    assert "REGRESSED" in out and "/city: 'Berlin' → 'Paris'" in out
    # the items' verdicts, xfail marks included, classify as harness run's do
    assert "2 regressions, 1 fix, 2 still failing, 1 changed, 1 added, 1 removed" in out


def test_fail_on_turns_a_passing_session_into_a_failure(
    pytester: pytest.Pytester, travel_pair: TravelPair
) -> None:
    """The shipped suite passes (its failures are xfail); against main three verdicts changed
    (failed → xfailed) and nothing regressed."""
    suite = SCENARIOS / "travel.yaml"
    base = str(travel_pair.base)
    passing = _session(pytester, suite, "--harness-baseline", base)
    assert passing.ret == pytest.ExitCode.OK
    assert "0 regressions, 0 fixes, 3 changed" in passing.stdout.str()
    strict = _session(pytester, suite, "--harness-baseline", base, "--harness-fail-on", "any")
    assert strict.ret == pytest.ExitCode.TESTS_FAILED


def test_a_bad_baseline_is_a_usage_error_before_any_test(
    pytester: pytest.Pytester, travel_pair: TravelPair
) -> None:
    missing = pytester.path / "missing.json"
    result = _session(pytester, travel_pair.head_suite, "--harness-baseline", str(missing))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--harness-baseline: *missing.json: no such file*"])
    assert "passed" not in result.stdout.str() and "Traceback" not in result.stderr.str()
