"""The statistics against values computed by hand, and against brute force (docs/metrics.md,
"Comparing runs"). scipy is not a dependency: when it happens to be importable (the bench
environment), the Fisher test and the Wilson interval are cross-checked against it too."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.compare.stats import (
    fisher_drop,
    fisher_rise,
    pass_at_k,
    pass_hat_k,
    rate,
    wilson_interval,
)

# --- Fisher's exact test, by hand ---------------------------------------------------------------
#
# Base passed c1 of n1 runs, head c2 of n2. With the margins fixed (N = n1 + n2 runs, C = c1 + c2
# passes), head's pass count X is hypergeometric: P(X = x) = C(C, x) C(N - C, n2 - x) / C(N, n2).
#
# 8/10 vs 3/10: N = 20, C = 11, C(20, 10) = 184756; X runs from 1 (head has 10 runs and only 9
# failures exist) to 10.
#   P(X = 1) = C(11, 1) C(9, 9) = 11 * 1   = 11
#   P(X = 2) = C(11, 2) C(9, 8) = 55 * 9   = 495
#   P(X = 3) = C(11, 3) C(9, 7) = 165 * 36 = 5940
#   p_drop = P(X <= 3) = 6446 / 184756 = 0.034889...  <= 0.05: significant
#
# 9/10 vs 7/10: N = 20, C = 16; X runs from 6 (4 failures in all) to 10.
#   P(X = 6) = C(16, 6) C(4, 4) = 8008 * 1 = 8008
#   P(X = 7) = C(16, 7) C(4, 3) = 11440 * 4 = 45760
#   p_drop = P(X <= 7) = 53768 / 184756 = 0.291022...  > 0.05: not significant
#
# 3/3 vs 0/3: N = 6, C = 3; P(X = 0) = C(3, 0) C(3, 3) / C(6, 3) = 1/20 = 0.05 exactly: the
# observed table counts (no mid-p), so p equals alpha and the drop is significant at 0.05.


def test_fisher_drop_of_the_issue_rates_by_hand() -> None:
    assert fisher_drop((8, 10), (3, 10)) == 6446 / 184756
    assert fisher_drop((9, 10), (7, 10)) == 53768 / 184756
    assert round(fisher_drop((8, 10), (3, 10)), 6) == 0.034889
    assert round(fisher_drop((9, 10), (7, 10)), 6) == 0.291022


def test_fisher_rise_is_the_other_tail() -> None:
    # P(X >= 3) for 8/10 vs 3/10 = 1 - P(X <= 2) = 1 - (11 + 495) / 184756
    assert fisher_rise((8, 10), (3, 10)) == (184756 - 506) / 184756
    # the rise 3/10 -> 8/10 is the drop 8/10 -> 3/10 seen from the other side
    assert fisher_rise((3, 10), (8, 10)) == fisher_drop((8, 10), (3, 10))


def test_a_p_value_equal_to_alpha_is_exactly_alpha() -> None:
    assert fisher_drop((3, 3), (0, 3)) == 0.05  # 1/20, one correctly rounded division


def test_equal_rates_are_never_significant() -> None:
    # the observed table is the tie: each tail holds it, so both p-values are >= 1/2
    for passes in range(11):
        assert fisher_drop((passes, 10), (passes, 10)) >= 0.5
        assert fisher_rise((passes, 10), (passes, 10)) >= 0.5


def test_a_side_with_no_runs_gives_p_one() -> None:
    assert fisher_drop((0, 0), (3, 10)) == 1.0
    assert fisher_rise((3, 10), (0, 0)) == 1.0


def test_bad_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="0 <= passes <= runs"):
        fisher_drop((11, 10), (3, 10))
    with pytest.raises(ValueError, match="0 <= passes <= runs"):
        wilson_interval(-1, 10)


def _brute_fisher(base: tuple[int, int], head: tuple[int, int]) -> tuple[Fraction, Fraction]:
    """Both tails by enumerating which runs are head's: every split equally likely under H0."""
    runs = [True] * (base[0] + head[0]) + [False] * (base[1] - base[0] + head[1] - head[0])
    low = high = total = 0
    for chosen in itertools.combinations(range(len(runs)), head[1]):
        passes = sum(runs[i] for i in chosen)
        total += 1
        low += passes <= head[0]
        high += passes >= head[0]
    return Fraction(low, total), Fraction(high, total)


counts = st.integers(1, 6).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))


@settings(max_examples=150, deadline=None)
@given(base=counts, head=counts)
def test_fisher_equals_brute_force(base: tuple[int, int], head: tuple[int, int]) -> None:
    low, high = _brute_fisher(base, head)
    assert fisher_drop(base, head) == float(low)
    assert fisher_rise(base, head) == float(high)


def test_fisher_agrees_with_scipy_when_it_is_there() -> None:
    stats = pytest.importorskip("scipy.stats")
    for base, head in (
        ((8, 10), (3, 10)),
        ((9, 10), (7, 10)),
        ((40, 50), (31, 50)),
        ((2, 7), (5, 9)),
    ):
        table = [[head[0], head[1] - head[0]], [base[0], base[1] - base[0]]]
        assert fisher_drop(base, head) == pytest.approx(
            stats.fisher_exact(table, alternative="less").pvalue, rel=1e-9
        )
        assert fisher_rise(base, head) == pytest.approx(
            stats.fisher_exact(table, alternative="greater").pvalue, rel=1e-9
        )


# --- the Wilson interval, by hand ---------------------------------------------------------------
#
# z = 1.959964 (the normal's 97.5 % point), z^2 = 3.841459.
# 8/10: centre = (0.8 + z^2/20) / (1 + z^2/10) = 0.992073 / 1.384146 = 0.716738;
#       half = z * sqrt(0.8 * 0.2 / 10 + z^2 / 400) / 1.384146 = z * 0.160011 / 1.384146
#            = 0.226569;  interval (0.4902, 0.9433)
# 0/10: centre = half = (z^2/20) / 1.384146 = 0.192073 / 1.384146 = 0.138766: (0, 0.277533)
# 10/10: by symmetry (1 - 0.277533, 1) = (0.722467, 1)


def test_wilson_interval_by_hand() -> None:
    low, high = wilson_interval(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    assert wilson_interval(0, 10) == (0.0, pytest.approx(0.277533, abs=1e-6))
    assert wilson_interval(10, 10) == (pytest.approx(0.722467, abs=1e-6), 1.0)
    assert wilson_interval(0, 0) == (0.0, 1.0)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_holds_the_rate_inside_zero_one(counts: tuple[int, int]) -> None:
    passes, runs = counts
    low, high = wilson_interval(passes, runs)
    assert 0.0 <= low <= passes / runs <= high <= 1.0
    narrower = wilson_interval(passes, runs, confidence=0.5)
    assert low <= narrower[0] and narrower[1] <= high


def test_wilson_agrees_with_scipy_when_it_is_there() -> None:
    stats = pytest.importorskip("scipy.stats")
    for passes, runs in ((8, 10), (3, 10), (0, 7), (50, 51)):
        interval = stats.binomtest(passes, runs).proportion_ci(method="wilson")
        assert wilson_interval(passes, runs) == pytest.approx((interval.low, interval.high))


# --- pass@k and pass^k, by hand -----------------------------------------------------------------
#
# n = 10, c = 3, k = 2: pass@2 = 1 - C(7, 2)/C(10, 2) = 1 - 21/45 = 24/45 = 0.5333...
#                       pass^2 = C(3, 2)/C(10, 2) = 3/45 = 0.0666...
# n = 10, c = 8, k = 3: pass@3 = 1 - C(2, 3)/C(10, 3) = 1 - 0 = 1
#                       pass^3 = C(8, 3)/C(10, 3) = 56/120 = 0.4666...
# k = 1: both are c/n.


def test_pass_at_k_and_pass_hat_k_by_hand() -> None:
    assert pass_at_k(3, 10, 2) == 24 / 45
    assert pass_hat_k(3, 10, 2) == 3 / 45
    assert pass_at_k(8, 10, 3) == 1.0
    assert pass_hat_k(8, 10, 3) == 56 / 120
    assert pass_at_k(8, 10, 1) == pass_hat_k(8, 10, 1) == 0.8
    # k = n, the default: pass@n says "any run passed", pass^n "every run passed"
    assert (pass_at_k(8, 10, 10), pass_hat_k(8, 10, 10)) == (1.0, 0.0)
    assert (pass_at_k(0, 10, 10), pass_hat_k(10, 10, 10)) == (0.0, 1.0)


def test_k_outside_one_to_n_is_refused() -> None:
    with pytest.raises(ValueError, match="k must be between 1 and the number of runs"):
        pass_at_k(3, 10, 11)
    with pytest.raises(ValueError, match="k must be between 1"):
        pass_hat_k(3, 10, 0)


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 8).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n), st.integers(1, n)))
)
def test_pass_k_equals_brute_force_over_every_draw(case: tuple[int, int, int]) -> None:
    passes, runs, k = case
    outcomes = [True] * passes + [False] * (runs - passes)
    draws = list(itertools.combinations(outcomes, k))
    assert pass_at_k(passes, runs, k) == pytest.approx(sum(any(d) for d in draws) / len(draws))
    assert pass_hat_k(passes, runs, k) == pytest.approx(sum(all(d) for d in draws) / len(draws))
    assert pass_hat_k(passes, runs, k) <= passes / runs <= pass_at_k(passes, runs, k)


def test_rate_gives_none_where_k_does_not_fit() -> None:
    assert rate(8, 10).k == 10 and rate(8, 10).pass_at_k == 1.0
    at_three = rate(8, 10, 3)
    assert (at_three.k, at_three.pass_hat_k) == (3, 56 / 120)
    assert rate(2, 2, 5).pass_at_k is None  # K > n: the estimators need k <= n
    assert rate(0, 0).value is None and rate(0, 0).pass_at_k is None
    assert math.isclose(rate(8, 10).low, 0.4902, abs_tol=1e-4)
