"""What ``harness run`` shows while it runs: a live bar on a terminal, plain lines in a CI log.

On a terminal each failure is printed the moment it happens, above a bar that counts passed,
failed and errored scenarios and estimates the time left (the bar is gone when the run ends,
then the report follows). Off a terminal (a CI log, a pipe) each finished scenario is one line,
``[3/40] FAILED   suite::name (0.02s)``. With ``quiet`` nothing is shown.

The runner hands over raw results: every text shown here is scrubbed first, with the run's
redactor (docs/architecture.md, "Redaction").
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from harness.redaction import Redactor, Scrubber
from harness.report.view import printable  # controls and bidi overrides shown escaped
from harness.run.results import ScenarioResult

__all__ = ["RunProgress"]

_STYLE = {"failed": "bold red", "error": "bold red", "xpassed": "yellow"}


class RunProgress:
    """A context manager whose :meth:`update` the runner calls as each scenario finishes."""

    def __init__(
        self,
        console: Console,
        total: int,
        *,
        redactor: Redactor | None = None,
        quiet: bool = False,
        trace_url: str | None = None,
    ) -> None:
        """Show progress of ``total`` scenarios on ``console``."""
        self.console = console
        self.total = total
        self.redactor = redactor
        self.quiet = quiet
        self.trace_url = trace_url
        self.done = 0
        self.counts = {"passed": 0, "failed": 0, "error": 0}
        self.bar: Progress | None = None
        self.task: Any = None

    def __enter__(self) -> RunProgress:
        if self.console.is_terminal and not self.quiet:
            self.bar = Progress(
                TextColumn("[bold]scenarios"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[counts]}"),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                console=self.console,
                transient=True,
            )
            self.bar.__enter__()
            self.task = self.bar.add_task("", total=self.total, counts=self._counts())
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.bar is not None:
            self.bar.__exit__(kind, error, trace)

    def _counts(self) -> Text:
        counts = self.counts
        return Text.assemble(
            (f"{counts['passed']} passed", "green"),
            " ",
            (f"{counts['failed']} failed", "red" if counts["failed"] else "dim"),
            " ",
            (f"{counts['error']} errors", "red" if counts["error"] else "dim"),
        )

    def update(self, result: ScenarioResult) -> None:
        """One scenario finished."""
        self.done += 1
        status = result.status
        if status in self.counts:
            self.counts[status] += 1
        if self.quiet:
            return
        if self.bar is None:
            self.console.print(
                f"[{self.done}/{self.total}] {status.upper():8} {printable(result.id)} "
                f"({result.duration:.2f}s)",
                markup=False,
                highlight=False,
            )
            return
        if status in ("failed", "error"):
            # printed through the bar's console: it goes above the bar, which redraws below;
            # one line each (the report after the run has the whole story)
            line = self._failure_line(result)
            line.truncate(self.console.width, overflow="ellipsis")
            self.bar.console.print(line, no_wrap=True, overflow="ellipsis")
            if self.trace_url:
                self._trace_line(result)
        self.bar.update(self.task, advance=1, counts=self._counts())

    def _failure_line(self, result: ScenarioResult) -> Text:
        scrub = Scrubber.for_runs(self.redactor, result.runs)
        first = scrub.text(result.reasons[0]) if result.reasons else ""
        line = Text(f"{result.status.upper()} ", style=_STYLE[result.status])
        line.append(printable(result.id), style="bold")
        if first:
            line.append(f" - {printable(first)}")
        # last: on one terminal line the reason matters more than the place (the report has it)
        line.append(f" ({result.location})", style="dim")
        return line

    def _trace_line(self, result: ScenarioResult) -> None:
        run = result.first_failing_run()
        if self.bar is None or self.trace_url is None or run is None or not run.trace_id:
            return
        from harness.report.links import trace_link

        url = trace_link(self.trace_url, run.trace_id)
        self.bar.console.print(Text(f"  trace: {url}", style="dim"), soft_wrap=True)
