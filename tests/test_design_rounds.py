"""Issue 37: the active design fitted on a pilot (and its fall-back to uniform), sequential
rounds combined into one estimate, the design-respecting bootstrap-t below 100 labels."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_design_cli import judgekit, plan_selection, population, true_labels  # noqa: F401
from test_estimate import write_long

from judgekit.calibration.design.bootstrap import weighted_bootstrap_t
from judgekit.calibration.design.estimators import combine_rounds, weighted_ppi
from judgekit.calibration.design.pilot import choose, error_model, pilot_residuals
from judgekit.calibration.design.probabilities import active_probabilities
from judgekit.calibration.design.run import estimate_design
from judgekit.errors import InputError


def _heteroscedastic(n: int = 1500, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A judge score f; the human value f plus noise whose spread grows with -f (as MQM)."""
    rng = np.random.default_rng(seed)
    f = -rng.choice([0.0, 1.0, 5.0, 25.0], n, p=[0.4, 0.2, 0.2, 0.2])
    return f + rng.normal(0, 0.2 + 0.6 * -f), f


def test_error_model_learns_where_the_judge_errs() -> None:
    y, f = _heteroscedastic()
    lab = np.arange(200)
    e = pilot_residuals(y[lab], f[lab], f)
    for bins in (0, 4):
        score = error_model(f[lab], e, f, bins)
        assert score.shape == f.shape and (score > 0).all()
        assert score[f == -25].mean() > 5 * score[f == 0].mean()


def test_pilot_chooses_active_when_informative_and_uniform_when_not() -> None:
    y, f = _heteroscedastic()
    lab, rest = np.arange(60), np.arange(60, len(y))
    pick = choose(f[lab], pilot_residuals(y[lab], f[lab], f), f[rest], 100)
    assert pick.design == "active" and pick.projected_saving >= 0.1
    assert pick.floor in (0.1, 0.2, 0.35, 0.5) and pick.score.shape == rest.shape
    # a feature carrying nothing about the error (random): the safeguard keeps uniform
    noise = np.random.default_rng(1).random(len(y))
    flat = choose(noise[lab], pilot_residuals(y[lab], f[lab], f), noise[rest], 100)
    assert flat.design == "uniform" and "not informative" in flat.reason


def test_two_rounds_cover_and_the_fitted_design_narrows() -> None:
    """40 uniform pilot labels then 60 fitted active ones vs 60 uniform ones, same draws."""
    y, f = _heteroscedastic()
    halves: dict[bool, list[float]] = {True: [], False: []}
    covered = []
    for seed in range(25):
        for active in (True, False):
            rng = np.random.default_rng(seed)
            lab = np.flatnonzero(rng.random(len(y)) < 40 / len(y))
            rest = np.setdiff1d(np.arange(len(y)), lab)
            pi = np.full(len(rest), 60 / len(rest))
            if active:
                pick = choose(f[lab], pilot_residuals(y[lab], f[lab], f), f[rest], 60)
                pi = active_probabilities(pick.score, 60, pick.floor)
            hit = rng.random(len(rest)) < pi
            est = weighted_ppi(y[rest][hit], f[rest][hit], f[rest], pi[hit], interval="clt")
            est = combine_rounds(est, y[lab], len(y))
            assert est.n == len(lab) + int(hit.sum()) and est.signature["rounds"] == 2
            halves[active].append(est.half_width)
            covered.append(est.low <= y.mean() <= est.high)
    assert np.mean(covered) >= 0.88
    assert np.median(halves[True]) < 0.9 * np.median(halves[False])


def test_bootstrap_t_respects_the_design() -> None:
    y, f = _heteroscedastic(600)
    pi = active_probabilities(np.abs(f) + 1, 60, 0.3)
    hit = np.random.default_rng(2).random(len(y)) < pi
    args = (y[hit], f[hit], 1 / pi[hit], f)
    point, low, high = weighted_bootstrap_t(*args)
    assert low < point < high and weighted_bootstrap_t(*args) == (point, low, high)
    est = weighted_ppi(y[hit], f[hit], f, pi[hit])  # auto: bootstrap-t below 100 labels
    assert est.signature["interval"] == "bootstrap-t" and (est.low, est.high) == (low, high)
    assert weighted_ppi(y[hit], f[hit], f, pi[hit], interval="clt").signature["interval"] == "clt"
    # stratified: resampled within strata; two strata of different spread
    strata_all = np.where(f < -2, "bad", "good")
    s_point, s_low, s_high = weighted_bootstrap_t(*args, strata=strata_all[hit],
                                                  strata_all=strata_all)  # fmt: skip
    assert s_low < s_point < s_high


def test_sequential_rounds_end_to_end(population, tmp_path: Path) -> None:  # noqa: F811
    judge, truth = population
    sel1, sel2 = tmp_path / "r1.csv", tmp_path / "r2.csv"
    first = plan_selection(judge, "uniform", 50, sel1)
    pilot = true_labels(tmp_path / "pilot.csv", first["item"], truth)
    plan = judgekit("calibrate", "plan", "--judge", str(judge), "--target", "share:CS",
                    "--design", "active", "--budget", "50", "--pilot", str(pilot),
                    "--previous", str(sel1), "--selection-out", str(sel2))  # fmt: skip
    assert plan.exit_code == 0, plan.output
    both = pd.read_csv(sel2)
    assert set(both["round"]) == {1, 2} and both["item"].is_unique
    assert set(first["item"]) == set(both.loc[both["round"] == 1, "item"])
    assert both.loc[both["round"] == 2, "reason"].str.contains("pilot").all()
    human = write_long(tmp_path / "human.csv",
                       [(i, "h1", "CS" if truth[i] else "CA") for i in both["item"]])  # fmt: skip
    est = judgekit("calibrate", "estimate", "--judge", str(judge), "--human", str(human),
                   "--target", "share:CS", "--selection", str(sel2), "--json")  # fmt: skip
    assert est.exit_code == 0, est.output
    payload = json.loads(est.output)
    assert payload["signature"]["rounds"] == 2 and payload["n"] == len(both)
    assert payload["signature"]["earlier_labels"] == len(first)
    assert payload["low"] < payload["estimate"] < payload["high"]
    # an earlier round's item without its label: refused
    write_long(human, [(i, "h1", "CS" if truth[i] else "CA") for i in both["item"][1:]])
    with pytest.raises(InputError, match="earlier round lack a label"):
        estimate_design(str(judge), str(human), str(sel2), target="share:CS")


def test_plan_by_width(population, tmp_path: Path) -> None:  # noqa: F811
    """--width sizes the design: uniform at the PPI++ size of ``calibrate plan --width``; the
    active design with a pilot at that size less the saving its pilot projects."""
    judge, truth = population
    sel = tmp_path / "sel.csv"
    common = ("calibrate", "plan", "--judge", str(judge), "--target", "share:CS",
              "--selection-out", str(sel), "--width", "0.08")  # fmt: skip
    uni = judgekit(*common, "--design", "uniform", "--kappa", "0.6")
    assert uni.exit_code == 0, uni.output
    n_uniform = int(uni.output.split("uniform PPI++ needs ")[1].split()[0])
    assert f"budget {n_uniform}:" in uni.output and 0 < n_uniform < 400
    every8 = list(truth)[::8]
    pilot = write_long(
        tmp_path / "pilot.csv", [(i, "h1", "CS" if truth[i] else "CA") for i in every8]
    )
    act = judgekit(*common, "--design", "active", "--pilot", str(pilot))
    assert act.exit_code == 0, act.output
    budget = int(act.output.split("budget ")[1].split(":")[0])
    saving = int(act.output.split("save ")[1].split("%")[0])
    assert saving >= 10 and budget < int(act.output.split("needs ")[1].split()[0])


def test_interval_rule_follows_the_target_kind() -> None:
    """A share gets t below 50 labels and the CLT from there (as ``calibrate estimate``); a mean
    gets the bootstrap-t below 100."""
    rng = np.random.default_rng(4)
    p = rng.uniform(size=800)
    y, pi = (rng.random(800) < p).astype(float), np.full(800, 0.1)
    for n, kind, rule in ((40, "share", "t"), (70, "share", "clt"), (70, "mean", "bootstrap-t")):
        est = weighted_ppi(y[:n], p[:n], p, pi[:n], kind=kind)
        assert est.signature["interval"] == rule
    clt = weighted_ppi(y[:40], p[:40], p, pi[:40], interval="clt")
    t = weighted_ppi(y[:40], p[:40], p, pi[:40], kind="share")
    assert t.half_width > clt.half_width and abs(t.estimate - clt.estimate) < 1e-9
