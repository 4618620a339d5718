"""Which scenarios a run takes: pytest's ``-k`` / ``-m`` expressions, node ids, last failures.

The conventions are pytest's, so a CI user needs to learn nothing new:

- ``-k EXPR``: ``and`` / ``or`` / ``not`` / parentheses over words; a word matches a scenario
  when it is a substring (any case) of its name, its suite's name, its id ``suite::name``, its
  file's name, or one of its tags. A repeated ``-k`` must hold every time (pytest keeps only
  the last one, which surprises; here they are joined with ``and``).
- ``-m EXPR``: the same grammar, a word being true when it *is* one of the scenario's tags
  (``tags:`` on the suite and the scenario).
- ``file.yaml::scenario name`` given as a path selects that one scenario of that file.
- ``--lf`` reruns what failed last time, from :data:`LAST_FAILED_FILE` (written after every
  ``harness run``, as pytest's cache plugin does); ``--rerun-failed RESULTS.json`` reruns the
  failures a JSON report lists (the CI artifact of another run).

The grammar (pytest's, re-implemented: ``_pytest.mark.expression`` is private API)::

    expression: expr? END
    expr:       and_expr ("or" and_expr)*
    and_expr:   not_expr ("and" not_expr)*
    not_expr:   "not" not_expr | "(" expr ")" | word
    word:       (letters, digits, _ : + - . [ ] \\ /)+
"""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from harness.errors import SelectionError
from harness.text import did_you_mean

if TYPE_CHECKING:  # the run parser adds this module's flags: it must not load the suite models
    from harness.scenarios.model import Scenario

__all__ = [
    "EXIT_NO_SCENARIOS",
    "LAST_FAILED_FILE",
    "Expression",
    "NodeId",
    "Selection",
    "add_arguments",
    "failed_in_report",
    "node_id",
    "parse_expression",
    "read_last_failed",
    "split_node_ids",
    "write_last_failed",
]

EXIT_NO_SCENARIOS = 5
"""pytest's exit code when nothing was collected or everything was deselected."""

LAST_FAILED_FILE = Path(".harness_cache") / "lastfailed.json"
"""Where ``harness run`` keeps the node ids that failed or errored (relative to the cwd)."""

# --- the expression language ----------------------------------------------------------------

TokenKind = Literal["(", ")", "and", "or", "not", "word", "end"]

_TOKEN = re.compile(r"\s*(?:(?P<paren>[()])|(?P<word>[\w:+\-.\[\]\\/]+)|(?P<bad>\S))")
_KEYWORDS: dict[str, TokenKind] = {"and": "and", "or": "or", "not": "not"}


@dataclass(frozen=True, slots=True)
class _Token:
    kind: TokenKind
    text: str
    column: int
    """1-based, as pytest reports it."""


def _tokens(text: str, option: str) -> Iterator[_Token]:
    position = 0
    while position < len(text):
        found = _TOKEN.match(text, position)
        if found is None:  # only trailing whitespace is left
            break
        start = found.start(found.lastgroup or 0) + 1
        if found.group("paren"):
            paren = found.group("paren")
            yield _Token("(" if paren == "(" else ")", paren, start)
        elif found.group("word"):
            word = found.group("word")
            yield _Token(_KEYWORDS.get(word, "word"), word, start)
        else:
            raise SelectionError(
                f"{option} {text!r}: at column {start}: unexpected character "
                f"{found.group('bad')!r}",
                option=option,
                column=start,
            )
        position = found.end()
    yield _Token("end", "", len(text) + 1)


@dataclass(frozen=True, slots=True)
class _Word:
    text: str

    def holds(self, matches: Callable[[str], bool]) -> bool:
        return matches(self.text)


@dataclass(frozen=True, slots=True)
class _Not:
    inner: _Node

    def holds(self, matches: Callable[[str], bool]) -> bool:
        return not self.inner.holds(matches)


@dataclass(frozen=True, slots=True)
class _And:
    left: _Node
    right: _Node

    def holds(self, matches: Callable[[str], bool]) -> bool:
        return self.left.holds(matches) and self.right.holds(matches)


@dataclass(frozen=True, slots=True)
class _Or:
    left: _Node
    right: _Node

    def holds(self, matches: Callable[[str], bool]) -> bool:
        return self.left.holds(matches) or self.right.holds(matches)


@dataclass(frozen=True, slots=True)
class _Always:
    def holds(self, matches: Callable[[str], bool]) -> bool:
        return True


_Node = _Word | _Not | _And | _Or | _Always

_EXPECTED_OPERAND = "'not', '(' or a word"


class _Parser:
    """Recursive descent over the tokens, one method per rule of the grammar above."""

    def __init__(self, text: str, option: str) -> None:
        self.text = text
        self.option = option
        self.tokens = list(_tokens(text, option))
        self.at = 0

    @property
    def current(self) -> _Token:
        return self.tokens[self.at]

    def accept(self, kind: TokenKind) -> _Token | None:
        token = self.current
        if token.kind != kind:
            return None
        self.at += 1
        return token

    def fail(self, expected: str, hint: str = "") -> SelectionError:
        token = self.current
        got = "end of input" if token.kind == "end" else repr(token.text)
        return SelectionError(
            f"{self.option} {self.text!r}: at column {token.column}: expected {expected}; "
            f"got {got}" + (f" ({hint})" if hint else ""),
            option=self.option,
            column=token.column,
        )

    def expression(self) -> _Node:
        if self.accept("end"):
            return _Always()
        node = self.expr()
        if not self.accept("end"):
            hint = "" if self.current.kind != "word" else "join the words of a name with 'and'"
            raise self.fail("'and', 'or' or the end", hint)
        return node

    def expr(self) -> _Node:
        node = self.and_expr()
        while self.accept("or"):
            node = _Or(node, self.and_expr())
        return node

    def and_expr(self) -> _Node:
        node = self.not_expr()
        while self.accept("and"):
            node = _And(node, self.not_expr())
        return node

    def not_expr(self) -> _Node:
        if self.accept("not"):
            return _Not(self.not_expr())
        if self.accept("("):
            node = self.expr()
            if not self.accept(")"):
                raise self.fail("')'")
            return node
        word = self.accept("word")
        if word is None:
            raise self.fail(_EXPECTED_OPERAND)
        return _Word(word.text)


@dataclass(frozen=True, slots=True)
class Expression:
    """A parsed ``-k`` / ``-m`` expression; :meth:`holds` evaluates it over a word test."""

    source: str
    root: _Node

    def holds(self, matches: Callable[[str], bool]) -> bool:
        """True when the expression holds, ``matches(word)`` deciding each word."""
        return self.root.holds(matches)


def parse_expression(text: str, option: str = "-k") -> Expression:
    """Parse ``text``; a SelectionError names the column where it stops making sense."""
    return Expression(text, _Parser(text, option).expression())


# --- node ids ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NodeId:
    """``file.yaml::scenario name``: one scenario of one file, given where a path goes."""

    file: str
    name: str

    @property
    def text(self) -> str:
        """As written: ``file::name``."""
        return f"{self.file}::{self.name}"


def split_node_ids(paths: Iterable[str]) -> tuple[list[str], list[NodeId]]:
    """The paths to load (node ids contribute their file) and the node ids among them.

    A path that exists as written is a path even with ``::`` in it (a file may be named so).
    """
    files: list[str] = []
    nodes: list[NodeId] = []
    for path in paths:
        if "::" in path and not os.path.exists(path):
            file, name = path.split("::", 1)
            nodes.append(NodeId(file, name))
            files.append(file)
        else:
            files.append(path)
    return list(dict.fromkeys(files)), nodes


def node_id(scenario: Scenario) -> str:
    """The scenario's node id: ``file::name``, the file as the loader displays it."""
    return f"{scenario.file}::{scenario.name}"


def _same_file(a: str, b: str) -> bool:
    return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


# --- last failures ------------------------------------------------------------------------------


def read_last_failed(path: Path = LAST_FAILED_FILE) -> set[str]:
    """The node ids that failed or errored in the last run (empty when there is no file)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return set()
    except (OSError, ValueError) as exc:
        raise SelectionError(f"--lf: cannot read {path}: {exc}", option="--lf") from None
    if not isinstance(data, Mapping):
        raise SelectionError(f"--lf: {path} is not a mapping of node ids", option="--lf")
    return {str(key) for key, value in data.items() if value}


def write_last_failed(ran: Iterable[tuple[str, bool]], path: Path = LAST_FAILED_FILE) -> None:
    """Update the file with this run: ``(node id, failed)`` for each scenario that ran.

    As pytest's cache: a scenario that passed now leaves the list, one that failed joins it,
    and the ones not run this time keep what they had.
    """
    try:
        known = read_last_failed(path)
    except SelectionError:
        known = set()  # a damaged file is rewritten rather than left to break every --lf
    for node, failed in ran:
        if failed:
            known.add(node)
        else:
            known.discard(node)
    path.parent.mkdir(parents=True, exist_ok=True)
    readme = path.parent / "README.md"
    if not readme.exists():
        readme.write_text(
            "Written by `harness run` for `--lf`; safe to delete, not for version control.\n",
            encoding="utf-8",
        )
    ignore = path.parent / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n", encoding="utf-8")
    temporary = path.with_suffix(".tmp")
    temporary.write_text(
        json.dumps(dict.fromkeys(sorted(known), True), indent=2) + "\n", encoding="utf-8"
    )
    os.replace(temporary, path)


def failed_in_report(path: str) -> set[str]:
    """``suite::name`` of every failed or errored scenario a JSON report lists."""
    option = "--rerun-failed"
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise SelectionError(
            f"{option}: cannot read {path}: {exc.strerror or exc}", option=option
        ) from None
    except ValueError as exc:
        raise SelectionError(f"{option}: {path} is not JSON: {exc}", option=option) from None
    scenarios = data.get("scenarios") if isinstance(data, Mapping) else None
    if not isinstance(scenarios, list):
        raise SelectionError(
            f"{option}: {path} is not a harness JSON report (no 'scenarios' list; write one "
            "with --json)",
            option=option,
        )
    return {
        f"{item.get('suite')}::{item.get('name')}"
        for item in scenarios
        if isinstance(item, Mapping) and item.get("status") in ("failed", "error")
    }


# --- the selection --------------------------------------------------------------------------


def _keyword_names(scenario: Scenario) -> tuple[str, ...]:
    """What a ``-k`` word is looked for in, lower-cased."""
    names = (
        scenario.name,
        scenario.suite,
        scenario.id,
        os.path.basename(scenario.file),
        *scenario.tags,
    )
    return tuple(name.lower() for name in names)


@dataclass(frozen=True, slots=True)
class Selection:
    """Every selection rule of one run; :meth:`apply` keeps the scenarios that pass them all."""

    keywords: tuple[Expression, ...] = ()
    marks: tuple[Expression, ...] = ()
    nodes: tuple[NodeId, ...] = ()
    only_ids: frozenset[str] | None = None
    """``suite::name`` ids to keep (``--rerun-failed``); None keeps any."""
    only_nodes: frozenset[str] | None = None
    """Node ids to keep (``--lf``); None keeps any."""
    notes: tuple[str, ...] = field(default=())
    """What the run should say about the selection (``--lf`` with nothing recorded)."""

    @classmethod
    def build(
        cls,
        *,
        keywords: Sequence[str] = (),
        marks: Sequence[str] = (),
        nodes: Sequence[NodeId] = (),
        last_failed: bool = False,
        rerun_failed: str | None = None,
        last_failed_file: Path = LAST_FAILED_FILE,
    ) -> Selection:
        """Parse and read everything up front, so a bad flag fails before anything runs."""
        notes: list[str] = []
        only_nodes = None
        if last_failed:
            recorded = read_last_failed(last_failed_file)
            if recorded:
                only_nodes = frozenset(recorded)
            else:
                notes.append("--lf: no failures recorded, running every selected scenario")
        return cls(
            keywords=tuple(parse_expression(text, "-k") for text in keywords if text.strip()),
            marks=tuple(parse_expression(text, "-m") for text in marks if text.strip()),
            nodes=tuple(nodes),
            only_ids=frozenset(failed_in_report(rerun_failed)) if rerun_failed else None,
            only_nodes=only_nodes,
            notes=tuple(notes),
        )

    @property
    def narrows(self) -> bool:
        """Does anything here leave scenarios out?"""
        return bool(
            self.keywords
            or self.marks
            or self.nodes
            or self.only_ids is not None
            or self.only_nodes is not None
        )

    def describe(self) -> str:
        """The rules as the flags gave them, for "no scenario selected" (``-k 'x' -m 'y'``)."""
        parts = [f"-k {e.source!r}" for e in self.keywords]
        parts += [f"-m {e.source!r}" for e in self.marks]
        parts += [repr(node.text) for node in self.nodes]
        if self.only_nodes is not None:
            parts.append("--lf")
        if self.only_ids is not None:
            parts.append("--rerun-failed")
        return " ".join(parts)

    def missing_nodes(self, scenarios: Sequence[Scenario]) -> list[str]:
        """A message for each node id that names no scenario of its file."""
        out = []
        for node in self.nodes:
            names = [s.name for s in scenarios if _same_file(s.file, node.file)]
            if node.name in names:
                continue
            hint = did_you_mean(node.name, names)
            out.append(
                f"{node.text}: no scenario named {node.name!r} in {node.file}"
                + (f" ({hint})" if hint else "")
            )
        return out

    def keeps(self, scenario: Scenario) -> bool:
        """Does ``scenario`` pass every rule?"""
        if self.nodes and not any(
            scenario.name == node.name and _same_file(scenario.file, node.file)
            for node in self.nodes
        ):
            return False
        if self.only_ids is not None and scenario.id not in self.only_ids:
            return False
        if self.only_nodes is not None and node_id(scenario) not in self.only_nodes:
            return False
        if self.keywords:
            names = _keyword_names(scenario)

            def keyword(word: str) -> bool:
                needle = word.lower()
                return any(needle in name for name in names)

            if not all(expression.holds(keyword) for expression in self.keywords):
                return False
        if self.marks:
            tags = set(scenario.tags)
            if not all(expression.holds(tags.__contains__) for expression in self.marks):
                return False
        return True

    def apply(self, scenarios: Iterable[Scenario]) -> list[Scenario]:
        """The scenarios that pass every rule, in their order."""
        return [scenario for scenario in scenarios if self.keeps(scenario)]


# --- the flags ----------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``-m``, ``--lf`` / ``--last-failed`` and ``--rerun-failed`` (``harness run``)."""
    parser.add_argument(
        "-m",
        dest="marks",
        action="append",
        default=[],
        metavar="EXPR",
        help="only scenarios whose tags satisfy EXPR: 'smoke and not slow' (repeatable: all "
        "must hold)",
    )
    parser.add_argument(
        "--lf",
        "--last-failed",
        dest="last_failed",
        action="store_true",
        help=f"rerun only the scenarios that failed or errored last time ({LAST_FAILED_FILE}); "
        "all when none did",
    )
    parser.add_argument(
        "--rerun-failed",
        metavar="RESULTS.json",
        help="rerun only the scenarios a JSON report (--json) lists as failed or errored",
    )
