"""Settings: ``[tool.harness]`` / ``harness.toml``, ``HARNESS_*``; the flag wins over both."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from harness.cli import main
from harness.config import env_variables, find_settings_file, flag_defaults, load_settings
from harness.errors import ConfigError
from tests.support.paths import FIXTURES, documentation

AGENT_FILE = FIXTURES / "fixture_agent.py"

PASSING = (
    "- {name: ok, input: x, script: [{tool_calls: [{name: add, args: {a: 1, b: 2}}]}, "
    "{content: done}], expect: {tool_calls: [add]}}\n"
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder as the cwd, with a suite in suites/ and no HARNESS_* variable set."""
    for name in env_variables():
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "s.yaml").write_text(
        f"agent: {AGENT_FILE}:build\nmodel: {{provider: scripted}}\nscenarios:\n"
        + textwrap.indent(PASSING, "  "),
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def test_run_with_no_path_runs_the_configured_paths_and_reports(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        project / "pyproject.toml",
        """
        [project]
        name = "demo"

        [tool.harness]
        paths = ["suites"]
        concurrency = 2

        [tool.harness.reports]
        json = "out/results.json"
        """,
    )
    assert main(["run"]) == 0
    assert "1 passed" in capsys.readouterr().out
    assert json.loads((project / "out" / "results.json").read_text())["counts"]["passed"] == 1


def test_paths_in_the_file_are_read_from_its_folder(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project / "harness.toml", 'paths = ["suites"]\n')
    (project / "deeper").mkdir()
    monkeypatch.chdir(project / "deeper")
    assert main(["run"]) == 0
    assert "1 passed" in capsys.readouterr().out


def test_precedence_is_flag_then_environment_then_file(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(project / "harness.toml", "concurrency = 3\ntimeout = 9.5\n[reports]\njson = 'f.json'\n")
    loaded = load_settings()
    assert loaded.file == project / "harness.toml"
    assert flag_defaults(loaded.settings) == {
        "concurrency": 3,
        "timeout": 9.5,
        "json_path": str(Path("f.json")),
    }
    monkeypatch.setenv("HARNESS_CONCURRENCY", "5")
    monkeypatch.setenv("HARNESS_REPORTS_JSON", "env.json")
    settings = load_settings().settings
    assert (settings.concurrency, settings.timeout, settings.reports.json) == (5, 9.5, "env.json")
    # and the flag over both: argparse gets the settings as defaults
    from harness.cli import build_parser

    defaults = flag_defaults(settings)
    assert build_parser(defaults).parse_args(["run", "--concurrency", "7"]).concurrency == 7
    assert build_parser(defaults).parse_args(["run"]).concurrency == 5


def test_harness_toml_wins_over_pyproject_in_the_same_folder(project: Path) -> None:
    write(project / "pyproject.toml", "[tool.harness]\nconcurrency = 2\n")
    write(project / "harness.toml", "concurrency = 4\n")
    assert find_settings_file() == (project / "harness.toml", ())
    assert load_settings().settings.concurrency == 4


def test_a_pyproject_without_our_table_is_passed_over(project: Path) -> None:
    write(project / "pyproject.toml", "[project]\nname = 'x'\n")
    assert find_settings_file(project) is None or find_settings_file(project)[0] != (
        project / "pyproject.toml"
    )


def test_bad_keys_are_file_line_errors_with_a_suggestion(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        project / "pyproject.toml",
        """
        [tool.harness]
        paths = ["suites"]
        concurency = 4

        [tool.harness.otlp]
        protocol = "htp"
        headers = {x-api-key = 3}
        """,
    )
    assert main(["run"]) == 2
    err = capsys.readouterr().err
    assert (
        "pyproject.toml:3: tool.harness: unknown key 'concurency' — did you mean 'concurrency'?"
        in err
    )
    assert "pyproject.toml:6: tool.harness.otlp.protocol: expected one of 'http' or 'grpc'" in err
    assert "pyproject.toml:7: tool.harness.otlp.headers.x-api-key: expected a string" in err
    assert "3 configuration errors" in err


def test_invalid_toml_names_its_line(project: Path) -> None:
    write(project / "harness.toml", "paths = ['suites']\nconcurrency = = 4\n")
    with pytest.raises(ConfigError) as info:
        load_settings()
    (issue,) = info.value.issues
    assert (issue.file, issue.line) == ("harness.toml", 2)
    assert issue.message == "not valid TOML: Invalid value"


def test_environment_values_are_checked_and_unknown_harness_variables_ignored(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_BUILD_ID", "123")  # Harness CI's own: not ours, not an error
    monkeypatch.setenv("HARNESS_OTLP_HEADERS", "x-api-key=abc, Langsmith-Project=demo")
    monkeypatch.setenv("HARNESS_REDACTION_KEYS", "ssn,iban")
    settings = load_settings().settings
    assert settings.otlp.headers == {"x-api-key": "abc", "Langsmith-Project": "demo"}
    assert flag_defaults(settings)["otlp_header"] == ["x-api-key=abc", "Langsmith-Project=demo"]
    assert flag_defaults(settings)["redact"] == ["ssn", "iban"]
    monkeypatch.setenv("HARNESS_CONCURRENCY", "many")
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert str(info.value.issues[0]).startswith("HARNESS_CONCURRENCY: input should be a valid")


def test_cassette_and_redaction_settings_become_flags(project: Path) -> None:
    write(
        project / "harness.toml",
        """
        [redaction]
        keys = ["session_id"]
        defaults = false

        [cassettes]
        mode = "replay"
        dir = "tapes"
        """,
    )
    defaults = flag_defaults(load_settings().settings, record_const="<default>")
    assert defaults == {"redact": ["session_id"], "no_default_redact": True, "replay": "tapes"}
    write(project / "harness.toml", '[cassettes]\nmode = "record"\n')
    assert flag_defaults(load_settings().settings, "<default>") == {"record": "<default>"}


def test_no_path_and_no_settings_is_a_clear_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run"]) == 2
    assert "no PATH given and no paths configured" in capsys.readouterr().err


def test_the_readme_configuration_example_loads(project: Path) -> None:
    readme = documentation()
    section = readme.split("## Configuration\n", 1)[1]
    example = section.split("```toml\n", 1)[1].split("```", 1)[0]
    (project / "pyproject.toml").write_text(example, encoding="utf-8")
    settings = load_settings().settings
    assert settings.paths == ["scenarios"] and settings.cassettes.mode == "replay"
    assert settings.otlp.trace_url is not None and "{trace_id}" in settings.otlp.trace_url
    every = set(flag_defaults(settings, record_const="<dir>"))
    from harness.cli import build_parser

    dests = vars(build_parser().parse_args(["run"]))
    assert every <= set(dests), every - set(dests)  # each setting is a real flag's default
