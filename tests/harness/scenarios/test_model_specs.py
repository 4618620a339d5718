"""``model:`` naming a factory of the user's own chat model, and ``max_concurrency``.

Loaded like ``agent:`` (``module:callable`` from the current directory or the suite's folder,
``file.py:callable`` from the suite's folder): a wrong name is a ``file:line`` error with a
did-you-mean; the factory itself is called on the model's first turn, once per config, and what
it returns must be a ``BaseChatModel`` (else that scenario's error, naming the factory).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.cli import main
from harness.models import FactoryChatModel, LimitedChatModel, make_model
from harness.run.runner import RunOptions, run_scenarios
from harness.scenarios import ConfigError, load_file
from tests.support.paths import AGENT_FILE

HARNESS = Path(sys.executable).parent / "harness"

MODELS = '''
import os

from harness.models.scripted import ScriptedChatModel

BUILT = []


def build(turns=None, latency=0.0, model=None):
    """A scripted model as a user's factory would make one (a real BaseChatModel)."""
    if os.environ.get("FORBID_BUILD"):
        raise RuntimeError("the factory must not be called here")
    BUILT.append({"turns": turns, "latency": latency, "model": model})
    script = turns or [
        {"tool_calls": [{"name": "add", "args": {"a": 2, "b": 3}}]},
        {"content": "5"},
    ]
    return ScriptedChatModel(script, latency=latency)


def not_a_model(**options):
    return {"answer": 42}


def breaks(**options):
    raise OSError("no GPU here")


NOT_CALLABLE = 3
'''


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "my_models.py").write_text(MODELS, encoding="utf-8")
    package = tmp_path / "acme" / "llm"
    package.mkdir(parents=True)
    (tmp_path / "acme" / "__init__.py").write_text("", encoding="utf-8")
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "local.py").write_text(MODELS, encoding="utf-8")
    yield tmp_path
    for name in [name for name in sys.modules if name.split(".")[0] == "acme"]:
        del sys.modules[name]  # the next test's package is another folder's


def write(folder: Path, model: str, *extra: str) -> Path:
    head = f"suite: custom\nagent: {AGENT_FILE}:build\nmodel: {model}\n"
    body = textwrap.dedent(
        """\
        scenarios:
          - name: adds
            input: "2 + 3?"
            expect: {tool_calls: [{name: add, args: {a: 2, b: 3}}]}
        """
    )
    path = folder / "suite.yaml"
    path.write_text(head + body + "".join(extra), encoding="utf-8")
    return path


def issues(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_file(path)
    # named from the folder the suite is in
    return [str(issue).removeprefix(f"{path.parent}{os.sep}") for issue in caught.value.issues]


@pytest.mark.parametrize(
    "model",
    [
        "my_models.py:build",
        "'./my_models.py:build'",
        "acme.llm.local:build",
        "{provider: 'my_models.py:build', latency: 0.01, model: qwen2.5}",
        "{provider: 'acme.llm.local:build', max_concurrency: 3}",
    ],
)
def test_a_factory_named_in_model_runs_the_scenario(folder: Path, model: str) -> None:
    path = write(folder, model)
    (scenario,) = load_file(path).scenarios
    limited = "max_concurrency" in model
    chat = scenario.model.inner if limited else scenario.model
    assert isinstance(scenario.model, LimitedChatModel) is limited
    assert isinstance(chat, FactoryChatModel) and not chat.built  # loading builds nothing
    result = run_scenarios([scenario], RunOptions())
    assert result.scenarios[0].status == "passed", result.scenarios[0].reasons
    assert chat.built
    built = sys.modules[chat.factory.__module__].BUILT
    if "latency" in model:  # the mapping's other keys are the factory's keyword arguments
        assert built[-1] == {"turns": None, "latency": 0.01, "model": "qwen2.5"}


def test_one_config_builds_one_model_for_every_scenario(folder: Path) -> None:
    extra = "".join(
        f"  - {{name: more{i}, input: '2 + 3?', expect: {{tool_calls: [add]}}}}\n" for i in range(5)
    )
    path = write(folder, "{provider: 'my_models.py:build', latency: 0.02}", extra)
    scenarios = list(load_file(path).scenarios)
    assert len({id(s.model) for s in scenarios}) == 1
    built = sys.modules[scenarios[0].model.factory.__module__].BUILT
    before = len(built)
    result = run_scenarios(scenarios, RunOptions(concurrency=6))
    assert all(s.status == "passed" for s in result.scenarios)
    assert len(built) == before + 1


@pytest.mark.parametrize(
    ("model", "line", "message"),
    [
        (
            "my_models.py:biuld",
            "suite.yaml:3: model: ",
            "has no attribute 'biuld' — did you mean 'build'?",
        ),
        (
            "{provider: 'my_modles.py:build'}",
            "suite.yaml:3: model.provider: ",
            "no such file",
        ),
        (
            "'acme.llm.lokal:build'",
            "suite.yaml:3: model: ",
            "cannot import module 'acme.llm.lokal'",
        ),
        (
            "my_models.py:NOT_CALLABLE",
            "suite.yaml:3: model: ",
            "is not callable (it is the number 3); a model factory must be callable",
        ),
        (
            "{provider: 'openai:gpt-4o-mini'}",
            "suite.yaml:3: model.provider: ",
            "write {provider: openai, model: gpt-4o-mini}",
        ),
    ],
)
def test_a_wrong_factory_is_a_located_load_error(
    folder: Path, model: str, line: str, message: str
) -> None:
    (issue,) = issues(write(folder, model))
    assert issue.startswith(line), issue
    assert message in issue, issue


def test_a_suggestion_names_the_file_next_to_the_suite(folder: Path) -> None:
    (issue,) = issues(write(folder, "{provider: 'my_modles.py:build'}"))
    assert issue.endswith("— did you mean 'my_models.py'?"), issue


@pytest.mark.parametrize("value", ["0", "-2", "true", "'2'", "1.5", "null", "[2]"])
def test_a_bad_max_concurrency_is_an_error_on_its_own_line(folder: Path, value: str) -> None:
    model = f"\n  provider: 'my_models.py:build'\n  max_concurrency: {value}"
    (issue,) = issues(write(folder, model))
    assert issue.startswith("suite.yaml:5: model.max_concurrency: max_concurrency must be"), issue


def test_max_concurrency_applies_to_every_kind(folder: Path) -> None:
    for spec in ({"provider": "demo"}, {"provider": "openai", "model": "gpt-4o-mini"}):
        model = make_model({**spec, "max_concurrency": 4})
        assert isinstance(model, LimitedChatModel) and model.gate.limit == 4
    same = make_model({"provider": "openai", "model": "gpt-4o-mini", "max_concurrency": 4})
    assert same.gate is model.gate  # type: ignore[attr-defined]
    scripted = make_model({"provider": "scripted", "max_concurrency": 1}, script=[{"content": "x"}])
    assert scripted.gate.label == "scripted"  # type: ignore[attr-defined]
    # a limit changes no answer: the cassette key names the model, not its limit
    from harness.cassettes.request_key import identity_of

    assert identity_of(model) == identity_of(make_model("openai:gpt-4o-mini"))


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (
            "not_a_model",
            "model factory my_models.py:not_a_model returned dict {'answer': 42}, not a "
            "LangChain chat model",
        ),
        ("breaks", "model factory my_models.py:breaks raised OSError: no GPU here"),
    ],
)
def test_a_factory_that_gives_no_model_is_that_scenarios_error(
    folder: Path, factory: str, message: str
) -> None:
    extra = "  - {name: fine, input: '2 + 3?', model: 'my_models.py:build'}\n"
    (bad, fine) = load_file(write(folder, f"my_models.py:{factory}", extra)).scenarios
    result = run_scenarios([bad, fine], RunOptions())
    assert [s.status for s in result.scenarios] == ["error", "passed"]
    error = result.scenarios[0].runs[0].error
    assert error is not None and error.type == "ModelConfigError"
    assert message in error.message


def test_validate_and_replay_never_call_the_factory(folder: Path) -> None:
    path = write(folder, "{provider: 'my_models.py:build', max_concurrency: 1}")
    tapes = folder / "tapes"
    assert main(["run", str(path), "--record", str(tapes)]) == 0
    assert (tapes / "custom" / "adds.yaml").is_file()
    # fresh processes, as CI runs them, with a factory that fails if it is called
    env = {**os.environ, "FORBID_BUILD": "1"}
    for command in (["validate", str(path)], ["run", str(path), "--replay", str(tapes)]):
        done = subprocess.run(
            [str(HARNESS), *command], cwd=folder, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr


def test_validate_reports_a_bad_limit_on_its_line(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(folder, "{provider: 'my_models.py:build', max_concurrency: 0}")
    assert main(["validate", str(path)]) == 2
    out = capsys.readouterr()
    assert "suite.yaml:3: model.max_concurrency: max_concurrency must be a whole number >= 1" in (
        out.out + out.err
    )
