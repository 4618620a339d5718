"""The view model every reporter renders from: built once per result, already redacted.

A reporter never reads a :class:`~harness.run.results.ScenarioResult` itself: the feed
(:class:`~harness.report.base.ReportFeed`) turns each result into a :class:`ScenarioView` with
one :class:`~harness.redaction.Scrubber` and hands that to every reporter, and the suite summary
into a :class:`SuiteView` with the same redactor (docs/architecture.md, "Reporter" and
"Redaction"). Nothing in a view needs masking again, and nothing in it is cut for width:
shortening is the renderer's choice.

The shape, top down (every class is a frozen dataclass; tuples, never lists)::

    SuiteView            the summary: counts, omitted, warnings (scrubbed), summary line, mask
    ScenarioView         one result: identity (suite, name, file, line: config, not scrubbed),
      │                  status, xfail, reasons (scrubbed), repeat, passes, timing, trace
      └─ runs: RunView   one run; ``shown`` is the run a report details (first not passed)
           ├─ input_text, output, output_text  what the agent got, what it answered
           ├─ paused, paused_text, turns: TurnView  the interrupt it ended paused on; per
           │                   turn of a conversation, where that turn left the graph
           ├─ calls: CallView          recorded calls: args as ArgView, status, error, result
           ├─ expected: ExpectationView  expected calls: args as ArgView (matchers described)
           ├─ scores: ScoreView        name, value, threshold, passed, reason, codes, details
           ├─ checks: CheckView        forbid / no_errors / output: reason, code, call indices
           ├─ error: ErrorView | None  type, message, traceback (scrubbed), phase
           └─ rows: MatchRow           the match table: one row per expected call, then one per
                                       call nobody expected; each paired row carries DiffView
                                       (path, code, expected, actual, reason, masked, source)

Values come in two forms: ``value`` (JSON-ready: what the JSON report writes; redacted keys
hold the mask, secret values are scrubbed out of every string) and ``text`` (how a table shows
it: ``repr`` for literals, the ``$`` description for matchers, ``<absent>`` for a missing
argument), scrubbed too. Any value renders, each in one walk (:meth:`Scrubber.value
<harness.redaction.Scrubber.value>`): a cycle shows ``<cycle>``, nesting past 32 levels ``<too
deep>``, an object whose ``repr`` raises or an int past 4,300 digits ``<unrepresentable: ...>``,
and a value is cut to :data:`~harness.redaction.VIEW_LIMITS` (1,000
entries per container, 100,000 characters in all), free texts to :data:`TEXT_LIMIT`. A result
whose view cannot be built at all still gets one, saying so: one bad value costs only its own
scenario's detail (docs/architecture.md, "Reporter").

The match rows are built from what the metrics recorded (docs/metrics.md, "Matching"): the
full matches are the pairs of the largest pairing some metric recorded over the whole run
(``Details.pairs``, every pair accepted by its expectation, e.g. ``tool_call_accuracy``'s), plus
any other recorded pair the expectation accepts; only when no metric recorded such a pairing
is a maximum matching computed. Near misses (``wrong_args``: same name, some argument wrong)
pair what is left: recorded same-name pairs first (``tool_argument_correctness`` records
its best assignment), then a best assignment over what no recorded pair covers; a near pair
whose argument check finds nothing wrong shows as ``ok``. A row's diffs
are the expectation's own argument check (``source=""``) followed by the diffs failing metrics
recorded for that pair (``source`` = the metric), one per (path, code).

The package: :mod:`~harness.report.view.model` (the classes), :mod:`~harness.report.view.build`
(results to views), :mod:`~harness.report.view.rows` (the match rows) and
:mod:`~harness.report.view.forms` (how values and texts show).
"""

from harness.report.view.build import (
    call_view,
    expectation_view,
    run_view,
    scenario_view,
    scrubber_for,
    suite_view,
)
from harness.report.view.forms import TEXT_LIMIT, display, printable
from harness.report.view.model import (
    ArgView,
    CallView,
    CheckView,
    DiffView,
    ErrorView,
    ExpectationView,
    MatchRow,
    RowVerdict,
    RunView,
    ScenarioView,
    ScoreView,
    SuiteView,
    TurnView,
)

__all__ = [
    "TEXT_LIMIT",
    "ArgView",
    "CallView",
    "CheckView",
    "DiffView",
    "ErrorView",
    "ExpectationView",
    "MatchRow",
    "RowVerdict",
    "RunView",
    "ScenarioView",
    "ScoreView",
    "SuiteView",
    "TurnView",
    "call_view",
    "display",
    "expectation_view",
    "printable",
    "run_view",
    "scenario_view",
    "scrubber_for",
    "suite_view",
]
