"""Real report pairs to compare, from real runs (made once per session, shared by the tests).

* ``travel_pair``: the demo travel suite (scenarios/travel.yaml, the deterministic demo
  model) run as a team's main branch might hold it — three xfail marks dropped, so three
  scenarios fail — then run again after one edit of the file: one scenario's input changed (it
  regresses: the demo model reads another city), another's input fixed (it passes now), a
  metric added to a failing one (its reasons change), one to a passing one (a score appears),
  a scenario removed and one added, a third input changed so the agent stops after its first
  call. Each edit is an exact text replacement: if the shipped suite changes, this fails
  loudly here rather than comparing something else.
* ``flaky_reports``: a real LangGraph agent over a real HTTP weather service on 127.0.0.1
  that fails a set share of its requests (tests/fixtures/flaky_agent.py), one scenario with
  ``repeat: 10``, run with the service failing 2, 7, 1, 3 and 9 requests in 10 — real pass
  rates of 8/10, 3/10, 9/10, 7/10 and 1/10 — and a ``repeat: 3`` one passing 3/3 and 0/3.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.cli import main
from tests.support.flaky_service import FlakyService, flaky_service
from tests.support.paths import FIXTURES, SCENARIOS

FLAKY_AGENT = FIXTURES / "flaky_agent.py"


def _edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"the demo suite no longer holds exactly one {old!r}"
    return text.replace(old, new)


def _main_branch(travel: str) -> str:
    """travel.yaml without three xfail marks: those scenarios fail, as on a real main."""
    for mark in (
        '    xfail: "two cities in the sentence: the demo model picks the first (Madrid)"\n',
        '    xfail: "the demo model takes the first currency it reads (euros) as the source '
        'currency"\n',
        '    xfail: "no tool keyword in the question: the demo model misses the implicit '
        'forecast lookup"\n',
    ):
        travel = _edit(travel, mark, "")
    return travel


NEW_SCENARIO = """
  - name: weather in Rome on Sunday
    input: "What's the weather in Rome on sunday?"
    expect:
      tool_calls:
        - name: get_weather
          args: {city: Rome, day: sunday}
"""


def _pull_request(base: str) -> str:
    """The one changed scenario file of the pull request."""
    head = _edit(
        base,
        'input: "What\'s the weather in Berlin tomorrow?"',
        'input: "What\'s the weather in Paris tomorrow?"',
    )
    head = _edit(head, 'input: "How many euros is 50 dollars?"', 'input: "Convert 50 USD to EUR"')
    head = _edit(
        head,
        'input: "Book the best rated hotel in Lisbon for Ada Lovelace, 2 nights from 2025-07-01"',
        'input: "Find the best rated hotel in Lisbon for Ada Lovelace, 2 nights from 2025-07-01"',
    )
    head = _edit(
        head,
        "          args: {city: Lisbon, day: friday}\n",
        "          args: {city: Lisbon, day: friday}\n"
        "    metrics:\n      no_unexpected_tool_calls: {threshold: 1.0}\n",
    )
    head = _edit(
        head,
        "      no_unexpected_tool_calls: {threshold: 1.0}   # and nothing else was called\n",
        "      no_unexpected_tool_calls: {threshold: 1.0}   # and nothing else was called\n"
        "      tool_call_f1: {threshold: 0.5}\n",
    )
    start = head.index("  # $absent: the model must not send")
    end = head.index("  # A two-step task")
    return head[:start] + head[end:] + NEW_SCENARIO


@dataclass(frozen=True)
class TravelPair:
    """Two JSON reports of the travel suite, the suite files, and a trace file of the base."""

    base: Path
    head: Path
    base_suite: Path
    head_suite: Path
    traces: Path


@pytest.fixture(scope="session")
def travel_pair(tmp_path_factory: pytest.TempPathFactory) -> TravelPair:
    """``harness run`` on the base suite, then on the edited one (real runs, demo model)."""
    root = tmp_path_factory.mktemp("travel")
    (root / "base").mkdir()
    (root / "head").mkdir()
    base_text = _main_branch((SCENARIOS / "travel.yaml").read_text(encoding="utf-8"))
    base_suite = root / "base" / "travel.yaml"
    head_suite = root / "head" / "travel.yaml"
    base_suite.write_text(base_text, encoding="utf-8")
    head_suite.write_text(_pull_request(base_text), encoding="utf-8")
    pair = TravelPair(
        root / "base.json", root / "head.json", base_suite, head_suite, root / "base.jsonl"
    )
    base_args = ["run", str(base_suite), "-q", "--json", str(pair.base)]
    assert main([*base_args, "--trace-file", str(pair.traces)]) == 1  # main fails 3 scenarios
    assert main(["run", str(head_suite), "-q", "--json", str(pair.head)]) == 1
    return pair


FLAKY_SUITE = """\
suite: flaky
agent: {agent}:build
model: {{provider: scripted}}
scenarios:
  - name: weather through a flaky service
    input: "Weather in Lisbon?"
    script:
      - tool_calls: [{{name: get_weather, args: {{city: Lisbon}}}}]
      - content: "Lisbon: 18 C, light rain."
    expect:
      tool_calls: [{{name: get_weather, args: {{city: Lisbon}}}}]
      no_errors: true
    repeat: {repeat}
    pass_rate: 0.8
"""


@pytest.fixture(scope="session")
def weather_service() -> Iterator[FlakyService]:
    """The flaky service, its URL in ``FLAKY_WEATHER_URL`` while the session runs."""
    with flaky_service() as service:
        before = os.environ.get("FLAKY_WEATHER_URL")
        os.environ["FLAKY_WEATHER_URL"] = service.url
        try:
            yield service
        finally:
            if before is None:
                os.environ.pop("FLAKY_WEATHER_URL", None)
            else:
                os.environ["FLAKY_WEATHER_URL"] = before


@pytest.fixture(scope="session")
def flaky_reports(
    tmp_path_factory: pytest.TempPathFactory, weather_service: FlakyService
) -> dict[str, Path]:
    """Reports by pass count: ``"8/10"`` -> the report of a run that passed 8 of 10."""
    root = tmp_path_factory.mktemp("flaky")
    reports: dict[str, Path] = {}
    for repeat, period, failures in (
        (10, 10, (2, 7, 1, 3, 9)),
        (3, 3, (0, 3)),
    ):
        suite = root / f"flaky{repeat}.yaml"
        suite.write_text(FLAKY_SUITE.format(agent=FLAKY_AGENT, repeat=repeat), encoding="utf-8")
        for failed in failures:
            name = f"{repeat - failed}/{repeat}"
            report = root / f"passed-{repeat - failed}-of-{repeat}.json"
            weather_service.set_failures(failed, period)
            main(["run", str(suite), "-q", "--json", str(report)])
            reports[name] = report
    return reports
