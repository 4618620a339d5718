"""RuleProcessor: an OTel SDK span processor that checks every live trace as it finishes.

The app adds it to its ``TracerProvider`` next to its exporter. Ended spans are kept per open
trace (a list append on the app's thread); when the trace's root span ends, or after
``trace_timeout`` seconds without a new span, the trace is queued for one worker thread that
reads it into a :class:`~tracing.otel.trace_run.TraceRun` (any convention the trace reader
knows), evaluates every policy that selects it, and sends one ``gen_ai.evaluation.result``
event per rule result plus the ``harness.rule.*`` counters (:mod:`harness.online.signals`).
See docs/metrics.md, "Rules", and issue 28.
"""

from __future__ import annotations

import functools
import os
import queue
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from opentelemetry.context import _SUPPRESS_INSTRUMENTATION_KEY, attach, set_value
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor

from harness.online.policy import OnlinePolicy, TraceResult
from harness.online.reading import Received, SpanItem, read_trace, root_only, span_hex_id
from harness.online.signals import Signals, trace_context
from harness.redaction import Redactor, Scrubber
from tracing import SpanView
from tracing.otel.span_view import SpanEvent
from tracing.otel.trace_run import TraceRun

if TYPE_CHECKING:
    from opentelemetry._logs import LoggerProvider
    from opentelemetry.context import Context
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import Span

__all__ = ["RuleProcessor"]

DEFAULT_TRACE_TIMEOUT = 300.0
DEFAULT_MAX_OPEN_TRACES = 10_000
DEFAULT_MAX_SPANS_PER_TRACE = 5_000
DEFAULT_QUEUE_SIZE = 2_048
DEFAULT_SHUTDOWN_MILLIS = 30_000
_DONE_KEPT = 10_000
"""At least this many finished or dropped trace ids are remembered, so their late spans (the
root of a trace dropped for max_open_traces) are let go instead of opening a new trace."""
_SWEEP_MAX = 1.0
"""The worker looks for timed-out traces at least this often (seconds)."""


@dataclass(slots=True)
class _Open:
    """The spans one trace collected so far."""

    items: list[SpanItem] = field(default_factory=list)
    seen: float = 0.0
    """time.monotonic() of its latest span."""
    root: SpanItem | None = None
    due: float = 0.0
    """With a root and a ``root_grace``: time.monotonic() when it is evaluated."""
    overflowed: bool = False
    """It passed max_spans_per_trace: its spans were let go and it will not be evaluated."""
    events: list[tuple[str, SpanEvent]] = field(default_factory=list)
    """Log events received for its spans (``harness serve``'s ``/v1/logs``): (span id, event)."""


@dataclass(frozen=True, slots=True)
class _Job:
    trace_id: str
    items: list[SpanItem]
    root: SpanItem | None
    events: list[tuple[str, SpanEvent]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Flush:
    done: threading.Event = field(default_factory=threading.Event)


_STOP = object()


def _policies(
    given: str | os.PathLike[str] | Iterable[OnlinePolicy | str | os.PathLike[str]],
) -> tuple[OnlinePolicy, ...]:
    """Policy objects as given, policy files loaded in their place (in order)."""
    items = [given] if isinstance(given, str | os.PathLike) else list(given)
    if not any(isinstance(item, str | os.PathLike) for item in items):
        return tuple(items)  # type: ignore[arg-type]
    from harness.policies import load_policies

    loaded: list[Any] = []
    for item in items:
        loaded.extend(load_policies([item]) if isinstance(item, str | os.PathLike) else [item])
    return tuple(loaded)


class RuleProcessor(SpanProcessor):
    """Evaluate policies on every trace the app finishes: events, counters, ``on_result``.

    ``provider.add_span_processor(RuleProcessor("policies.yaml", logger_provider=...,
    meter_provider=...))``. ``policies`` is a policy file path, a list of paths, or loaded
    policy objects (:class:`~harness.online.policy.OnlinePolicy`: ``name``, ``selects(run)``,
    ``evaluate(run)``, as :func:`harness.policies.load_policies` gives); files load when the
    processor is built. Issue 28 names this class ``tracing.RuleProcessor``: it lives in
    ``harness.online`` because ``tracing`` never imports ``harness`` (where the rules are).
    Events and counters go to the given providers (default: the global ones).

    A trace is evaluated when its local root span ends (a span with no parent, or a remote
    one), or ``trace_timeout`` seconds after its latest span when no root arrives (marked
    ``harness.trace.complete = false``). Each result is one ``gen_ai.evaluation.result`` event
    linked to the trace and its root span, counted in ``harness.rule.evaluations`` (and
    ``harness.rule.violations`` when it failed), and passed to ``on_result`` as a
    :class:`~harness.online.policy.TraceResult`. A passing result's event carries its
    explanation only with ``explain_passes`` (formatting and masking it is the cost of a
    sentence nobody acts on).

    Threading contract (as the SDK's ``BatchSpanProcessor``): ``on_start`` does nothing;
    ``on_end`` runs on the thread that ended the span and only appends it to its trace under a
    lock, queueing the trace when its root ended; it never blocks on evaluation and never
    raises. One daemon worker thread reads and evaluates the queued traces in order, emits the
    events and counters and calls ``on_result``; an exception in a policy, in ``on_result`` or
    in the reader is counted in ``harness.rule.errors`` and logged, never raised. ``on_result``
    runs on the worker: keep it short, and do not call this processor's ``force_flush`` or
    ``shutdown`` from it (they return False / do not wait there). The worker runs with
    instrumentation suppressed (the SDK's own batch processors do the same while exporting), so
    what ``on_result`` or the app's log exporter does makes no spans that come back here.

    ``root_grace`` (seconds, default 0) waits that long after the root ends before evaluating,
    taking the spans that still arrive: for ``harness serve``, where the spans of other services
    in the same trace may come in later batches than the root. In the app the local root ends
    after its children, so none is needed.

    Bounds: at most ``max_open_traces`` traces are open (beyond that the oldest is dropped),
    ``max_spans_per_trace`` spans per trace (beyond that the trace is dropped), and
    ``queue_size`` traces wait for the worker (beyond that the new one is dropped). Each drop is
    counted in ``harness.rule.dropped`` (attribute ``reason``) and the first of each reason is
    one warning; spans of a dropped trace that arrive later are not counted again.

    ``force_flush(timeout_millis)`` evaluates every trace queued before the call (root ended or
    timed out) and returns whether that finished in time; open traces (those waiting out
    ``root_grace`` included) stay open.
    ``shutdown(timeout_millis)`` stops taking spans, evaluates the queued traces and the open
    ones (marked incomplete) within the timeout, then stops the worker; what is still pending is
    dropped with a count (``reason="shutdown"``).
    """

    def __init__(
        self,
        policies: str | os.PathLike[str] | Iterable[OnlinePolicy | str | os.PathLike[str]],
        *,
        on_result: Callable[[TraceResult], object] | None = None,
        trace_timeout: float = DEFAULT_TRACE_TIMEOUT,
        max_open_traces: int = DEFAULT_MAX_OPEN_TRACES,
        max_spans_per_trace: int = DEFAULT_MAX_SPANS_PER_TRACE,
        queue_size: int = DEFAULT_QUEUE_SIZE,
        root_grace: float = 0.0,
        logger_provider: LoggerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        redactor: Redactor | None = None,
        explain_passes: bool = False,
    ) -> None:
        """Start the worker; ValueError for a bound that is not positive or an object that is
        not a policy, ConfigError for a policy file that does not load."""
        self._policies = _policies(policies)
        self._prefilters = [_prefilter(policy) for policy in self._policies]
        for index, policy in enumerate(self._policies):
            if not isinstance(policy, OnlinePolicy):
                raise ValueError(
                    f"policies[{index}] is a {type(policy).__name__}, not a policy: give objects "
                    "with a name, selects(run) and evaluate(run) (load policy files first)"
                )
        for name, value in (
            ("trace_timeout", trace_timeout),
            ("max_open_traces", max_open_traces),
            ("max_spans_per_trace", max_spans_per_trace),
            ("queue_size", queue_size),
        ):
            if not value > 0:
                raise ValueError(f"{name} must be positive, got {value!r}")
        if not root_grace >= 0:
            raise ValueError(f"root_grace must be 0 or more, got {root_grace!r}")
        self._grace = float(root_grace)
        self._on_result = on_result
        self._timeout = float(trace_timeout)
        self._max_open = max_open_traces
        self._max_spans = max_spans_per_trace
        self._signals = Signals(logger_provider, meter_provider, redactor, explain_passes)
        self._lock = threading.Lock()
        self._open: OrderedDict[str, _Open] = OrderedDict()
        self._done: OrderedDict[str, None] = OrderedDict()
        """Recently finished or dropped traces: their late spans are let go, not reopened."""
        self._queue_size = queue_size
        self._queue: queue.Queue[object] = queue.Queue(maxsize=queue_size)
        self._shut = False
        self._sweep_every = min(_SWEEP_MAX, self._timeout / 4, (self._grace or _SWEEP_MAX) / 2)
        self._worker = self._start()
        if hasattr(os, "register_at_fork"):  # a pre-forking server: each child gets a worker
            after = weakref.WeakMethod(self._after_fork)
            os.register_at_fork(after_in_child=lambda: _call(after))

    def _start(self) -> threading.Thread:
        worker = threading.Thread(target=self._work, name="HarnessRuleProcessor", daemon=True)
        worker.start()
        return worker

    def _after_fork(self) -> None:
        """In a forked child: the parent's worker and lock did not come along; its open
        traces are the parent's to evaluate."""
        self._lock = threading.Lock()
        self._open = OrderedDict()
        self._done = OrderedDict()
        self._queue = queue.Queue(maxsize=self._queue_size)
        if not self._shut:
            self._worker = self._start()

    # SpanProcessor -------------------------------------------------------------------------

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Nothing to do when a span starts."""

    def on_end(self, span: ReadableSpan) -> None:
        """Keep the span with its trace; queue the trace when this is its root. Never raises."""
        try:
            context = span.context
            if context is None:
                return
            parent = span.parent
            is_root = parent is None or parent.is_remote
            self._take(format(context.trace_id, "032x"), span, is_root)
        except Exception:  # never into the app's thread
            self._signals.error("on_end")

    def receive(self, view: SpanView, resource: Mapping[str, Any]) -> None:
        """Keep a span decoded from an OTLP request (``harness serve``); as :meth:`on_end`."""
        try:
            self._take(view.trace_id, Received(view, resource), view.parent_id is None)
        except Exception:
            self._signals.error("receive")

    def receive_event(self, trace_id: str, span_id: str, event: SpanEvent) -> None:
        """Keep a log event of a span (``harness serve``'s ``/v1/logs``: content written as
        GenAI events): joined to its span before the trace is read. An event of a trace
        already evaluated is let go; events count toward ``max_spans_per_trace``."""
        try:
            self._take_event(trace_id, span_id, event)
        except Exception:
            self._signals.error("receive")

    def force_flush(self, timeout_millis: int | None = 30_000) -> bool:
        """Evaluate every trace queued so far; True when done within the timeout (None: the
        default 30 s, as the SDK's batch processor takes it)."""
        if self._shut or threading.current_thread() is self._worker:
            return False
        deadline = time.monotonic() + (30_000 if timeout_millis is None else timeout_millis) / 1000
        marker = _Flush()
        try:
            self._queue.put(marker, timeout=max(0.0, deadline - time.monotonic()))
        except queue.Full:
            return False
        return marker.done.wait(max(0.0, deadline - time.monotonic()))

    def shutdown(self, timeout_millis: int = DEFAULT_SHUTDOWN_MILLIS) -> None:
        """Stop taking spans, evaluate what is pending within the timeout, stop the worker."""
        with self._lock:
            if self._shut:
                return
            self._shut = True
            pending = [self._job(trace_id, trace) for trace_id, trace in self._open.items()]
            self._open.clear()
        if threading.current_thread() is self._worker:
            self._drop_queued()
            return
        deadline = time.monotonic() + timeout_millis / 1000
        jobs = [job for job in pending if job is not None]
        for index, job in enumerate([*jobs, _STOP]):
            try:
                self._queue.put(job, timeout=max(0.0, deadline - time.monotonic()))
            except queue.Full:  # the worker is stuck past the timeout: count, do not wait
                if index < len(jobs):
                    self._signals.dropped("shutdown", len(jobs) - index)
                break
        self._worker.join(max(0.0, deadline - time.monotonic()))
        self._drop_queued()

    # App thread -----------------------------------------------------------------------------

    def _take(self, trace_id: str, item: SpanItem, is_root: bool) -> None:
        jobs: list[_Job] = []
        drops: list[str] = []
        with self._lock:
            trace = self._opened(trace_id, jobs, drops)
            if trace is None:
                return
            if self._fits(trace, drops):
                trace.items.append(item)
            if is_root and self._grace and not trace.overflowed:
                trace.root, trace.due = item, trace.seen + self._grace  # the sweep queues it
            elif is_root:
                del self._open[trace_id]
                self._finish(trace_id)
                if not trace.overflowed:
                    trace.root = item
                    jobs.append(_Job(trace_id, trace.items, item, trace.events))
        self._send(jobs, drops)

    def _take_event(self, trace_id: str, span_id: str, event: SpanEvent) -> None:
        jobs: list[_Job] = []
        drops: list[str] = []
        with self._lock:
            trace = self._opened(trace_id, jobs, drops)
            if trace is not None and self._fits(trace, drops):
                trace.events.append((span_id, event))
        self._send(jobs, drops)

    def _opened(self, trace_id: str, jobs: list[_Job], drops: list[str]) -> _Open | None:
        """The open trace, opened now when new (evicting the oldest past max_open_traces);
        None after shutdown or for a trace already evaluated or dropped (its late spans and
        events are let go). The caller holds the lock."""
        if self._shut:
            return None
        trace = self._open.get(trace_id)
        if trace is None:
            if trace_id in self._done:
                return None
            if len(self._open) >= self._max_open:
                oldest, evicted = self._open.popitem(last=False)
                if evicted.root is not None:  # its root came: evaluate it now, not drop it
                    jobs.append(_Job(oldest, evicted.items, evicted.root, evicted.events))
                elif not evicted.overflowed:  # (an overflowed one was counted already)
                    drops.append("max_open_traces")
                self._finish(oldest)
            trace = self._open[trace_id] = _Open()
        trace.seen = time.monotonic()
        return trace

    def _fits(self, trace: _Open, drops: list[str]) -> bool:
        """Is there room for one more span or event (else the trace overflows, once)?"""
        if trace.overflowed:
            return False
        if len(trace.items) + len(trace.events) < self._max_spans:
            return True
        trace.overflowed = True
        trace.items, trace.events, trace.root = [], [], None
        drops.append("max_spans_per_trace")
        return False

    def _send(self, jobs: list[_Job], drops: list[str]) -> None:
        """Count the drops and queue the jobs, outside the lock."""
        for reason in drops:
            self._signals.dropped(reason)
        for job in jobs:
            try:
                self._queue.put_nowait(job)
            except queue.Full:
                self._signals.dropped("queue_full")

    def _finish(self, trace_id: str) -> None:
        """Remember a trace that left the open set (caller holds the lock)."""
        self._done[trace_id] = None
        if len(self._done) > max(_DONE_KEPT, self._max_open):
            self._done.popitem(last=False)

    def _job(self, trace_id: str, trace: _Open) -> _Job | None:
        """An open trace as a job, with its root if it arrived (caller holds the lock)."""
        self._finish(trace_id)
        if trace.overflowed or not trace.items:
            return None
        return _Job(trace_id, trace.items, trace.root, trace.events)

    # Worker ---------------------------------------------------------------------------------

    def _work(self) -> None:
        # what the worker does (reading, the app's log and metric exporters) makes no spans of
        # its own in instrumented libraries: they would come back here as traces to evaluate
        attach(set_value(_SUPPRESS_INSTRUMENTATION_KEY, True))
        swept = time.monotonic()
        while True:
            try:
                job = self._queue.get(timeout=self._sweep_every)
            except queue.Empty:
                if self._shut:  # shutdown could not queue its stop: leave once drained
                    return
                job = None
            if job is _STOP:
                return
            try:  # whatever happens to one trace, the worker goes on with the next
                if isinstance(job, _Flush):
                    job.done.set()
                elif isinstance(job, _Job):
                    self._evaluate(job)
                now = time.monotonic()
                if now - swept >= self._sweep_every:
                    swept = now
                    for expired in self._expired(now):
                        self._evaluate(expired)
            except Exception:
                self._signals.error("worker")

    def _is_due(self, trace: _Open, now: float) -> bool:
        if trace.root is not None:
            return now >= trace.due
        return now - trace.seen >= self._timeout

    def _expired(self, now: float) -> list[_Job]:
        """Take the open traces whose root's grace has passed, and those without a span for
        ``trace_timeout`` seconds."""
        with self._lock:
            if self._shut:
                return []
            stale = [
                t
                for t, trace in self._open.items()
                if (
                    now >= trace.due
                    if trace.root is not None
                    else now - trace.seen >= self._timeout
                )
            ]
            jobs = [self._job(t, self._open.pop(t)) for t in stale]
        return [job for job in jobs if job is not None]

    def _evaluate(self, job: _Job) -> None:
        try:
            if not self._may_select(job):
                return
            run = read_trace(job.trace_id, job.items, job.root, job.events)
            scrub = _Once(functools.partial(self._signals.scrubber, run))
            anchor = job.root if job.root is not None else _first(job.items)
            span_id = span_hex_id(anchor) if anchor is not None else None
            context = trace_context(job.trace_id, span_id)
        except Exception:
            self._signals.error("read")
            return
        for policy in self._policies:
            name = _name(policy)
            try:
                if not policy.selects(run):
                    continue
                results = tuple(policy.evaluate(run))
            except Exception:
                self._signals.error("policy", name)
                continue
            for result in results:
                item = TraceResult(result, name, job.trace_id, span_id, job.root is not None)
                try:
                    self._signals.result(item, scrub, context)
                except Exception:
                    self._signals.error("emit", name)
                if self._on_result is not None:
                    try:
                        self._on_result(item)
                    except Exception:
                        self._signals.error("on_result", name)

    def _may_select(self, job: _Job) -> bool:
        """Can some policy select this trace? Read from its root span and resource alone,
        before the spans are read: a trace no policy's ``service`` / ``root`` /
        ``attributes`` keys take is let go unread (``agent`` and ``uses_tool`` need the
        read trace, so a policy with only those may select it)."""
        if job.root is None:
            return True
        shallow: TraceRun | None = None
        for prefilter in self._prefilters:
            if prefilter is None:
                return True
            if shallow is None:
                shallow = root_only(job.trace_id, job.root)
            try:
                if prefilter(shallow):
                    return True
            except Exception:
                return True  # the policy's own selects() says, after the read
        return False

    def _drop_queued(self) -> None:
        """Count what the worker did not reach before shutdown's timeout."""
        left = 0
        while True:
            try:
                job = self._queue.get_nowait()
            except queue.Empty:
                break
            if isinstance(job, _Flush):
                job.done.set()
            elif isinstance(job, _Job):
                left += 1
        if left:
            self._signals.dropped("shutdown", left)


class _Once:
    """A value made on first use, then kept (a trace's scrubber: only failures need it)."""

    __slots__ = ("_make", "_value")

    def __init__(self, make: Callable[[], Scrubber]) -> None:
        self._make: Callable[[], Scrubber] | None = make
        self._value: Scrubber | None = None

    def __call__(self) -> Scrubber:
        if self._make is not None:
            self._value, self._make = self._make(), None
        assert self._value is not None
        return self._value


def _prefilter(policy: Any) -> Callable[[TraceRun], bool] | None:
    """A policy file's selector without its ``agent`` and ``uses_tool`` keys (what the root
    span and resource alone can answer), or None for a policy that may select any trace."""
    select = getattr(policy, "select", None)
    try:
        from harness.policies.select import Selector
    except ImportError:  # pragma: no cover - harness.policies ships with harness
        return None
    if not isinstance(select, Selector):
        return None
    shallow = replace(select, agent=None, uses_tool=())
    return None if shallow.every_trace else shallow.selects


def _call(method: weakref.WeakMethod[Callable[[], None]]) -> None:
    bound = method()
    if bound is not None:
        bound()


def _first(items: list[SpanItem]) -> SpanItem | None:
    """The span that started first (the anchor of a trace read without its root)."""
    return min(items, key=_start, default=None)


def _start(item: SpanItem) -> int:
    return item.view.start_ns if isinstance(item, Received) else item.start_time or 0


def _name(policy: OnlinePolicy) -> str:
    try:
        return str(policy.name)
    except Exception:  # a policy whose name cannot be read is still evaluated
        return f"<{type(policy).__name__}>"
