"""The comparison on the console (rich), in the run report's style: a table, then sections.

:func:`console_block` gives the renderables (a pure function: the caller prints them, after a
run's own report under ``--baseline``, or alone for ``harness compare``): a rule, the notes, a
table of the scenarios that changed (every scenario with ``verbose``), one section per change
that has details — status, rates and their test, pass@k, score deltas, the first differing call
and its arguments, the reasons that came and went — and the summary line. Every text from a
report goes through :func:`~harness.report.view.printable`.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from harness.compare.comparison import Comparison, Kind, ScenarioChange
from harness.compare.text import aspects_text, detail_lines, side_text
from harness.report.view import printable

__all__ = ["KIND_STYLE", "console_block", "summary_rule"]

KIND_STYLE: Mapping[Kind, str] = {
    "regressed": "bold red",
    "fixed": "green",
    "still_failing": "red",
    "not_significant": "yellow",
    "changed": "yellow",
    "added": "cyan",
    "removed": "magenta",
    "unchanged": "dim",
}

TITLE = "Compared with baseline"


def summary_rule(comparison: Comparison) -> Rule:
    """The last line: the headline, red with a regression, yellow with another change."""
    if comparison.counts["regressed"]:
        style = "bold red"
    elif comparison.changed:
        style = "bold yellow"
    else:
        style = "bold green"
    return Rule(Text(comparison.headline(), style=style), characters="=")


def console_block(comparison: Comparison, *, title: str = TITLE, verbose: bool = False) -> Group:
    """Rule, notes, table, a section per change, summary line (``verbose``: the unchanged
    scenarios in the table too)."""
    parts: list[RenderableType] = [Rule(Text(printable(title), style="bold"), characters="=")]
    parts += [Text(printable(f"note: {note}"), style="yellow") for note in comparison.notes]
    shown = [change for change in comparison.ordered() if verbose or change.kind != "unchanged"]
    if shown:
        parts.append(_table(shown))
    for change in shown:
        if change.kind not in ("unchanged", "added", "removed"):
            parts += _section(change)
    parts.append(summary_rule(comparison))
    return Group(*parts)


def _table(changes: list[ScenarioChange]) -> Table:
    table = Table(show_lines=False, expand=False)
    table.add_column("change", no_wrap=True)
    table.add_column("scenario")
    table.add_column("before", no_wrap=True)
    table.add_column("after", no_wrap=True)
    table.add_column("what changed")
    for change in changes:
        style = KIND_STYLE[change.kind]
        table.add_row(
            Text(change.label.upper(), style=style),
            escape(printable(change.id)),
            Text(side_text(change.base)),
            Text(side_text(change.head)),
            Text(printable(aspects_text(change))),
        )
    return table


def _section(change: ScenarioChange) -> list[RenderableType]:
    style = KIND_STYLE[change.kind]
    lines = detail_lines(change)
    return [
        Rule(Text(printable(change.id), style=style), characters="_"),
        Text(printable("\n".join(lines))),
    ]
