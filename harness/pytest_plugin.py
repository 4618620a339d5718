"""pytest plugin (registered through ``pytest11``): scenario files as tests, and three fixtures.

Inert unless used: loading it imports only pytest. Scenario collection is opt-in through
``--harness-scenarios`` or the ini option ``harness_scenarios = true``; the fixtures import the
recorder and the models only when a test asks for them.

A scenario item runs through the same runner as ``harness run`` (``repeat``, ``pass_rate``,
``timeout``, ``xfail`` included) and fails with the same text the console report prints: the
reasons and the match table. Items carry no state between them, so pytest-xdist can spread
them over processes.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Generator, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from _pytest._code.code import ExceptionInfo, TerminalRepr
    from langchain_core.language_models import BaseChatModel

    from harness.online.testing import RuleCheck
    from harness.run.results import ScenarioResult
    from harness.scenarios import Scenario
    from tracing.langchain.recorder import ToolCallRecorder

INI_OPTION = "harness_scenarios"
FLAG = "--harness-scenarios"
SUFFIXES = (".yaml", ".yml")

PLUGIN_NAMES = ("harness", __name__)
"""The names this module is registered under: the ``pytest11`` entry point's, and its own
(``-p harness.pytest_plugin``, ``pytest_plugins = ["harness.pytest_plugin"]``)."""


def pytest_plugin_registered(plugin: object, manager: pytest.PytestPluginManager) -> None:
    """Registered under one name, block the other: a second registration is a no-op.

    pluggy refuses the same module under a second name (a pytest internal error), and pytest
    skips a name that is blocked, so naming the plugin again in a conftest or with ``-p`` next
    to the entry point is harmless.
    """
    if plugin is not sys.modules[__name__]:
        return
    own = manager.get_name(plugin)
    for name in PLUGIN_NAMES:
        if name != own and manager.get_plugin(name) is None and not manager.is_blocked(name):
            manager.set_blocked(name)


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--harness-scenarios`` and the ``harness_scenarios`` ini option."""
    group = parser.getgroup("harness", "toolcall-harness")
    group.addoption(
        FLAG,
        action="store_true",
        default=False,
        help="collect YAML scenario suites (*.yaml/*.yml with a top-level 'scenarios:' key) "
        "under the given paths as test items",
    )
    parser.addini(
        INI_OPTION,
        type="bool",
        default=False,
        help="collect YAML scenario suites as test items (same as --harness-scenarios)",
    )
    from harness.cassettes.pytest_support import add_options  # standard library only

    add_options(group, parser)
    _add_baseline_options(group)


def _add_baseline_options(group: Any) -> None:
    """``--harness-baseline`` and its companions (harness.compare.pytest_baseline uses them;
    declared here, as pytest alone, so loading the plugin stays cheap)."""
    group.addoption(
        "--harness-baseline",
        metavar="BASE.json",
        default=None,
        help="compare the scenario items with a JSON report (harness run --json) as the "
        "session ends; exit 1 on a regression",
    )
    group.addoption(
        "--harness-fail-on",
        choices=("regressions", "any", "none"),
        default="regressions",
        help="with --harness-baseline, fail on: a regression (default); any change; never",
    )
    group.addoption(
        "--harness-alpha",
        type=float,
        default=0.05,
        metavar="A",
        help="with --harness-baseline, the pass-rate test's significance level (default 0.05)",
    )
    group.addoption(
        "--harness-k",
        type=int,
        default=None,
        metavar="K",
        help="with --harness-baseline, the K of pass@K and pass^K (default: the runs)",
    )


def scenarios_enabled(config: pytest.Config) -> bool:
    """Is scenario collection switched on (flag or ini option)?"""
    return bool(config.getoption(FLAG, default=False) or config.getini(INI_OPTION))


def looks_like_suite(path: Path) -> bool:
    """A suite as ``harness run DIR`` sees one (``harness.scenarios.looks_like_suite``)."""
    if path.suffix not in SUFFIXES:
        return False
    from harness.scenarios import looks_like_suite as is_suite

    return is_suite(path)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Collect scenario suites when switched on; everything else is left to pytest."""
    if file_path.suffix not in SUFFIXES or not scenarios_enabled(parent.config):
        return None
    if not looks_like_suite(file_path):
        return None
    node: ScenarioFile = ScenarioFile.from_parent(parent, path=file_path)
    return node


# --- collection -----------------------------------------------------------------------------


class ScenarioFile(pytest.File):
    """One YAML suite file: loads and compiles it, yields one node per suite."""

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        """Load the file; a configuration problem becomes a collection error naming file:line."""
        from harness.scenarios import ConfigError, load_file

        try:
            suite = load_file(self.path)
        except ConfigError as exc:
            # CollectError is shown as its message alone, without a traceback of the loader.
            raise self.CollectError(str(exc)) from None
        if suite.scenarios:
            yield SuiteNode.from_parent(self, name=suite.name, scenarios=suite.scenarios)


class SuiteNode(pytest.Collector):
    """The suite level of ``file.yaml::suite::scenario``."""

    def __init__(self, *, scenarios: Sequence[Scenario], **kwargs: Any) -> None:
        """Keep the compiled scenarios of this suite."""
        super().__init__(**kwargs)
        self.scenarios = tuple(scenarios)

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        """One item per scenario, in file order."""
        for scenario in self.scenarios:
            yield ScenarioItem.from_parent(self, name=scenario.name, scenario=scenario)


class ScenarioFailure(AssertionError):
    """A scenario that failed or errored; ``repr_failure`` renders its result.

    An ``AssertionError``, as a failed ``assert`` and the fluent checks (``harness.assertions``)
    are: pytest reports the item as failed, and tools that tell a failed test from a broken one
    by that class (Allure, ``--only-rerun AssertionError``) see a verdict, not a crash. Not a
    ``HarnessError``: the harness worked, the agent did not pass (harness/errors.py).
    """

    def __init__(self, result: ScenarioResult) -> None:
        """Carry the result; the message is the reasons, for anything that prints it."""
        super().__init__("; ".join(result.reasons) or result.status)
        self.result = result


class ScenarioItem(pytest.Item):
    """One scenario as a test: runs it through the harness runner, fails with its match table."""

    def __init__(self, *, scenario: Scenario, **kwargs: Any) -> None:
        """Keep the scenario; an ``xfail`` in the YAML becomes pytest's own xfail mark."""
        super().__init__(**kwargs)
        self.scenario = scenario
        if scenario.xfail is not None:
            # pytest's marker, so --runxfail, the xfail summary and JUnit "skipped" all apply.
            self.add_marker(pytest.mark.xfail(reason=scenario.xfail, strict=False))

    def runtest(self) -> None:
        """Run every ``repeat`` of the scenario; raise ScenarioFailure unless it passed."""
        scenario, cassettes = _with_cassette(self.config, _without_xfail(self.scenario))
        result = run_scenario(scenario, loop=_session_loop(self.config))
        if cassettes is not None:
            _finish_cassettes(cassettes)
        if self.config.getoption("--harness-baseline", default=None):
            from harness.compare.pytest_baseline import record_result

            record_result(self.config, result, self.scenario.xfail)
        self.user_properties.append(("harness_status", result.status))
        self.user_properties.append(("harness_runs", f"{result.passes}/{result.repeat}"))
        scores = _scores_text(result)
        if scores:
            self.user_properties.append(("harness_scores", scores))
        if result.status not in ("passed", "xpassed"):
            raise ScenarioFailure(result)

    def repr_failure(
        self,
        excinfo: ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str | TerminalRepr:
        """The reasons and the match table, as the console report prints them.

        A provider error or a cassette miss is its one line; ``-v`` or ``--tb=long`` adds its
        traceback (an agent's own exception always has it).
        """
        if isinstance(excinfo.value, ScenarioFailure):
            return failure_text(excinfo.value.result, verbose=_verbose(self.config))
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the scenario sits in its file, for pytest's headers and ``--junitxml``."""
        line = self.scenario.line - 1 if self.scenario.line else None
        return self.path, line, self.scenario.id


def _without_xfail(scenario: Scenario) -> Scenario:
    """The runner inverts xfail verdicts; pytest's mark does that here, so hand it the raw one."""
    if scenario.xfail is None:
        return scenario
    from harness.run.runner import with_overrides

    return with_overrides(scenario, xfail=None)


# --- adapters over the runner and the report (see the report: wanted as public functions) ---


def run_scenario(
    scenario: Scenario, *, loop: asyncio.AbstractEventLoop | None = None
) -> ScenarioResult:
    """Run one scenario synchronously, as ``harness run`` would, and return its result."""
    from harness.run.runner import RunOptions, run_scenarios

    suite = run_scenarios([scenario], RunOptions(concurrency=1), loop=loop)
    if suite.interrupted or not suite.scenarios:
        # run_scenarios turns the first Ctrl-C into a partial result; in pytest it must stop
        # the session as usual.
        raise KeyboardInterrupt
    return suite.scenarios[0]


def failure_text(result: ScenarioResult, *, verbose: bool = False) -> str:
    """The plain-text failure section of the console report for one scenario."""
    from harness.report import failure_text as render

    return render(result, verbose=verbose)


def _verbose(config: pytest.Config) -> bool:
    """``-v`` or ``--tb=long``: the user asked for more than one line per error."""
    level = config.getoption("verbose", default=0)
    return (isinstance(level, int) and level > 0) or config.getoption("tbstyle") == "long"


def _scores_text(result: ScenarioResult) -> str:
    from harness.report import scores_text

    return scores_text(result)


# --- fixtures -------------------------------------------------------------------------------


@pytest.fixture
def tool_recorder() -> Iterator[ToolCallRecorder]:
    """A fresh ToolCallRecorder that captures every LangChain run of the test, config or not
    (``capture_tool_calls()``); passing ``tool_recorder.config`` as well records nothing twice."""
    from tracing.langchain.capture import capture_tool_calls

    with capture_tool_calls() as recorder:
        yield recorder


ModelFactory = Callable[..., "BaseChatModel"]


@pytest.fixture
def harness_model(request: pytest.FixtureRequest) -> Iterator[ModelFactory]:
    """A factory of the harness's chat models: ``harness_model("demo")``, ``(script=[...])``.

    A real provider's model (``harness_model("openai:gpt-4o-mini")``) records to / replays
    from this test's own cassette under ``--harness-record`` / ``--harness-replay`` (or the
    ``harness_cassettes`` ini option; under CI, replay when the cassette exists).
    """
    from harness.models import make_model

    stores: list[Any] = []

    def factory(spec: Any = None, *, script: Sequence[Any] | None = None) -> BaseChatModel:
        """``demo`` by default; ``script=[...]`` alone means the scripted model."""
        if spec is None and script is not None:
            spec = {"provider": "scripted"}
        return _test_model(request, make_model(spec, script=script), stores)

    yield factory
    for store in stores:
        _finish_cassettes(store)


_RULES = pytest.StashKey["RuleCheck"]()


@pytest.fixture
def harness_rules(request: pytest.FixtureRequest) -> Iterator[RuleCheck]:
    """Online rules for a test that runs the whole app: ``harness_rules(provider,
    "policies.yaml")`` installs a RuleProcessor on the app's TracerProvider (paths, or loaded
    policy objects; ``errors=True`` fails on results that are no verdict too) and returns the
    list of results; when the test body ends, every trace is evaluated and the test fails on
    any violation."""
    from harness.online.testing import RuleCheck

    check = RuleCheck()
    request.node.stash[_RULES] = check
    yield check
    check.close()  # the test failed on its own: stop the processors all the same


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """A test using ``harness_rules`` fails, in its call phase, on a violation."""
    result = yield
    check = item.stash.get(_RULES, None)
    if check is not None:
        check.finish()
    return result


# --- record and replay (harness.cassettes.pytest_support) ----------------------------------

_LOOP = pytest.StashKey[asyncio.AbstractEventLoop]()
_CASSETTES = pytest.StashKey[Any]()


def _session_loop(config: pytest.Config) -> asyncio.AbstractEventLoop:
    """One event loop for every scenario item of the session (closed at unconfigure).

    langchain-openai caches one async HTTP client per process; were each item to close its own
    loop, the next item's request would fail with "Event loop is closed".
    """
    loop = config.stash.get(_LOOP, None)
    if loop is None or loop.is_closed():
        loop = asyncio.new_event_loop()
        config.stash[_LOOP] = loop
    return loop


def pytest_configure(config: pytest.Config) -> None:
    """Read the record/replay options and ``--harness-baseline`` now: a bad value is a usage
    error before any test."""
    _cassette_settings(config)
    if config.getoption("--harness-baseline", default=None):
        from harness.compare.pytest_baseline import configure

        configure(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Close the session's event loop, if scenario items made one."""
    loop = config.stash.get(_LOOP, None)
    if loop is not None and not loop.is_closed():
        loop.close()


def _cassette_settings(config: pytest.Config) -> Any:
    settings = config.stash.get(_CASSETTES, None)
    if settings is None:
        from harness.cassettes.pytest_support import from_config

        try:
            settings = from_config(config)
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
        config.stash[_CASSETTES] = settings
    return settings


def _with_cassette(config: pytest.Config, scenario: Scenario) -> tuple[Scenario, Any]:
    """The scenario with its model behind a recorder or replayer, and the store (or None)."""
    settings = _cassette_settings(config)
    if settings.setting == "off" or scenario.model is None:
        return scenario, None
    from harness.cassettes.scenarios import scenario_cassette, wrap_scenarios
    from harness.cassettes.store import CassetteStore

    own = getattr(scenario, "cassettes", None)  # a suite's `cassettes:` key
    directory = settings.directory if settings.explicit_dir or not own else None
    mode = settings.mode_for(scenario_cassette(scenario, directory))
    if mode is None:
        return scenario, None
    store = CassetteStore(mode)
    (wrapped,) = wrap_scenarios([scenario], store, directory)
    return wrapped, store


def _test_model(
    request: pytest.FixtureRequest, model: BaseChatModel, stores: list[Any]
) -> BaseChatModel:
    """A real provider's model behind this test's cassette; other models as they are."""
    from harness.models import ProviderChatModel

    settings = _cassette_settings(request.config)
    if settings.setting == "off" or not isinstance(model, ProviderChatModel):
        return model
    from harness.cassettes.pytest_support import test_cassette
    from harness.cassettes.store import CassetteStore
    from harness.cassettes.tape import TapeInfo

    nodeid = request.node.nodeid
    path = test_cassette(settings.directory, nodeid)
    mode = settings.mode_for(path)
    if mode is None:
        return model
    if not stores:
        stores.append(CassetteStore(mode))
    rerecord = f"re-record with `pytest '{nodeid}' --harness-record`"
    wrapped: BaseChatModel = stores[0].wrap(
        model, TapeInfo(path=path, scenario=nodeid, rerecord=rerecord)
    )
    return wrapped


def _finish_cassettes(store: Any) -> None:
    from harness.cassettes.pytest_support import warn_all

    warn_all(store.finish())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed test that used ``tool_recorder`` gets a section listing the calls it saw."""
    report = yield
    if call.when != "call" or not report.failed:
        return report
    recorder = getattr(item, "funcargs", {}).get("tool_recorder")
    if recorder is None:
        return report
    calls = recorder.calls()
    lines = [f"{index}. {_call_line(c)}" for index, c in enumerate(calls, 1)] or ["(none)"]
    report.sections.append(("harness: recorded tool calls", "\n".join(lines)))
    return report


def _call_line(call: Any) -> str:
    from harness.report import describe_call

    text: str = describe_call(call)
    if call.status != "ok":
        text += f" [{call.status}{': ' + call.error if call.error else ''}]"
    return text
