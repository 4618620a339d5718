"""Redactor: secret keys masked at any depth (also inside JSON strings), nothing else touched."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.redaction import DEFAULT_REDACT_KEYS, MASK, Redactor

REDACTOR = Redactor()

SECRET_KEYS = st.sampled_from(
    [
        "api_key",
        "API-KEY",
        "apiKey",
        "x-api-key",
        "password",
        "Passwd",
        "client_secret",
        "token",
        "github_token",
        "Authorization",
        "access-token",
        "refreshToken",
        "APIKey",
    ]
)
PLAIN_KEYS = st.sampled_from(
    ["city", "max_tokens", "tokenizer", "secretary", "keys", "auth", "user", "passage", "api"]
)
SECRET_VALUES = st.text(alphabet="ABCDEFGHJKLMNPQRSTUVWXYZ", min_size=12, max_size=20).map(
    lambda s: "S3CR3T" + s
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(alphabet="abc xyz{}[]:,", max_size=8),
)


def _tree(keys: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    return st.recursive(
        SCALARS,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(keys, children, max_size=4),
            # a nested JSON document, as tool arguments travel inside span attributes
            st.dictionaries(keys, children, max_size=3).map(json.dumps),
        ),
        max_leaves=12,
    )


def _plant(tree: Any, key: str, secret: str) -> Any:
    """Put ``{key: secret}`` somewhere deep in ``tree``."""
    if isinstance(tree, dict):
        return {**tree, "nested": [{key: secret}]}
    if isinstance(tree, list):
        return [*tree, {"inner": {key: secret}}]
    return {"wrapper": [tree, json.dumps({"deep": {key: secret}})]}


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("api_key", True),
        ("API-Key", True),
        ("apiKey", True),
        ("APIKEY", True),
        ("x-api-key", True),
        ("HTTPAuthorization", True),
        ("accessToken", True),
        ("refresh_token", True),
        ("github_token", True),
        ("db.password", True),
        ("max_tokens", False),
        ("tokenizer", False),
        ("secretary", False),
        ("city", False),
        ("keys", False),
        ("", False),
    ],
)
def test_key_matching(key: str, expected: bool) -> None:
    """Words of the key are compared: separators, case and camelCase do not matter."""
    assert REDACTOR.matches(key) is expected


def test_masks_at_any_depth_and_inside_json_strings() -> None:
    """Lists, dicts and JSON strings inside JSON strings are all walked."""
    inner = json.dumps({"Password": "hunter2", "user": "ada"})
    value = {"q": [{"auth": {"Authorization": "Bearer x"}}], "payload": json.dumps({"doc": inner})}

    out = REDACTOR.redact(value)

    assert out["q"] == [{"auth": {"Authorization": MASK}}]
    payload = json.loads(out["payload"])
    assert json.loads(payload["doc"]) == {"Password": MASK, "user": "ada"}
    assert value["q"] == [{"auth": {"Authorization": "Bearer x"}}]  # the input is untouched


def test_json_unicode_escapes_cannot_hide_a_key() -> None:
    r"""A key spelled with \\u escapes in JSON text is still found."""
    text = '{"pass\\u0077ord": "hunter2"}'
    assert json.loads(REDACTOR.redact_text(text)) == {"password": MASK}


def test_tuples_stay_tuples_and_non_json_strings_are_kept() -> None:
    """Containers keep their type; strings that merely look like JSON pass through."""
    value = ("{not json", {"token": 1})
    assert REDACTOR.redact(value) == ("{not json", {"token": MASK})


def test_attributes_mask_secret_leaves_but_not_namespaces() -> None:
    """``llm.token_count.total`` is a count; ``http.request.header.authorization`` a secret."""
    attributes = {
        "llm.token_count.total": 12,
        "http.request.header.authorization": ("Bearer x",),
        "gen_ai.tool.call.arguments": '{"token": "t"}',
        "gen_ai.tool.name": "login",
    }
    out = REDACTOR.redact_attributes(attributes)
    assert out == {
        "llm.token_count.total": 12,
        "http.request.header.authorization": MASK,
        "gen_ai.tool.call.arguments": json.dumps({"token": MASK}),
        "gen_ai.tool.name": "login",
    }


def test_custom_keys_and_empty_list() -> None:
    """The list is configurable; an empty list redacts nothing."""
    custom = Redactor(["session-id"])
    assert custom.redact({"sessionId": 1, "password": 2}) == {"sessionId": MASK, "password": 2}
    assert not Redactor([]).enabled
    assert Redactor([]).redact({"password": 2}) == {"password": 2}
    assert set(DEFAULT_REDACT_KEYS) >= {"api_key", "password", "token", "authorization"}


def test_a_key_without_letters_is_rejected_with_its_value() -> None:
    """A misconfigured entry fails loudly, naming the entry."""
    with pytest.raises(ValueError, match="'--'"):
        Redactor(["--"])


@settings(max_examples=150, deadline=None)
@given(tree=_tree(st.one_of(PLAIN_KEYS, SECRET_KEYS)), key=SECRET_KEYS, secret=SECRET_VALUES)
def test_never_leaks_a_value_under_a_redacted_key(tree: Any, key: str, secret: str) -> None:
    """Wherever the secret sits (dicts, lists, JSON text), it is gone from the output."""
    value = _plant(tree, key, secret)
    before = copy.deepcopy(value)

    out = REDACTOR.redact(value)

    assert secret not in json.dumps(out)
    assert value == before  # never mutates


@settings(max_examples=150, deadline=None)
@given(tree=_tree(PLAIN_KEYS))
def test_non_matching_data_comes_back_as_the_same_object(tree: Any) -> None:
    """Fast path: nothing to mask -> the very same object, no copy."""
    assert REDACTOR.redact(tree) is tree


@settings(max_examples=150, deadline=None)
@given(tree=_tree(st.one_of(PLAIN_KEYS, SECRET_KEYS)))
def test_idempotent(tree: Any) -> None:
    """Redacting twice is redacting once (and the second pass copies nothing)."""
    once = REDACTOR.redact(tree)
    twice = REDACTOR.redact(once)
    assert twice == once
    assert twice is once


@settings(max_examples=150, deadline=None)
@given(
    mapping=st.dictionaries(
        st.text(alphabet='aAkKpPsStT_-.wodeyinrc \n\\"\u212a', min_size=1, max_size=14),
        st.text(max_size=5),
        max_size=4,
    )
)
def test_text_precheck_never_skips_a_match(mapping: dict[str, str]) -> None:
    """The cheap pre-check on JSON text agrees with a full parse for any key spelling."""
    text = json.dumps(mapping, ensure_ascii=False)
    expected = {k: (MASK if REDACTOR.matches(k) else v) for k, v in mapping.items()}
    assert json.loads(REDACTOR.redact_text(text)) == expected


# --- secrets in free text: one collector, one minimum length --------------------------------


def _run_with(args: dict[str, Any], result: Any = None, expected: Any = None) -> Any:
    from harness.run.results import RunResult
    from harness.sample import Sample
    from tracing.records import ToolCall

    sample = Sample(
        tool_calls=[ToolCall("login", args, result=result)],
        expected_tool_calls=[expected] if expected is not None else [],
    )
    return RunResult(0, False, sample)


def test_one_collector_finds_values_under_secret_keys_everywhere() -> None:
    """Arguments, nested and JSON-text ones, results and expectations; numbers too."""
    from harness.redaction import MIN_SECRET_LENGTH, collect_secrets

    run = _run_with(
        {
            "user": "ada",
            "token": "abc",
            "pin": 4321,  # not a secret key
            "nested": {"password": " hunter2 "},
            "payload": '{"api_key": "sk-9", "to": "bob"}',
            "access_token": 98765,
            "apikey": "ab",  # shorter than the minimum: scrubbing it would garble text
        },
        result={"refresh_token": "r-77"},
        expected={"name": "login", "args": {"secret": "exp-1"}},
    )
    assert MIN_SECRET_LENGTH == 3
    assert collect_secrets([run], REDACTOR) == {"abc", "hunter2", "sk-9", "98765", "r-77", "exp-1"}
    assert collect_secrets([run], Redactor([])) == frozenset()


def test_scrubbers_share_the_rule_and_the_stream_remembers_for_the_summary() -> None:
    from harness.redaction import Scrubber, StreamScrubber
    from harness.run.results import ScenarioResult, SuiteResult

    run = _run_with({"token": "abc-long", "password": "abc"})
    scrubber = Scrubber.for_runs(REDACTOR, [run])
    assert scrubber.secrets == ("abc-long", "abc")  # longest first: replaced whole
    assert scrubber.text("sent abc-long then abc") == f"sent {MASK} then {MASK}"
    assert scrubber.value({"token": "abc", "note": "x abc y"}) == {"token": MASK, "note": "x *** y"}
    stream = StreamScrubber(REDACTOR)
    scenario = ScenarioResult("s", "n", "f", 1, "failed", (run,))
    assert set(stream.for_result(scenario).secrets) == set(scrubber.secrets)
    empty = SuiteResult(warnings=("saw abc-long",))  # a sample that kept nothing
    assert stream.for_summary(empty).text(empty.warnings[0]) == f"saw {MASK}"
