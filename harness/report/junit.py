"""JUnit XML: one ``testcase`` per scenario, ``classname`` = suite, the match table as output.

Passed and xpassed scenarios are plain testcases; ``failed`` gets a ``failure`` whose message is
the reasons; ``error`` gets an ``error`` with the exception type and traceback; ``xfailed`` is
``skipped`` with the xfail reason (what pytest writes for xfail).

Testcases are serialized one at a time as they come (:class:`JunitReportWriter`), so a report
of 100,000 recorded traces is never one tree in memory; the totals on ``<testsuites>`` and
each ``<testsuite>`` are counted on the way and written when the report is closed.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any
from xml.sax.saxutils import quoteattr

from harness.redaction import Redactor
from harness.report import failure_text, render_match_table
from harness.report.files import atomic_output
from harness.result import ScenarioResult, Scrubber, SuiteResult

# XML 1.0 cannot carry most control characters, even escaped; tool output may contain them.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(text: str) -> str:
    return _INVALID_XML.sub("\ufffd", text)


def render_junit(result: SuiteResult, *, redactor: Redactor | None = None) -> str:
    """The report as a JUnit XML document (string), secrets masked."""
    parts = _Parts(Scrubber.for_suite(redactor, result), None)
    try:
        for scenario in result.scenarios:
            parts.add(scenario)
        out = io.BytesIO()
        parts.write(out, result)
    finally:
        parts.close()
    return out.getvalue().decode("utf-8").rstrip("\n")


def write_junit(
    result: SuiteResult, path: str | os.PathLike[str], *, redactor: Redactor | None = None
) -> Path:
    """Write the JUnit XML report, creating parent folders; returns the path written."""
    writer = JunitReportWriter(path, scrubber=Scrubber.for_suite(redactor, result))
    try:
        for scenario in result.scenarios:
            writer.add(scenario)
    except BaseException:
        writer.abort()
        raise
    return writer.close(result)


class JunitReportWriter:
    """Writes the JUnit report one testcase at a time; :meth:`close` finishes the file.

    Each testcase is serialized as it comes into its suite's spool (memory up to
    :data:`_SPOOL` bytes per suite, then a temporary file); only the per-suite totals stay in
    memory. :meth:`close` writes ``<testsuites>`` with the totals, then each ``<testsuite>``
    with its own and its testcases, and moves the file into place (never half-written).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        redactor: Redactor | None = None,
        scrubber: Scrubber | None = None,
    ) -> None:
        """Report to ``path`` (parents created now); ``scrubber`` as for the JSON writer."""
        from harness.report.json_report import StreamScrubber

        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        stream = StreamScrubber(redactor) if scrubber is None else None
        self._parts = _Parts(scrubber, stream, self.path.parent)

    @property
    def totals(self) -> dict[str, int]:
        """tests / failures / errors / skipped so far, over every suite."""
        return self._parts.totals()

    def add(self, scenario: ScenarioResult) -> None:
        """Append one testcase (masked now; nothing of it is kept)."""
        self._parts.add(scenario)

    def close(self, summary: SuiteResult) -> Path:
        """Write the document (``summary`` gives the run's time and start); returns the path."""
        try:
            with atomic_output(self.path) as out:
                self._parts.write(out, summary)
        finally:
            self._parts.close()
        return self.path

    def abort(self) -> None:
        """Drop what was written so far; ``path`` is left untouched."""
        self._parts.close()


_SPOOL = 64 * 1024
"""Bytes of testcases a suite keeps in memory before its spool moves to a temporary file."""
_COUNTED = ("tests", "failures", "errors", "skipped")
_COPY_CHUNK = 256 * 1024


@dataclass(slots=True)
class _Suite:
    body: IO[bytes]
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_COUNTED, 0))
    time: float = 0.0


class _Parts:
    """The serialized testcases of each suite, in first-seen order, and their totals."""

    def __init__(self, fixed: Scrubber | None, stream: Any, folder: Path | None = None) -> None:
        self._fixed = fixed
        self._stream = stream
        self._dir = str(folder) if folder is not None else None
        self._suites: dict[str, _Suite] = {}

    def add(self, scenario: ScenarioResult) -> None:
        scrub = self._fixed if self._fixed is not None else self._stream.for_result(scenario)
        suite = self._suites.get(scenario.suite)
        if suite is None:
            # open across add() calls; _Parts.close() closes every spool
            body = tempfile.SpooledTemporaryFile(  # noqa: SIM115
                max_size=_SPOOL, mode="w+b", dir=self._dir
            )
            suite = self._suites[scenario.suite] = _Suite(body)
        case = _testcase(scenario, scrub)
        ET.indent(case, space="  ", level=2)
        text = "    " + ET.tostring(case, encoding="unicode") + "\n"
        suite.body.write(text.encode("utf-8"))
        suite.counts["tests"] += 1
        suite.time += scenario.duration
        key = _STATUS_COUNTER.get(scenario.status)
        if key is not None:
            suite.counts[key] += 1

    def totals(self) -> dict[str, int]:
        return {key: sum(suite.counts[key] for suite in self._suites.values()) for key in _COUNTED}

    def write(self, out: IO[bytes], summary: SuiteResult) -> None:
        """The whole document into ``out`` (UTF-8)."""
        root = {"name": "toolcall-harness", **_numbers(self.totals())}
        root["time"] = f"{summary.duration:.3f}"
        out.write(b"<?xml version='1.0' encoding='utf-8'?>\n")
        out.write((_open_tag("testsuites", root) + "\n").encode("utf-8"))
        stamp = None
        if summary.started_at:
            started = datetime.fromtimestamp(summary.started_at, tz=timezone.utc)
            stamp = started.isoformat(timespec="seconds")
        for name, suite in self._suites.items():
            attributes = {"name": _clean(name), **_numbers(suite.counts)}
            attributes["time"] = f"{suite.time:.3f}"
            if stamp is not None:
                attributes["timestamp"] = stamp
            out.write(("  " + _open_tag("testsuite", attributes) + "\n").encode("utf-8"))
            suite.body.seek(0)
            shutil.copyfileobj(suite.body, out, _COPY_CHUNK)
            out.write(b"  </testsuite>\n")
        out.write(b"</testsuites>\n")

    def close(self) -> None:
        for suite in self._suites.values():
            suite.body.close()


_STATUS_COUNTER = {"failed": "failures", "error": "errors", "xfailed": "skipped"}


def _numbers(counts: dict[str, int]) -> dict[str, str]:
    return {key: str(counts[key]) for key in _COUNTED}


def _open_tag(tag: str, attributes: dict[str, str]) -> str:
    shown = " ".join(f"{key}={quoteattr(value)}" for key, value in attributes.items())
    return f"<{tag} {shown}>"


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
