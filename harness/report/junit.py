"""JUnit XML: one ``testcase`` per scenario, ``classname`` = suite, the match table as output.

Passed and xpassed scenarios are plain testcases; ``failed`` gets a ``failure`` whose message is
the reasons; ``error`` gets an ``error`` with the exception type and traceback; ``xfailed`` is
``skipped`` with the xfail reason (what pytest writes for xfail).
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path

from harness.redaction import Redactor
from harness.report import failure_text, render_match_table
from harness.result import ScenarioResult, Scrubber, SuiteResult

# XML 1.0 cannot carry most control characters, even escaped; tool output may contain them.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(text: str) -> str:
    return _INVALID_XML.sub("\ufffd", text)


def render_junit(result: SuiteResult, *, redactor: Redactor | None = None) -> str:
    """The report as a JUnit XML document (string), secrets masked."""
    scrub = Scrubber.for_suite(redactor, result)
    root = ET.Element("testsuites", name="toolcall-harness")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in result.suites:
        members = [s for s in result.scenarios if s.suite == suite]
        element = _suite_element(suite, members, result.started_at, scrub)
        root.append(element)
        for key in totals:
            totals[key] += int(element.get(key, "0"))
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{result.duration:.3f}")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


def _suite_element(
    suite: str, members: Iterable[ScenarioResult], started_at: float, scrub: Scrubber
) -> ET.Element:
    element = ET.Element("testsuite", name=suite)
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    total_time = 0.0
    for scenario in members:
        element.append(_testcase(scenario, scrub))
        counts["tests"] += 1
        total_time += scenario.duration
        if scenario.status == "failed":
            counts["failures"] += 1
        elif scenario.status == "error":
            counts["errors"] += 1
        elif scenario.status == "xfailed":
            counts["skipped"] += 1
    for key, value in counts.items():
        element.set(key, str(value))
    element.set("time", f"{total_time:.3f}")
    stamp = datetime.fromtimestamp(started_at, tz=timezone.utc) if started_at else None
    if stamp is not None:
        element.set("timestamp", stamp.isoformat(timespec="seconds"))
    return element


def _testcase(scenario: ScenarioResult, scrub: Scrubber) -> ET.Element:
    case = ET.Element(
        "testcase",
        name=_clean(scenario.display_name),
        classname=_clean(scenario.suite),
        file=scenario.file,
        time=f"{scenario.duration:.3f}",
    )
    if scenario.line:
        case.set("line", str(scenario.line))
    message = _clean(scrub.text("; ".join(scenario.reasons)))
    if scenario.status == "failed":
        failure = ET.SubElement(case, "failure", message=message, type="failure")
        failure.text = _clean(failure_text(scenario, traceback=False, scrubber=scrub))
    elif scenario.status == "error":
        run = scenario.first_failing_run()
        kind = run.error.type if run is not None and run.error is not None else "error"
        error = ET.SubElement(case, "error", message=message, type=kind)
        error.text = _clean(failure_text(scenario, scrubber=scrub))
    elif scenario.status == "xfailed":
        skipped = ET.SubElement(
            case, "skipped", message=_clean(f"xfail: {scenario.xfail}"), type="pytest.xfail"
        )
        skipped.text = message
    run = scenario.first_failing_run()
    table = render_match_table(run, scrubber=scrub) if run is not None else ""
    if table:
        ET.SubElement(case, "system-out").text = _clean(table)
    return case


def write_junit(
    result: SuiteResult, path: str | os.PathLike[str], *, redactor: Redactor | None = None
) -> Path:
    """Write the JUnit XML report, creating parent folders; returns the path written."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_junit(result, redactor=redactor) + "\n", encoding="utf-8")
    return target
