"""Judge vs human correlation: hand-computed pair counts, acc_eq, tie calibration, WMT23 data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import shared_path
from scipy import stats

from judgekit.errors import InputError, JudgekitError
from judgekit.metrics.correlation import (
    correlate,
    correlate_grouped,
    correlation_table,
    pair_counts,
)
from judgekit.metrics.mteval import align_seg_scores, read_seg_scores, read_sys_scores
from judgekit.metrics.tie_calibration import tie_calibration

# human [1,2,2,3], judge [1,1,2,3]: pairs (0,1) T_m, (0,2) C, (0,3) C, (1,2) T_h, (1,3) C, (2,3) C
HUMAN = [1, 2, 2, 3]
JUDGE = [1, 1, 2, 3]


def test_pair_counts_by_hand():
    counts = pair_counts(np.array(JUDGE, float), np.array(HUMAN, float))
    assert (counts.concordant, counts.discordant) == (4, 0)
    assert (counts.ties_human, counts.ties_judge, counts.ties_both) == (1, 1, 0)
    assert counts.acc_eq == pytest.approx(4 / 6)


def test_acc_eq_and_tau_b_by_hand():
    # tau-b = (C - D) / sqrt((C + D + T_m)(C + D + T_h)) = 4 / sqrt(5 * 5) = 0.8
    assert correlate(JUDGE, HUMAN, "kendall_tau_b").value == pytest.approx(0.8)
    assert correlate(JUDGE, HUMAN, "acc_eq").value == pytest.approx(4 / 6)
    # epsilon = 1: (0,2) becomes T_m, (1,2) T_hm, (2,3) T_m -> (C + T_hm) / 6 = (2 + 1) / 6
    assert correlate(JUDGE, HUMAN, "acc_eq", epsilon=1).value == pytest.approx(0.5)


def test_pair_counts_agree_with_scipy_tau_b():
    rng = np.random.default_rng(1)
    judge = rng.integers(0, 6, 300).astype(float)
    human = judge + rng.integers(-2, 3, 300)
    c = pair_counts(judge, human)
    tau_b = (c.concordant - c.discordant) / math.sqrt(
        (c.concordant + c.discordant + c.ties_judge) * (c.concordant + c.discordant + c.ties_human)
    )
    assert c.n_pairs == 300 * 299 // 2
    assert tau_b == pytest.approx(stats.kendalltau(judge, human).statistic, abs=1e-12)


def test_missing_pairs_dropped_and_counted():
    res = correlate([1, None, 3, 4, float("nan"), 6], [1, 2, None, 4, 5, 7], "pearson")
    assert (res.n, res.n_dropped) == (3, 3)
    assert res.value == pytest.approx(stats.pearsonr([1, 4, 6], [1, 4, 7]).statistic)


def test_tie_calibration_by_hand():
    # human ties items 0-2; judge spreads them by 1 and 2, and puts item 3 far above.
    cal = tie_calibration([0, 1, 2, 10], [0, 0, 0, 1])
    assert cal.epsilon == 2.0
    assert cal.acc_eq == pytest.approx(1.0)
    assert list(cal.thresholds) == [0, 1, 2, 8, 9, 10]
    assert cal.accuracies == pytest.approx([3 / 6, 5 / 6, 1, 5 / 6, 4 / 6, 3 / 6])
    assert correlate([0, 1, 2, 10], [0, 0, 0, 1], "acc_eq", epsilon=2).value == 1.0


def test_tie_calibration_grouped_matches_per_group_search():
    judge = [0, 1, 2, 10, 5, 5, 7]
    human = [0, 0, 0, 1, 1, 2, 3]
    groups = ["a", "a", "a", "a", "b", "b", "b"]
    cal = tie_calibration(judge, human, groups)
    # Check every candidate against a direct grouped acc_eq at that epsilon.
    for eps, acc in zip(cal.thresholds, cal.accuracies, strict=True):
        direct = correlate_grouped(judge, human, groups, "acc_eq", epsilon=float(eps)).value
        assert acc == pytest.approx(direct)
    assert cal.acc_eq == pytest.approx(max(cal.accuracies))


def test_tie_calibration_sweep_equals_direct_acc_eq():
    rng = np.random.default_rng(4)
    human = rng.integers(0, 4, 40).astype(float)
    judge = np.round(human + rng.normal(0, 1, 40), 1)
    cal = tie_calibration(judge, human)
    assert cal.n_pairs == 780
    for eps, acc in list(zip(cal.thresholds, cal.accuracies, strict=True))[::7]:
        assert acc == pytest.approx(correlate(judge, human, "acc_eq", epsilon=eps).value)
    assert cal.epsilon > 0  # coarse human scores: some judge ties help


def test_tie_calibration_refuses_too_many_pairs():
    with pytest.raises(JudgekitError, match="max_pairs"):
        tie_calibration(range(100), range(100), max_pairs=100)


def test_grouped_average_skips_undefined_groups():
    judge = [1, 2, 3, 1, 2, 3, 5, 5]
    human = [1, 2, 3, 3, 2, 1, 1, 2]
    groups = ["a", "a", "a", "b", "b", "b", "c", "c"]  # c: constant judge -> undefined
    res = correlate_grouped(judge, human, groups, "kendall_tau_b")
    assert res.value == pytest.approx(0.0)  # (1 + -1) / 2
    assert (res.n_groups, res.n_groups_skipped, res.grouping) == (2, 1, "item")


def test_bootstrap_ci_is_seeded_and_brackets_value():
    rng = np.random.default_rng(0)
    human = rng.normal(size=200)
    judge = human + rng.normal(size=200)
    a = correlate(judge, human, "spearman", n_resamples=300, seed=3)
    b = correlate(judge, human, "spearman", n_resamples=300, seed=3)
    assert a.ci == b.ci
    assert a.ci[0] < a.value < a.ci[1]
    table = correlation_table(judge, human, methods=("pearson", "acc_eq"))
    assert list(table["method"]) == ["pearson", "acc_eq"]


def test_bad_inputs():
    with pytest.raises(JudgekitError, match="unknown correlation method"):
        correlate([1, 2], [1, 2], "tau_c")
    with pytest.raises(JudgekitError, match="one value per item"):
        correlate([1, 2, 3], [1, 2], "pearson")
    with pytest.raises(JudgekitError, match="must be numbers"):
        correlate([1, "x"], [1, 2], "pearson")
    with pytest.raises(JudgekitError, match="acc_eq only"):
        correlate([1, 2], [1, 2], "pearson", epsilon=1.0)


def test_seg_score_reader_errors(tmp_path):
    bad = tmp_path / "a.seg.score.tsv"
    bad.write_text("A\t1\nA\tx\n")
    with pytest.raises(InputError, match=r"a\.seg\.score\.tsv:2: field 'score'"):
        read_seg_scores(bad)
    bad.write_text("A\t1\nB\t2\nA\t3\n")
    with pytest.raises(InputError, match="two separate blocks"):
        read_seg_scores(bad)
    bad.write_text("A\t1\t2\n")
    with pytest.raises(InputError, match="expected 2 tab-separated fields"):
        read_seg_scores(bad)


def test_alignment_is_by_system_and_position(tmp_path):
    judge = tmp_path / "j.tsv"
    human = tmp_path / "h.tsv"
    judge.write_text("A\t1\nA\t2\nB\t3\nB\t4\nsynthetic_ref\t0\nsynthetic_ref\t0\n")
    human.write_text("B\t30\nB\tNone\nA\t10\nA\t20\n")  # other block order
    joined = align_seg_scores(read_seg_scores(judge), read_seg_scores(human))
    assert joined[["judge", "human"]].to_numpy().tolist()[:3] == [[1, 10], [2, 20], [3, 30]]
    assert math.isnan(joined["human"].iloc[3])
    assert joined.attrs["unmatched_systems"] == ["synthetic_ref"]
    human.write_text("A\t10\nB\t30\n")
    with pytest.raises(JudgekitError, match="differ in length"):
        align_seg_scores(read_seg_scores(judge), read_seg_scores(human))


@pytest.mark.parametrize(
    ("pair", "n", "n_dropped", "tau_b", "pearson"),
    [("en-de", 5980, 1261, 0.4743, 0.5014), ("zh-en", 18832, 12784, 0.4563, 0.4485)],
)
def test_gemba_mqm_vs_expert_mqm_segment_level(pair, n, n_dropped, tau_b, pearson):
    """MANIFEST of judge-vs-human: tau-b .4743 en-de (n = 5,980), .4563 zh-en (n = 18,832)."""
    folder = shared_path("judge-vs-human", "wmt23-gemba-mqm-vs-human-mqm")
    judge = read_seg_scores(folder / f"{pair}.GEMBA-MQM-src.seg.score.tsv")
    human = read_seg_scores(folder / f"{pair}.mqm.seg.score.tsv")
    joined = align_seg_scores(judge, human)
    res = correlate(joined["judge"], joined["human"], "kendall_tau_b")
    assert (res.n, res.n_dropped) == (n, n_dropped)
    assert res.value == pytest.approx(tau_b, abs=5e-5)
    assert correlate(joined["judge"], joined["human"], "pearson").value == pytest.approx(
        pearson, abs=5e-5
    )


def test_gemba_item_grouped_acc_eq_regression():
    """Item-grouped acc_eq of GEMBA-MQM en-de: computed here (regression value, not published).

    GEMBA's scores are coarse, so tie calibration keeps epsilon = 0.
    """
    folder = shared_path("judge-vs-human", "wmt23-gemba-mqm-vs-human-mqm")
    joined = align_seg_scores(
        read_seg_scores(folder / "en-de.GEMBA-MQM-src.seg.score.tsv"),
        read_seg_scores(folder / "en-de.mqm.seg.score.tsv"),
    )
    res = correlate_grouped(joined["judge"], joined["human"], joined["position"], "acc_eq")
    assert res.n_groups == 460
    assert res.value == pytest.approx(0.56931, abs=1e-5)
    cal = tie_calibration(joined["judge"], joined["human"], joined["position"])
    assert cal.epsilon == 0.0
    assert cal.acc_eq == pytest.approx(res.value)
    system = read_sys_scores(folder / "en-de.mqm.sys.score.tsv")
    assert len(system) == 13
