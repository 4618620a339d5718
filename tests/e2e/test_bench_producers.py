"""benchmarks/bench_producers.py's copies of a real producer's traces read as the seed reads.

The benchmark's figures mean something only if its files hold what the producer wrote: each
copy a trace of its own (fresh ids, every parent found), read into the same calls as the seed
trace it copies, and the interleaved layout really interleaving requests.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.bench_producers import LAYOUTS, first_difference, run_seed, write_layout
from tracing.otlp.reader import OtlpJsonReader

pytestmark = pytest.mark.slow


def _calls(trace: object) -> str:
    return json.dumps(
        [[c.name, dict(c.args), c.status, c.result] for c in trace.calls()],  # type: ignore[attr-defined]
        sort_keys=True,
        default=str,
    )


def _spans(path: Path) -> list[dict[str, object]]:
    spans = []
    with path.open(encoding="utf-8") as fp:
        for line in fp:
            (block,) = json.loads(line)["resourceSpans"]
            (scoped,) = block["scopeSpans"]
            assert len(scoped["spans"]) == 1  # one span a line, as SimpleSpanProcessor writes
            spans.extend(scoped["spans"])
    return spans


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> object:
    return run_seed("openai-loop", tmp_path_factory.mktemp("seed"))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_copies_read_as_the_seed_traces(seed: object, layout: str, tmp_path: Path) -> None:
    path = tmp_path / f"{layout}.jsonl"
    written = write_layout(seed, path, layout, 0.5)  # type: ignore[arg-type]
    seed_calls = Counter(_calls(t) for t in OtlpJsonReader(seed.path).iter_traces())  # type: ignore[attr-defined]
    reader = OtlpJsonReader(path)
    copies = list(reader.iter_traces())
    assert not reader.errors
    copies_made, left = divmod(written, sum(seed_calls.values()))
    assert left == 0 and copies_made > 2  # whole copies of the seed run
    assert len(copies) == written
    assert len({t.trace_id for t in copies}) == written
    read = Counter(_calls(t) for t in copies)
    assert read == Counter({calls: n * copies_made for calls, n in seed_calls.items()})

    spans = _spans(path)
    by_trace: dict[object, set[object]] = {}
    for span in spans:
        by_trace.setdefault(span["traceId"], set()).add(span["spanId"])
    assert all(
        span["parentSpanId"] in by_trace[span["traceId"]]
        for span in spans
        if span.get("parentSpanId")
    )
    ends = [int(span["endTimeUnixNano"]) for span in spans]  # type: ignore[call-overload]
    assert ends == sorted(ends)  # each span a line when it ends
    first: dict[object, int] = {}
    last: dict[object, int] = {}
    for index, span in enumerate(spans):
        first.setdefault(span["traceId"], index)
        last[span["traceId"]] = index
    overlapping = sum(1 for t in first for u in first if first[t] < first[u] <= last[t])
    if layout == "span-per-line":
        assert overlapping == 0
    else:
        assert overlapping > written  # traces alternate across lines


def test_first_difference_names_the_path() -> None:
    one = {"counts": {"passed": 3}, "scenarios": [{"status": "passed"}, {"status": "failed"}]}
    two = {"counts": {"passed": 3}, "scenarios": [{"status": "passed"}, {"status": "passed"}]}
    assert first_difference(one, two) == "$.scenarios[1].status: 'failed' vs 'passed'"
    assert first_difference(one, json.loads(json.dumps(one))) is None
