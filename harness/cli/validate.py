"""``harness validate``: the suites load, and their expectations name the agents' tools."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console

from harness.cli.common import load_suites, print_issues
from harness.cli.exit_codes import EXIT_CONFIG, EXIT_OK


def validate_command(paths: Sequence[str], out: Console, err: Console) -> int:
    """``harness validate``: load the suites and check their tools; the exit code."""
    from harness.scenarios import check_tools, iter_scenarios

    suites = load_suites(paths, err)
    if suites is None:
        return EXIT_CONFIG
    issues = check_tools(suites)
    if issues:
        print_issues(issues, err)
        return EXIT_CONFIG
    count = sum(1 for _ in iter_scenarios(suites))
    out.print(f"{len(suites)} file(s), {count} scenario(s): OK", highlight=False)
    return EXIT_OK
