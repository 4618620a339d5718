"""``harness eval-traces`` reports stay byte for byte what they were before the fast paths.

The reports skip work per result (a passing score's empty details rendered once per scrubber,
short strings redacted once per redactor, a passing JUnit testcase written without
ElementTree): the same recorded file must give the same reports. The golden files were written
by the code before those paths; only the clock (``started_at``, durations, timestamps) and the
machine's paths differ between runs, so those are normalised on both sides.

The recorded file (spans shaped as benchmarks/bench_eval_traces.py writes them) holds 40
traces: passes, failures with argument diffs, a forbidden call, and calls whose arguments
carry secrets (``api_key``, ``token``) that every report must mask.
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

from harness.cli import main
from harness.redaction import Redactor, Scrubber
from harness.report.junit import _empty_case_text, _testcase
from harness.report.view import scenario_view
from harness.run.results import ScenarioResult
from tests.support.eval_golden import GOLDEN, SUITE

_CLOCK = [
    (re.compile(r'"(started_at|duration)": [0-9.e-]+,'), r'"\1": 0,'),
    (re.compile(r'"summary": "(.*) in [0-9.]+s"'), r'"summary": "\1 in 0s"'),
    (re.compile(r' time="[0-9.]+"'), ' time="0"'),
    (re.compile(r' timestamp="[^"]*"'), ' timestamp="0"'),
]


def _normalised(text: str, suite: Path, traces: Path) -> str:
    text = text.replace(str(suite), "{SUITE}").replace(str(traces), "{TRACES}")
    for pattern, replacement in _CLOCK:
        text = pattern.sub(replacement, text)
    return text


def _reports(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    agent = tmp_path / "noop_agent.py"
    agent.write_text("def build(model):\n    return None\n", encoding="utf-8")
    suite = tmp_path / "scenarios.yaml"
    suite.write_text(SUITE.format(agent=agent), encoding="utf-8")
    traces = tmp_path / "recorded.jsonl"
    shutil.copyfile(GOLDEN / "recorded.jsonl", traces)
    out, xml = tmp_path / "report.json", tmp_path / "report.xml"
    args = ["eval-traces", str(traces), "--scenarios", str(suite), "--json", str(out)]
    with contextlib.redirect_stdout(io.StringIO()):
        code = main([*args, "--junit-xml", str(xml), "--workers", "1"])
    assert code == 1  # seven traces fail
    return suite, traces, out, xml


def test_json_and_junit_reports_are_the_golden_ones(tmp_path: Path) -> None:
    """The same recorded file gives the same JSON and JUnit bytes, secrets masked."""
    suite, traces, out, xml = _reports(tmp_path)
    json_text = _normalised(out.read_text(encoding="utf-8"), suite, traces)
    assert json_text == (GOLDEN / "report.json").read_text(encoding="utf-8")
    xml_text = _normalised(xml.read_text(encoding="utf-8"), suite, traces)
    assert xml_text == (GOLDEN / "report.xml").read_text(encoding="utf-8")
    for text in (json_text, xml_text):
        assert "sk-golden-secret-value-0042" not in text
        assert "tok-very-secret-9" not in text


def test_one_redactor_masks_a_repeated_string_every_time() -> None:
    """The redactor's cache of short strings: a secret stays masked on every later sight, and
    an unchanged string comes back as the caller's own object, not an equal cached one."""
    redactor = Redactor()
    secret = '{"api_key": "sk-golden-secret-value-0042", "user": "bob"}'
    masked = redactor.redact_text(secret)
    assert "sk-golden" not in masked
    for _ in range(3):
        assert redactor.redact_text("".join(list(secret))) == masked
    plain = "get_weather(city='Berlin')"
    assert redactor.redact_text(plain) is plain
    again = "".join(list(plain))
    assert again is not plain
    assert redactor.redact_text(again) is again
    tree = {"args": [again, {"token": "tok-very-secret-9"}]}
    assert redactor.redact(tree)["args"][1] == {"token": "***"}
    assert redactor.redact({"args": [again]})["args"][0] is again


def test_a_passing_testcase_is_written_as_elementtree_writes_it() -> None:
    """The direct line of an empty testcase equals ElementTree's, odd characters included."""
    files = ["plain.yaml", "a & b/s.yaml", 'q"uote.yaml', "tab\there.yaml", "ünï/cödé.yaml"]
    direct_lines = 0
    for suite, name in (("bench-ü", "name"), ("s<ui>te", "name"), ("sx\x01y", "na&me")):
        for file in files:
            for line in (None, 7):
                result = ScenarioResult(suite, name, file, line, "passed", ())
                view = scenario_view(result, Scrubber())
                case = _testcase(view)
                ET.indent(case, space="  ", level=2)
                expected = "    " + ET.tostring(case, encoding="unicode") + "\n"
                direct = _empty_case_text(view)
                assert direct in (None, expected)
                direct_lines += direct is not None
    assert direct_lines >= 4  # the plain names took the direct path, and matched
    failed = scenario_view(ScenarioResult("s", "n", "f.yaml", 1, "failed", ()), Scrubber())
    assert _empty_case_text(failed) is None
