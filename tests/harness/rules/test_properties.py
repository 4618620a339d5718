"""``forbid``, ``allow``, ``before``, ``max_calls`` and ``max_repeats`` against brute force.

The brute force is the definition read plainly (docs/metrics.md, "Rules"): patterns matched
with ``fnmatchcase`` and literal equality, identical calls found by comparing every pair with
``args_equal``, an earlier call looked for among all earlier calls. Calls recorded without
content are handled by enumerating every completion of their arguments over the values in
play: the engine must pass exactly when every completion passes, fail only when every
completion fails (naming only calls that offend in every completion), and otherwise say the
rule is unevaluable. With everything captured, verdicts and offending calls must be equal.
"""

from __future__ import annotations

import fnmatch
import itertools
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from harness.rules import Rule, Trajectory, load_rules
from harness.values import args_equal
from tracing.records import ToolCall

NAMES = ["a", "b", "c"]
IDS = ["A", "B"]
ARGS: list[dict[str, Any]] = [{}, {"id": "A"}, {"id": "B"}, {"id": "A", "n": 1}]
# for max_repeats: values whose equality has rules (numbers by value at the top, strict below)
VALUES: list[Any] = [1, 1.0, True, "1", [1], [1.0], {"x": 1}, float("nan"), None]


def brute_match(pattern: dict[str, Any], call: ToolCall) -> bool:
    if not fnmatch.fnmatchcase(call.name, pattern["name"]):
        return False
    args = pattern.get("args")
    if not args:
        return True
    if call.status == "invalid":
        return False
    return all(key in call.args and call.args[key] == value for key, value in args.items())


def brute_forbid(spec: dict[str, Any], calls: list[ToolCall]) -> set[int]:
    return {i for i, c in enumerate(calls) if brute_match(spec["forbid"], c)}


def brute_allow(spec: dict[str, Any], calls: list[ToolCall]) -> set[int]:
    return {i for i, c in enumerate(calls) if not any(brute_match(p, c) for p in spec["allow"])}


def brute_max_calls(spec: dict[str, Any], calls: list[ToolCall]) -> set[int]:
    matching = [i for i, c in enumerate(calls) if brute_match(spec["max_calls"]["tool"], c)]
    return set(matching[spec["max_calls"]["max"] :])


def brute_before(spec: dict[str, Any], calls: list[ToolCall]) -> set[int]:
    first, then, same = spec["before"]["first"], spec["before"]["then"], spec["same"]
    offending = set()
    for t, later in enumerate(calls):
        if later.status == "invalid" or not brute_match(then, later):
            continue
        found = False
        for earlier in calls[:t]:
            if earlier.status == "invalid" or not brute_match(first, earlier):
                continue
            if same and not (
                "id" in later.args and earlier.args.get("id", object()) == later.args["id"]
            ):
                continue
            found = True
        if not found:
            offending.add(t)
    return offending


def brute_max_repeats(spec: dict[str, Any], calls: list[ToolCall]) -> set[int]:
    offending = set()
    for i, call in enumerate(calls):
        if call.status == "invalid":
            continue
        earlier = [
            c
            for c in calls[:i]
            if c.status != "invalid" and c.name == call.name and args_equal(c.args, call.args)
        ]
        if len(earlier) >= spec["max_repeats"]:
            offending.add(i)
    return offending


BRUTE: dict[str, Callable[[dict[str, Any], list[ToolCall]], set[int]]] = {
    "forbid": brute_forbid,
    "allow": brute_allow,
    "max_calls": brute_max_calls,
    "before": brute_before,
    "max_repeats": brute_max_repeats,
}


def compile_spec(kind: str, spec: dict[str, Any]) -> Rule:
    body = {key: value for key, value in spec.items() if key != "same"}
    if kind == "before" and spec["same"]:
        first = dict(body["before"]["first"])
        first["args"] = {**first.get("args", {}), "id": {"$same": "id"}}
        body["before"] = {**body["before"], "first": first}
    (rule,) = load_rules([{"name": "r", **body}])
    return rule


# --- generation -----------------------------------------------------------------------------

patterns = st.builds(
    lambda name, args: {"name": name, **({"args": args} if args else {})},
    st.sampled_from([*NAMES, "*", "[ab]"]),
    st.sampled_from([{}, {"id": "A"}, {"id": "B"}]),
)
specs = {
    "forbid": patterns.map(lambda p: {"forbid": p}),
    "allow": st.lists(patterns, min_size=1, max_size=3).map(lambda ps: {"allow": ps}),
    "max_calls": st.builds(
        lambda p, n: {"max_calls": {"tool": p, "max": n}}, patterns, st.integers(1, 3)
    ),
    "before": st.builds(
        # with $same, first's id is the 'then' call's: no literal id beside it
        lambda f, t, same: {
            "before": {"first": {"name": f["name"]} if same else f, "then": t},
            "same": same,
        },
        patterns,
        patterns,
        st.booleans(),
    ),
    "max_repeats": st.integers(1, 3).map(lambda n: {"max_repeats": n}),
}


def calls_of(args: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[list[ToolCall]]:
    one = st.one_of(
        st.builds(
            lambda name, a, status: ToolCall(name=name, args=a, status=status),
            st.sampled_from(NAMES),
            args,
            st.sampled_from(["ok", "error", "requested", "interrupted"]),
        ),
        st.builds(lambda name: ToolCall.invalid(name, '{"id": "A"', None), st.sampled_from(NAMES)),
    )
    return st.lists(one, max_size=7)


pattern_args = st.sampled_from(ARGS)
repeat_args = st.dictionaries(st.sampled_from(["x", "y"]), st.sampled_from(VALUES), max_size=2)


def verdict(rule: Rule, trajectory: Trajectory) -> tuple[str, set[int]]:
    result = rule.evaluate(trajectory)
    if result.error:
        assert result.code == "unevaluable", result.reason
        return "unevaluable", set(result.calls)
    assert result.calls == tuple(sorted(result.calls))
    return ("pass" if result.passed else "fail"), set(result.calls)


def completions(
    calls: list[ToolCall], gaps: set[int], domain: list[dict[str, Any]]
) -> list[list[ToolCall]]:
    """Every way to fill in the arguments of the calls in ``gaps``."""
    out = []
    for choice in itertools.product(domain, repeat=len(gaps)):
        filled = list(calls)
        for position, args in zip(sorted(gaps), choice, strict=True):
            filled[position] = replace(calls[position], args=args)
        out.append(filled)
    return out


def check_against_brute_force(
    kind: str,
    spec: dict[str, Any],
    calls: list[ToolCall],
    gaps: set[int],
    domain: list[dict[str, Any]],
) -> None:
    rule = compile_spec(kind, spec)
    brute = BRUTE[kind]
    recorded = [replace(c, args={}) if i in gaps else c for i, c in enumerate(calls)]
    gaps = {i for i in gaps if calls[i].status != "invalid"}  # invalid args are known: none
    got, offending = verdict(rule, Trajectory(calls=tuple(recorded), not_captured=frozenset(gaps)))
    outcomes = [brute(spec, filled) for filled in completions(recorded, gaps, domain)]
    if not gaps:
        (only,) = outcomes
        assert (got, offending) == (("fail", only) if only else ("pass", set()))
        return
    every = set.intersection(*outcomes)
    # sound always: a pass or a fail that no completion contradicts
    if got == "pass":
        assert not any(outcomes)
    elif got == "fail":
        assert all(outcomes) and offending and offending <= every
    # exact where each uncaptured call decides alone; for `before`, an uncaptured call that may
    # be a `then` call is judged with its arguments unknown for `then` and `$same` separately
    then = spec["before"]["then"]["name"] if kind == "before" else None
    if then is not None and any(fnmatch.fnmatchcase(calls[i].name, then) for i in gaps):
        return
    if kind in ("max_calls", "max_repeats"):
        expected = "fail" if all(outcomes) else "unevaluable" if any(outcomes) else "pass"
        assert got == expected
    else:
        expected = "fail" if every else "unevaluable" if any(outcomes) else "pass"
        assert (got, offending if every else set()) == (expected, every)


@st.composite
def cases(draw: st.DrawFn, kind: str) -> tuple[dict[str, Any], list[ToolCall], set[int]]:
    spec = draw(specs[kind])
    calls = draw(calls_of(repeat_args if kind == "max_repeats" else pattern_args))
    gaps: set[int] = set()
    if calls and draw(st.booleans()):
        gaps = draw(st.sets(st.integers(0, len(calls) - 1), max_size=2))
    return spec, calls, gaps


def domain_for(kind: str, calls: list[ToolCall]) -> list[dict[str, Any]]:
    if kind != "max_repeats":
        return ARGS
    # the arguments any call holds, and a fresh mapping equal to no other
    seen: list[dict[str, Any]] = []
    for call in calls:
        # by the rule's equality, not Python's: {"x": 1} and {"x": True} are two arguments
        if call.status != "invalid" and not any(args_equal(s, call.args) for s in seen):
            seen.append(dict(call.args))
    return [*seen, {"fresh": 1}, {"fresh": 2}]


def run_case(kind: str, case: tuple[dict[str, Any], list[ToolCall], set[int]]) -> None:
    spec, calls, gaps = case
    check_against_brute_force(kind, spec, calls, gaps, domain_for(kind, calls))


@settings(max_examples=300, deadline=None)
@given(cases("forbid"))
def test_forbid_against_brute_force(case: Any) -> None:
    run_case("forbid", case)


@settings(max_examples=300, deadline=None)
@given(cases("allow"))
def test_allow_against_brute_force(case: Any) -> None:
    run_case("allow", case)


@settings(max_examples=400, deadline=None)
@given(cases("before"))
def test_before_against_brute_force(case: Any) -> None:
    run_case("before", case)


@settings(max_examples=300, deadline=None)
@given(cases("max_calls"))
def test_max_calls_against_brute_force(case: Any) -> None:
    run_case("max_calls", case)


@settings(max_examples=400, deadline=None)
@given(cases("max_repeats"))
@example(  # {"x": 1} == {"x": True} in Python, not for the rule: both are in the domain
    (
        {"max_repeats": 2},
        [
            ToolCall(name="a", args={"x": 1, "y": 1}),
            ToolCall(name="a", args={"x": True, "y": True}),
            ToolCall(name="a", args={"x": True, "y": True}),
        ],
        {0},
    )
)
def test_max_repeats_against_brute_force(case: Any) -> None:
    run_case("max_repeats", case)
