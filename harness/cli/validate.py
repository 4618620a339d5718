"""``harness validate``: the suites load, and their expectations name the agents' tools; the
policy files named load (harness.policies)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from harness.cli.common import load_suites, print_issues
from harness.cli.exit_codes import EXIT_CONFIG, EXIT_OK


def validate_command(paths: Sequence[str], out: Console, err: Console) -> int:
    """``harness validate``: load the suites and check their tools, load the policy files; the
    exit code."""
    from harness.policies import looks_like_policies

    policy_files = [p for p in paths if Path(p).is_file() and looks_like_policies(Path(p))]
    suite_paths = [p for p in paths if p not in policy_files]
    if policy_files and _validate_policies(policy_files, out, err) != EXIT_OK:
        return EXIT_CONFIG
    if not suite_paths:
        return EXIT_OK
    return _validate_suites(suite_paths, out, err)


def _validate_policies(paths: Sequence[str], out: Console, err: Console) -> int:
    from harness.policies.console import load_or_print
    from harness.text import plural

    policies = load_or_print(paths, err)
    if policies is None:
        return EXIT_CONFIG
    rules = sum(len(policy.rules) for policy in policies)
    counts = (plural(len(paths), "policy file"), plural(len(policies), "policy", "policies"))
    out.print(f"{counts[0]}, {counts[1]}, {plural(rules, 'rule')}: OK", highlight=False)
    return EXIT_OK


def _validate_suites(paths: Sequence[str], out: Console, err: Console) -> int:
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
