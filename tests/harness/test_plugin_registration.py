"""The pytest plugin named again (conftest, ``-p``) next to its entry point: no internal error."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

USES_THE_PLUGIN = """
def test_recorder_fixture(tool_recorder):
    assert tool_recorder.calls() == []


def test_model_fixture(harness_model):
    assert harness_model("demo") is not None
"""


def _ran_both(result: pytest.RunResult) -> None:
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=2)
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_pytest_plugins_in_a_conftest(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('pytest_plugins = ["harness.pytest_plugin"]\n')
    pytester.makepyfile(USES_THE_PLUGIN)
    _ran_both(pytester.runpytest_subprocess("-p", "no:cacheprovider", "--harness-scenarios"))


def test_dash_p_with_the_module_name(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(USES_THE_PLUGIN)
    _ran_both(
        pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "harness.pytest_plugin")
    )


def test_both_ways_at_once(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('pytest_plugins = ["harness.pytest_plugin"]\n')
    pytester.makepyfile(USES_THE_PLUGIN)
    _ran_both(
        pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "harness.pytest_plugin")
    )


def test_named_plugin_alone_without_entry_points(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(USES_THE_PLUGIN)
    _ran_both(
        pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "harness.pytest_plugin")
    )


def test_the_entry_point_can_still_be_switched_off(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(USES_THE_PLUGIN)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:harness")
    result.assert_outcomes(errors=2)  # fixture 'tool_recorder' not found
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
