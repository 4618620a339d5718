"""What the HTML report shows of ``--baseline``: a badge per changed card and a filter by it.

Pure markup from the summary's :class:`~harness.compare.Comparison`: the scenarios that
regressed, were fixed or are new get a badge on their card (``data-change``) and the filter
bar a chip per class, which the page's script reads (``assets/report.js``); the header says
the comparison's headline. Without a baseline every function gives nothing.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import TYPE_CHECKING

from harness.report.view import ScenarioView, printable

if TYPE_CHECKING:
    from harness.compare import Comparison, Kind

__all__ = [
    "BADGES",
    "change_badge",
    "change_buttons",
    "change_header",
    "changes_by_key",
    "view_key",
]

BADGES: Mapping[Kind, str] = {"regressed": "regressed", "fixed": "fixed", "added": "new"}
"""The classes a card shows a badge for, and the badge's word."""


def view_key(view: ScenarioView) -> str:
    """The key a comparison matches the view by (``suite::name``, ``[trace id]``)."""
    key = f"{view.suite}::{view.name}"
    return f"{key}[{view.trace_id}]" if view.trace_id else key


def changes_by_key(comparison: Comparison | None) -> dict[str, Kind]:
    """The class of each scenario that has a badge, by its key (empty without a baseline)."""
    if comparison is None:
        return {}
    return {
        change.scenario.key: change.kind
        for change in comparison.scenarios
        if change.kind in BADGES and change.head is not None
    }


def change_badge(kind: Kind | None) -> str:
    """A card's badge: ``regressed``, ``fixed`` or ``new``; nothing for another class."""
    if kind is None or kind not in BADGES:
        return ""
    return (
        f'<span class="change ch-{kind}" title="compared with the baseline: {BADGES[kind]}">'
        f"{BADGES[kind]}</span>"
    )


def change_buttons(comparison: Comparison | None) -> str:
    """The filter chips of the badges, with their counts (nothing without a baseline)."""
    if comparison is None:
        return ""
    out = []
    for kind, word in BADGES.items():
        count = comparison.counts[kind]
        disabled = "" if count else " disabled"
        out.append(
            f'<button type="button" class="chip c-{kind}" data-change="{kind}" '
            f'aria-pressed="false"{disabled}>{word} <b>{count}</b></button>'
        )
    return (
        '<div class="chipset" role="group" aria-label="compared with baseline">'
        + "".join(out)
        + "</div>"
    )


def change_header(comparison: Comparison | None) -> str:
    """``Compared with baseline main.json: 3 regressions, 1 fix`` under the summary line."""
    if comparison is None:
        return ""
    bad = " bad" if comparison.counts["regressed"] else ""
    return (
        f'<p class="compared{bad}">Compared with baseline '
        f"<code>{html.escape(printable(comparison.base))}</code>: "
        f"<b>{html.escape(comparison.headline())}</b></p>\n"
    )
