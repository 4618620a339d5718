"""JUnit XML: one ``testcase`` per scenario, ``classname`` = suite, the match table as output.

Passed and xpassed scenarios are plain testcases; ``failed`` gets a ``failure`` whose message is
the reasons; ``error`` gets an ``error`` with the exception type and traceback; ``xfailed`` is
``skipped`` with the xfail reason (what pytest writes for xfail).

Testcases are serialized one at a time as they come (:class:`JunitReporter`, rendering the
views of :mod:`harness.report.view`), so a report of 100,000 recorded traces is never one tree
in memory; the totals on ``<testsuites>`` and each ``<testsuite>`` are counted on the way and
written when the report is closed.
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
from typing import IO
from xml.sax.saxutils import escape, quoteattr

from harness.redaction import Redactor, Scrubber
from harness.report.base import FeedWriter, write_whole
from harness.report.files import atomic_output
from harness.report.text import (
    failure_text,
    match_table,
    paused_line,
    rate_line,
    warning_lines,
)
from harness.report.view import ScenarioView, SuiteView, scenario_view
from harness.run.results import SuiteResult

__all__ = ["JunitReportWriter", "JunitReporter", "render_junit", "write_junit"]

# XML 1.0 cannot carry most control characters, even escaped; tool output may contain them.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(text: str) -> str:
    return _INVALID_XML.sub("\ufffd", text)


def render_junit(result: SuiteResult, *, redactor: Redactor | None = None) -> str:
    """The report as a JUnit XML document (string), secrets masked."""
    scrub = Scrubber.for_suite(redactor, result)
    parts = _Parts()
    out = io.BytesIO()
    try:
        for scenario in result.scenarios:
            parts.add(scenario_view(scenario, scrub))
        parts.write(out, result.duration, result.started_at)
    finally:
        parts.close()
    return out.getvalue().decode("utf-8").rstrip("\n")


def write_junit(
    result: SuiteResult, path: str | os.PathLike[str], *, redactor: Redactor | None = None
) -> Path:
    """Write the JUnit XML report, creating parent folders; returns the path written."""
    writer = JunitReportWriter(path, scrubber=Scrubber.for_suite(redactor, result))
    return write_whole(writer, result)


class JunitReporter:
    """The JUnit report as a :class:`~harness.report.base.Reporter`, one testcase at a time.

    Each testcase is serialized as it comes into its suite's spool (memory up to
    :data:`_SPOOL` bytes per suite, then a temporary file); only the per-suite totals stay in
    memory. :meth:`close` writes ``<testsuites>`` with the totals, then each ``<testsuite>``
    with its own and its testcases, and moves the file into place (never half-written).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        """Report to ``path`` (parents created now: an unwritable place fails here, early)."""
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._parts = _Parts(self.path.parent)

    @property
    def totals(self) -> dict[str, int]:
        """tests / failures / errors / skipped so far, over every suite."""
        return self._parts.totals()

    def add(self, result: ScenarioView) -> None:
        """Append one testcase (nothing of it is kept)."""
        self._parts.add(result)

    def close(self, summary: SuiteView) -> Path:
        """Write the document (``summary`` gives the run's time and start); returns the path."""
        try:
            with atomic_output(self.path) as out:
                self._parts.write(out, summary.duration, summary.started_at)
        finally:
            self._parts.close()
        return self.path

    def abort(self) -> None:
        """Drop what was written so far; ``path`` is left untouched."""
        self._parts.close()


class JunitReportWriter(FeedWriter[JunitReporter]):
    """The JUnit report fed with results (not views): each masked as it is added.

    ``scrubber`` as for :class:`~harness.report.json_report.JsonReportWriter`.
    """

    def _open(self, path: str | os.PathLike[str]) -> JunitReporter:
        return JunitReporter(path)

    @property
    def totals(self) -> dict[str, int]:
        """tests / failures / errors / skipped so far, over every suite."""
        return self._reporter.totals


_SPOOL = 64 * 1024
"""Bytes of testcases a suite keeps in memory before its spool moves to a temporary file."""
_COUNTED = ("tests", "failures", "errors", "skipped")
_COPY_CHUNK = 256 * 1024
_DISK_BUFFER = 256 * 1024
"""Bytes of a spool on disk held before they go to its file (one system call)."""


@dataclass(slots=True)
class _Suite:
    body: IO[bytes]
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_COUNTED, 0))
    time: float = 0.0


def _case_bytes(scenario: ScenarioView) -> bytes:
    text = _empty_case_text(scenario)
    if text is None:
        text = _case_text(scenario)
    return text.encode("utf-8")


class _Parts:
    """The serialized testcases of each suite, in first-seen order, and their totals."""

    def __init__(self, folder: Path | None = None) -> None:
        self._dir = str(folder) if folder is not None else None
        self._suites: dict[str, _Suite] = {}

    def add(self, scenario: ScenarioView) -> None:
        name = scenario.suite
        suite = self._suites.get(name)
        if suite is None:
            # open across add() calls; _Parts.close() closes every spool
            # once on disk, a large buffer: testcases are small, and the default 8 KB buffer
            # made a write system call every few of them
            body = tempfile.SpooledTemporaryFile(  # noqa: SIM115
                max_size=_SPOOL, mode="w+b", buffering=_DISK_BUFFER, dir=self._dir
            )
            suite = self._suites[name] = _Suite(body)
        suite.body.write(_case_bytes(scenario))
        suite.counts["tests"] += 1
        suite.time += scenario.duration
        key = _STATUS_COUNTER.get(scenario.status)
        if key is not None:
            suite.counts[key] += 1

    def totals(self) -> dict[str, int]:
        return {key: sum(suite.counts[key] for suite in self._suites.values()) for key in _COUNTED}

    def write(self, out: IO[bytes], duration: float, started_at: float) -> None:
        """The whole document into ``out`` (UTF-8)."""
        root = {"name": "toolcall-harness", **_numbers(self.totals())}
        root["time"] = f"{duration:.3f}"
        out.write(b"<?xml version='1.0' encoding='utf-8'?>\n")
        out.write((_open_tag("testsuites", root) + "\n").encode("utf-8"))
        stamp = None
        if started_at:
            started = datetime.fromtimestamp(started_at, tz=timezone.utc)
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


def _case_attributes(scenario: ScenarioView) -> dict[str, str]:
    attributes = {
        "name": _clean(scenario.display_name),
        "classname": _clean(scenario.suite),
        "file": scenario.file,
        "time": f"{scenario.duration:.3f}",
    }
    if scenario.line:
        attributes["line"] = str(scenario.line)
    return attributes


_ESCAPED = re.compile('[&<>"\r\n\t]')
"""Characters ElementTree escapes in an attribute value."""
_CHILDLESS = frozenset({"passed", "xpassed"})


def _empty_case_text(scenario: ScenarioView) -> str | None:
    """The line of a testcase with nothing inside (most passes of a large stream), written as
    ElementTree would write it; None when it has content or a value needs escaping."""
    if scenario.status not in _CHILDLESS:
        return None
    run = scenario.shown
    if run is not None and (run.rows or paused_line(run)):  # match_table is "" without rows
        return None
    if scenario.warnings or scenario.repeated:
        return None
    attributes = _case_attributes(scenario)
    if any(_ESCAPED.search(value) for value in attributes.values()):
        return None
    shown = " ".join(f'{key}="{value}"' for key, value in attributes.items())
    return f"    <testcase {shown} />\n"


_Child = tuple[str, dict[str, str], str]
"""A testcase's child element: tag, attributes, text."""


def _children(scenario: ScenarioView) -> list[_Child]:
    """What goes inside a testcase: the verdict's element, then the match table's output."""
    children: list[_Child] = []
    message = _clean("; ".join(scenario.reasons))
    if scenario.status == "failed":
        text = _clean(failure_text(scenario, traceback=False))
        children.append(("failure", {"message": message, "type": "failure"}, text))
    elif scenario.status == "error":
        run = scenario.shown
        kind = run.error.type if run is not None and run.error is not None else "error"
        children.append(
            ("error", {"message": message, "type": kind}, _clean(failure_text(scenario)))
        )
    elif scenario.status == "xfailed":
        attributes = {"message": _clean(f"xfail: {scenario.xfail}"), "type": "pytest.xfail"}
        children.append(("skipped", attributes, message))
    run = scenario.shown
    table = match_table(run) if run is not None else ""
    # a run left paused says on what, whatever its status (a pending approval is news); so
    # does a failed `warn` rule (JUnit has no warning state: the testcase passes)
    warnings = "\n".join(f"warning: {line}" for line in warning_lines(scenario))
    paused = paused_line(run) if run else ""
    # a repeated scenario's verdict is its pass rate: how sure it is (pass@k, pass^k)
    rate = f"rate: {rate_line(scenario)}" if scenario.repeated else ""
    output = "\n".join(part for part in (table, paused, warnings, rate) if part)
    if output:
        children.append(("system-out", {}, _clean(output)))
    return children


def _testcase(scenario: ScenarioView) -> ET.Element:
    case = ET.Element("testcase", _case_attributes(scenario))
    for tag, attributes, text in _children(scenario):
        ET.SubElement(case, tag, attributes).text = text
    return case


_ATTRIBUTE_ENTITIES = {'"': "&quot;", "\r": "&#13;", "\n": "&#10;", "\t": "&#09;"}
"""What ElementTree writes for these characters in an attribute value (``&<>`` aside)."""


def _element(tag: str, attributes: dict[str, str], text: str) -> str:
    shown = "".join(f' {key}="{_attribute(value)}"' for key, value in attributes.items())
    return f"<{tag}{shown}>{_text(text)}</{tag}>" if text else f"<{tag}{shown} />"


def _attribute(value: str) -> str:
    """An attribute value escaped as ElementTree does; most have nothing to escape (one scan)."""
    if _ESCAPED.search(value) is None:
        return value
    return escape(value, _ATTRIBUTE_ENTITIES)


def _text(text: str) -> str:
    """Element text escaped as ElementTree does (``&<>``); a scan per character, no copies."""
    if "&" in text or "<" in text or ">" in text:
        return escape(text)
    return text


def _case_text(scenario: ScenarioView) -> str:
    """A testcase's lines as ``ET.indent(level=2)`` and ``ET.tostring`` write them, without
    building the tree: a large stream's failures are thousands of testcases."""
    children = _children(scenario)
    head = _element("testcase", _case_attributes(scenario), "")
    if not children:
        return f"    {head}\n"
    inner = "".join(f"\n      {_element(*child)}" for child in children)
    return f"    {head[:-3]}>{inner}\n    </testcase>\n"
