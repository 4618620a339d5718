"""Plain-text lines of a comparison, shared by the console, Markdown and GitHub renderings.

One wording of a rate, a score delta, a call change, not one per report. Nothing here escapes
for a medium: the console makes the lines printable, Markdown escapes them.
"""

from __future__ import annotations

from typing import Any

from harness.compare.comparison import ArgChange, CallChange, RateChange, ScenarioChange
from harness.compare.report import ARG_WIDTH, ReportScenario
from harness.compare.stats import Rate
from harness.text import shorten
from harness.values import ABSENT

__all__ = [
    "arg_text",
    "aspects_text",
    "call_text",
    "detail_lines",
    "pass_k_line",
    "pass_k_text",
    "rate_text",
    "rates_text",
    "score_text",
    "side_text",
    "summary_text",
]

ARROW = "→"


def side_text(scenario: ReportScenario | None) -> str:
    """``passed``, ``failed 3/10`` for a repeated scenario, ``—`` for a side without it."""
    if scenario is None:
        return "—"
    if scenario.runs > 1:
        return f"{scenario.status} {scenario.passes}/{scenario.runs}"
    return scenario.status


def _percent(value: float) -> str:
    return f"{value * 100:.0f}%"


def rate_text(rate: Rate) -> str:
    """``8/10 (80%, 95% CI 49–94%)``."""
    if not rate.runs:
        return "0 runs"
    return (
        f"{rate.passes}/{rate.runs} ({_percent(rate.passes / rate.runs)}, 95% CI "
        f"{_percent(rate.low)}–{_percent(rate.high)})"
    )


def rates_text(rates: RateChange) -> str:
    """``pass rate 8/10 (...) → 3/10 (...): drop p = 0.035 ≤ α 0.05, significant``."""
    head = f"pass rate {rate_text(rates.base)} {ARROW} {rate_text(rates.head)}"
    if not rates.direction:
        return f"{head}: no change"
    word = "drop" if rates.direction < 0 else "rise"
    significant = rates.dropped if rates.direction < 0 else rates.rose
    relation = "≤" if significant else ">"
    verdict = "significant" if significant else "not significant"
    return f"{head}: {word} p = {_p(rates.p_value)} {relation} α {rates.alpha:g}, {verdict}"


def _p(value: float) -> str:
    return f"{value:.3f}" if value >= 0.001 else f"{value:.1e}"


def _unit(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def pass_k_text(rates: RateChange) -> str:
    """``pass@1 0.80 → 0.30, pass@10 1.00 → 1.00, pass^10 0.00 → 0.00`` (k = 1 and k = K)."""
    base, head = rates.base, rates.head
    parts = [f"pass@1 {_unit(base.value)} {ARROW} {_unit(head.value)}"]
    if base.k == head.k:
        if base.k > 1:
            parts.append(f"pass@{base.k} {_unit(base.pass_at_k)} {ARROW} {_unit(head.pass_at_k)}")
            parts.append(f"pass^{base.k} {_unit(base.pass_hat_k)} {ARROW} {_unit(head.pass_hat_k)}")
        return ", ".join(parts)
    # different run counts and no --k: each side at its own K
    for mark, old, new in (
        ("@", base.pass_at_k, head.pass_at_k),
        ("^", base.pass_hat_k, head.pass_hat_k),
    ):
        parts.append(f"pass{mark}{base.k} {_unit(old)} {ARROW} pass{mark}{head.k} {_unit(new)}")
    return ", ".join(parts)


def pass_k_line(rate: Rate) -> str:
    """One side's ``pass@1 0.60, pass@5 1.00, pass^5 0.00`` (k = 1 and k = K; ``—`` where K
    exceeds the runs)."""
    parts = [f"pass@1 {_unit(rate.value)}"]
    if rate.k > 1:
        parts.append(f"pass@{rate.k} {_unit(rate.pass_at_k)}")
        parts.append(f"pass^{rate.k} {_unit(rate.pass_hat_k)}")
    return ", ".join(parts)


def score_text(name: str, base: float | None, head: float | None) -> str:
    """``tool_call_accuracy 1.00 → 0.00 (−1.00)``; ``—`` on a side without the metric."""
    text = f"{name} {_unit(base)} {ARROW} {_unit(head)}"
    if base is None or head is None:
        return text
    delta = head - base
    return f"{text} ({'−' if delta < 0 else '+'}{abs(delta):.2f})"


def _value(value: Any) -> str:
    return "(absent)" if value is ABSENT else shorten(repr(value), ARG_WIDTH)


def arg_text(change: ArgChange) -> str:
    """``/city: 'Paris' → 'Lisbon'``."""
    return f"{change.path or '/'}: {_value(change.base)} {ARROW} {_value(change.head)}"


def call_text(change: CallChange) -> str:
    """``#2 get_weather(city='Paris') → get_weather(city='Lisbon')``; ``(no call)`` where one
    side made fewer calls; the model turns when only they differ (a call made a turn later)."""
    base, head = change.base, change.head
    before = base.text() if base is not None else "(no call)"
    after = head.text() if head is not None else "(no call)"
    text = f"#{change.index + 1} {before} {ARROW} {after}"
    if base is not None and head is not None and base.turn != head.turn:
        text += f" (model turn {_turn(base.turn)} {ARROW} {_turn(head.turn)})"
    return text


def _turn(turn: int | None) -> str:
    return "?" if turn is None else str(turn + 1)


def _rate_move(rates: RateChange) -> str:
    """``8/10 → 3/10, p = 0.035``."""
    base, head = rates.base, rates.head
    return f"{base.passes}/{base.runs} {ARROW} {head.passes}/{head.runs}, p = {_p(rates.p_value)}"


def aspects_text(change: ScenarioChange) -> str:
    """What changed, in a few words: ``status, scores, calls``; the rates and their p-value
    for a repeated scenario whose rate moved."""
    if change.kind == "added":
        return "new"
    if change.kind == "removed":
        return "gone"
    words = [aspect for aspect in change.changed if aspect != "pass rate"]
    if change.rates is not None and change.rates.direction:
        words.insert(0, _rate_move(change.rates))
    if words:
        return ", ".join(words)
    return "same reasons" if change.kind == "still_failing" else "nothing"


def summary_text(change: ScenarioChange) -> str:
    """The one most telling line of what changed, for a table cell."""
    if change.rates is not None and change.rates.direction:
        return _rate_move(change.rates)
    if change.kind == "still_failing" and change.reasons_added:
        return f"+ {change.reasons_added[0]}"
    if change.call is not None:
        return call_text(change.call)
    if change.scores:
        first = change.scores[0]
        return score_text(first.name, first.base, first.head)
    return aspects_text(change)


def detail_lines(change: ScenarioChange) -> list[str]:
    """Everything that changed, one fact a line: status, rates, scores, calls, reasons."""
    scenario = change.scenario
    lines = [
        f"{change.label}: {side_text(change.base)} {ARROW} {side_text(change.head)}"
        f"  ({scenario.location})"
    ]
    if change.rates is not None:
        lines.append(rates_text(change.rates))
        lines.append(pass_k_text(change.rates))
    lines += [f"score {score_text(s.name, s.base, s.head)}" for s in change.scores]
    if change.call is not None:
        lines.append(f"calls {call_text(change.call)}")
        lines += [f"  {arg_text(arg)}" for arg in change.call.args]
    lines += [f"+ {reason}" for reason in change.reasons_added]
    lines += [f"− {reason}" for reason in change.reasons_removed]
    if change.kind == "still_failing" and not change.reasons_changed and scenario.reasons:
        lines.append(f"same reasons: {scenario.reasons[0]}")
        if len(scenario.reasons) > 1:
            lines[-1] += f" (and {len(scenario.reasons) - 1} more)"
    return lines
