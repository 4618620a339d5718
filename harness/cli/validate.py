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
    found = check_tools(suites)
    # a warning (a rule's glob that matches no tool) is said, and does not fail validation
    for warning in (issue for issue in found if issue.warning):
        err.print(
            f"warning: {warning}", style="yellow", markup=False, highlight=False, soft_wrap=True
        )
    issues = [issue for issue in found if not issue.warning]
    if issues:
        print_issues(issues, err)
        return EXIT_CONFIG
    count = sum(1 for _ in iter_scenarios(suites))
    out.print(f"{len(suites)} file(s), {count} scenario(s): OK", highlight=False)
    return EXIT_OK
