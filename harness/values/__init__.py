"""Value equivalence and argument matchers: the one comparison used everywhere.

The rules are specified in docs/metrics.md (Values, Matchers, Argument diffs). The package is
layered, each module importing only those above it:

* :mod:`~harness.values.equivalence` — :func:`equivalent` (top level) and :func:`strict_equal`
  (nested), and the :data:`ABSENT` marker;
* :mod:`~harness.values.keys` — :func:`literal_key` / :func:`args_key`, equivalence as hashing;
* :mod:`~harness.values.pattern` — the :class:`Matcher` interface, :class:`DictPattern` /
  :class:`ListPattern`, and matching (:func:`match_value`, :func:`args_match`, :func:`args_equal`);
* :mod:`~harness.values.matchers` — the matchers that test a value directly;
* :mod:`~harness.values.compile` — ``$`` mappings into matchers, and the matchers whose operand is
  a pattern;
* :mod:`~harness.values.diff` — :func:`check_args` and its :class:`ArgDiff` s.
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
from harness.values.diff import ArgCheck, ArgCode, ArgDiff, check_args
from harness.values.equivalence import ABSENT, equivalent, strict_equal
from harness.values.keys import args_key, literal_key
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

__all__ = [
    "ABSENT",
    "MATCHER_KEYS",
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
    "Regex",
    "Subset",
    "Type",
    "Unordered",
    "args_equal",
    "args_key",
    "args_match",
    "check_args",
    "compile_args",
    "compile_pattern",
    "describe_pattern",
    "equivalent",
    "literal_key",
    "match_value",
    "pattern_to_json",
    "pointer_token",
    "strict_equal",
]
