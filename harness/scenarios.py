"""Scenario suites in YAML (DESIGN §7): pydantic schema, a line-keeping safe loader, compilation.

``load_paths([...])`` reads every ``*.yaml`` / ``*.yml`` file under the given paths and returns
compiled :class:`Suite` objects, or raises one :class:`ConfigError` listing *every* problem of
*every* file as ``file:line: field.path: message``. Nothing here runs a model: the only code
executed is the import of the agent module the suite names (and model construction).
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import os
import sys
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harness.errors import HarnessError, MatcherError, MetricConfigError
from harness.expectation import Expectation
from harness.metrics.base import Metric, check_threshold

DEFAULT_TIMEOUT = 60.0
"""Seconds one run of a scenario may take when neither the file nor the CLI says otherwise."""

SCENARIO_SUFFIXES = (".yaml", ".yml")

Order = Literal["any", "strict", "flexible"]

# --- errors ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConfigIssue:
    """One configuration problem: where it sits (file, line, field path) and what is wrong."""

    file: str
    line: int | None
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"


class ConfigError(HarnessError, ValueError):
    """Every configuration problem found across the loaded files, not only the first."""

    def __init__(self, issues: Sequence[ConfigIssue]) -> None:
        self.issues: tuple[ConfigIssue, ...] = tuple(issues)
        count = len(self.issues)
        head = f"{count} configuration error{'s' if count != 1 else ''}"
        super().__init__(head + ":\n" + "\n".join(str(issue) for issue in self.issues))


# --- compiled form --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AgentRef:
    """An agent factory resolved from ``module:callable`` or ``file.py:callable``."""

    spec: str
    factory: Callable[..., Any]


@dataclass(frozen=True, slots=True)
class ExpectedCallSpec:
    """An expected call as written in YAML (raw args, for tool-schema checks) and its line."""

    name: str
    args: Mapping[str, Any]
    path: str
    line: int | None


@dataclass(frozen=True)
class Scenario:
    """One runnable scenario: agent, model, input, expectations, metrics and checks."""

    suite: str
    name: str
    file: str
    line: int | None
    agent: AgentRef
    model: Any
    input: Any
    input_text: Any
    expected: tuple[Expectation, ...] = ()
    expected_specs: tuple[ExpectedCallSpec, ...] = ()
    order: Order = "any"
    forbid: tuple[str, ...] = ()
    no_errors: bool = False
    has_output: bool = False
    output: Any = None
    metrics: tuple[Metric, ...] = ()
    repeat: int = 1
    pass_rate: float = 1.0
    timeout: float = DEFAULT_TIMEOUT
    xfail: str | None = None
    description: str | None = None
    path: str = ""

    @property
    def id(self) -> str:
        """``suite::name``, the identifier ``-k`` matches against."""
        return f"{self.suite}::{self.name}"


@dataclass(frozen=True)
class Suite:
    """The scenarios of one YAML file."""

    name: str
    file: str
    scenarios: tuple[Scenario, ...] = field(default_factory=tuple)


# --- schema ---------------------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, arbitrary_types_allowed=True)


class ToolCallSpec(_Strict):
    """``{name, args}``: an expected tool call (args may hold ``$`` matchers)."""

    name: str = Field(min_length=1)
    args: dict[str, Any] | None = None


class ExpectSpec(_Strict):
    """The ``expect:`` block of a scenario."""

    tool_calls: list[ToolCallSpec] | None = None
    order: Order = "any"
    forbid: list[str] = Field(default_factory=list)
    no_errors: bool | None = None
    output: Any = None

    @field_validator("tool_calls", mode="before")
    @classmethod
    def _bare_names(cls, value: Any) -> Any:
        # `- get_time` is shorthand for `- {name: get_time}` (any call of that name).
        if isinstance(value, list):
            return [{"name": item} if isinstance(item, str) else item for item in value]
        return value


class DefaultsSpec(_Strict):
    """The ``defaults:`` block, merged into every scenario of the file."""

    metrics: Any = None
    timeout: float | None = Field(default=None, gt=0)
    repeat: int | None = Field(default=None, ge=1)
    pass_rate: float | None = Field(default=None, ge=0, le=1)
    forbid: list[str] = Field(default_factory=list)
    no_errors: bool | None = None


class ScenarioSpec(_Strict):
    """One entry of ``scenarios:``."""

    name: str = Field(min_length=1)
    description: str | None = None
    input: str | dict[str, Any] | None = None
    messages: list[Any] | None = None
    expect: ExpectSpec = Field(default_factory=ExpectSpec)
    metrics: Any = None
    repeat: int | None = Field(default=None, ge=1)
    pass_rate: float | None = Field(default=None, ge=0, le=1)
    timeout: float | None = Field(default=None, gt=0)
    xfail: str | bool | None = None
    script: list[Any] | None = None
    model: str | dict[str, Any] | None = None
    agent: str | None = None


class SuiteSpec(_Strict):
    """A scenario file's top level."""

    suite: str | None = None
    description: str | None = None
    agent: str | None = None
    model: str | dict[str, Any] | None = None
    defaults: DefaultsSpec = Field(default_factory=DefaultsSpec)
    scenarios: list[Any] = Field(min_length=1)


# --- YAML with line numbers -----------------------------------------------------------------

PathKey = tuple[str | int, ...]


def _render_path(loc: Iterable[str | int]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


class _Collector:
    """Issues of one load, with the file's line map to place them."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.lines: dict[PathKey, int] = {}
        self.issues: list[ConfigIssue] = []

    def line_of(self, loc: Sequence[str | int]) -> int | None:
        """The line of the deepest prefix of ``loc`` the YAML file spells out."""
        for end in range(len(loc), -1, -1):
            line = self.lines.get(tuple(loc[:end]))
            if line is not None:
                return line
        return None

    def add(self, loc: Sequence[str | int], message: str, *, line: int | None = None) -> None:
        """Record an issue at ``loc`` (its line looked up unless given)."""
        where = line if line is not None else self.line_of(loc)
        self.issues.append(ConfigIssue(self.file, where, _render_path(loc), message))


def _index_lines(node: yaml.Node, loc: PathKey, out: _Collector, depth: int = 0) -> None:
    """Map every field path to the line where it is written; flag duplicate keys."""
    if depth > 64:  # aliases can nest deeply; paths that deep never carry schema errors
        return
    out.lines.setdefault(loc, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue
            key = key_node.value
            line = key_node.start_mark.line + 1
            if key in seen and key != "<<":
                out.add(
                    loc, f"duplicate key '{key}' (first written on line {seen[key]})", line=line
                )
            seen.setdefault(key, line)
            child = (*loc, key)
            out.lines[child] = line
            _index_lines(value_node, child, out, depth + 1)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _index_lines(item, (*loc, index), out, depth + 1)


def _read_yaml(path: Path, out: _Collector) -> Any:
    """Parse one file safely; syntax errors become issues carrying the parser's line."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        out.add((), f"cannot read the file: {exc.strerror or exc}")
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        out.add((), f"not a YAML file: the bytes are not UTF-8 text (byte {exc.start})")
        return None
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            out.add((), "the file is empty: expected a mapping with 'agent' and 'scenarios'")
            return None
        _index_lines(node, (), out)
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "cannot parse"
        column = f" (column {mark.column + 1})" if mark is not None else ""
        context = ""
        if exc.context and exc.problem:
            started = exc.context_mark
            context = f", {exc.context}" + (
                f" started on line {started.line + 1}" if started is not None else ""
            )
        out.add(
            (), f"invalid YAML: {problem}{column}{context}", line=mark.line + 1 if mark else None
        )
    except yaml.YAMLError as exc:
        out.add((), f"invalid YAML: {exc}")
    finally:
        loader.dispose()
    return None


# --- pydantic errors -> issues --------------------------------------------------------------


def suggest(word: str, candidates: Iterable[str]) -> str:
    """`` — did you mean 'x'?`` for the nearest candidate, or an empty string."""
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f" — did you mean '{close[0]}'?" if close else ""


def describe_found(value: Any) -> str:
    """How a YAML value reads in an error: 'a list', "the string 'x'", 'the number 3'."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 60 else value[:59] + "…"
        return f"the string {shown!r}"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    return f"a {type(value).__name__}"


_EXPECTED = {
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "list_type": "a list",
    "string_type": "a string",
    "int_type": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "string_too_short": "a non-empty string",
    "too_short": "a non-empty list",
}


def _model_at(loc: Sequence[str | int], root: type[BaseModel]) -> type[BaseModel] | None:
    """The schema model that governs the mapping at ``loc`` (for listing its valid keys)."""
    current: type[BaseModel] | None = root
    for part in loc:
        if isinstance(part, int) or current is None:
            continue
        info = current.model_fields.get(part)
        if info is None:
            return None
        current = _inner_model(info.annotation)
    return current


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _union_tag(part: Any) -> bool:
    # pydantic appends the union member tried ('str', 'dict[str,any]') to the loc; not a field
    return isinstance(part, str) and (
        part in ("str", "int", "float", "bool", "list", "dict") or "[" in part
    )


def _pydantic_issues(
    exc: ValidationError, root: type[BaseModel], prefix: PathKey, out: _Collector
) -> None:
    """Turn pydantic's errors into issues with paths, lines, expected/found and suggestions."""
    union_seen: set[PathKey] = set()
    for error in exc.errors():
        loc: PathKey = tuple(part for part in error["loc"] if not _union_tag(part))
        kind = error["type"]
        found = error.get("input")
        ctx = error.get("ctx") or {}
        if len(loc) < len(error["loc"]):
            # one message per union field, not one per member type pydantic tried
            if loc in union_seen:
                continue
            union_seen.add(loc)
            out.add(
                (*prefix, *loc),
                f"expected {_union_expected(root, loc)}, found {describe_found(found)}",
            )
            continue
        if kind == "extra_forbidden":
            parent, key = loc[:-1], str(loc[-1])
            model = _model_at(parent, root)
            valid = list(model.model_fields) if model else []
            hint = suggest(key, valid)
            listing = f" (valid keys: {', '.join(valid)})" if valid and not hint else ""
            out.add(
                (*prefix, *parent),
                f"unknown key '{key}'{hint}{listing}",
                line=out.line_of((*prefix, *loc)),
            )
        elif kind == "missing":
            parent = loc[:-1]
            out.add((*prefix, *parent), f"missing required key '{loc[-1]}'")
        elif kind == "literal_error":
            allowed = str(ctx.get("expected", ""))
            names = [part.strip(" '") for part in allowed.replace(" or ", ",").split(",")]
            hint = suggest(str(found), names) if isinstance(found, str) else ""
            out.add(
                (*prefix, *loc), f"expected one of {allowed}, found {describe_found(found)}{hint}"
            )
        elif kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
            symbol, key = {
                "greater_than": (">", "gt"),
                "greater_than_equal": (">=", "ge"),
                "less_than": ("<", "lt"),
                "less_than_equal": ("<=", "le"),
            }[kind]
            limit = ctx.get(key)
            bound = f"{symbol} {limit:g}" if isinstance(limit, (int, float)) else symbol
            out.add((*prefix, *loc), f"expected a number {bound}, found {describe_found(found)}")
        elif kind in _EXPECTED:
            out.add((*prefix, *loc), f"expected {_EXPECTED[kind]}, found {describe_found(found)}")
        else:
            out.add((*prefix, *loc), f"{error['msg']}, found {describe_found(found)}")


def _union_expected(root: type[BaseModel], loc: PathKey) -> str:
    model = _model_at(loc[:-1], root)
    field_name = loc[-1] if loc else None
    if model is None or not isinstance(field_name, str) or field_name not in model.model_fields:
        return "a different value"
    annotation = model.model_fields[field_name].annotation
    words = []
    for arg in typing.get_args(annotation):
        origin = typing.get_origin(arg) or arg
        if origin is type(None):
            continue
        words.append(
            {str: "a string", dict: "a mapping", list: "a list", bool: "true/false"}.get(
                origin, getattr(origin, "__name__", str(origin))
            )
        )
    return " or ".join(words) or "a different value"


# --- metrics --------------------------------------------------------------------------------


def _registry() -> tuple[Callable[..., Metric], Callable[[], list[str]]]:
    from harness.metrics import get_metric, metric_names

    return get_metric, metric_names


def _parse_metrics(raw: Any, loc: PathKey, out: _Collector) -> dict[str, dict[str, Any] | None]:
    """``metrics:`` as ``{name: options}`` (None value = disabled); issues for bad entries."""
    if raw is None:
        return {}
    _get, names_of = _registry()
    known = names_of()
    entries: list[tuple[str, Any, PathKey]] = []
    if isinstance(raw, list):
        for index, item in enumerate(raw):
            if not isinstance(item, str):
                out.add((*loc, index), f"expected a metric name, found {describe_found(item)}")
                continue
            entries.append((item, None, (*loc, index)))
    elif isinstance(raw, Mapping):
        entries = [(str(name), value, (*loc, str(name))) for name, value in raw.items()]
    else:
        out.add(
            loc,
            "expected a mapping of metric name -> options (or a list of names), "
            f"found {describe_found(raw)}",
        )
        return {}
    parsed: dict[str, dict[str, Any] | None] = {}
    for name, value, where in entries:
        if name not in known:
            hint = suggest(name, known) or f" (known metrics: {', '.join(known)})"
            out.add(loc, f"unknown metric '{name}'{hint}", line=out.line_of(where))
            continue
        options = _metric_options(name, value, where, out)
        if options is not _INVALID:
            parsed[name] = options
    return parsed


_INVALID: Any = object()


def _metric_options(name: str, value: Any, where: PathKey, out: _Collector) -> Any:
    if value is None or value is True:
        return {}
    if value is False:
        return None  # `metric: false` switches off a metric set in defaults
    if isinstance(value, (int, float)):
        value = {"threshold": value}  # `metric: 0.8` is shorthand for the threshold
    if not isinstance(value, Mapping):
        out.add(
            where,
            f"expected the options of metric '{name}' as a mapping (or a threshold "
            f"number, or true/false), found {describe_found(value)}",
        )
        return _INVALID
    options = {str(key): option for key, option in value.items()}
    if "threshold" in options:
        try:
            check_threshold(name, options["threshold"])
        except MetricConfigError:
            out.add(
                (*where, "threshold"),
                f"expected a threshold within [0, 1], found {describe_found(options['threshold'])}",
            )
            return _INVALID
    return options


def _merge_metrics(
    defaults: Mapping[str, dict[str, Any] | None], own: Mapping[str, dict[str, Any] | None]
) -> dict[str, dict[str, Any]]:
    merged: dict[str, dict[str, Any]] = {k: dict(v) for k, v in defaults.items() if v is not None}
    for name, options in own.items():
        if options is None:
            merged.pop(name, None)
        else:
            merged[name] = {**merged.get(name, {}), **options}
    return merged


# --- agents ---------------------------------------------------------------------------------

_file_modules: dict[Path, types.ModuleType] = {}


def resolve_agent(spec: str, base: Path) -> AgentRef:
    """Import ``module:callable`` (from cwd or ``base``) or ``file.py:callable`` (from ``base``)."""
    module_part, sep, attr = spec.rpartition(":")
    if not sep or not module_part or not attr:
        raise ValueError(
            f"expected 'module:callable' or 'path/to/file.py:callable', found {spec!r}"
        )
    module = (
        _import_file(module_part, base)
        if module_part.endswith(".py")
        else _import_module(module_part, base)
    )
    target: Any = module
    for part in attr.split("."):
        if not hasattr(target, part):
            names = [n for n in dir(target) if not n.startswith("_")]
            raise ValueError(
                f"module '{module.__name__}' has no attribute '{part}'{suggest(part, names)}"
            )
        target = getattr(target, part)
    if not callable(target):
        raise ValueError(
            f"'{spec}' is not callable (it is {describe_found(target)}); it must be a factory "
            "taking model= and returning a Runnable or compiled graph"
        )
    return AgentRef(spec, target)


def _import_module(name: str, base: Path) -> types.ModuleType:
    roots = [str(Path.cwd()), str(base)]
    added = [root for root in roots if root not in sys.path]
    sys.path[:0] = added
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        missing = exc.name or name
        raise ValueError(
            f"cannot import module '{name}': no module named '{missing}' "
            f"(looked in the current directory {roots[0]} and {roots[1]})"
        ) from None
    except Exception as exc:
        raise ValueError(f"importing module '{name}' raised {type(exc).__name__}: {exc}") from None
    finally:
        for root in added:
            if root in sys.path:
                sys.path.remove(root)


def _import_file(relative: str, base: Path) -> types.ModuleType:
    path = (base / relative).resolve()
    cached = _file_modules.get(path)
    if cached is not None:
        return cached
    if not path.is_file():
        raise ValueError(f"cannot import '{relative}': no such file {path}")
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    name = f"_harness_agent_{path.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot import '{relative}': not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pydantic look their module up here
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        raise ValueError(f"importing '{relative}' raised {type(exc).__name__}: {exc}") from None
    finally:
        if str(path.parent) in sys.path:
            sys.path.remove(str(path.parent))
    _file_modules[path] = module
    return module


# --- models ---------------------------------------------------------------------------------


def build_model(spec: Any, script: Sequence[Any] | None) -> Any:
    """The chat model handed to the agent factory (``harness.models.make_model``)."""
    from harness.models import make_model

    return make_model(spec, script=script)


def _provider(spec: Any) -> str | None:
    if isinstance(spec, Mapping):
        provider = spec.get("provider")
        return str(provider) if provider is not None else None
    if isinstance(spec, str):
        return spec.split(":", 1)[0]
    return None


# --- compilation ----------------------------------------------------------------------------


class _FileLoader:
    """Compiles one file; every problem goes to the collector, nothing stops at the first."""

    def __init__(self, path: Path, display: str) -> None:
        self.path = path
        self.out = _Collector(display)
        self.agents: dict[str, AgentRef | None] = {}

    def load(self) -> Suite | None:
        data = _read_yaml(self.path, self.out)
        if data is None:
            return None
        if not isinstance(data, Mapping):
            self.out.add(
                (),
                "expected a mapping at the top level (keys: "
                f"{', '.join(SuiteSpec.model_fields)}), found {describe_found(data)}",
            )
            return None
        try:
            spec = SuiteSpec.model_validate(dict(data))
        except ValidationError as exc:
            _pydantic_issues(exc, SuiteSpec, (), self.out)
            spec = None
        suite_name = (spec.suite if spec and spec.suite else None) or self.path.stem
        defaults = spec.defaults if spec else DefaultsSpec()
        default_metrics = _parse_metrics(defaults.metrics, ("defaults", "metrics"), self.out)
        raw_scenarios = data.get("scenarios")
        if not isinstance(raw_scenarios, list):
            return None
        agent = self._agent(spec.agent, ("agent",)) if spec and spec.agent else None
        scenarios: list[Scenario] = []
        names: dict[str, int | None] = {}
        for index, raw in enumerate(raw_scenarios):
            scenario = self._scenario(index, raw, spec, suite_name, agent, default_metrics)
            if scenario is None:
                continue
            if scenario.name in names:
                first = names[scenario.name]
                self.out.add(
                    ("scenarios", index, "name"),
                    f"duplicate scenario name '{scenario.name}' in suite "
                    f"'{suite_name}' (first defined on line {first})",
                )
                continue
            names[scenario.name] = scenario.line
            scenarios.append(scenario)
        return Suite(suite_name, self.out.file, tuple(scenarios))

    def _agent(self, spec: str, loc: PathKey) -> AgentRef | None:
        if spec not in self.agents:
            try:
                self.agents[spec] = resolve_agent(spec, self.path.resolve().parent)
            except ValueError as exc:
                self.out.add(loc, str(exc))
                self.agents[spec] = None
        return self.agents[spec]

    def _scenario(
        self,
        index: int,
        raw: Any,
        suite: SuiteSpec | None,
        suite_name: str,
        suite_agent: AgentRef | None,
        default_metrics: Mapping[str, dict[str, Any] | None],
    ) -> Scenario | None:
        loc: PathKey = ("scenarios", index)
        if not isinstance(raw, Mapping):
            self.out.add(
                loc,
                f"expected a scenario mapping (name, input, expect, ...), found "
                f"{describe_found(raw)}",
            )
            return None
        before = len(self.out.issues)
        try:
            spec = ScenarioSpec.model_validate(dict(raw))
        except ValidationError as exc:
            _pydantic_issues(exc, ScenarioSpec, loc, self.out)
            _parse_metrics(raw.get("metrics"), (*loc, "metrics"), self.out)  # report these too
            return None
        defaults = suite.defaults if suite else DefaultsSpec()
        own_metrics = _parse_metrics(spec.metrics, (*loc, "metrics"), self.out)
        expected, expected_specs = self._expectations(spec.expect, loc)
        output = self._output(spec.expect, loc)
        run_input, text = self._input(spec, loc)
        agent = self._agent(spec.agent, (*loc, "agent")) if spec.agent else suite_agent
        if agent is None and not spec.agent and suite is not None and not suite.agent:
            self.out.add(
                loc,
                "no agent: set 'agent: module:callable' at the top of the file or on the scenario",
            )
        metrics = self._metrics(spec, loc, default_metrics, own_metrics, bool(expected_specs))
        model = self._model(spec, suite, loc)
        if len(self.out.issues) > before or agent is None or run_input is None:
            return None
        xfail = spec.xfail
        return Scenario(
            suite=suite_name,
            name=spec.name,
            file=self.out.file,
            line=self.out.line_of(loc),
            agent=agent,
            model=model,
            input=run_input,
            input_text=text,
            expected=tuple(expected),
            expected_specs=tuple(expected_specs),
            order=spec.expect.order,
            forbid=tuple(dict.fromkeys([*defaults.forbid, *spec.expect.forbid])),
            no_errors=bool(
                spec.expect.no_errors if spec.expect.no_errors is not None else defaults.no_errors
            ),
            has_output="output" in spec.expect.model_fields_set,
            output=output,
            metrics=tuple(metrics),
            repeat=spec.repeat or defaults.repeat or 1,
            pass_rate=_first(spec.pass_rate, defaults.pass_rate, 1.0),
            timeout=_first(spec.timeout, defaults.timeout, DEFAULT_TIMEOUT),
            xfail=("expected to fail" if xfail is True else xfail) if xfail else None,
            description=spec.description,
            path=_render_path(loc),
        )

    def _expectations(
        self, expect: ExpectSpec, loc: PathKey
    ) -> tuple[list[Expectation], list[ExpectedCallSpec]]:
        from harness.values import compile_pattern

        expected: list[Expectation] = []
        specs: list[ExpectedCallSpec] = []
        for position, call in enumerate(expect.tool_calls or ()):
            call_loc: PathKey = (*loc, "expect", "tool_calls", position)
            args = call.args or {}
            compiled: dict[str, Any] = {}
            for key, value in args.items():
                arg_loc: PathKey = (*call_loc, "args", key)
                try:
                    compiled[key] = compile_pattern(value)
                except MatcherError as exc:
                    self._matcher_issue(arg_loc, exc)
            expected.append(Expectation(call.name, compiled))
            specs.append(
                ExpectedCallSpec(
                    call.name, args, _render_path(call_loc), self.out.line_of(call_loc)
                )
            )
        return expected, specs

    def _output(self, expect: ExpectSpec, loc: PathKey) -> Any:
        if "output" not in expect.model_fields_set:
            return None
        from harness.values import compile_pattern

        try:
            return compile_pattern(expect.output)
        except MatcherError as exc:
            self._matcher_issue((*loc, "expect", "output"), exc)
            return None

    def _matcher_issue(self, loc: PathKey, exc: MatcherError) -> None:
        sub = _pointer_parts(exc.path)
        message = str(exc)
        if exc.path and message.startswith(f"at {exc.path}: "):
            message = message[len(f"at {exc.path}: ") :]
        self.out.add((*loc, *sub), message, line=self.out.line_of((*loc, *sub)))

    def _input(self, spec: ScenarioSpec, loc: PathKey) -> tuple[Any, Any]:
        if (spec.input is None) == (spec.messages is None):
            self.out.add(
                loc,
                "expected exactly one of 'input' (the user's message) or "
                "'messages' (a list of {role, content})"
                + (", found both" if spec.input is not None else ", found neither"),
            )
            return None, None
        if spec.input is not None:
            if isinstance(spec.input, str):
                return {"messages": [("user", spec.input)]}, spec.input
            return dict(spec.input), dict(spec.input)
        messages: list[Any] = []
        for position, message in enumerate(spec.messages or ()):
            converted = _message(message)
            if converted is None:
                self.out.add(
                    (*loc, "messages", position),
                    "expected {role: user|assistant|system, content: ...} or "
                    f"[role, content], found {describe_found(message)}",
                )
                continue
            messages.append(converted)
        last_user = next(
            (content for role, content in reversed(messages) if role in ("user", "human")), None
        )
        return {"messages": messages}, last_user

    def _metrics(
        self,
        spec: ScenarioSpec,
        loc: PathKey,
        defaults: Mapping[str, dict[str, Any] | None],
        own: Mapping[str, dict[str, Any] | None],
        expects_calls: bool,
    ) -> list[Metric]:
        merged = _merge_metrics(defaults, own)
        tool_calls = spec.expect.tool_calls
        if not merged and not defaults and not own and tool_calls is not None:
            # with no metric named either way: calls expected -> accuracy; `[]` -> call nothing
            merged["tool_call_accuracy" if expects_calls else "no_unexpected_tool_calls"] = {
                "threshold": 1.0
            }
        if spec.expect.order != "any":
            sequence = merged.setdefault("tool_call_sequence_accuracy", {"threshold": 1.0})
            sequence.setdefault("order", spec.expect.order)
        get_metric, _names = _registry()
        metrics: list[Metric] = []
        for name, options in merged.items():
            where: PathKey = (
                (*loc, "metrics", name) if name in own else ("defaults", "metrics", name)
            )
            if name not in own and name not in defaults:
                where = (*loc, "expect", "order")
            try:
                metrics.append(get_metric(name, **options))
            except (MetricConfigError, TypeError, ValueError) as exc:
                self.out.add(where, str(exc))
        return metrics

    def _model(self, spec: ScenarioSpec, suite: SuiteSpec | None, loc: PathKey) -> Any:
        model_spec = spec.model if spec.model is not None else (suite.model if suite else None)
        model_loc: PathKey = (*loc, "model") if spec.model is not None else ("model",)
        if model_spec is None and spec.script is not None:
            model_spec = {"provider": "scripted"}
        provider = _provider(model_spec)
        if spec.script is not None and provider not in ("scripted", None):
            self.out.add(
                (*loc, "script"),
                f"a script needs 'model: {{provider: scripted}}', but the model is {provider!r}",
            )
            return None
        if provider == "scripted" and spec.script is None:
            self.out.add(
                loc,
                "the model is scripted, so the scenario needs a 'script' (the "
                "model's turns: [{tool_calls: [...]}, {content: ...}])",
            )
            return None
        try:
            return build_model(model_spec, spec.script)
        except (HarnessError, ValueError, TypeError, ImportError) as exc:
            where = (
                (*loc, "script")
                if spec.script is not None and provider == "scripted"
                else (model_loc)
            )
            self.out.add(where, str(exc))
            return None


def _first(*values: Any) -> Any:
    return next(value for value in values if value is not None)


def _pointer_parts(path: str) -> tuple[str | int, ...]:
    """A MatcherError path (JSON pointer ``/a/0`` or dotted ``a.b[0]``) as loc parts."""
    if not path:
        return ()
    text = path.strip()
    parts: list[str | int] = []
    raw = (
        text.strip("/").split("/")
        if text.startswith("/")
        else (text.replace("[", ".").replace("]", "").split("."))
    )
    for part in raw:
        if not part:
            continue
        parts.append(int(part) if part.isdigit() else part.replace("~1", "/").replace("~0", "~"))
    return tuple(parts)


def _message(message: Any) -> tuple[str, Any] | None:
    if isinstance(message, Mapping):
        role, content = message.get("role"), message.get("content")
        if isinstance(role, str) and set(message) <= {"role", "content"} and content is not None:
            return role, content
        return None
    if isinstance(message, list) and len(message) == 2 and isinstance(message[0], str):
        return message[0], message[1]
    return None


# --- entry points ---------------------------------------------------------------------------


def scenario_files(paths: Iterable[str | os.PathLike[str]]) -> tuple[list[Path], list[ConfigIssue]]:
    """Every scenario file under ``paths`` (directories searched recursively), sorted."""
    files: list[Path] = []
    issues: list[ConfigIssue] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(
                p for p in path.rglob("*") if p.suffix in SCENARIO_SUFFIXES and p.is_file()
            )
            if not found:
                issues.append(ConfigIssue(str(raw), None, "", "no *.yaml scenario files here"))
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            issues.append(ConfigIssue(str(raw), None, "", "no such file or directory"))
    return list(dict.fromkeys(files)), issues


def display_path(path: Path) -> str:
    """The path relative to the current directory when it sits below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def load_file(path: str | os.PathLike[str]) -> Suite:
    """Load and compile one scenario file; raises ConfigError listing every problem in it."""
    return load_paths([path])[0]


def load_paths(paths: Iterable[str | os.PathLike[str]]) -> list[Suite]:
    """Load every scenario file under ``paths``; one ConfigError lists every problem found."""
    files, issues = scenario_files(paths)
    suites: list[Suite] = []
    for file in files:
        loader = _FileLoader(file, display_path(file))
        suite = loader.load()
        issues.extend(loader.out.issues)
        if suite is not None:
            suites.append(suite)
    unique = list(dict.fromkeys(issues))
    if unique:
        raise ConfigError(unique)
    return suites


def iter_scenarios(suites: Iterable[Suite]) -> Iterator[Scenario]:
    """Every scenario of every suite, in file order."""
    for suite in suites:
        yield from suite.scenarios


def select(scenarios: Iterable[Scenario], keyword: str | None) -> list[Scenario]:
    """Scenarios whose ``suite::name`` contains ``keyword`` (case-insensitive); all if None."""
    if not keyword:
        return list(scenarios)
    needle = keyword.lower()
    return [scenario for scenario in scenarios if needle in scenario.id.lower()]


# --- expectations against the agent's real tools (``harness validate``) ---------------------


def agent_tools(agent: Any) -> dict[str, Any] | None:
    """The tools of a built agent by name: ToolNodes of a compiled graph, or a ``tools`` list."""
    found: dict[str, Any] = {}
    nodes = getattr(agent, "nodes", None)
    if isinstance(nodes, Mapping):
        for node in nodes.values():
            bound = getattr(node, "bound", node)
            by_name = getattr(bound, "tools_by_name", None)
            if isinstance(by_name, Mapping):
                found.update(by_name)
    tools = getattr(agent, "tools", None)
    if isinstance(tools, (list, tuple)):
        found.update(
            {tool.name: tool for tool in tools if isinstance(getattr(tool, "name", None), str)}
        )
    return found or None


def check_tools(suites: Iterable[Suite]) -> list[ConfigIssue]:
    """Check each scenario's expectations against its agent's real tools (builds the agents).

    Unknown tool (with the nearest name), unknown argument, a literal of the wrong JSON type,
    and ``forbid`` naming a tool the agent does not have. No model is invoked.
    """
    issues: list[ConfigIssue] = []
    built: dict[tuple[str, int], dict[str, Any] | None] = {}
    for suite in suites:
        for scenario in suite.scenarios:
            key = (scenario.agent.spec, id(scenario.agent.factory))
            if key not in built:
                built[key] = _tools_of(scenario, issues)
            tools = built[key]
            if tools is not None:
                issues.extend(_scenario_tool_issues(scenario, tools))
    return list(dict.fromkeys(issues))


def _tools_of(scenario: Scenario, issues: list[ConfigIssue]) -> dict[str, Any] | None:
    try:
        agent = scenario.agent.factory(model=scenario.model)
    except Exception as exc:
        issues.append(
            ConfigIssue(
                scenario.file,
                scenario.line,
                scenario.path,
                f"agent factory {scenario.agent.spec} raised {type(exc).__name__}: {exc}",
            )
        )
        return None
    tools = agent_tools(agent)
    if tools is None:
        issues.append(
            ConfigIssue(
                scenario.file,
                scenario.line,
                scenario.path,
                f"cannot find the tools of agent {scenario.agent.spec} (no "
                "ToolNode in the graph, no 'tools' attribute): tool checks "
                "skipped",
            )
        )
    return tools


def _scenario_tool_issues(scenario: Scenario, tools: Mapping[str, Any]) -> list[ConfigIssue]:
    issues: list[ConfigIssue] = []
    names = sorted(tools)
    for spec in scenario.expected_specs:
        tool = tools.get(spec.name)
        if tool is None:
            hint = suggest(spec.name, names) or f" (tools: {', '.join(names)})"
            issues.append(
                ConfigIssue(
                    scenario.file,
                    spec.line,
                    f"{spec.path}.name",
                    f"unknown tool '{spec.name}'{hint}",
                )
            )
            continue
        issues.extend(_argument_issues(scenario, spec, tool))
    for name in scenario.forbid:
        if name not in tools:
            hint = suggest(name, names) or f" (tools: {', '.join(names)})"
            issues.append(
                ConfigIssue(
                    scenario.file,
                    scenario.line,
                    f"{scenario.path}.expect.forbid",
                    f"forbids unknown tool '{name}'{hint}",
                )
            )
    return issues


def _argument_issues(scenario: Scenario, spec: ExpectedCallSpec, tool: Any) -> list[ConfigIssue]:
    schema = _tool_schema(tool)
    if schema is None:
        return []
    properties: Mapping[str, Any] = schema.get("properties") or {}
    open_schema = bool(schema.get("additionalProperties"))
    issues: list[ConfigIssue] = []
    for key, raw in spec.args.items():
        where = f"{spec.path}.args.{key}"
        matcher = isinstance(raw, Mapping) and any(str(k).startswith("$") for k in raw)
        if key not in properties:
            if open_schema or (matcher and "$absent" in raw):
                continue
            hint = suggest(key, list(properties)) or (
                f" (arguments: {', '.join(properties) or 'none'})"
            )
            issues.append(
                ConfigIssue(
                    scenario.file,
                    spec.line,
                    where,
                    f"unknown argument '{key}' for tool '{spec.name}'{hint}",
                )
            )
            continue
        if matcher:
            continue
        expected = _json_types(properties[key], schema)
        if expected and not any(_is_json_type(raw, kind) for kind in expected):
            issues.append(
                ConfigIssue(
                    scenario.file,
                    spec.line,
                    where,
                    f"wrong type for argument '{key}' of tool '{spec.name}': "
                    f"expected {' or '.join(sorted(expected))}, found "
                    f"{describe_found(raw)}",
                )
            )
    return issues


def _tool_schema(tool: Any) -> dict[str, Any] | None:
    for attribute in ("tool_call_schema", "args_schema"):
        model = getattr(tool, attribute, None)
        if isinstance(model, type) and issubclass(model, BaseModel):
            return model.model_json_schema()
        if isinstance(model, Mapping):
            return dict(model)
    return None


def _json_types(prop: Mapping[str, Any], root: Mapping[str, Any]) -> set[str]:
    """The JSON types a property allows (empty set = anything / unknown)."""
    ref = prop.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        prop = (root.get("$defs") or {}).get(ref.split("/")[-1], {})
    kind = prop.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {str(k) for k in kind}
    members = prop.get("anyOf") or prop.get("oneOf")
    if isinstance(members, list):
        kinds: set[str] = set()
        for member in members:
            sub = _json_types(member, root)
            if not sub:
                return set()
            kinds |= sub
        return kinds
    if "enum" in prop or "const" in prop:
        return set()
    return {"object"} if "properties" in prop else set()


def _is_json_type(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, Mapping)
    if kind == "null":
        return value is None
    return True
