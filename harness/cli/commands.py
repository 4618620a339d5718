"""The small commands: ``metrics``, ``schema``, ``draft`` and ``init``."""

from __future__ import annotations

import argparse
import inspect
from typing import Any

from rich.console import Console
from rich.table import Table

from harness.cli.common import plain
from harness.cli.exit_codes import EXIT_OK


def schema_command(out: Console, *, policies: bool = False) -> int:
    """``harness schema``: the JSON Schema of a suite (``--policies``: a policy file), on stdout."""
    from harness.scenarios.json_schema import schema_json

    out.file.write(schema_json(policies=policies))
    return EXIT_OK


def draft_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    """``harness draft``: :mod:`harness.scenarios.draft` writes plain lines (YAML has brackets)."""
    from harness.scenarios.draft import command

    return command(args, plain(out), plain(err))


def init_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    """``harness init``: the starter project of :mod:`harness.scaffold`."""
    from harness.scaffold import init_command as write_starter

    return write_starter(args.directory, out, err)


def metrics_command(out: Console) -> int:
    """``harness metrics``: a table of every metric, its options and their defaults."""
    from harness.metrics import metric_names, metric_options
    from harness.metrics.registry import get_metric

    table = Table(show_lines=False)
    table.add_column("metric", style="cyan", no_wrap=True)
    table.add_column("options (default)")
    table.add_column("description")
    for name in metric_names():
        try:
            options = metric_options(name)
            metric = get_metric(name)
        except Exception as exc:  # a broken plugin should not hide the others
            table.add_row(name, "", f"cannot load: {exc}")
            continue
        shown = ", ".join(
            f"{key}={'(required)' if value is inspect.Parameter.empty else _default(value)}"
            for key, value in options.items()
        )
        doc = (inspect.getdoc(type(metric)) or "").splitlines()
        table.add_row(name, shown, doc[0] if doc else "")
    out.print(table)
    return EXIT_OK


def _default(value: Any) -> str:
    """A default as the table shows it: a callable by its name."""
    if callable(value):
        return getattr(value, "__name__", repr(value))
    return repr(value)
