"""Label designs (issue 37): probabilities, selection.csv, IPW and stratified PPI++."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

from judgekit.calibration.design.estimators import (
    satterthwaite_df,
    stratified_ppi,
    weighted_ppi,
)
from judgekit.calibration.design.probabilities import (
    active_probabilities,
    neyman_allocation,
    uncertainty,
)
from judgekit.calibration.design.selection import draw, read_selection, write_selection
from judgekit.errors import InputError


def _population(n: int = 2000, seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A judge that is sure on most items and unsure (and often wrong) on the rest."""
    rng = np.random.default_rng(seed)
    p = np.where(rng.random(n) < 0.7, rng.uniform(0.9, 1.0, n), rng.uniform(0.5, 0.7, n))
    judge = (rng.random(n) < 0.5).astype(float)
    correct = rng.random(n) < p
    human = np.where(correct, judge, 1 - judge)
    probs = np.stack([p, 1 - p], axis=1)
    return human, judge, probs


def test_uncertainties_are_the_named_quantities() -> None:
    probs = np.array([[0.9, 0.1], [0.5, 0.5]])
    assert uncertainty("top", probs) == pytest.approx([0.1, 0.5])
    assert uncertainty("entropy", probs)[1] == pytest.approx(np.log(2))
    assert uncertainty("disagreement", np.array([["a", "a", "b"], ["a", "a", "a"]])) == (
        pytest.approx([1 / 3, 0])
    )
    assert uncertainty("spread", np.array([[1.0, 3.0], [2.0, 2.0]])) == pytest.approx([1, 0])
    with pytest.raises(ValueError, match="unknown uncertainty"):
        uncertainty("margin", probs)


def test_active_probabilities_sum_to_budget_with_a_floor() -> None:
    u = np.r_[np.zeros(90), np.full(10, 5.0)]
    pi = active_probabilities(u, budget=20, floor=0.2)
    assert pi.sum() == pytest.approx(20)
    assert pi.min() >= 0.2 * 20 / 100 and pi[-1] == 1.0  # capped: the excess goes to the rest
    pi = active_probabilities(np.r_[np.zeros(50), np.ones(50)], budget=10, floor=0.2)
    assert pi[0] == pytest.approx(0.2 * 10 / 100) and pi[-1] == pytest.approx(0.18)
    assert active_probabilities(np.ones(50), 10) == pytest.approx(np.full(50, 0.2))


def test_neyman_allocation_follows_size_times_sigma() -> None:
    alloc = neyman_allocation({"a": 100, "b": 100, "c": 10}, {"a": 0.1, "b": 0.4, "c": 0.4}, 30)
    assert sum(alloc.values()) == 30
    assert alloc == {"a": 5, "b": 20, "c": 5}  # Neyman gives c 2.2 and a 5.6: both held at 5
    assert neyman_allocation({"a": 100, "b": 3}, {"a": 1.0, "b": 9.0}, 20) == {"a": 17, "b": 3}
    with pytest.raises(ValueError, match="below 5 labels in each of 3 strata"):
        neyman_allocation({"a": 100, "b": 100, "c": 10}, {"a": 1.0}, 12)


def test_satterthwaite_df_and_the_stratified_interval_rule() -> None:
    # Cochran 1977, Eq. 5.16: equal terms on 5 labels each give 3 (5 - 1) per stratum summed
    assert satterthwaite_df(np.array([1.0, 1.0, 1.0]), np.array([5, 5, 5])) == pytest.approx(12)
    # one stratum of 2 labels holding all the variance: 1 degree of freedom
    assert satterthwaite_df(np.array([1.0, 0.0]), np.array([2, 98])) == pytest.approx(1)
    rng = np.random.default_rng(0)
    strata = np.repeat(["a", "b"], [300, 300])
    judge = rng.normal(size=600)
    human = judge + np.where(strata == "a", 5.0, 0.1) * rng.normal(size=600)
    idx = np.r_[rng.choice(300, 5, replace=False), 300 + rng.choice(300, 115, replace=False)]
    est = stratified_ppi(human[idx], judge[idx], strata[idx], judge, strata)
    assert est.n == 120 and est.signature["interval"] == "bootstrap-t"  # 5 labels carry it


def test_selection_round_trip_and_bad_rows(tmp_path: Path) -> None:
    items = [f"i{k}" for k in range(200)]
    rows = draw(items, "active", 40, uncertainty=np.linspace(0, 1, 200), seed=3)
    assert 20 < len(rows) < 60 and all(0 < r.probability <= 1 for r in rows)
    path = tmp_path / "selection.csv"
    write_selection(path, rows)
    assert read_selection(path) == rows
    strat = draw(items, "stratified", 30, strata=["x", "y"] * 100, seed=0)
    assert len(strat) == 30 and {r.stratum for r in strat} == {"x", "y"}
    second = draw(items, "uniform", 50, exclude={r.item for r in rows}, seed=1)
    assert not {r.item for r in second} & {r.item for r in rows}
    path.write_text("item,inclusion_probability,design\ni1,0,active\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"selection.csv:2.*inclusion_probability"):
        read_selection(path)
    path.write_text("item,inclusion_probability,design,round\ni1,0.5,uniform,1\ni2,0.5,active,2\n"
                    "i3,0.5,uniform,1\ni4,0.2,active,1\n", encoding="utf-8")  # fmt: skip
    with pytest.raises(InputError) as err:  # a round mixing designs: the row that does it
        read_selection(path)
    assert (err.value.line, err.value.field) == (5, "design")
    assert "round 1 mixes designs: this row is 'active' but line 2" in err.value.message


def test_weighted_estimate_matches_ppi_py_weighted_ppi_mean_ci() -> None:
    human, judge, probs = _population()
    pi = active_probabilities(uncertainty("top", probs), budget=150)
    hit = np.random.default_rng(5).random(len(pi)) < pi
    est = weighted_ppi(human[hit], judge[hit], judge, pi[hit], alpha=0.1)
    low, high = ppi_mean_ci(human[hit], judge[hit], judge, alpha=0.1, w=1 / pi[hit])
    point = ppi_mean_pointestimate(human[hit], judge[hit], judge, w=1 / pi[hit])
    assert (est.low, est.high) == pytest.approx((float(low[0]), float(high[0])))
    assert est.estimate == pytest.approx(float(np.ravel(point)[0]))
    assert est.signature["design"] == "active" and "Zrnic" in est.signature["source"]
    assert est.uniform_half_width > 0 and est.n == int(hit.sum())


def test_weighted_estimate_without_probabilities_is_refused() -> None:
    human, judge, _ = _population(100)
    pi = np.full(10, 0.1)
    pi[3] = np.nan
    with pytest.raises(ValueError, match="inclusion probability of every label"):
        weighted_ppi(human[:10], judge[:10], judge, pi)
    with pytest.raises(ValueError, match="inclusion probability"):
        weighted_ppi(human[:10], judge[:10], judge, None, design="active")


def test_active_design_covers_and_narrows_on_an_informative_judge() -> None:
    """Few seeded draws: coverage near nominal and a narrower interval than uniform. The judge's
    value is its probability of label 1 (a calibrated soft label, as in Zrnic & Candès 2024)."""
    human, judge, probs = _population()
    judge = np.where(judge == 1, probs[:, 0], probs[:, 1])
    truth = human.mean()
    pi = active_probabilities(uncertainty("top", probs), budget=100)
    rng = np.random.default_rng(0)
    covered, ratios = [], []
    for _ in range(60):
        hit = rng.random(len(pi)) < pi
        est = weighted_ppi(human[hit], judge[hit], judge, pi[hit])
        covered.append(est.low <= truth <= est.high)
        ratios.append(est.half_width / est.uniform_half_width)
    assert np.mean(covered) >= 0.85
    assert np.median(ratios) < 0.95


def test_stratified_estimate_combines_strata() -> None:
    human, judge, probs = _population()
    strata = np.where(probs[:, 0] > 0.8, "sure", "unsure")
    rows = draw([str(i) for i in range(len(human))], "stratified", 120, strata=list(strata),
                sigmas={"sure": 0.2, "unsure": 0.5}, seed=2)  # fmt: skip
    idx = np.array([int(r.item) for r in rows])
    est = stratified_ppi(human[idx], judge[idx], strata[idx], judge, strata)
    assert est.low < est.estimate < est.high and est.signature["design"] == "stratified"
    assert abs(est.estimate - human.mean()) < 4 * est.half_width


def test_pilot_leave_one_out_scores_equal_refits() -> None:
    from judgekit.calibration.design import pilot

    rng = np.random.default_rng(1)
    u_all, u = rng.normal(size=400), rng.normal(size=30)
    e = rng.normal(size=30) * (1 + np.abs(u))
    for bins in (0, pilot.BINS):
        refit = [
            pilot.error_model(np.delete(u, i), np.delete(e, i), np.append(u_all, u[i]), bins)[-1]
            for i in range(len(e))
        ]
        assert pilot._loo_scores(u, e, u_all, bins) == pytest.approx(refit, rel=1e-9)
