"""Pass-rate statistics for repeated runs (docs/metrics.md, "Comparing runs").

Plain functions of counts — ``c`` runs passed of ``n`` — so the comparison, the per-run
reports and the spans compute them the same way: the Wilson score interval, pass@k and pass^k,
and the one-sided Fisher exact test that tells a real drop from noise. Exact integer arithmetic
(``math.comb``) where it matters: a p-value is one correctly rounded division of two integers,
so a p that equals α exactly (3/3 against 0/3 gives 1/20) is found equal, not a hair above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

__all__ = [
    "Rate",
    "fisher_drop",
    "fisher_rise",
    "pass_at_k",
    "pass_hat_k",
    "rate",
    "wilson_interval",
]

CONFIDENCE = 0.95
"""The Wilson interval's confidence level reports show."""


def _check_counts(passes: int, runs: int) -> None:
    if runs < 0 or passes < 0 or passes > runs:
        raise ValueError(f"expected 0 <= passes <= runs, got {passes} passes of {runs} runs")


def wilson_interval(passes: int, runs: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The Wilson score interval of the pass rate ``passes / runs`` at ``confidence``.

    Unlike the normal approximation it stays inside [0, 1] and is not empty at 0/n or n/n.
    No runs: ``(0.0, 1.0)``, nothing is known.
    """
    _check_counts(passes, runs)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if runs == 0:
        return 0.0, 1.0
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = passes / runs
    z2 = z * z
    scale = 1 + z2 / runs
    centre = (p + z2 / (2 * runs)) / scale
    half = z * math.sqrt(p * (1 - p) / runs + z2 / (4 * runs * runs)) / scale
    # the bounds are exact at 0/n and n/n; rounding must not push them past [0, 1]
    low = 0.0 if passes == 0 else max(0.0, centre - half)
    high = 1.0 if passes == runs else min(1.0, centre + half)
    return low, high


def _check_k(runs: int, k: int) -> None:
    if not 1 <= k <= runs:
        raise ValueError(f"k must be between 1 and the number of runs ({runs}), got {k}")


def pass_at_k(passes: int, runs: int, k: int) -> float:
    """pass@k = 1 − C(n−c, k) / C(n, k): the chance that at least one of k runs drawn from
    the n (without replacement) passed — the unbiased estimator of HumanEval."""
    _check_counts(passes, runs)
    _check_k(runs, k)
    total = math.comb(runs, k)
    return (total - math.comb(runs - passes, k)) / total


def pass_hat_k(passes: int, runs: int, k: int) -> float:
    """pass^k = C(c, k) / C(n, k): the chance that all of k runs drawn from the n passed —
    τ-bench's measure of an agent that must succeed every time."""
    _check_counts(passes, runs)
    _check_k(runs, k)
    return math.comb(passes, k) / math.comb(runs, k)


def _hypergeometric(base: tuple[int, int], head: tuple[int, int]) -> tuple[int, int, int, int]:
    """The margins of the 2×2 table: total runs, total passes, head's runs, and the table count."""
    (base_passes, base_runs), (head_passes, head_runs) = base, head
    _check_counts(base_passes, base_runs)
    _check_counts(head_passes, head_runs)
    runs = base_runs + head_runs
    passes = base_passes + head_passes
    return runs, passes, head_runs, math.comb(runs, head_runs)


def _tables(runs: int, passes: int, head_runs: int, lo: int, hi: int) -> int:
    """How many ways to split the runs with head's pass count in [lo, hi], margins fixed."""
    fails = runs - passes
    return sum(math.comb(passes, x) * math.comb(fails, head_runs - x) for x in range(lo, hi + 1))


def fisher_drop(base: tuple[int, int], head: tuple[int, int]) -> float:
    """One-sided Fisher exact p-value that head's pass rate is lower than base's.

    ``base`` and ``head`` are ``(passes, runs)``. Given the table's margins, the p-value is the
    probability of head passing ``head[0]`` times *or fewer* if both sides had the same pass
    rate: the observed table counts, so a tie at the boundary is included (the classical test,
    not mid-p). 1.0 when either side has no runs.
    """
    runs, passes, head_runs, total = _hypergeometric(base, head)
    if not base[1] or not head_runs:
        return 1.0
    lo = max(0, head_runs - (runs - passes))
    return _tables(runs, passes, head_runs, lo, head[0]) / total


def fisher_rise(base: tuple[int, int], head: tuple[int, int]) -> float:
    """One-sided Fisher exact p-value that head's pass rate is higher than base's (head passing
    ``head[0]`` times *or more*); see :func:`fisher_drop`."""
    runs, passes, head_runs, total = _hypergeometric(base, head)
    if not base[1] or not head_runs:
        return 1.0
    hi = min(passes, head_runs)
    return _tables(runs, passes, head_runs, head[0], hi) / total


@dataclass(frozen=True, slots=True)
class Rate:
    """A pass rate with what reports show beside it: the Wilson interval, pass@k and pass^k.

    ``k`` is the K of ``--k`` (default: ``runs``); ``pass_at_k`` / ``pass_hat_k`` are None when
    K exceeds the runs (the estimators need k <= n) or nothing ran. At k = 1 both equal the
    rate itself.
    """

    passes: int
    runs: int
    low: float
    high: float
    k: int
    pass_at_k: float | None
    pass_hat_k: float | None

    @property
    def value(self) -> float | None:
        """``passes / runs``; None when nothing ran."""
        return self.passes / self.runs if self.runs else None


def rate(passes: int, runs: int, k: int | None = None) -> Rate:
    """The :class:`Rate` of ``passes`` of ``runs``, at ``k`` (None: k = runs)."""
    low, high = wilson_interval(passes, runs)
    kk = runs if k is None else k
    if runs == 0 or not 1 <= kk <= runs:
        return Rate(passes, runs, low, high, kk, None, None)
    return Rate(
        passes, runs, low, high, kk, pass_at_k(passes, runs, kk), pass_hat_k(passes, runs, kk)
    )
