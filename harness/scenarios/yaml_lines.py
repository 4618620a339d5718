"""A safe YAML reader that keeps the line of every field path, for issues that cite a line.

Hostile or mangled input must end as an issue with a line, never as a traceback, a hang or
unbounded memory (docs/architecture.md, "Scenario files"). PyYAML's SafeLoader is safe about
*what* it builds, not about *how much*: it recurses once per nesting level, expands nothing
itself but lets aliases share nodes that every later walk expands again (a "billion laughs"),
and lets scalar constructors raise plain ``KeyError``/``ValueError``. :class:`GuardedLoader`
bounds nesting, the number of values the document stands for (aliases expanded) and
recursive aliases while composing, and turns a constructor's error into a located one.

When PyYAML has libyaml, :class:`FastGuardedLoader` parses with its C parser (several times
faster on a large suite) under the same guards and the same Python composer. A file it cannot
read is read again with the pure-Python loader, so every message and mark of a bad file is the
pure loader's, word for word; the two give the same data and lines for a good one.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Any

import yaml

from harness.scenarios.issues import Collector, PathKey

MAX_DEPTH = 100
"""Collections nested deeper than this are refused (a suite needs a handful of levels)."""

MAX_VALUES = 500_000
"""Values one file may hold, each alias counted as all it expands to (PyYAML: ~25 µs each)."""

_INDEX_DEPTH = 32
"""Field paths deeper than this share the line of their 32-deep prefix (keeps the index small)."""

_CONTROL_NAMES = {0x00: "NUL", 0x07: "BEL", 0x08: "BS", 0x1B: "ESC", 0x7F: "DEL"}


class _Guards:
    """The guards, for a loader whose composer is PyYAML's Python ``Composer`` (both below)."""

    _depth: int
    _values: int
    _open_anchors: list[str]
    _anchor_values: dict[str, int]

    def _start_guards(self) -> None:
        self._depth = 0
        self._values = 0
        self._open_anchors = []
        self._anchor_values = {}

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        """Compose one node, counting it (or, for an alias, everything it expands to)."""
        if self.check_event(yaml.AliasEvent):  # type: ignore[attr-defined]
            return self._alias(parent, index)
        event: Any = self.peek_event()  # type: ignore[attr-defined]
        collection = isinstance(event, yaml.CollectionStartEvent)
        if collection and self._depth >= MAX_DEPTH:
            raise yaml.composer.ComposerError(
                None, None, f"nested deeper than {MAX_DEPTH} levels", event.start_mark
            )
        self._count(1, event.start_mark, None)
        anchor: str | None = event.anchor
        before = self._values
        if anchor is not None:
            self._open_anchors.append(anchor)
        self._depth += collection
        try:
            node: yaml.Node | None = super().compose_node(parent, index)  # type: ignore[misc]
        finally:
            self._depth -= collection
            if anchor is not None:
                self._open_anchors.pop()
        if anchor is not None:
            self._anchor_values[anchor] = self._values - before
        assert node is not None  # an event was there to peek at
        return node

    def _alias(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        event: Any = self.peek_event()  # type: ignore[attr-defined]
        anchor: str = event.anchor
        if anchor in self._open_anchors:
            raise yaml.composer.ComposerError(
                None,
                None,
                f"recursive alias '*{anchor}': it sits inside the value anchored as '&{anchor}'",
                event.start_mark,
            )
        self._count(self._anchor_values.get(anchor, 1), event.start_mark, anchor)
        node: yaml.Node | None = super().compose_node(parent, index)  # type: ignore[misc]
        assert node is not None  # an alias always resolves to a node (or raises)
        return node

    def _count(self, values: int, mark: Any, alias: str | None) -> None:
        self._values += values
        if self._values <= MAX_VALUES:
            return
        if alias is None:
            problem = f"the document holds more than {MAX_VALUES:,} values"
        else:
            problem = (
                f"the alias '*{alias}' expands to {values:,} values, taking the document past "
                f"{MAX_VALUES:,} (aliases of aliases multiply)"
            )
        raise yaml.composer.ComposerError(None, None, problem, mark)

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        """Construct one node; a constructor's own error becomes a ConstructorError here."""
        try:
            return super().construct_object(node, deep)  # type: ignore[misc]
        except (yaml.YAMLError, RecursionError):
            raise
        except Exception as exc:  # KeyError (!!bool maybe), ValueError (!!int x, 5000 digits)
            raise yaml.constructor.ConstructorError(
                None, None, _constructor_problem(node, exc), node.start_mark
            ) from None


class GuardedLoader(_Guards, yaml.SafeLoader):
    """SafeLoader with bounded nesting and alias expansion, and located constructor errors."""

    def __init__(self, stream: str) -> None:
        """Read ``stream`` (a str) with fresh counters."""
        super().__init__(stream)
        self._start_guards()


def _c_parser() -> Any:
    try:
        from yaml._yaml import CParser
    except ImportError:  # PyYAML built without libyaml: the pure loader alone
        return None
    return CParser


CParser: Any = _c_parser()


FastGuardedLoader: Any = None
"""The guarded loader over libyaml's parser, or None without libyaml."""

if CParser is not None:

    class _FastGuardedLoader(
        _Guards,
        yaml.composer.Composer,  # before CParser: the Python composer (guarded), C events
        CParser,  # type: ignore[misc]
        yaml.constructor.SafeConstructor,
        yaml.resolver.Resolver,
    ):
        """libyaml's parser under the guards: what ``yaml.CSafeLoader`` reads, guarded."""

        def __init__(self, stream: str) -> None:
            """Read ``stream`` (a str) with fresh counters."""
            CParser.__init__(self, stream)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)
            self._start_guards()

    FastGuardedLoader = _FastGuardedLoader

_NON_PRINTABLE = yaml.reader.Reader.NON_PRINTABLE
"""What the pure reader refuses: such a file goes straight to it, for its exact message."""


def _constructor_problem(node: yaml.Node, exc: Exception) -> str:
    tag = str(node.tag).replace("tag:yaml.org,2002:", "!!")
    value = node.value if isinstance(node, yaml.ScalarNode) else None
    shown = repr(value if len(value) <= 40 else value[:39] + "…") if isinstance(value, str) else ""
    why = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
    reason = str(why).split(";")[0] if not isinstance(exc, KeyError) else "not a known value"
    problem = f"cannot read {shown or 'this value'} as {tag} ({reason})"
    mark = node.start_mark
    written = mark.buffer[mark.pointer : mark.pointer + 1] if isinstance(mark.buffer, str) else ""
    if value is not None and written != "!" and getattr(node, "style", None) is None:
        problem += "; quote it to keep it a string"  # an implicit type, e.g. 2024-13-45
    return problem


def _yaml_line(text: str, position: int) -> tuple[int, int]:
    """(line, column), 1-based, of ``position`` in ``text``, counting breaks as YAML does."""
    head = text[:position]
    for brk in ("\r\n", "\r", "\x85", "\u2028", "\u2029"):
        head = head.replace(brk, "\n")
    line = head.count("\n") + 1
    return line, len(head) - (head.rfind("\n") + 1) + 1


def _control_problem(exc: yaml.reader.ReaderError, text: str) -> tuple[str, int]:
    """What the reader refused (a control character), and its line."""
    code = int(exc.character) if isinstance(exc.character, int) else ord(str(exc.character))
    kind = "control character" if unicodedata.category(chr(code)) == "Cc" else "character"
    name = _CONTROL_NAMES.get(code) or unicodedata.name(chr(code), "")
    line, column = _yaml_line(text, exc.position)
    return (
        f"invalid YAML: {kind} U+{code:04X}{f' ({name})' if name else ''} at column {column}; "
        "YAML allows it only as an escape inside double quotes",
        line,
    )


def _index_lines(root: yaml.Node, out: Collector) -> None:
    """Map field paths to the lines where they are written; flag duplicate keys.

    Each node is walked once: a node reached again through an alias keeps the line of the
    alias and is not descended, so an alias bomb cannot multiply the walk.
    """
    out.lines.setdefault((), root.start_mark.line + 1)
    seen_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, PathKey]] = [(root, ())]
    while stack:
        node, loc = stack.pop()
        if id(node) in seen_nodes or len(loc) >= _INDEX_DEPTH:
            continue
        seen_nodes.add(id(node))
        children: list[tuple[yaml.Node, PathKey]] = []
        if isinstance(node, yaml.MappingNode):
            seen_keys: dict[str, int] = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    continue
                key = key_node.value
                line = key_node.start_mark.line + 1
                if key in seen_keys and key != "<<":
                    out.add(
                        loc,
                        f"duplicate key '{key}' (first written on line {seen_keys[key]})",
                        line=line,
                    )
                seen_keys.setdefault(key, line)
                child: PathKey = (*loc, key)
                out.lines[child] = line
                children.append((value_node, child))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                position: PathKey = (*loc, index)
                out.lines.setdefault(position, item.start_mark.line + 1)
                children.append((item, position))
        stack.extend(reversed(children))  # document order, so an anchor is indexed first


def read_yaml(
    path: Path, out: Collector, *, expected: str = "a mapping with 'agent' and 'scenarios'"
) -> Any:
    """Parse one file safely; every problem becomes an issue carrying its line.

    ``expected``: what an empty file should have held, for its message."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        out.add((), f"cannot read the file: {exc.strerror or exc}")
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        out.add(
            (),
            f"not a YAML file: the bytes are not UTF-8 text (byte {exc.start})",
            line=line,
        )
        return None
    if FastGuardedLoader is not None and not _NON_PRINTABLE.search(text):
        found, data = _fast_read(text, out)
        if found:
            return data
    loader: GuardedLoader | None = None
    try:
        loader = GuardedLoader(text)  # the reader refuses control characters right here
        node = loader.get_single_node()
        if node is None:
            out.add((), f"the file is empty: expected {expected}")
            return None
        _index_lines(node, out)
        return loader.construct_document(node)
    except yaml.reader.ReaderError as exc:
        problem, line = _control_problem(exc, text)
        out.add((), problem, line=line)
    except yaml.MarkedYAMLError as exc:
        _marked_issue(exc, out)
    except yaml.YAMLError as exc:
        out.add((), f"invalid YAML: {exc}")
    finally:
        if loader is not None:
            loader.dispose()
    return None


def _fast_read(text: str, out: Collector) -> tuple[bool, Any]:
    """``(True, data)`` read with libyaml; ``(False, None)``: let the pure loader say why not.

    Lines and duplicate-key issues go to a scratch collector first, so a file read twice
    reports each issue once.
    """
    scratch = Collector(out.file)
    loader = FastGuardedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return False, None
        _index_lines(node, scratch)
        data = loader.construct_document(node)
    except yaml.YAMLError:
        return False, None
    finally:
        loader.dispose()
    out.lines.update(scratch.lines)
    out.issues.extend(scratch.issues)
    return True, data


def _marked_issue(exc: yaml.MarkedYAMLError, out: Collector) -> None:
    mark = exc.problem_mark or exc.context_mark
    problem = exc.problem or exc.context or "cannot parse"
    column = f" (column {mark.column + 1})" if mark is not None else ""
    context = ""
    if exc.context and exc.problem:
        started = exc.context_mark
        context = f", {exc.context}" + (
            f" started on line {started.line + 1}" if started is not None else ""
        )
    out.add((), f"invalid YAML: {problem}{column}{context}", line=mark.line + 1 if mark else None)
