"""Report a chosen judge on the sealed test split only: agreement, paired gain, optimism.

Paired bootstrap (Efron & Tibshirani 1993, ch. 16) over test items for the gain interval; McNemar
(statsmodels) for accuracy, a paired permutation test (scipy.stats.permutation_test) otherwise.
Optimism = select-split figure minus test figure (the selection bias of choosing on select).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import permutation_test
from statsmodels.stats.contingency_tables import mcnemar

from judgekit.calibration.tune.choose import Ranking, statistic
from judgekit.metrics.bootstrap import resample_rows


@dataclass(frozen=True)
class TestReport:
    """Test-only figures for ``chosen`` against ``baseline`` (statistic units, e.g. 0..1);
    ``facets``: the chosen judge per value of the facet ``by`` with Cochran's Q
    (:func:`judgekit.calibration.tune.strata.facet_report`), empty without a facet; ``mode``:
    ``split`` (one sealed test split) or ``nested K-fold`` (:mod:`judgekit.calibration.tune.
    nested`: figures of the choosing procedure, every item held out once); ``notes``: the
    human-labelled items left out (ties, not labelled by every candidate), counted, first ids;
    ``fold_choices`` (nested mode only): the candidate chosen without each outer fold, in fold
    order, the choices whose held-out outputs the figure and the gain describe."""

    chosen: str
    baseline: str
    statistic: str
    n_test: int
    test_figure: float
    test_ci: tuple[float, float]
    gain: float
    gain_ci: tuple[float, float]
    p_value: float
    test_name: str
    optimism: float
    looks: int
    by: str | None = None
    facets: dict[str, object] = field(default_factory=dict)
    mode: str = "split"
    notes: tuple[str, ...] = ()
    fold_choices: tuple[str, ...] = ()


TestReport.__test__ = False  # type: ignore[attr-defined]


def _bootstrap(stat, chosen, base, gold, n_boot, rng):
    n = len(gold)
    figs, gains = np.empty(n_boot), np.empty(n_boot)
    for b, idx in enumerate(resample_rows(rng, n_boot, n)):
        g = [gold[i] for i in idx]
        figs[b] = statistic(stat, [chosen[i] for i in idx], g)
        gains[b] = figs[b] - statistic(stat, [base[i] for i in idx], g)
    return figs, gains


def _paired_p(stat, chosen, base, gold, seed, n_perm=999):
    if stat == "accuracy":
        a = np.asarray(chosen, object) == np.asarray(gold, object)
        b = np.asarray(base, object) == np.asarray(gold, object)
        table = [
            [int(np.sum(a & b)), int(np.sum(a & ~b))],
            [int(np.sum(~a & b)), int(np.sum(~a & ~b))],
        ]
        return float(mcnemar(table, exact=True).pvalue), "McNemar exact"
    # paired permutation: swap chosen/baseline outputs within items (positions stay aligned)
    n = len(gold)
    pool = list(chosen) + list(base)

    def diff(a, b):
        fig_a = statistic(stat, [pool[k] for k in a.astype(int)], gold)
        return fig_a - statistic(stat, [pool[k] for k in b.astype(int)], gold)

    res = permutation_test(
        (np.arange(n), np.arange(n) + n),
        diff,
        permutation_type="samples",
        n_resamples=n_perm,
        vectorized=False,
        random_state=seed,
    )
    return float(res.pvalue), "paired permutation"


def report_on_test(
    candidates: Mapping[str, Mapping[str, object]],
    human: Mapping[str, object],
    test_ids: Sequence[str],
    ranking: Ranking,
    baseline: str,
    looks: int = 0,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    n_perm: int = 999,
) -> TestReport:
    """Figures for ``ranking.chosen`` on ``test_ids`` only (never used for the choice).

    ``gain`` = chosen minus ``baseline`` on the same test items; intervals are percentile paired
    bootstrap at ``level``. ``optimism`` = the chosen judge's select figure in ``ranking`` minus
    its test figure; ``n_perm`` permutations for the paired permutation test (statistics other
    than accuracy). Raises KeyError if ``baseline`` is not a candidate.
    """
    stat, name = ranking.statistic, ranking.chosen
    gold = [human[i] for i in test_ids]
    chosen = [candidates[name][i] for i in test_ids]
    base = [candidates[baseline][i] for i in test_ids]
    fig = statistic(stat, chosen, gold)
    gain = fig - statistic(stat, base, gold)
    figs, gains = _bootstrap(stat, chosen, base, gold, n_boot, np.random.default_rng(seed))
    q = [(1 - level) / 2 * 100, (1 + level) / 2 * 100]
    p, test_name = _paired_p(stat, chosen, base, gold, seed, n_perm)
    select_fig = dict(ranking.figures)[name]
    return TestReport(
        name,
        baseline,
        stat,
        len(gold),
        fig,
        tuple(np.nanpercentile(figs, q)),
        gain,
        tuple(np.nanpercentile(gains, q)),
        p,
        test_name,
        select_fig - fig,
        looks,
    )
