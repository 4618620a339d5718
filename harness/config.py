"""Project settings: ``[tool.harness]`` (pyproject.toml) or ``harness.toml``, and ``HARNESS_*``.

A setting gives the default of a ``harness run`` / ``harness eval-traces`` flag; precedence is
the flag, then the environment variable, then the file (as pytest's ``addopts`` and
``PYTEST_ADDOPTS`` are layered). The file is looked for in the current folder and then its
parents: ``harness.toml`` (settings at its top level) before ``pyproject.toml`` (settings in
``[tool.harness]``); the first folder with either wins. Relative paths in the file are read
from the file's folder.

Every key has one variable: ``HARNESS_<KEY>`` at the top level, ``HARNESS_<TABLE>_<KEY>``
inside a table (``HARNESS_OTLP_ENDPOINT``); lists are comma-separated, headers
``k=v,k2=v2``. Variables starting with ``HARNESS_`` that name no setting are ignored: CI
systems (Harness CI among them) set their own.

An unknown key or a value of the wrong type is a :class:`~harness.errors.ConfigError` whose
issues read ``pyproject.toml:12: tool.harness.concurency: unknown key ... did you mean
'concurrency'?``, as the scenario files' errors do.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.errors import ConfigError
from harness.scenarios.issues import Collector, ConfigIssue, PathKey, pydantic_issues

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = [
    "ENV_PREFIX",
    "FILE_NAMES",
    "LoadedSettings",
    "Settings",
    "env_variables",
    "find_settings_file",
    "flag_defaults",
    "load_settings",
]

ENV_PREFIX = "HARNESS_"
FILE_NAMES = ("harness.toml", "pyproject.toml")
"""Looked for in this order in each folder, from the current one up."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


with warnings.catch_warnings():
    # `json` is the natural key (the flag is --json); it shadows BaseModel.json(), unused here
    warnings.filterwarnings("ignore", message='Field name "json"', category=UserWarning)

    class ReportSettings(_Strict):
        """``[tool.harness.reports]``: the report files every run writes."""

        json: str | None = Field(  # type: ignore[assignment]
            default=None, description="--json: the JSON report's path."
        )
        junit_xml: str | None = Field(default=None, description="--junit-xml: the JUnit XML path.")
        html: str | None = Field(default=None, description="--html: the HTML report's path.")
        markdown: str | None = Field(default=None, description="--markdown: the Markdown summary.")
        github: bool | None = Field(
            default=None, description="--github: annotations and step summary outside Actions too."
        )


class RedactionSettings(_Strict):
    """``[tool.harness.redaction]``: what is masked in reports and spans."""

    keys: list[str] | None = Field(default=None, description="--redact: more keys to mask.")
    defaults: bool | None = Field(
        default=None, description="false: mask only `keys`, not the default list."
    )


class CassetteSettings(_Strict):
    """``[tool.harness.cassettes]``: record or replay the models (``--record`` / ``--replay``)."""

    mode: Literal["record", "missing", "replay"] | None = Field(
        default=None, description="record, missing (record what is not recorded) or replay."
    )
    dir: str | None = Field(default=None, description="The cassettes' folder.")


class OtlpSettings(_Strict):
    """``[tool.harness.otlp]``: export every run as a trace."""

    endpoint: str | None = Field(default=None, description="--otlp-endpoint URL.")
    protocol: Literal["http", "grpc"] | None = Field(default=None, description="--otlp-protocol.")
    headers: dict[str, str] | None = Field(
        default=None, description="--otlp-header KEY=VALUE, as a table."
    )
    capture_content: bool | None = Field(default=None, description="--capture-content.")
    trace_file: str | None = Field(default=None, description="--trace-file: OTLP JSON output.")
    trace_url: str | None = Field(
        default=None, description="--trace-url: link template with {trace_id}."
    )


class Settings(_Strict):
    """Every setting of ``[tool.harness]`` (all optional: a flag's own default applies)."""

    paths: list[str] | None = Field(
        default=None, description="What `harness run` with no PATH runs."
    )
    concurrency: int | None = Field(default=None, ge=1, description="--concurrency.")
    timeout: float | None = Field(default=None, gt=0, description="--timeout, seconds per run.")
    repeat: int | None = Field(default=None, ge=1, description="--repeat.")
    fail_fast: bool | None = Field(default=None, description="--fail-fast / -x.")
    reports: ReportSettings = Field(default_factory=ReportSettings)
    redaction: RedactionSettings = Field(default_factory=RedactionSettings)
    cassettes: CassetteSettings = Field(default_factory=CassetteSettings)
    otlp: OtlpSettings = Field(default_factory=OtlpSettings)


_TABLES: dict[str, type[BaseModel]] = {
    "reports": ReportSettings,
    "redaction": RedactionSettings,
    "cassettes": CassetteSettings,
    "otlp": OtlpSettings,
}

_PATH_KEYS: frozenset[PathKey] = frozenset(
    {
        ("reports", "json"),
        ("reports", "junit_xml"),
        ("reports", "html"),
        ("reports", "markdown"),
        ("cassettes", "dir"),
        ("otlp", "trace_file"),
    }
)
"""File paths, read relative to the settings file's folder (``paths`` too)."""


@dataclass(frozen=True, slots=True)
class LoadedSettings:
    """The merged settings and where the file part came from."""

    settings: Settings
    file: Path | None
    """The settings file found (None: none, only variables if any)."""
    base: Path
    """The folder relative paths of the file are read from."""


def find_settings_file(start: Path | None = None) -> tuple[Path, PathKey] | None:
    """The settings file and the key path of its table, searching ``start`` and its parents."""
    folder = (start or Path.cwd()).resolve()
    for candidate in (folder, *folder.parents):
        own = candidate / "harness.toml"
        if own.is_file():
            return own, ()
        project = candidate / "pyproject.toml"
        if project.is_file() and _has_tool_table(project):
            return project, ("tool", "harness")
    return None


def _has_tool_table(path: Path) -> bool:
    # Decided on the text: a pyproject without our table is skipped even if it does not parse
    # (it is another tool's problem, and a parent folder's file may be ours).
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return False
    return re.search(r"^\s*\[\s*tool\s*\.\s*harness\s*[.\]]", text, re.MULTILINE) is not None


def env_variables() -> dict[str, PathKey]:
    """Every ``HARNESS_*`` variable a setting reads, with the setting's key path."""
    out: dict[str, PathKey] = {}
    for name in Settings.model_fields:
        table = _TABLES.get(name)
        if table is None:
            out[f"{ENV_PREFIX}{name.upper()}"] = (name,)
            continue
        for key in table.model_fields:
            out[f"{ENV_PREFIX}{name.upper()}_{key.upper()}"] = (name, key)
    return out


def load_settings(
    start: Path | None = None, environ: Mapping[str, str] | None = None
) -> LoadedSettings:
    """The file's settings under the environment's; ConfigError lists every bad key of both."""
    env = os.environ if environ is None else environ
    found = find_settings_file(start)
    issues: list[ConfigIssue] = []
    data: dict[str, Any] = {}
    base = (start or Path.cwd()).resolve()
    file = None
    if found is not None:
        file, table = found
        base = file.parent
        data, file_issues = _read_file(file, table)
        issues.extend(file_issues)
    overrides, env_issues = _read_env(env)
    issues.extend(env_issues)
    if issues:
        raise ConfigError(sorted(issues, key=lambda issue: (issue.file, issue.line or 0)))
    merged = _merge(data, overrides)
    try:
        settings = Settings.model_validate(merged, strict=False)
    except ValidationError as exc:  # a file value the lax pass accepts but is nonsense
        out = Collector(_display(file) if file else "environment")
        pydantic_issues(exc, Settings, (), out)
        raise ConfigError(out.issues) from None
    return LoadedSettings(settings, file, base)


def _display(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _read_file(path: Path, table: PathKey) -> tuple[dict[str, Any], list[ConfigIssue]]:
    shown = _display(path)
    try:
        text = path.read_text(encoding="utf-8")
        document = tomllib.loads(text)
    except OSError as exc:
        return {}, [ConfigIssue(shown, None, "", f"cannot read: {exc.strerror or exc}")]
    except tomllib.TOMLDecodeError as exc:
        # Python < 3.14 gives the place only in the message: "... (at line 3, column 9)"
        place = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        line = int(place.group(1)) if place else None
        message = re.sub(r" \(at (line \d+, column \d+|end of document)\)", "", str(exc))
        return {}, [ConfigIssue(shown, line, "", f"not valid TOML: {message}")]
    section: Any = document
    for part in table:
        section = section.get(str(part), {}) if isinstance(section, Mapping) else {}
    out = Collector(shown)
    out.lines = _toml_lines(text)
    if not isinstance(section, Mapping):
        out.add(table, "expected a table of settings")
        return {}, out.issues
    try:
        Settings.model_validate(section)  # strict: TOML has real types, so "8" is a mistake
    except ValidationError as exc:
        pydantic_issues(exc, Settings, table, out)
    return _relative(dict(section), path.parent), out.issues


def _relative(data: dict[str, Any], base: Path) -> dict[str, Any]:
    """Paths in the file resolved against its folder (only when given as strings)."""
    out = dict(data)
    paths = out.get("paths")
    if isinstance(paths, list):
        out["paths"] = [_under(base, p) if isinstance(p, str) else p for p in paths]
    for table, key in _PATH_KEYS:
        section = out.get(str(table))
        if isinstance(section, Mapping) and isinstance(section.get(str(key)), str):
            out[str(table)] = {**section, str(key): _under(base, section[str(key)])}
    return out


def _under(base: Path, raw: str) -> str:
    path = Path(raw).expanduser()
    if path.is_absolute():
        return str(path)
    joined = base / path
    try:
        return str(joined.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(joined)


_HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(?:#.*)?$")
_KEY = re.compile(r"""^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_.-]+)\s*=""")
_INLINE_KEY = re.compile(r"""[{,]\s*("[^"]*"|'[^']*'|[A-Za-z0-9_-]+)\s*=""")


def _key_parts(raw: str) -> tuple[str, ...]:
    return tuple(part.strip().strip("\"'") for part in raw.split("."))


def _toml_lines(text: str) -> dict[PathKey, int]:
    """Key path -> line, for placing an issue: headers, ``key =`` lines, inline-table keys."""
    lines: dict[PathKey, int] = {}
    table: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            table = _key_parts(header.group(1))
            lines.setdefault(table, number)
            continue
        key = _KEY.match(line)
        if not key:
            continue
        path = (*table, *_key_parts(key.group(1)))
        lines.setdefault(path, number)
        for inner in _INLINE_KEY.finditer(line, key.end()):
            lines.setdefault((*path, inner.group(1).strip("\"'")), number)
    return lines


def _read_env(env: Mapping[str, str]) -> tuple[dict[str, Any], list[ConfigIssue]]:
    variables = env_variables()
    data: dict[str, Any] = {}
    issues: list[ConfigIssue] = []
    for name, loc in variables.items():
        raw = env.get(name)
        if raw is None or not raw.strip():
            continue
        value = _env_value(loc, raw.strip())
        if isinstance(value, ConfigIssue):
            issues.append(ConfigIssue(name, None, "", value.message))
            continue
        target = data
        for part in loc[:-1]:
            target = target.setdefault(str(part), {})
        target[str(loc[-1])] = value
    if data:
        try:
            Settings.model_validate(data, strict=False)
        except ValidationError as exc:
            for error in exc.errors():
                loc = tuple(error["loc"])
                name = next((n for n, where in variables.items() if where == loc[:2]), "")
                name = name or next(n for n, where in variables.items() if where == loc[:1])
                issues.append(
                    ConfigIssue(name, None, "", f"{error['msg'].lower()}, found {env[name]!r}")
                )
    return data, issues


def _env_value(loc: PathKey, raw: str) -> Any:
    if loc in (("paths",), ("redaction", "keys")):
        return [item.strip() for item in raw.split(",") if item.strip()]
    if loc == ("otlp", "headers"):
        headers: dict[str, str] = {}
        for item in raw.split(","):
            if not item.strip():
                continue
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                return ConfigIssue("", None, "", f"expected KEY=VALUE pairs, found {item!r}")
            headers[key.strip()] = value.strip()
        return headers
    return raw


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


# --- as flag defaults --------------------------------------------------------------------------


def flag_defaults(settings: Settings, record_const: Any = None) -> dict[str, Any]:
    """The argparse ``dest -> default`` of every setting that is set.

    ``record_const``: what a bare ``--record`` / ``--replay`` stores (the cassettes' own
    folder), used when ``cassettes.dir`` is not set.
    """
    out: dict[str, Any] = {}

    def put(dest: str, value: Any) -> None:
        if value is not None:
            out[dest] = value

    put("paths", settings.paths)
    put("concurrency", settings.concurrency)
    put("timeout", settings.timeout)
    put("repeat", settings.repeat)
    put("fail_fast", settings.fail_fast)
    reports = settings.reports
    put("json_path", reports.json)
    put("junit_xml", reports.junit_xml)
    put("html_path", reports.html)
    put("markdown_path", reports.markdown)
    put("github", reports.github)
    redaction = settings.redaction
    put("redact", list(redaction.keys) if redaction.keys is not None else None)
    put("no_default_redact", None if redaction.defaults is None else not redaction.defaults)
    cassettes = settings.cassettes
    if cassettes.mode == "replay":
        out["replay"] = cassettes.dir or record_const
    elif cassettes.mode == "missing":
        out["record"] = "missing"
    elif cassettes.mode == "record":
        out["record"] = cassettes.dir or record_const
    otlp = settings.otlp
    put("otlp_endpoint", otlp.endpoint)
    put("otlp_protocol", otlp.protocol)
    if otlp.headers:
        out["otlp_header"] = [f"{key}={value}" for key, value in otlp.headers.items()]
    put("capture_content", otlp.capture_content)
    put("trace_file", otlp.trace_file)
    put("trace_url", otlp.trace_url)
    return out
