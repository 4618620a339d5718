"""Every exception toolcall-harness raises on purpose, in one tree so callers can catch by kind.

Catch :class:`HarnessError` for all of them, or one branch for one kind of problem. Errors in
what the user gave (files, options, settings, samples) also derive from :class:`ValueError`,
as each did before this tree existed, so existing ``except ValueError`` blocks keep working;
a failed provider call and a lost worker process do not, being no fault of the input. Errors
carry their context as attributes (the file and line, the field or argument path, the
offending value), not only in the message::

    HarnessError
     ├── ConfigError            scenario files: every issue of a load (.issues, each with
     │                          .file, .line, .path, .message)
     ├── MetricConfigError      a metric built with bad options (.metric, .option, .value)
     ├── ModelConfigError       a model spec that gives no chat model (.provider, .option)
     ├── ExportConfigError      OTLP export flags or OTEL_* variables (.source, .value)
     ├── UnknownScenarioError   ``--scenario NAME`` names no loaded scenario (.name)
     ├── ScenarioRunError       a scenario its agent cannot run as written (.scenario, .turn)
     ├── MatcherError           a malformed argument pattern (.path, .value)
     ├── SampleError            a sample a metric cannot score (.metric)
     ├── ScoringError           a recorded run a scenario cannot be scored on as written
     │    └── RefError          a ``$ref`` that cannot be resolved on a run: a path into a
     │                          result that is not JSON (.label, .path, .result)
     ├── ScriptError            a scripted model turn that cannot be played (.where)
     ├── ScaffoldError          ``harness init`` cannot write the starter project (.paths)
     ├── ProviderError          a real provider's call failed (.model, .endpoint); not a
     │                          ValueError
     ├── CassetteError          a cassette file that cannot be read or written (.path)
     │    └── CassetteMiss      ``--replay`` found no recording for a model turn (.scenario,
     │                          .turn, .difference)
     ├── DraftError             ``harness draft`` input that gives no scenario (.source)
     ├── SelectionError         a ``-k`` / ``-m`` expression, node id or failed-list that
     │                          cannot select (.option, .column)
     ├── ReportError            a JSON report ``harness compare`` cannot read: missing, not
     │    │                     JSON, not a report, a bad field, a scenario twice (.path,
     │    │                     .field, .line)
     │    └── ReportVersionError   a report format version this release does not read
     │                             (.version)
     ├── OtlpRequestError       a request ``harness serve`` refuses: not OTLP, too large, an
     │                          unknown encoding (.status, the HTTP answer)
     ├── WorkerLost             a worker process died with a shard in hand (.shard); not a
     │                          ValueError
     └── ExecutorError          ``--executor``: a malformed URL, a scheduler that does not
                                answer or has no worker, Dask not installed (.url); not a
                                ValueError

    Outside the tree, on purpose:
     ├── tracing.records.InvalidToolCall   (ValueError) the capture layer's bad-call error;
     │                                     ``tracing`` imports nothing from ``harness`` at
     │                                     module level (docs/architecture.md)
     ├── harness.pytest_plugin.ScenarioFailure   (AssertionError) pytest's failure signal for
     │                                           a scenario item, carrying its result: a
     │                                           verdict, not an error, so pytest and its
     │                                           reporters count a failed test, not a broken one
     ├── harness.report.view.details._Fallback   internal: a details shape the fast renderer
     │                                           hands back to the generic walk; never escapes
     └── harness.run.isolation.LoopBlocked   (BaseException) interrupts a call that blocked the
                                         event loop; an agent's ``except Exception`` must
                                         not swallow it

The modules that raise them (``harness.span_export``, ``harness.traces.evaluate``,
``harness.models``, ``harness.scaffold``) re-export their classes, so imports such as
``from harness.span_export import ExportConfigError`` still work.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from harness.text import plural

if TYPE_CHECKING:  # only for the annotation: the scenarios package imports this module
    from harness.scenarios.issues import ConfigIssue

__all__ = [
    "CassetteError",
    "CassetteMiss",
    "ConfigError",
    "DraftError",
    "ExecutorError",
    "ExportConfigError",
    "HarnessError",
    "MatcherError",
    "MetricConfigError",
    "ModelConfigError",
    "OtlpRequestError",
    "ProviderError",
    "RefError",
    "ReportError",
    "ReportVersionError",
    "SampleError",
    "ScaffoldError",
    "ScenarioRunError",
    "ScoringError",
    "ScriptError",
    "SelectionError",
    "UnknownScenarioError",
    "WorkerLost",
]


class HarnessError(Exception):
    """Base class of every error toolcall-harness raises on purpose."""

    brief: ClassVar[bool] = False
    """The message says all a reader needs (what failed, where, the fix): the console and JUnit
    reports print it as one line, the traceback only in the JSON report and under ``-v``. Left
    False, an error keeps its traceback on the console, as an agent's own exception does."""


class ConfigError(HarnessError, ValueError):
    """Every configuration problem found across the loaded files, not only the first."""

    def __init__(self, issues: Sequence[ConfigIssue]) -> None:
        self.issues: tuple[ConfigIssue, ...] = tuple(issues)
        head = plural(len(self.issues), "configuration error")
        super().__init__(head + ":\n" + "\n".join(str(issue) for issue in self.issues))


class MetricConfigError(HarnessError, ValueError):
    """A metric built with bad options (threshold outside [0, 1], unknown name or option)."""

    def __init__(
        self,
        message: str,
        *,
        metric: str | None = None,
        option: str | None = None,
        value: Any = None,
    ) -> None:
        super().__init__(message)
        self.metric = metric
        """The metric's name, when known."""
        self.option = option
        """The option at fault (``threshold``, ``order``, ...), when one is."""
        self.value = value
        """The value given for it (None when not known)."""


class ModelConfigError(HarnessError, ValueError):
    """A model spec that cannot give a chat model: unknown kind, missing script, package or key."""

    brief = True

    def __init__(
        self, message: str, *, provider: str | None = None, option: str | None = None
    ) -> None:
        super().__init__(message)
        self.provider = provider
        """The model provider the spec names, when it names one."""
        self.option = option
        """The key of the ``model:`` mapping at fault (``provider``, ``max_concurrency``)."""


class ExportConfigError(HarnessError, ValueError):
    """The export settings (flags or OTEL_* variables) are invalid; the message names the fix."""

    def __init__(self, message: str, *, source: str | None = None, value: Any = None) -> None:
        super().__init__(message)
        self.source = source
        """Where the bad setting came from: the flag or the environment variable's name."""
        self.value = value
        """The setting as given (None when the problem is a missing package)."""


class UnknownScenarioError(HarnessError, ValueError):
    """``--scenario NAME`` names no loaded scenario; the message suggests the closest names."""

    def __init__(self, message: str, *, name: str | None = None) -> None:
        super().__init__(message)
        self.name = name
        """The scenario name asked for."""


class ScenarioRunError(HarnessError, ValueError):
    """A scenario its agent cannot run as written: ``context:`` for an agent without a
    ``context_schema``, a ``resume`` turn when the graph is not paused."""

    brief = True

    def __init__(
        self, message: str, *, scenario: str | None = None, turn: int | None = None
    ) -> None:
        super().__init__(message)
        self.scenario = scenario
        """``suite::name`` of the scenario."""
        self.turn = turn
        """The 0-based turn it happened in, for a conversation."""


class MatcherError(HarnessError, ValueError):
    """A malformed argument pattern: unknown ``$`` key or an operand of the wrong type."""

    def __init__(self, message: str, path: str = "", *, value: Any = None) -> None:
        self.path = path
        """JSON pointer of the pattern inside the arguments (``""`` at the top)."""
        self.value = value
        """The malformed pattern or operand, when the raiser passed it."""
        where = f"at {path}: " if path else ""
        super().__init__(f"{where}{message}")


class SampleError(HarnessError, ValueError):
    """A sample that a metric cannot score (no expectations, nothing recorded, bad call data)."""

    def __init__(self, message: str, *, metric: str | None = None) -> None:
        super().__init__(message)
        self.metric = metric
        """The metric that refused the sample, when a metric did."""


class ScoringError(HarnessError, ValueError):
    """A recorded run that a scenario cannot be scored on as written: that run's error, never
    a pass or a fail."""

    brief = True


class RefError(ScoringError):
    """A ``$ref`` that cannot be resolved: a path into a result that is not a JSON object or
    array, or a ``$ref`` matched before it was resolved (docs/metrics.md, "Data flow")."""

    def __init__(
        self, message: str, *, label: str | None = None, path: str = "", result: Any = None
    ) -> None:
        super().__init__(message)
        self.label = label
        """The label the ``$ref`` names."""
        self.path = path
        """The ``$ref`` as written (``find.result.order_id``)."""
        self.result = result
        """The result the path could not go into (None when not concerned)."""


class ScriptError(HarnessError, ValueError):
    """A scripted turn that cannot be played (wrong shape, missing tool name, bad args)."""

    brief = True

    def __init__(self, message: str, *, where: str | None = None) -> None:
        super().__init__(message)
        self.where = where
        """Which turn / tool call of the script (``turn 2, tool_calls[0]``), when known."""


class ScaffoldError(HarnessError, ValueError):
    """The starter project cannot be written (a file is in the way, or the folder is a file)."""

    def __init__(self, message: str, *, paths: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.paths: tuple[str, ...] = tuple(paths)
        """The paths in the way, when files would have been overwritten."""


class ProviderError(HarnessError):
    """A real provider's call failed (connection, HTTP status, timeout, a reply it cannot read).

    The message is one line: the model, the endpoint without credentials, and the cause. The
    provider SDK's exception is the ``__cause__``, so the traceback stays available to the
    JSON report and ``-v`` without being the message.
    """

    brief = True

    def __init__(self, message: str, *, model: str, endpoint: str | None = None) -> None:
        super().__init__(message)
        self.model = model
        """``provider:model`` as the scenario names it."""
        self.endpoint = endpoint
        """The URL the client talks to, credentials and query removed (None when unknown)."""


class CassetteError(HarnessError, ValueError):
    """A cassette file that cannot be read (bad YAML, unknown format version) or written."""

    brief = True

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        """The cassette file, when one is concerned."""


class CassetteMiss(CassetteError):
    """Under ``--replay`` a model turn has no recording; never a network call instead."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        scenario: str | None = None,
        turn: int | None = None,
        difference: str | None = None,
    ) -> None:
        super().__init__(message, path=path)
        self.scenario = scenario
        """``suite::name`` (or the pytest test id) whose model asked."""
        self.turn = turn
        """1-based model turn of the conversation (AI messages before it + 1)."""
        self.difference = difference
        """The first difference from the nearest recording, as the message says it."""


class DraftError(HarnessError, ValueError):
    """``harness draft`` was given a file it cannot draft from, or a scenario not in it."""

    def __init__(self, message: str, *, source: str | None = None) -> None:
        super().__init__(message)
        self.source = source
        """The cassette, trace file or report given."""


class SelectionError(HarnessError, ValueError):
    """A ``-k`` / ``-m`` expression that does not parse, or a selection input that is unusable."""

    def __init__(self, message: str, *, option: str = "", column: int | None = None) -> None:
        super().__init__(message)
        self.option = option
        """The flag concerned (``-k``, ``-m``, ``--rerun-failed``), empty when none."""
        self.column = column
        """1-based column of the expression where parsing stopped (None when not a parse)."""


class ReportError(HarnessError, ValueError):
    """A JSON report that cannot be compared: unreadable, not JSON, not a report, a field of
    the wrong type, or the same scenario listed twice. The message names the file and the fix."""

    brief = True

    def __init__(
        self, message: str, *, path: str = "", field: str | None = None, line: int | None = None
    ) -> None:
        super().__init__(message)
        self.path = path
        """The report file (or what stood for it: ``this run``)."""
        self.field = field
        """Where in the report: ``scenarios[3].runs[0].passed``; None for the file as a whole."""
        self.line = line
        """The 1-based line of a JSON syntax error, when that is the problem."""


class ReportVersionError(ReportError):
    """A report whose ``schema_version`` this release does not read: newer than it knows, or
    older than the first released format."""

    def __init__(self, message: str, *, path: str = "", version: object = None) -> None:
        super().__init__(message, path=path, field="schema_version")
        self.version = version
        """The ``schema_version`` the report gives."""


class WorkerLost(HarnessError):
    """A worker process ended without a shard's result (a signal, the out-of-memory killer,
    ``os._exit``): it will never come (harness/parallel/)."""

    def __init__(self, message: str, *, shard: Any = None) -> None:
        super().__init__(message)
        self.shard = shard
        """The shard the worker had in hand (a file slice, positions in a selection)."""


class OtlpRequestError(HarnessError, ValueError):
    """A request ``harness serve``'s OTLP receiver refuses, with the HTTP status it answers
    (harness/online/receiver.py) and a one-line reason."""

    def __init__(self, status: Any, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        """The HTTP status of the answer (``http.HTTPStatus``)."""
        self.reason = reason
        """What the answer's body says."""


class ExecutorError(HarnessError):
    """An ``--executor`` that cannot run: a malformed URL, a scheduler that does not answer in
    time or has no worker, Dask not installed (harness/parallel/dask.py)."""

    brief = True

    def __init__(self, message: str, *, url: str) -> None:
        super().__init__(message)
        self.url = url
        """The executor as the user gave it (``dask://HOST:PORT``, ``dask``)."""
