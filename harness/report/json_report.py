"""The JSON report: :meth:`SuiteResult.to_dict` (with ``schema_version``) written to a file.

:class:`JsonReportWriter` writes it as the results come (``harness eval-traces`` streams
100,000s of them): each scenario is serialized, appended to a temporary file next to the target
and forgotten; :meth:`~JsonReportWriter.close` then writes the head (``schema_version``, counts,
summary, warnings — only known at the end) followed by the scenarios, and moves the file into
place. The layout is exactly :func:`render_json`'s, so ``schema_version`` is unchanged and
readers see no difference; memory holds one scenario at a time.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import IO

from harness.redaction import Redactor
from harness.report.files import atomic_output
from harness.result import STATUSES, ScenarioResult, Scrubber, SuiteResult

__all__ = ["JsonReportWriter", "StreamScrubber", "render_json", "write_json"]

_INDENT = "\n    "
_COPY_CHUNK = 256 * 1024


def render_json(result: SuiteResult, *, redactor: Redactor | None = None) -> str:
    """The report as a JSON string (UTF-8 text, stable key order, indented), secrets masked."""
    data = result.to_dict(redactor)
    return json.dumps(data, indent=2, ensure_ascii=False, default=repr)


def write_json(
    result: SuiteResult, path: str | os.PathLike[str], *, redactor: Redactor | None = None
) -> Path:
    """Write the report, creating parent folders; returns the path written.

    The same text as :func:`render_json`, written one scenario at a time.
    """
    writer = JsonReportWriter(path, scrubber=Scrubber.for_suite(redactor, result))
    try:
        for scenario in result.scenarios:
            writer.add(scenario)
    except BaseException:
        writer.abort()
        raise
    return writer.close(result, redactor=redactor)


_REMEMBERED_SECRETS = 256
"""Secret values a stream remembers to scrub from later results' text (the longest are kept);
every string is searched for each of them, so the list stays short."""


class StreamScrubber:
    """The scrubber for each result of a stream: its own secrets plus those seen before it.

    A whole-suite :class:`Scrubber` needs every run up front; a stream has one result at a time.
    So each result is scrubbed of every secret found in its own runs and of up to
    :data:`_REMEMBERED_SECRETS` secret values seen in earlier results (a secret that first shows
    up in a later result is not scrubbed out of an earlier one's free text; values under
    redacted keys are masked by key either way).
    """

    __slots__ = ("_current", "_seen", "redactor")

    def __init__(self, redactor: Redactor | None = None) -> None:
        """Scrub with ``redactor`` (default: the default key list)."""
        self.redactor = Redactor() if redactor is None else redactor
        self._seen: set[str] = set()
        self._current = Scrubber(self.redactor)

    def for_result(self, result: ScenarioResult) -> Scrubber:
        """The scrubber to render ``result`` with."""
        own = Scrubber.for_runs(self.redactor, result.runs).secrets
        new = [secret for secret in own if secret not in self._seen]
        if not new:
            return self._current
        self._seen.update(new)
        if len(self._seen) > _REMEMBERED_SECRETS:
            longest = sorted(self._seen, key=len, reverse=True)[:_REMEMBERED_SECRETS]
            self._seen = set(longest)
        self._current = Scrubber(self.redactor, self._seen)
        if all(secret in self._seen for secret in own):
            return self._current
        return Scrubber(self.redactor, self._seen.union(own))  # its own always count


class JsonReportWriter:
    """Writes the JSON report one scenario at a time; :meth:`close` finishes the file.

    Nothing is at ``path`` until :meth:`close` (the file appears whole, never half-written);
    :meth:`abort` throws the partial work away.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        redactor: Redactor | None = None,
        scrubber: Scrubber | None = None,
    ) -> None:
        """Report to ``path`` (parents created now: an unwritable place fails here, early).

        ``scrubber``: mask every scenario with this one (a whole-suite scrubber); default: a
        :class:`StreamScrubber` over ``redactor``.
        """
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fixed = scrubber
        self._stream = StreamScrubber(redactor) if scrubber is None else None
        # open across add() calls; close() or abort() closes it (and the OS deletes it)
        # bytes, not text: copying a text file back decodes and re-encodes it in big chunks
        self._body: IO[bytes] = tempfile.TemporaryFile(  # noqa: SIM115
            "w+b", dir=self.path.parent, prefix=f".{self.path.name}."
        )
        self.count = 0
        self.counts = dict.fromkeys(STATUSES, 0)

    def add(self, scenario: ScenarioResult) -> None:
        """Append one scenario (masked now; nothing of it is kept)."""
        scrub = self._fixed if self._fixed is not None else self._scrub(scenario)
        text = json.dumps(scenario.to_dict(scrub), indent=2, ensure_ascii=False, default=repr)
        chunk = ("," if self.count else "") + _INDENT + text.replace("\n", _INDENT)
        self._body.write(chunk.encode("utf-8"))
        self.count += 1
        self.counts[scenario.status] += 1

    def _scrub(self, scenario: ScenarioResult) -> Scrubber:
        assert self._stream is not None
        return self._stream.for_result(scenario)

    def close(self, summary: SuiteResult, *, redactor: Redactor | None = None) -> Path:
        """Write the head from ``summary`` (its counts, timing, warnings), then every scenario.

        ``summary`` may be a sample (``omitted`` set): the file lists every scenario added, so
        the head carries the counts and no ``omitted`` key. Returns the path written.
        """
        head = summary.to_dict(redactor, scenarios=False)
        head.pop("omitted", None)
        head_text = json.dumps(
            {**head, "scenarios": []}, indent=2, ensure_ascii=False, default=repr
        )
        before, _, _ = head_text.rpartition('"scenarios": []')
        try:
            with atomic_output(self.path) as out:
                out.write((before + '"scenarios": [').encode("utf-8"))
                self._body.seek(0)
                shutil.copyfileobj(self._body, out, _COPY_CHUNK)
                out.write(b"\n  ]\n}\n" if self.count else b"]\n}\n")
        finally:
            self._body.close()
        return self.path

    def abort(self) -> None:
        """Drop what was written so far (the temporary file); ``path`` is left untouched."""
        self._body.close()
