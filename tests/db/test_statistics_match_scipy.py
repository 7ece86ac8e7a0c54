"""The statistics the database shows beside every verdict (issue 36, docs/statistics.md), held to
scipy and statsmodels on generated data: every number here is read back from the database's own
functions, and the reference is computed by the libraries of the test extra (the runner never
imports them).

Edges the issue names: clusters of one (the clustered error is then the plain one) and all in one
(no clustered error), Wilson at 0 of n and n of n (the exact bound), paired differences with items
missing on either side, McNemar with no discordant pair, and power for one tail and for two."""

from __future__ import annotations

from statistics import fmean

import pytest
import statsmodels.api as sm
from hypothesis import HealthCheck, assume, example, given, settings, strategies as st
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_confint

pytestmark = [pytest.mark.db, pytest.mark.shared_db]

REL = 1e-9


def examples(n: int = 60) -> settings:
    return settings(max_examples=n, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def close(got, want, rel=REL, abs_=1e-12) -> bool:
    return got == pytest.approx(want, rel=rel, abs=abs_)


values = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False).map(lambda v: round(v, 4))
scores = st.lists(values, min_size=2, max_size=40)


def one(admin, sql: str, *params):
    return admin.execute(sql, params).fetchone()


# -- quantiles ------------------------------------------------------------------------------------

@given(st.floats(min_value=1e-300, max_value=1 - 1e-15, exclude_min=False))
@examples(200)
def test_normal_quantile_is_scipys(admin, p):
    (z,) = one(admin, "SELECT evalledger.normal_quantile_v1(%s)", p)
    assert close(z, stats.norm.ppf(p), rel=1e-13, abs_=1e-13)


def test_normal_quantile_outside_0_1_is_null(admin):
    assert one(admin, "SELECT evalledger.normal_quantile_v1(0), evalledger.normal_quantile_v1(1), "
                      "evalledger.normal_quantile_v1(-0.5), evalledger.normal_quantile_v1(0.5)") == (None, None, None, 0.0)


# -- mean, clustered, ratio -----------------------------------------------------------------------

@given(scores)
@examples()
def test_mean_stderr_is_scipys_sem(admin, xs):
    est, se, n = one(admin, "SELECT * FROM evalledger.mean_stderr_v1(%s::float8[])", xs)
    assert n == len(xs)
    assert close(est, fmean(xs), abs_=1e-9)
    assert close(se, stats.sem(xs), abs_=1e-9)


def test_mean_of_one_value_has_no_stderr(admin):
    assert one(admin, "SELECT * FROM evalledger.mean_stderr_v1(ARRAY[3.5]::float8[])") == (3.5, None, 1)
    assert one(admin, "SELECT * FROM evalledger.mean_stderr_v1(ARRAY[]::float8[])") == (None, None, 0)


@st.composite
def clustered(draw):
    xs = draw(scores)
    groups = draw(st.lists(st.sampled_from("abcdefgh"), min_size=len(xs), max_size=len(xs)))
    return xs, groups


def statsmodels_cluster_se(xs, groups) -> float:
    index = {g: i for i, g in enumerate(sorted(set(groups)))}
    codes = [index[g] for g in groups]
    fit = sm.OLS([float(x) for x in xs], [[1.0]] * len(xs)).fit(cov_type="cluster", cov_kwds={"groups": codes})
    return float(fit.bse[0])


@given(clustered())
@examples()
def test_clustered_stderr_is_statsmodels_cluster_robust(admin, data):
    xs, groups = data
    assume(len(set(groups)) >= 2)
    est, se, n, k = one(admin, "SELECT * FROM evalledger.clustered_stderr_v1(%s::float8[], %s::text[])", xs, groups)
    assert (n, k) == (len(xs), len(set(groups)))
    assert close(est, fmean(xs), abs_=1e-9)
    assert close(se, statsmodels_cluster_se(xs, groups), rel=1e-7, abs_=1e-9)


@given(scores)
@examples()
def test_clusters_of_one_give_the_plain_stderr(admin, xs):
    groups = [str(i) for i in range(len(xs))]
    _, se, _, k = one(admin, "SELECT * FROM evalledger.clustered_stderr_v1(%s::float8[], %s::text[])", xs, groups)
    assert k == len(xs)
    assert close(se, stats.sem(xs), rel=1e-7, abs_=1e-9)
    assert close(se, statsmodels_cluster_se(xs, groups), rel=1e-7, abs_=1e-9)
    # NULL labels are clusters of their own too.
    _, se_null, _, _ = one(admin, "SELECT * FROM evalledger.clustered_stderr_v1(%s::float8[], %s::text[])",
                           xs, [None] * len(xs))
    assert close(se_null, se, rel=1e-12)


@given(scores)
@examples(30)
def test_all_in_one_cluster_has_no_clustered_stderr(admin, xs):
    est, se, n, k = one(admin, "SELECT * FROM evalledger.clustered_stderr_v1(%s::float8[], %s::text[])",
                        xs, ["only"] * len(xs))
    assert (se, n, k) == (None, len(xs), 1)
    assert close(est, fmean(xs), abs_=1e-9)


@st.composite
def items_with_claims(draw):
    n = draw(st.integers(min_value=2, max_value=30))
    claims = draw(st.lists(st.integers(min_value=0, max_value=8), min_size=n, max_size=n))
    bad = [draw(st.integers(min_value=0, max_value=c)) for c in claims]
    return bad, claims


@given(items_with_claims())
@examples()
def test_ratio_stderr_is_statsmodels_on_the_claims_clustered_by_item(admin, data):
    bad, claims = data
    assume(sum(claims) > 0 and sum(1 for c in claims if c) >= 2)
    items = [f"Q{i}" for i in range(len(claims))]
    est, se, n, k = one(admin, "SELECT * FROM evalledger.ratio_stderr_v1(%s::float8[], %s::float8[], %s::text[])",
                        bad, claims, items)
    outcomes, groups = [], []
    for i, (b, c) in enumerate(zip(bad, claims)):
        outcomes += [1.0] * b + [0.0] * (c - b)
        groups += [i] * c
    assert (n, k) == (sum(claims), sum(1 for c in claims if c))
    assert close(est, sum(bad) / sum(claims))
    assert close(se, statsmodels_cluster_se(outcomes, groups), rel=1e-7, abs_=1e-12)


def test_ratio_without_claims_has_no_estimate(admin):
    assert one(admin, "SELECT * FROM evalledger.ratio_stderr_v1('{0,0}'::float8[], '{0,0}'::float8[], '{a,b}'::text[])") \
        == (None, None, 0.0, 0)


# -- proportions ----------------------------------------------------------------------------------

@given(st.integers(min_value=1, max_value=500).flatmap(lambda n: st.tuples(st.integers(1, max(1, n - 1)), st.just(n))),
       st.sampled_from([0.8, 0.9, 0.95, 0.99]))
@examples(100)
def test_wilson_is_statsmodels(admin, xn, conf):
    x, n = xn
    assume(0 < x < n)
    lo, hi, method = one(admin, "SELECT * FROM evalledger.wilson_interval_v1(%s, %s, %s)", x, n, conf)
    want = proportion_confint(x, n, alpha=1 - conf, method="wilson")
    assert method == "wilson"
    assert close(lo, want[0]) and close(hi, want[1])


@given(st.integers(min_value=1, max_value=2000), st.sampled_from([0.9, 0.95, 0.99]))
@examples(100)
def test_wilson_at_0_of_n_and_n_of_n_is_the_exact_one_sided_bound(admin, n, conf):
    lo0, hi0, m0 = one(admin, "SELECT * FROM evalledger.wilson_interval_v1(0, %s, %s)", n, conf)
    lon, hin, mn = one(admin, "SELECT * FROM evalledger.wilson_interval_v1(%s, %s, %s)", n, n, conf)
    assert (m0, mn) == ("exact", "exact")
    assert lo0 == 0 and hin == 1
    # Clopper-Pearson with all of 1 - conf on the one open side: beta quantiles.
    assert close(hi0, stats.beta.ppf(conf, 1, n), rel=1e-9)
    assert close(lon, stats.beta.ppf(1 - conf, n, 1), rel=1e-9)
    assert close(hi0, proportion_confint(0, n, alpha=2 * (1 - conf), method="beta")[1], rel=1e-9)
    assert close(lon, proportion_confint(n, n, alpha=2 * (1 - conf), method="beta")[0], rel=1e-9)


def test_the_rule_of_three(admin):
    # 0 of 50 claims: the 95% upper bound is near 3/50 = 6%, three times a 2% criterion.
    (hi,) = one(admin, "SELECT hi FROM evalledger.wilson_interval_v1(0, 50)")
    assert 0.057 < hi < 0.06
    assert one(admin, "SELECT * FROM evalledger.wilson_interval_v1(0, 0)") == (None, None, None)


# -- paired differences and McNemar ---------------------------------------------------------------

@st.composite
def two_runs(draw, binary=False):
    n = draw(st.integers(min_value=2, max_value=30))
    keys = [f"EVAL-Q{i:02d}" for i in range(n)]
    value = st.sampled_from([0.0, 1.0]) if binary else values
    a = {k: draw(value) for k in keys}
    b = {k: draw(value) for k in keys}
    # Items missing on either side: left out of a run, or present with no value (NULL).
    for run in (a, b):
        for k in draw(st.lists(st.sampled_from(keys), max_size=n // 3, unique=True)):
            if draw(st.booleans()):
                del run[k]
            else:
                run[k] = None
    return a, b


def paired(admin, a, b):
    return one(admin, "SELECT * FROM evalledger.paired_difference_v1(%s::text[], %s::float8[], %s::text[], %s::float8[])",
               list(a), list(a.values()), list(b), list(b.values()))


@given(two_runs())
@examples()
def test_paired_difference_is_scipys_on_the_shared_items(admin, runs):
    a, b = runs
    shared_keys = [k for k in a if a[k] is not None and b.get(k) is not None]
    assume(len(shared_keys) >= 2)
    shared, only_a, only_b, mean, se, lo, hi, p = paired(admin, a, b)
    d = [b[k] - a[k] for k in shared_keys]
    assert shared == len(shared_keys)
    assert only_a == sorted(k for k in a if a[k] is not None and b.get(k) is None)
    assert only_b == sorted(k for k in b if b[k] is not None and a.get(k) is None)
    assert close(mean, fmean(d), abs_=1e-9)
    assert close(se, stats.sem(d), rel=1e-7, abs_=1e-9)
    want = stats.norm.interval(0.95, loc=fmean(d), scale=stats.sem(d)) if stats.sem(d) > 0 else (fmean(d), fmean(d))
    assert close(lo, want[0], rel=1e-7, abs_=1e-9) and close(hi, want[1], rel=1e-7, abs_=1e-9)


@given(two_runs(binary=True))
@examples()
def test_paired_pass_fail_carries_mcnemars_exact_test(admin, runs):
    a, b = runs
    shared_keys = [k for k in a if a[k] is not None and b.get(k) is not None]
    assume(shared_keys)
    p = paired(admin, a, b)[-1]
    table = [[0, 0], [0, 0]]
    for k in shared_keys:
        table[int(a[k])][int(b[k])] += 1
    # statsmodels' table: rows A, columns B; its discordant cells are [0,1] and [1,0].
    assert close(p, mcnemar(table, exact=True).pvalue, rel=1e-9)


@given(st.integers(min_value=0, max_value=3000), st.integers(min_value=0, max_value=3000))
@examples(150)
@example(21, 1054)
def test_mcnemar_is_statsmodels(admin, b, c):
    (p,) = one(admin, "SELECT evalledger.mcnemar_exact_v1(%s, %s)", b, c)
    # Far in the tail scipy's binomial rounds to 0 where the sum in logarithms does not (b=21,
    # c=1054: 0.0 against 3.7e-280): below 1e-250 both are nothing a gate can tell apart from 0.
    assert close(p, mcnemar([[5, b], [c, 7]], exact=True).pvalue, rel=1e-9, abs_=1e-250)


def test_mcnemar_without_discordant_pairs_is_1(admin):
    assert one(admin, "SELECT evalledger.mcnemar_exact_v1(0, 0)") == (1.0,)
    assert mcnemar([[4, 0], [0, 6]], exact=True).pvalue == 1.0
    # Paired runs that agree on every item: no discordant pair, no difference, p = 1.
    same = {"Q1": 1.0, "Q2": 0.0, "Q3": 1.0}
    assert paired(admin, same, same)[3:] == (0.0, 0.0, 0.0, 0.0, 1.0)


def test_an_item_twice_in_one_run_is_refused(admin):
    from psycopg import errors
    with pytest.raises(errors.InvalidParameterValue, match="twice"):
        admin.execute("SELECT * FROM evalledger.paired_difference_v1('{a,a}', '{1,2}', '{a}', '{1}')")


# -- power ----------------------------------------------------------------------------------------

ALTERNATIVE = {1: "larger", 2: "two-sided"}


@given(st.floats(min_value=0.01, max_value=10), st.integers(min_value=2, max_value=5000),
       st.sampled_from([0.01, 0.05, 0.1]), st.sampled_from([0.7, 0.8, 0.9]), st.sampled_from([1, 2]))
@examples(100)
def test_minimum_detectable_effect_has_the_power_statsmodels_computes(admin, sd, n, alpha, power, tails):
    (mde,) = one(admin, "SELECT evalledger.min_detectable_effect_v1(%s, %s, %s, %s, %s)", sd, n, alpha, power, tails)
    got = NormalIndPower().power(effect_size=mde / sd, nobs1=n, alpha=alpha, ratio=0, alternative=ALTERNATIVE[tails])
    # One tail: exactly the power asked for; two: plus the wrong side's share, which the formula
    # leaves out: P(Z < -z_(1 - alpha/2) - (z_(1 - alpha/2) + z_power)).
    wrong_side = 0 if tails == 1 else stats.norm.cdf(-2 * stats.norm.ppf(1 - alpha / 2) - stats.norm.ppf(power))
    assert got == pytest.approx(power + wrong_side, abs=1e-9)


@given(st.floats(min_value=0.05, max_value=5), st.floats(min_value=0.01, max_value=2),
       st.sampled_from([0.01, 0.05]), st.sampled_from([0.8, 0.9]), st.sampled_from([1, 2]))
@examples(100)
def test_sample_size_is_the_fewest_items_with_that_power(admin, sd, effect, alpha, power, tails):
    (n,) = one(admin, "SELECT evalledger.sample_size_v1(%s, %s, %s, %s, %s)", sd, effect, alpha, power, tails)
    assume(n < 10**7)
    at = NormalIndPower().power(effect_size=effect / sd, nobs1=n, alpha=alpha, ratio=0, alternative=ALTERNATIVE[tails])
    assert at >= power - 1e-9
    if n > 1:
        below = NormalIndPower().power(effect_size=effect / sd, nobs1=n - 1, alpha=alpha, ratio=0,
                                       alternative=ALTERNATIVE[tails])
        wrong_side = 0 if tails == 1 else stats.norm.cdf(-2 * stats.norm.ppf(1 - alpha / 2) - stats.norm.ppf(power))
        assert below < power + wrong_side + 1e-9
    (mde,) = one(admin, "SELECT evalledger.min_detectable_effect_v1(%s, %s, %s, %s, %s)", sd, n, alpha, power, tails)
    assert mde <= effect * (1 + 1e-12)


def test_power_refuses_nonsense_with_null(admin):
    assert one(admin, "SELECT evalledger.min_detectable_effect_v1(1, 0), evalledger.min_detectable_effect_v1(1, 10, 0.05, 0.8, 3), "
                      "evalledger.sample_size_v1(1, 0), evalledger.sample_size_v1(1, 0.5, 1.5)") == (None, None, None, None)


# -- the uncertainty object -----------------------------------------------------------------------

def uncertainty(admin, *args):
    return one(admin, "SELECT evalledger.uncertainty_v1(%s, %s, %s, %s, %s, %s, %s, %s, %s)", *args)[0]


def test_the_uncertainty_object_cuts_to_the_scale_and_falls_back_to_the_exact_bound(admin):
    z = stats.norm.ppf(0.975)
    # A normal interval, cut to the scale at 0.
    u = uncertainty(admin, 0.02, 0.015, 50, 30, "ratio", 1, 50, 0, 1)
    assert u["ci95"] == pytest.approx([0, 0.02 + z * 0.015], rel=1e-12)
    assert (u["n"], u["clusters"], u["method"]) == (50, 30, "ratio")
    # Every trial passed: the standard error of 0 says nothing, the exact bound does.
    u = uncertainty(admin, 1, 0, 5, 5, "clustered", 5, 5, 0, 1)
    assert u["method"] == "exact" and u["ci95"] == pytest.approx([stats.beta.ppf(0.05, 5, 1), 1], rel=1e-12)
    # A proportion without a standard error (one cluster): the Wilson interval.
    u = uncertainty(admin, 0.6, None, 10, 1, "clustered", 6, 10, 0, 1)
    assert u["method"] == "wilson"
    assert u["ci95"] == pytest.approx(list(proportion_confint(6, 10, alpha=0.05, method="wilson")), rel=1e-9)
    # A mean without a standard error: no interval; nothing to measure: no object.
    assert uncertainty(admin, 4.0, None, 1, 1, "mean", None, None, 1, 5)["ci95"] is None
    assert uncertainty(admin, None, None, 0, 0, "mean", None, None, 1, 5) is None
