"""``calibrate compare``'s statistics, tests and clusters on hand-computed tables and against
independent implementations (scipy's Kendall tau-b, brute-force pairwise accuracy and
p-values, sklearn and irrCAC, exact enumeration of a permutation test)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from irrCAC.raw import CAC
from scipy import stats
from sklearn.metrics import accuracy_score, cohen_kappa_score, f1_score

from judgekit.calibration.compare.results import facet_tests
from judgekit.errors import JudgekitError
from judgekit.metrics.bootstrap import resample_weights
from judgekit.metrics.classification import cell_metrics
from judgekit.metrics.clusters import rank_clusters
from judgekit.metrics.correlation import pair_counts
from judgekit.metrics.kendall_fast import (
    GroupedTau,
    HybridTau,
    WeightedTau,
    group_pairs,
    grouped_tau_b_rows,
    tau_b_rows,
)
from judgekit.metrics.meta_eval import (
    acc_eq_pairs,
    pairwise_accuracy_rows,
    pairwise_p_values,
    pearson_rows,
    soft_pairwise_accuracy,
    spa_signs,
)
from judgekit.metrics.perm_both import PermutationSettings, pair_rng, swap_test
from judgekit.metrics.tie_calibration import tie_calibration

RNG = np.random.default_rng(7)


def brute_pairwise_accuracy(judge, human) -> float:
    pairs = list(itertools.combinations(range(len(human)), 2))
    agree = sum(np.sign(judge[i] - judge[j]) == np.sign(human[i] - human[j]) for i, j in pairs)
    return agree / len(pairs)


def test_pairwise_accuracy_by_hand_and_brute_force():
    # pairs (0,1) and (0,2) ordered alike, (1,2) reversed: 2 of 3; a tie on one side only is
    # a disagreement, a tie on both an agreement (MT-Metrics-Eval's stats.Agreement)
    assert pairwise_accuracy_rows([3, 1, 2], [3, 2, 1])[0] == pytest.approx(2 / 3)
    assert pairwise_accuracy_rows([1, 1, 0], [2, 2, 0])[0] == 1.0
    assert pairwise_accuracy_rows([1, 1, 0], [2, 3, 0])[0] == pytest.approx(2 / 3)
    human = RNG.integers(0, 6, 15).astype(float)
    judges = RNG.integers(0, 6, (5, 15)).astype(float)
    got = pairwise_accuracy_rows(judges, human)
    assert got == pytest.approx([brute_pairwise_accuracy(j, human) for j in judges])


def test_pearson_rows_match_scipy():
    human = RNG.normal(size=12)
    judges = RNG.normal(size=(4, 12)) + human
    expected = [stats.pearsonr(j, human)[0] for j in judges]
    assert pearson_rows(judges, human) == pytest.approx(expected)
    assert np.isnan(pearson_rows(np.ones((1, 12)), human)[0])


def test_tau_b_kernels_match_scipy_with_ties():
    human = RNG.integers(0, 5, 300).astype(float)
    judges = RNG.integers(0, 8, (6, 300)).astype(float)
    expected = [stats.kendalltau(j, human, variant="b").statistic for j in judges]
    assert tau_b_rows(judges, human) == pytest.approx(expected, abs=1e-12)
    index = RNG.integers(0, 300, (4, 300))  # a bootstrap: the items drawn, as weights
    weights = np.stack([np.bincount(i, minlength=300) for i in index])
    boot = WeightedTau(judges[0], human)(weights)
    assert boot == pytest.approx(
        [stats.kendalltau(judges[0][i], human[i]).statistic for i in index], abs=1e-12
    )
    swap = RNG.integers(0, 2, (5, 300)).astype(bool)  # the two hybrids of a permutation test
    left, right = HybridTau(judges[0], judges[1], human)(swap)
    assert left == pytest.approx(tau_b_rows(np.where(swap, judges[1], judges[0]), human))
    assert right == pytest.approx(tau_b_rows(np.where(swap, judges[0], judges[1]), human))
    groups = np.repeat(np.arange(30), 10)
    per_group = [
        [stats.kendalltau(j[groups == g], human[groups == g]).statistic for g in range(30)]
        for j in judges
    ]
    left, right = GroupedTau(human, groups).hybrids(judges[0], judges[1])(swap)
    assert left == pytest.approx(
        grouped_tau_b_rows(np.where(swap, judges[1], judges[0]), human, groups)
    )
    assert right == pytest.approx(
        grouped_tau_b_rows(np.where(swap, judges[0], judges[1]), human, groups)
    )
    assert grouped_tau_b_rows(judges, human, groups) == pytest.approx(
        [np.nanmean(p) for p in per_group], abs=1e-12
    )


def test_compile_kernels_compiles_what_the_entry_points_then_use():
    """scripts/install.sh compiles the kernels once (numba's cache); the types the public
    entry points pass on other data must be the ones compiled, or the first compare would
    compile again."""
    from numba.core.registry import CPUDispatcher

    from judgekit.metrics import kendall_fast

    kendall_fast.compile_kernels()
    kernels = [k for k in vars(kendall_fast).values() if isinstance(k, CPUDispatcher)]
    compiled = {k.__name__: list(k.signatures) for k in kernels}
    called = {"_rows_fixed", "_grouped_rows", "_grouped_pair_rows", "_weighted_rows"}
    assert called <= {name for name, signatures in compiled.items() if signatures}
    human, judges = RNG.integers(0, 5, 40).astype(float), RNG.normal(size=(3, 40))
    groups = np.repeat([f"seg{g}" for g in range(8)], 5)
    swap = RNG.integers(0, 2, (4, 40)).astype(bool)
    tau_b_rows(judges, human)
    grouped_tau_b_rows(judges, human, groups)
    GroupedTau(human, groups).hybrids(judges[0], judges[1])(swap)
    WeightedTau(judges[0], human)(RNG.integers(0, 3, (4, 40)))
    HybridTau(judges[0], judges[1], human)(swap)
    assert {k.__name__: list(k.signatures) for k in kernels} == compiled


def test_acc_eq_pairs_by_hand_and_against_tie_calibration():
    # one group of 3: human 1, 1, 0; judge 0.5, 0.4, 0.0 with epsilon 0.1: pair (0,1) human tie,
    # judge |0.1| <= 0.1 tie -> credited; (0,2) and (1,2) concordant -> credited: acc_eq 1
    first, second, bounds = group_pairs(np.zeros(3))
    credit, weight = acc_eq_pairs(
        np.array([0.5, 0.4, 0.0]), np.array([1, 1, 0.0]), first, second, bounds, 0.1
    )
    assert credit @ weight == pytest.approx(1.0)
    credit, weight = acc_eq_pairs(
        np.array([0.5, 0.4, 0.0]), np.array([1, 1, 0.0]), first, second, bounds, 0.0
    )
    assert credit @ weight == pytest.approx(2 / 3)
    human = RNG.integers(0, 4, 200).astype(float)
    judge = np.round(human + RNG.normal(size=200), 1)
    groups = np.repeat(np.arange(20), 10)
    calibration = tie_calibration(judge, human, groups)
    first, second, bounds = group_pairs(groups)
    credit, weight = acc_eq_pairs(judge, human, first, second, bounds, calibration.epsilon)
    assert credit @ weight == pytest.approx(calibration.acc_eq)
    per_group = [
        pair_counts(judge[groups == g], human[groups == g], calibration.epsilon).acc_eq
        for g in range(20)
    ]
    assert credit @ weight == pytest.approx(np.mean(per_group))


def test_pairwise_p_values_by_hand_and_brute_force():
    scores = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    signs = np.array([[1, 1, 1], [-1, 1, 1], [1, -1, -1]], dtype=np.float32)
    # observed difference 6; swapped sums 6, 4, -4: one of three >= 6
    assert pairwise_p_values(scores, signs) == pytest.approx([1 / 3])
    seg = RNG.normal(size=(4, 25))
    signs = spa_signs(25, 200, seed=4)
    assert set(np.unique(signs)) == {-1.0, 1.0}
    brute = []
    for i, j in itertools.combinations(range(4), 2):
        observed = seg[i].sum() - seg[j].sum()
        null = [(s * seg[i]).sum() - (s * seg[j]).sum() for s in signs]
        brute.append(np.mean(np.array(null) >= observed - 1e-6))
    assert pairwise_p_values(seg, signs) == pytest.approx(brute, abs=1e-9)
    assert soft_pairwise_accuracy(seg, seg) == 1.0


def test_swap_test_matches_exact_enumeration():
    a = np.array([1, 1, 0, 1, 1, 0, 1, 1], dtype=float)
    b = np.array([0, 1, 0, 0, 1, 1, 0, 0], dtype=float)
    stat = lambda rows: np.asarray(rows).mean(axis=1)  # noqa: E731
    delta = a.mean() - b.mean()
    exact = np.mean(
        [
            np.where(s, b, a).mean() - np.where(s, a, b).mean() >= delta - 1e-12
            for s in itertools.product([0, 1], repeat=8)
        ]
    )
    settings = PermutationSettings(n_permutations=20_000, block=1000, early_stop=False)
    result = swap_test(stat, a, b, settings, pair_rng(0, "x"))
    assert result.delta == pytest.approx(0.375)
    assert result.n_permutations == 20_000
    assert result.p_value == pytest.approx(exact, abs=0.01)
    stopped = swap_test(stat, np.ones(40), np.zeros(40), PermutationSettings(), pair_rng(0, "y"))
    assert stopped.n_permutations == 100 and stopped.p_value < 0.02  # early stop, first block


def test_rank_clusters_follow_the_wmt_walk():
    values = {"A": 0.9, "B": 0.8, "C": 0.7, "D": 0.6}
    p = {
        ("A", "B"): 0.3,
        ("A", "C"): 0.01,
        ("B", "C"): 0.2,
        ("A", "D"): 0.001,
        ("B", "D"): 0.04,
        ("C", "D"): 0.5,
    }
    # C opens cluster 2 (A beats it); D is compared with C only (the current cluster): tied
    assert rank_clusters(values, p) == {"A": 1, "B": 1, "C": 2, "D": 2}
    # Holm over the 6 tests: 0.01 * 5 = 0.05 <= 0.05 still separates C
    assert rank_clusters(values, p, correction="holm")["C"] == 2
    assert rank_clusters(values, p, correction="bonferroni")["C"] == 1  # 0.06 > 0.05


def test_cell_metrics_match_sklearn_and_irrcac():
    ref = RNG.integers(0, 3, 80)
    lab = np.where(RNG.random(80) < 0.7, ref, RNG.integers(0, 3, 80))
    weights = RNG.integers(0, 3, 80).astype(float)
    cells = np.zeros((3, 3))
    np.add.at(cells, (ref, lab), weights)
    got = cell_metrics(cells, np.ones(3, bool))
    assert got["accuracy"] == pytest.approx(accuracy_score(ref, lab, sample_weight=weights))
    assert got["macro_f1"] == pytest.approx(
        f1_score(ref, lab, average="macro", sample_weight=weights)
    )
    assert got["kappa"] == pytest.approx(cohen_kappa_score(ref, lab, sample_weight=weights))
    plain = np.zeros((3, 3))
    np.add.at(plain, (ref, lab), 1)
    frame = pd.DataFrame({"r": ref, "l": lab})
    ac1 = CAC(frame).gwet()["est"]["coefficient_value"]
    assert cell_metrics(plain, np.ones(3, bool))["ac1"] == pytest.approx(ac1, abs=1e-4)


def test_resample_weights_draw_n_items_each():
    w = resample_weights(17, 50, seed=3)
    assert w.shape == (50, 17) and (w.sum(axis=1) == 17).all()
    assert (resample_weights(17, 50, seed=3) == w).all()


def test_facet_test_is_cochrans_q():
    dist1, dist2 = RNG.normal(0.6, 0.05, 2000), RNG.normal(0.4, 0.05, 2000)
    tables = {
        "fr": {("J", "item", "accuracy"): (0.6, dist1)},
        "hi": {("J", "item", "accuracy"): (0.4, dist2)},
    }
    (test,) = facet_tests(tables)
    q = 0.2**2 / (np.std(dist1, ddof=1) ** 2 + np.std(dist2, ddof=1) ** 2)
    assert test.q == pytest.approx(q) and test.df == 1
    assert test.p_value == pytest.approx(stats.chi2.sf(q, 1))


def test_permutation_p_is_never_zero_and_says_how_many_ran() -> None:
    """Issue 32.3: a judge right on all 60 items against one always wrong, early stopping at
    the first block of 100: p was 0.0 (k / n); it is 1 / 101 with 100 permutations beside it,
    and the MT-Metrics-Eval rule stays available."""
    from judgekit.metrics.perm_both import PermutationSettings, pair_rng, swap_test

    a, b = np.ones(60), np.zeros(60)

    def mean(rows: np.ndarray) -> np.ndarray:
        return np.asarray(rows, dtype=float).mean(axis=-1)

    plus_one = swap_test(mean, a, b, PermutationSettings(), pair_rng(0, "a", "b"))
    assert (plus_one.p_value, plus_one.n_permutations) == (pytest.approx(1 / 101), 100)
    settings = PermutationSettings(p_rule="mtme")
    mtme = swap_test(mean, a, b, settings, pair_rng(0, "a", "b"))
    assert (mtme.p_value, mtme.n_permutations) == (0.0, 100)
    with pytest.raises(JudgekitError, match="unknown p-value rule"):
        PermutationSettings(p_rule="exact")


def test_a_judge_with_partial_coverage_changes_no_other_judges_figures() -> None:
    """Issue 32.4 (MT-Metrics-Eval's rule): each judge on the cells it and the humans scored,
    each pair tested on its common cells, the cells said; --common keeps the like-for-like
    table."""
    from judgekit.calibration.compare.scores import ScoreMatrix, score_facet

    rng = np.random.default_rng(5)
    human = rng.normal(size=(6, 40))
    judges = {name: ScoreMatrix(human + rng.normal(scale=noise, size=human.shape))
              for name, noise in (("a", 0.5), ("b", 1.0), ("c", 0.7))}  # fmt: skip
    judges["c"].seg[:, 20:] = np.nan  # c scored half the segments
    kw = {"facet": "all", "levels": ("segment",), "n_resamples": 50,
          "permutations": PermutationSettings(200)}  # fmt: skip

    def values(facet) -> dict[tuple[str, str], float]:
        return {(f.statistic, j): v for f in facet.families for j, v in f.values.items()}

    alone = values(score_facet(ScoreMatrix(human), {k: judges[k] for k in "ab"}, **kw))
    mixed = score_facet(ScoreMatrix(human), judges, **kw)
    both = values(mixed)
    for key, value in alone.items():
        assert both[key] == pytest.approx(value)  # a and b untouched by c's coverage
    tau = next(f for f in mixed.families if f.statistic == "tau_b")
    assert tau.n_by_judge == {"a": 240, "b": 240, "c": 120}
    c_only = values(
        score_facet(ScoreMatrix(human[:, :20]), {"c": ScoreMatrix(judges["c"].seg[:, :20])}, **kw)
    )
    assert both["tau_b", "c"] == pytest.approx(c_only["tau_b", "c"])
    assert tau.test("a", "c").p_value is not None
    said = " ".join(mixed.notes)
    assert "coverage differs" in said and "a 240, b 240, c 120" in said
    assert "pair a / c: tested on the 120 cells both scored" in said
    common = values(score_facet(ScoreMatrix(human), judges, common=True, **kw))
    assert common["tau_b", "a"] != pytest.approx(alone["tau_b", "a"])  # a on c's 120 cells


def test_an_undefined_statistic_says_why_and_no_library_warning_reaches_the_user(tmp_path):
    """Issue 32.5: a judge giving every segment the same score: Pearson and tau were "-" with no
    reason and numpy RuntimeWarnings reached stderr."""
    rng = np.random.default_rng(0)
    rows = [(f"sys{s}", g, rng.normal() + 0.3 * s) for s in range(5) for g in range(20)]
    files = {}
    for name, score in (("human", lambda v: v), ("good", lambda v: v + rng.normal()),
                        ("flat", lambda v: 5.0)):  # fmt: skip
        files[name] = tmp_path / f"{name}.tsv"
        lines = ["system\tsegment\tscore"] + [f"{s}\t{g}\t{score(v)}" for s, g, v in rows]
        files[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    cmd = [sys.executable, "-W", "default", "-m", "judgekit", "calibrate", "compare", "--human",
           str(files["human"]), "--judge", f"good={files['good']}", "--judge",
           f"flat={files['flat']}", "--n-resamples", "50", "--permutations", "100"]  # fmt: skip
    done = subprocess.run(cmd + ["--json"], capture_output=True, text=True, check=True)
    assert "Warning" not in done.stderr, done.stderr
    flat = {r["statistic"]: r for r in json.loads(done.stdout)["rows"] if r["judge"] == "flat"}
    for name, n in (("pearson", 5), ("tau_b", 100), ("tau_b_item", 100)):
        assert flat[name]["value"] is None
        assert flat[name]["note"] == (f"undefined: all {n} of the judge's scores are 5 (no "
                                      "variance: the coefficient is 0/0)")  # fmt: skip
    printed = subprocess.run(cmd, capture_output=True, text=True, check=True)
    assert "Warning" not in printed.stderr
    assert "- flat tau_b: undefined: all 100 of the judge's scores are 5" in printed.stdout
