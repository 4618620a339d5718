"""``main``: parse the command line, apply the settings' defaults, run one command."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from harness.cli.exit_codes import EXIT_CONFIG, EXIT_INTERRUPTED
from harness.cli.parser import build_parser

if TYPE_CHECKING:
    from rich.console import Console


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: parse ``argv`` (default ``sys.argv[1:]``), run, return the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code) if isinstance(exc.code, int) else EXIT_CONFIG
    from rich.console import Console  # after parsing: --version and --help print without it

    out = Console()
    err = Console(stderr=True)
    if args.command in ("run", "eval-traces"):
        defaults = _settings_defaults(parser, err)
        if defaults is None:
            return EXIT_CONFIG
        if defaults:  # parsed again: flags given now override the settings
            args = build_parser(defaults).parse_args(argv)
    try:
        code, lingering = _dispatch(args, out, err)
    except KeyboardInterrupt:
        err.print("interrupted")
        code, lingering = EXIT_INTERRUPTED, False
    if argv is None and lingering:
        # a sync agent or tool is still hung on a worker thread after its timeout: the report
        # is written, so leave now instead of waiting for it forever
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _dispatch(args: argparse.Namespace, out: Console, err: Console) -> tuple[int, bool]:
    """Run the parsed command: its exit code, and whether a thread of ``run`` is still alive.

    Each command's module is imported here, for its command only: ``import harness.cli`` (the
    console script, ``--help``) stays as cheap as the parser.
    """
    if args.command == "run":
        from harness.cli.run import run_command

        return run_command(args, out, err)
    if args.command == "eval-traces":
        from harness.cli.eval_traces import eval_traces_command

        return eval_traces_command(args, out, err), False
    if args.command == "compare":
        from harness.cli.compare import compare_command

        return compare_command(args, out, err), False
    if args.command == "serve":
        from harness.cli.serve import serve_command

        return serve_command(args, out, err), False
    if args.command == "validate":
        from harness.cli.validate import validate_command

        return validate_command(args.paths, out, err), False
    from harness.cli import commands

    if args.command == "draft":
        return commands.draft_command(args, out, err), False
    if args.command == "init":
        return commands.init_command(args, out, err), False
    if args.command == "schema":
        return commands.schema_command(out, policies=args.policies), False
    return commands.metrics_command(out), False


def _settings_defaults(parser: argparse.ArgumentParser, err: Console) -> dict[str, Any] | None:
    """The flag defaults of ``[tool.harness]`` / ``harness.toml`` / ``HARNESS_*``; None: bad."""
    from harness.cli.common import print_issues
    from harness.config import flag_defaults, load_settings
    from harness.errors import ConfigError

    try:
        loaded = load_settings()
    except ConfigError as exc:
        print_issues(exc.issues, err)
        return None
    # what a bare --record / --replay stores (the cassettes' own default folder)
    record_const = parser.parse_args(["run", "--replay"]).replay
    return flag_defaults(loaded.settings, record_const)
