"""The feed's cheaper paths give what the general ones give.

- The redactor remembers whether a key is secret and whether a text may name one (bounded
  memos on pure functions): each answer must be the pure function's, for the redactor's own
  key list (two redactors never share an answer), and a scrubber asked again must answer as a
  fresh one, for any limit, secrets included.
- The JSON report and the JUnit spools write through large buffers: a report of many
  scenarios (past the buffers and the in-memory spool) must be the one written scenario by
  scenario through :func:`render_json` / :func:`render_junit`.
- The full matches take the largest recorded pairing once: the same as taking it, then every
  recorded pairing again, whatever the pairings (repeated, clashing, an index named twice).
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.expectation import Expectation
from harness.metrics.base import Details, Pair, Score
from harness.redaction import Redactor, Scrubber
from harness.redaction.secret_keys import _key_matches, _names_a_key
from harness.report.json_report import JsonReportWriter, render_json
from harness.report.junit import JunitReportWriter, render_junit
from harness.report.view.rows import _Pairs, _rows, _take
from harness.run.results import RunResult, ScenarioResult, SuiteResult
from harness.sample import Sample
from tracing.records import ToolCall

_SECRET = "sk-feed-secret-0042"
_TEXTS = st.one_of(
    st.text(max_size=300),
    st.builds(lambda a, b: a + _SECRET + b, st.text(max_size=40), st.text(max_size=40)),
    st.sampled_from(['{"api_key": "sk-feed-secret-0042"}', "token=abcdef123 rest", "plain"]),
)


_KEYS = st.one_of(
    st.text(max_size=300),
    st.sampled_from(["token", "api_key", "x-api-key", "password", "passwd", "max_tokens", "Token"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_KEYS, max_size=12), st.lists(st.tuples(_TEXTS, st.none()), max_size=6))
def test_remembered_answers_belong_to_each_key_list(
    keys: list[str], calls: list[tuple[str, None]]
) -> None:
    """The key and text memos answer per key list: redactors asked in turn never share an
    answer, and a remembered answer (short texts) is what the pure function gives."""
    redactors = [Redactor(["token"]), Redactor(["password"]), Redactor()]
    texts = keys + [text for text, _ in calls]
    for text in [*texts, *texts]:  # the second round is answered from the memos
        for redactor in redactors:
            assert redactor.matches(text) == _key_matches(redactor.patterns, text)
            finder = redactor._finder
            expected = finder is not None and _names_a_key(finder, text)
            assert redactor._might_match(text) == (expected and len(text) >= redactor._min_len)
    token, password = redactors[0], redactors[1]
    assert token.matches("accessToken") and not password.matches("accessToken")
    assert password.matches("db_password") and not token.matches("db_password")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_TEXTS, st.one_of(st.none(), st.integers(0, 400))), max_size=12))
def test_a_scrubber_asked_again_answers_as_a_fresh_one(calls: list[tuple[str, int | None]]) -> None:
    """Scrubbing a text twice, under any limit, gives what a fresh scrubber gives."""
    redactor = Redactor()
    shared = Scrubber(redactor, [_SECRET])
    for text, limit in [*calls, *calls]:
        fresh = Scrubber(Redactor(), [_SECRET])
        assert shared.text(text, limit) == fresh.text(text, limit)
        assert shared.redacted_text(text) == fresh.redacted_text(text)
        assert _SECRET not in shared.text(text, limit)


def _suite(count: int) -> SuiteResult:
    scenarios = []
    for i in range(count):
        status = "failed" if i % 7 == 0 else "passed"
        call = ToolCall("lookup", {"id": i, "api_key": _SECRET}, result="x" * (i % 300))
        sample = Sample(
            input=f"ask {i}",
            tool_calls=[call],
            expected_tool_calls=[Expectation("lookup", {"id": i + (status == "failed")})],
        )
        score = Score(
            "tool_call_accuracy", 0.0 if status == "failed" else 1.0, 1.0, status != "failed"
        )
        run = RunResult(0, status == "passed", sample, (score,))
        scenarios.append(
            ScenarioResult(f"suite{i % 3}", f"case{i}", "s.yaml", i + 1, status, (run,))
        )
    return SuiteResult(tuple(scenarios), started_at=0.0, duration=0.0)


def test_buffered_reports_equal_the_whole_renderings(tmp_path: Path) -> None:
    """Past the 1 MB JSON buffer and the 64 KB JUnit spool, the files are the renderings."""
    result = _suite(3000)
    json_writer = JsonReportWriter(tmp_path / "r.json", scrubber=Scrubber.for_suite(None, result))
    junit_writer = JunitReportWriter(tmp_path / "r.xml", scrubber=Scrubber.for_suite(None, result))
    for scenario in result.scenarios:
        json_writer.add(scenario)
        junit_writer.add(scenario)
    json_file = json_writer.close(result)
    junit_file = junit_writer.close(result)
    assert json_file.stat().st_size > 2 * 1024 * 1024
    assert json_file.read_text(encoding="utf-8") == render_json(result) + "\n"
    assert junit_file.read_text(encoding="utf-8").rstrip("\n") == render_junit(result)
    assert _SECRET not in json_file.read_text(encoding="utf-8")


_PAIRINGS = st.lists(
    st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), min_size=1, max_size=3),
    max_size=4,
)


def _every_pairing_taken(pairs: _Pairs) -> dict[int, int]:
    """The full matches as taken before: the largest complete pairing, then every pairing."""
    complete = [p for p in pairs.recorded if all(pairs.accepts(i, j) for i, j in p)]
    best = max(complete, key=len)
    taken: dict[int, int] = {}
    for pairing in (best, *pairs.recorded):
        _take(taken, pairing, pairs.accepts)
    return taken


@settings(max_examples=300, deadline=None)
@given(_PAIRINGS, st.lists(st.integers(0, 1), min_size=3, max_size=3))
def test_full_matches_take_the_best_pairing_once(
    pairings: list[list[tuple[int, int]]], values: list[int]
) -> None:
    """Recorded pairings, repeated, clashing or naming an index twice: the same full matches
    as taking every pairing in turn, and rows that show each call once."""
    expected = [Expectation("a", {"v": 1}), Expectation("b", {"v": 1}), Expectation("a", {"v": 0})]
    calls = [ToolCall(name, {"v": v}) for name, v in zip(("a", "b", "a"), values, strict=True)]
    scores = []
    for n, pairing in enumerate(pairings):
        details = Details(
            pairs=tuple(Pair(i, j) for i, j in pairing),
            unmatched_expected=tuple(range(3 - len(pairing))),
            unmatched_actual=tuple(range(3 - len(pairing))),
        )
        scores.append(Score(f"m{n}", 0.0, 1.0, False, "", details))
    pairs = _Pairs(scores, expected, calls)
    if any(all(pairs.accepts(i, j) for i, j in p) for p in pairs.recorded):
        assert pairs.full() == _every_pairing_taken(pairs)
    sample = Sample(tool_calls=calls, expected_tool_calls=expected)
    rows = _rows(RunResult(0, False, sample, tuple(scores)), expected, calls, Scrubber())
    assert [row.expected_index for row in rows if row.verdict != "unexpected"] == [0, 1, 2]
    shown = sorted(row.actual_index for row in rows if row.actual_index is not None)
    assert shown == [0, 1, 2]  # every call once: paired, or as unexpected
