"""Metric throughput: our tool-call metrics against Ragas 0.4.3 on the same random samples.

Run with ``make bench`` (Ragas lives in the separate ``.venv-bench``), or directly:

    .venv-bench/bin/python benchmarks/bench_metrics.py [--samples N] [--seed S] [--quick]

Without Ragas installed (the main ``.venv``) it prints our figures only and says Ragas is absent.
Only scoring is timed: our ``Sample``s and Ragas's message lists are built beforehand.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import gc
import os
import random
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

# Ragas phones home on use unless told not to; this bench must not touch the network.
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

SPEED_TARGET = 2.0
BIG_TARGET_S = 2.0
BIG_SIZE = 2_000
WARM_UP = 50  # untimed calls per metric before timing

TOOLS = ("search", "get_weather", "send_email", "book_flight", "lookup_order")
ARG_KEYS = ("query", "city", "limit", "units", "to", "filters", "tags", "ratio", "flag", "page")
WORDS = ("Berlin", "paris", "ok", "", "a b", "Ünïcode", "10", "9", "True", "x" * 12)

JsonCall = tuple[str, dict[str, Any]]


@dataclass(frozen=True, slots=True)
class RawSample:
    """One generated case: expected calls and the calls the 'agent' made, as plain data."""

    expected: list[JsonCall]
    actual: list[JsonCall]


# ---------------------------------------------------------------- generation


def _scalar(rng: random.Random) -> Any:
    kind = rng.randrange(5)
    if kind == 0:
        return rng.randint(-3, 50)
    if kind == 1:
        # Integral floats on purpose: 3.0 vs 3 is where equivalence rules differ.
        return float(rng.randint(0, 9)) if rng.random() < 0.3 else round(rng.uniform(-5, 5), 3)
    if kind == 2:
        return rng.choice(WORDS)
    if kind == 3:
        return rng.random() < 0.5
    return rng.choice(WORDS) + str(rng.randint(0, 99))


def _value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth < 2 and roll < 0.12:
        return {rng.choice(ARG_KEYS): _value(rng, depth + 1) for _ in range(rng.randint(1, 3))}
    if depth < 2 and roll < 0.24:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return _scalar(rng)


def _call(rng: random.Random) -> JsonCall:
    keys = rng.sample(ARG_KEYS, rng.randint(1, 5))
    return rng.choice(TOOLS), {key: _value(rng) for key in keys}


def _twin(rng: random.Random, value: Any) -> Any:
    """A value that looks like ``value`` but differs under some rule (type, order, content)."""
    if isinstance(value, bool):
        return int(value) if rng.random() < 0.5 else str(value)
    if isinstance(value, int):
        return [float(value), str(value), value + 1][rng.randrange(3)]
    if isinstance(value, float):
        return int(value) if value.is_integer() else value + 0.5
    if isinstance(value, str):
        return value.upper() if rng.random() < 0.5 else value + "!"
    if isinstance(value, dict):
        # Same items, other insertion order: equal as dicts, different as str().
        return dict(reversed(list(value.items()))) if len(value) > 1 else {**value, "extra": 1}
    if isinstance(value, list):
        return list(reversed(value)) if len(value) > 1 else [*value, 0]
    return _scalar(rng)


def _wrong_args(rng: random.Random, call: JsonCall) -> JsonCall:
    name, args = call
    args = dict(args)
    key = rng.choice(list(args))
    roll = rng.random()
    if roll < 0.5:
        args[key] = _twin(rng, args[key])
    elif roll < 0.65:
        args[key] = _value(rng)
    elif roll < 0.8 and len(args) > 1:
        del args[key]
    else:
        args[rng.choice(ARG_KEYS)] = _value(rng)
    return name, args


def _perturb(rng: random.Random, expected: list[JsonCall]) -> list[JsonCall]:
    # Fresh objects, as a parsed transcript would give: no identity shortcuts in comparisons.
    actual = copy.deepcopy(expected)
    if rng.random() < 0.3:
        return actual  # a fair share of perfect runs, so scores are not all zero
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(4)
        if kind == 0 and actual:
            del actual[rng.randrange(len(actual))]
        elif kind == 1:
            extra = (
                copy.deepcopy(rng.choice(actual)) if actual and rng.random() < 0.5 else _call(rng)
            )
            actual.insert(rng.randint(0, len(actual)), extra)
        elif kind == 2 and len(actual) > 1:
            i, j = rng.sample(range(len(actual)), 2)
            actual[i], actual[j] = actual[j], actual[i]
        elif actual:
            index = rng.randrange(len(actual))
            actual[index] = _wrong_args(rng, actual[index])
    return actual


def generate(count: int, seed: int) -> list[RawSample]:
    """``count`` seeded random samples: 1–12 expected calls, perturbed copies as actual calls."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        expected = [_call(rng) for _ in range(rng.randint(1, 12))]
        out.append(RawSample(expected, _perturb(rng, expected)))
    return out


def big_sample(size: int, seed: int, *, dense: bool) -> RawSample:
    """``size`` expected × ``size`` actual calls of one tool.

    dense: every call identical, so every one of size² pairs is compatible (worst case for the
    matching); otherwise distinct args, shuffled, one call in ten with a wrong argument.
    """
    rng = random.Random(seed)
    if dense:
        expected = [("search", {"query": "weather", "limit": 5}) for _ in range(size)]
        return RawSample(expected, copy.deepcopy(expected))
    expected = [("search", {"query": f"q{i}", "page": i % 7, "limit": 5}) for i in range(size)]
    actual = copy.deepcopy(expected)
    rng.shuffle(actual)
    for index in range(0, size, 10):
        name, args = actual[index]
        actual[index] = (name, {**args, "limit": 6})
    return RawSample(expected, actual)


# ---------------------------------------------------------------- timing


@dataclass(frozen=True, slots=True)
class Timing:
    """Best-of-N wall time for scoring every sample once, and the values of the last pass."""

    label: str
    seconds: float
    count: int
    values: list[float]

    @property
    def rate(self) -> float:
        """Samples per second."""
        return self.count / self.seconds if self.seconds > 0 else float("inf")


@dataclass(frozen=True, slots=True)
class Job:
    """One thing to time: a pass that scores every input once and returns the values."""

    run: Callable[[], list[float]]
    count: int


def sync_job(metric: Any, samples: Sequence[Any]) -> Job:
    """A pass of ``metric.evaluate`` over every sample (warmed up first, untimed)."""
    evaluate = metric.evaluate
    for sample in samples[:WARM_UP]:
        evaluate(sample)  # lazy imports and caches are paid here, not in the timed passes

    def run() -> list[float]:
        return [evaluate(sample).value for sample in samples]

    return Job(run, len(samples))


def async_job(score_one: Callable[[Any], Any], inputs: Sequence[Any]) -> Job:
    """A pass awaiting ``score_one(input)`` for every input inside one event loop."""

    async def run_all(items: Sequence[Any]) -> list[float]:
        return [_as_float(await score_one(item)) for item in items]

    asyncio.run(run_all(inputs[:WARM_UP]))

    def run() -> list[float]:
        # One loop for the whole pass: a loop per call would add our overhead to Ragas's time.
        return asyncio.run(run_all(inputs))

    return Job(run, len(inputs))


FLOOR_KEY = ("floor", "bare loop")


def floor_job(samples: Sequence[Any]) -> Job:
    """The least any metric pays per sample: read both call lists and produce a float."""

    def run() -> list[float]:
        return [
            1.0 if sample.tool_calls is not None and sample.expected_tool_calls else 0.0
            for sample in samples
        ]

    return Job(run, len(samples))


PROOFS_GIVEN = "ToolCallAccuracy, argument bytes looked up, not computed"


def proofs_given_job(samples: Sequence[Any]) -> Job:
    """ToolCallAccuracy with every actual call's argument bytes taken from a table built
    beforehand: what the metric would cost if its identity proofs (``marshal.dumps`` of each
    call's arguments, harness/matching.py) cost one lookup. A counterfactual, printed as
    information: how far pure-Python work other than the proofs leaves us from the target."""
    import harness.matching as common
    from harness.metrics import ToolCallAccuracy

    dumps = common._dumps
    table: dict[int, bytes] = {}
    for sample in samples:
        for call in sample.tool_calls:
            # no bytes: the metric's own fallback applies, as in the real run
            with contextlib.suppress(ValueError):
                table[id(call.args)] = dumps(call.args, 2)
    find = table.get

    def given(args: Any, version: int) -> bytes:
        found = find(id(args))
        return dumps(args, version) if found is None else found

    inner = sync_job(ToolCallAccuracy(), samples)

    def run() -> list[float]:
        common._dumps = given
        try:
            return inner.run()
        finally:
            common._dumps = dumps

    return Job(run, len(samples))


def run_rounds(jobs: dict[tuple[str, str], Job], repeat: int) -> dict[tuple[str, str], Timing]:
    """Best of ``repeat`` rounds, each round timing every job once.

    Interleaving the jobs (rather than all passes of one job, then the next) spreads load drift
    on a shared machine over both sides of every ratio.
    """
    best = dict.fromkeys(jobs, float("inf"))
    values: dict[tuple[str, str], list[float]] = {}
    with warnings.catch_warnings():
        # Ragas warns on every length mismatch; printing thousands of warnings would dominate.
        warnings.simplefilter("ignore")
        for _ in range(repeat):
            for key, job in jobs.items():
                gc.collect()
                # Like timeit: a collection landing in one side's loop would bias the ratio.
                gc.disable()
                try:
                    start = time.perf_counter()
                    values[key] = job.run()
                    best[key] = min(best[key], time.perf_counter() - start)
                finally:
                    gc.enable()
    return {key: Timing(key[1], best[key], job.count, values[key]) for key, job in jobs.items()}


def _as_float(result: Any) -> float:
    return float(getattr(result, "value", result))


# ---------------------------------------------------------------- our side


def build_our_samples(raw: Iterable[RawSample]) -> list[Any]:
    """Our ``Sample`` objects (expected ToolCalls are coerced to expectations here, untimed)."""
    from harness import Sample, ToolCall

    return [
        Sample(
            tool_calls=[ToolCall(name=name, args=args) for name, args in item.actual],
            expected_tool_calls=[ToolCall(name=name, args=args) for name, args in item.expected],
        )
        for item in raw
    ]


ACCURACY = "ToolCallAccuracy"
SEQ_STRICT = 'ToolCallSequenceAccuracy(order="strict")'
SEQ_FLEXIBLE = 'ToolCallSequenceAccuracy(order="flexible")'
F1 = "ToolCallF1"
COMPAT_STRICT = 'ToolCallSequenceAccuracy(order="strict", compat="ragas")'
COMPAT_FLEXIBLE = 'ToolCallSequenceAccuracy(order="flexible", compat="ragas")'
COMPAT_F1 = 'ToolCallF1(compat="ragas")'


def our_metrics() -> dict[str, Any]:
    """The timed metrics, keyed by the label printed: defaults first, then compat="ragas"."""
    from harness.metrics import ToolCallAccuracy, ToolCallF1, ToolCallSequenceAccuracy

    return {
        ACCURACY: ToolCallAccuracy(),
        SEQ_STRICT: ToolCallSequenceAccuracy(order="strict"),
        SEQ_FLEXIBLE: ToolCallSequenceAccuracy(order="flexible"),
        F1: ToolCallF1(),
        COMPAT_STRICT: ToolCallSequenceAccuracy(order="strict", compat="ragas"),
        COMPAT_FLEXIBLE: ToolCallSequenceAccuracy(order="flexible", compat="ragas"),
        COMPAT_F1: ToolCallF1(compat="ragas"),
    }


# ---------------------------------------------------------------- Ragas side


def ragas_version() -> str | None:
    """Ragas's version, or None when it cannot be imported here."""
    try:
        import ragas
    except Exception:  # Ragas absent or broken (e.g. langchain-community>=0.4): both mean skip.
        return None
    return str(ragas.__version__)


@dataclass(frozen=True, slots=True)
class RagasInputs:
    """Per sample: the message list (collections API) and the MultiTurnSample (legacy API)."""

    messages: list[list[Any]]
    references: list[list[Any]]
    samples: list[Any]


def build_ragas_inputs(raw: Sequence[RawSample]) -> RagasInputs:
    """Ragas messages the way an agent transcript looks: a question, then the AI's tool calls."""
    from ragas.dataset_schema import MultiTurnSample
    from ragas.messages import AIMessage, HumanMessage
    from ragas.messages import ToolCall as RagasToolCall

    messages, references, samples = [], [], []
    for item in raw:
        calls = [RagasToolCall(name=name, args=args) for name, args in item.actual]
        reference = [RagasToolCall(name=name, args=args) for name, args in item.expected]
        turn = [HumanMessage(content="please help"), AIMessage(content="", tool_calls=calls)]
        messages.append(turn)
        references.append(reference)
        samples.append(MultiTurnSample(user_input=turn, reference_tool_calls=reference))
    return RagasInputs(messages, references, samples)


COLLECTIONS = "collections ascore"
LEGACY = "legacy multi_turn_ascore"


def ragas_jobs(inputs: RagasInputs) -> dict[tuple[str, str], Job]:
    """Ragas's metrics through both official APIs, keyed by (API, metric key)."""
    from ragas.metrics._tool_call_accuracy import ToolCallAccuracy as LegacyAccuracy
    from ragas.metrics._tool_call_f1 import ToolCallF1 as LegacyF1
    from ragas.metrics.collections import ToolCallAccuracy, ToolCallF1

    collections = {
        "accuracy_strict": ToolCallAccuracy(strict_order=True),
        "accuracy_flexible": ToolCallAccuracy(strict_order=False),
        "f1": ToolCallF1(),
    }
    legacy = {
        "accuracy_strict": LegacyAccuracy(strict_order=True),
        "accuracy_flexible": LegacyAccuracy(strict_order=False),
        "f1": LegacyF1(),
    }
    pairs = list(zip(inputs.messages, inputs.references, strict=True))
    jobs: dict[tuple[str, str], Job] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for key, metric in collections.items():
            jobs[COLLECTIONS, key] = async_job(_keyword_caller(metric.ascore), pairs)
        for key, metric in legacy.items():
            jobs[LEGACY, key] = async_job(metric.multi_turn_ascore, inputs.samples)
    return jobs


def _keyword_caller(ascore: Callable[..., Any]) -> Callable[[Any], Any]:
    """Adapt the collections ``ascore(user_input=, reference_tool_calls=)`` to one argument."""

    def call(pair: tuple[list[Any], list[Any]]) -> Any:
        return ascore(user_input=pair[0], reference_tool_calls=pair[1])

    return call


# ---------------------------------------------------------------- report


RAGAS_LABELS = {
    "accuracy_strict": "ToolCallAccuracy(strict_order=True)",
    "accuracy_flexible": "ToolCallAccuracy(strict_order=False)",
    "f1": "ToolCallF1",
}

# (our metric, Ragas metric key, counts for the target): the same concept on both sides.
RATIOS = (
    (ACCURACY, "accuracy_strict", True),
    (SEQ_STRICT, "accuracy_strict", True),
    (F1, "f1", True),
    (SEQ_FLEXIBLE, "accuracy_flexible", False),
    # information: our ToolCallAccuracy ignores order, as Ragas's strict_order=False does
    (ACCURACY, "accuracy_flexible", False),
    (COMPAT_STRICT, "accuracy_strict", False),
    (COMPAT_FLEXIBLE, "accuracy_flexible", False),
    (COMPAT_F1, "f1", False),
    # information: the same metric if its identity proofs cost a lookup (proofs_given_job)
    (PROOFS_GIVEN, "accuracy_strict", False),
)

# Our compat="ragas" metric that must reproduce each Ragas metric exactly.
COMPAT_OF = {
    "accuracy_strict": COMPAT_STRICT,
    "accuracy_flexible": COMPAT_FLEXIBLE,
    "f1": COMPAT_F1,
}


def _row(label: str, timing: Timing) -> str:
    per = timing.seconds / timing.count * 1e6
    return f"  {label:<58} {timing.rate:>10,.0f} samples/s {per:>9.2f} µs/sample"


def _describe_calls(calls: list[JsonCall], limit: int = 400) -> str:
    text = "[" + ", ".join(f"{name}({args!r})" for name, args in calls) + "]"
    return text if len(text) <= limit else text[:limit] + " ..."


def agreement(
    raw: Sequence[RawSample], ours: dict[str, list[float]], ragas: dict[str, list[float]]
) -> tuple[dict[str, int], list[str]]:
    """Disagreements per metric (exact float equality) and a few printable examples."""
    counts: dict[str, int] = {}
    examples: list[str] = []
    for key, our_values in ours.items():
        theirs = ragas[key]
        bad = [i for i, (a, b) in enumerate(zip(our_values, theirs, strict=True)) if a != b]
        counts[key] = len(bad)
        for index in bad[:3]:
            examples.append(
                f"    {key} sample {index}: ours {our_values[index]!r}, Ragas {theirs[index]!r}\n"
                f"      expected {_describe_calls(raw[index].expected)}\n"
                f"      actual   {_describe_calls(raw[index].actual)}"
            )
    return counts, examples


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000, help="random samples (10000)")
    parser.add_argument("--seed", type=int, default=20_240_611, help="generator seed")
    parser.add_argument("--repeat", type=int, default=3, help="timed passes, best kept (3)")
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: 300 samples, one pass, small big-case"
    )
    parser.add_argument("--no-ragas", action="store_true", help="skip Ragas even if installed")
    args = parser.parse_args(argv)
    if args.quick:
        args.samples, args.repeat = min(args.samples, 300), 1
    if args.samples < 1 or args.repeat < 1:
        parser.error(f"--samples and --repeat must be >= 1, got {args.samples} and {args.repeat}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the figures; exit 1 if compat="ragas" disagrees with Ragas."""
    args = parse_args(argv)
    raw = generate(args.samples, args.seed)
    mean_expected = sum(len(item.expected) for item in raw) / len(raw)
    mean_actual = sum(len(item.actual) for item in raw) / len(raw)
    print(f"bench_metrics: {len(raw):,} samples, seed {args.seed}, best of {args.repeat} rounds")
    print(f"  mean calls per sample: {mean_expected:.2f} expected, {mean_actual:.2f} actual")
    print(f"  python {sys.version.split()[0]}")

    samples = build_our_samples(raw)
    jobs = {("ours", label): sync_job(metric, samples) for label, metric in our_metrics().items()}
    jobs["ours", PROOFS_GIVEN] = proofs_given_job(samples)
    jobs[FLOOR_KEY] = floor_job(samples)
    version = None if args.no_ragas else ragas_version()
    if version is not None:
        jobs.update(ragas_jobs(build_ragas_inputs(raw)))
    timings = run_rounds(jobs, args.repeat)

    ours = {label: timing for (group, label), timing in timings.items() if group == "ours"}
    floor = timings[FLOOR_KEY]
    print("\nours (harness.metrics, metric.evaluate)")
    for label, timing in ours.items():
        print(_row(label, timing) + f"  {timing.seconds / floor.seconds:>6.1f}x the floor")
    print(_row("floor: a bare loop reading each sample's two call lists", floor))
    same = ours[PROOFS_GIVEN].values == ours[ACCURACY].values
    print(f"  ({PROOFS_GIVEN}: {'the same' if same else 'OTHER'} values as {ACCURACY})")
    failures = 0
    if version is None:
        print("\nRagas: not installed here (use `make bench`, which runs in .venv-bench)")
    else:
        theirs: dict[str, dict[str, Timing]] = {COLLECTIONS: {}, LEGACY: {}}
        for (group, key), timing in timings.items():
            if group in theirs:
                theirs[group][key] = timing
        failures = _ragas_section(raw, ours, theirs, version)

    _big_section(args.seed, 200 if args.quick else BIG_SIZE)
    return 1 if failures else 0


def _fastest_api(theirs: dict[str, dict[str, Timing]], key: str) -> str:
    return min(theirs, key=lambda api: theirs[api][key].seconds)


def _ragas_section(
    raw: Sequence[RawSample],
    ours: dict[str, Timing],
    theirs: dict[str, dict[str, Timing]],
    version: str,
) -> int:
    print(f"\nRagas {version}")
    for api, timings in theirs.items():
        print(f" {api}")
        for key, timing in timings.items():
            print(_row(RAGAS_LABELS[key], timing))

    fastest_api = {key: _fastest_api(theirs, key) for key in RAGAS_LABELS}
    print(
        f"\nratio ours / Ragas, Ragas on its faster API per metric; target >= {SPEED_TARGET:.0f}x"
    )
    for our_label, key, counts in RATIOS:
        ratio = ours[our_label].rate / theirs[fastest_api[key]][key].rate
        verdict = ("met" if ratio >= SPEED_TARGET else "MISSED") if counts else "(info)"
        print(
            f"  {our_label:<58} vs {RAGAS_LABELS[key]:<36} {ratio:>7.2f}x  {verdict:<6}"
            f"  Ragas via {fastest_api[key]}"
        )
    slow_api = LEGACY
    print(f"  for reference, the same three against Ragas's {slow_api}:")
    for our_label, key, counts in RATIOS:
        if counts:
            ratio = ours[our_label].rate / theirs[slow_api][key].rate
            print(f"  {our_label:<58} vs {RAGAS_LABELS[key]:<36} {ratio:>7.2f}x")

    reference = {key: timing.values for key, timing in theirs[COLLECTIONS].items()}
    legacy = {key: timing.values for key, timing in theirs[slow_api].items()}
    counts_of, examples = agreement(
        raw, {key: ours[label].values for key, label in COMPAT_OF.items()}, reference
    )
    print('\nagreement: our compat="ragas" vs Ragas, exact float equality (must be 0)')
    for key, label in COMPAT_OF.items():
        print(
            f"  {label:<58} vs {RAGAS_LABELS[key]:<36} {counts_of[key]:>6,} / {len(raw):,} disagree"
        )
    split = [key for key in reference if reference[key] != legacy[key]]
    if split:
        print(f"  note: Ragas's two APIs disagree with each other on {', '.join(split)}")
    for line in examples:
        print(line)
    return sum(counts_of.values())


def _big_section(seed: int, size: int) -> None:
    print(
        f"\none sample of {size:,} expected x {size:,} actual calls of one tool, "
        f"target < {BIG_TARGET_S:.0f} s"
    )
    for variant, label, seconds, value in run_big(seed, size):
        verdict = "met" if seconds < BIG_TARGET_S else "MISSED"
        print(f"  {variant:<36} {label:<18} {seconds:>8.3f} s  value {value:.4f}  {verdict}")


def run_big(seed: int, size: int) -> list[tuple[str, str, float, float]]:
    """Score one ``size`` x ``size`` sample (distinct and dense variants) per metric, once."""
    from harness.metrics import ToolCallAccuracy, ToolCallF1

    rows = []
    for dense in (False, True):
        variant = "dense: all identical" if dense else "distinct args, shuffled, 10% wrong"
        sample = build_our_samples([big_sample(size, seed, dense=dense)])
        for label, metric in (
            ("ToolCallAccuracy", ToolCallAccuracy()),
            ("ToolCallF1", ToolCallF1()),
        ):
            start = time.perf_counter()
            value = metric.evaluate(sample[0]).value
            rows.append((variant, label, time.perf_counter() - start, value))
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
