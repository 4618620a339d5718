"""Value equivalence and argument matchers: the one comparison used everywhere.

The rules are specified in docs/metrics.md (Values, Matchers, Argument diffs). The package is
layered, each module importing only those above it:

* :mod:`~harness.values.equivalence` — :func:`equivalent` (top level) and :func:`strict_equal`
  (nested), and the :data:`ABSENT` marker;
* :mod:`~harness.values.literal_keys` — :func:`literal_key` / :func:`args_key`, equivalence as
  hashing;
* :mod:`~harness.values.pattern` — the :class:`Matcher` interface, :class:`DictPattern` /
  :class:`ListPattern`, and matching (:func:`match_value`, :func:`args_match`, :func:`args_equal`);
* :mod:`~harness.values.matchers` — the matchers that test a value directly;
* :mod:`~harness.values.results` — :func:`read_result`, what a tool returned as a value;
* :mod:`~harness.values.refs` — ``$ref`` (:class:`Ref`) and its resolved forms;
* :mod:`~harness.values.compile` — ``$`` mappings into matchers, and the matchers whose operand is
  a pattern;
* :mod:`~harness.values.walk` — the ``$ref`` s a compiled pattern holds, and their substitution;
* :mod:`~harness.values.diff` — :func:`check_args`, :func:`check_result` and their
  :class:`ArgDiff` s.
"""

from __future__ import annotations

from harness.values.compile import (
    MATCHER_KEYS,
    Contains,
    OneOf,
    OptionalArg,
    Subset,
    Unordered,
    compile_args,
    compile_pattern,
)
from harness.values.diff import RESULT_PATH, ArgCheck, ArgCode, ArgDiff, check_args, check_result
from harness.values.equivalence import ABSENT, equivalent, strict_equal
from harness.values.literal_keys import args_key, literal_key
from harness.values.matchers import TYPE_NAMES, Absent, AnyValue, Approx, ICase, Regex, Type
from harness.values.pattern import (
    DictPattern,
    ListPattern,
    Matcher,
    args_equal,
    args_match,
    describe_pattern,
    match_value,
    pattern_to_json,
    pointer_token,
)
from harness.values.refs import LABEL, Ref, Resolved, Unresolved
from harness.values.results import json_structure, read_result, result_forms
from harness.values.walk import has_refs, refs_in, substitute

__all__ = [
    "ABSENT",
    "LABEL",
    "MATCHER_KEYS",
    "RESULT_PATH",
    "TYPE_NAMES",
    "Absent",
    "AnyValue",
    "Approx",
    "ArgCheck",
    "ArgCode",
    "ArgDiff",
    "Contains",
    "DictPattern",
    "ICase",
    "ListPattern",
    "Matcher",
    "OneOf",
    "OptionalArg",
    "Ref",
    "Regex",
    "Resolved",
    "Subset",
    "Type",
    "Unordered",
    "Unresolved",
    "args_equal",
    "args_key",
    "args_match",
    "check_args",
    "check_result",
    "compile_args",
    "compile_pattern",
    "describe_pattern",
    "equivalent",
    "has_refs",
    "json_structure",
    "literal_key",
    "match_value",
    "pattern_to_json",
    "pointer_token",
    "read_result",
    "refs_in",
    "result_forms",
    "strict_equal",
    "substitute",
]
