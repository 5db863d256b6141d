"""Cross-fitting a tuned judge's estimate (issue 35, point 4): ppi_py's crossppi_mean_ci with the
choice made on K-1 folds, checked against ppi_py by hand, for coverage, and through
`calibrate estimate --tuned DIR --cross-fit` (a look counted)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_tune_cli import judgekit

from judgekit.calibration.tune import choose, test_hash
from judgekit.calibration.tune.crossfit import cross_fit
from judgekit.calibration.tune.nested import fold_items


def _world(seed: int, n_all: int = 600, n_lab: int = 120):
    rng = np.random.default_rng(seed)
    ids = [f"i{k:04d}" for k in range(n_all)]
    truth = {i: "1" if rng.random() < 0.3 else "0" for i in ids}

    def judge(acc: float) -> pd.Series:
        flip = {"1": "0", "0": "1"}
        return pd.Series({i: truth[i] if rng.random() < acc else flip[truth[i]] for i in ids})

    cands = {"weak": judge(0.6), "good": judge(0.95), "mid": judge(0.8)}
    labelled = sorted(rng.choice(ids, n_lab, replace=False).tolist())
    human = pd.Series({i: truth[i] for i in labelled})
    return ids, truth, cands, human


def test_cross_fit_matches_ppi_py_by_hand_and_covers():
    from ppi_py import crossppi_mean_ci

    ids, truth, cands, human = _world(0)
    fit = cross_fit(cands, human, "accuracy", "share:1", folds=4, seed=2, looks=1)
    labelled = list(human.index)
    folds = fold_items(labelled, [human[i] for i in labelled], 4, 2)
    unl = [i for i in ids if i not in human.index]
    outputs = {k: v.to_dict() for k, v in cands.items()}
    yhat, cols = {}, []
    for part in folds:
        rest = [i for i in labelled if i not in set(part)]
        name = choose(outputs, human.to_dict(), rest, "accuracy").chosen
        yhat.update({i: outputs[name][i] for i in part})
        cols.append([float(outputs[name][i] == "1") for i in unl])
    y = np.array([float(human[i] == "1") for i in labelled])
    low, high = crossppi_mean_ci(y, np.array([float(yhat[i] == "1") for i in labelled]),
                                 np.column_stack(cols), alpha=0.05)  # fmt: skip
    assert fit.ci == pytest.approx((float(low), float(high)))
    assert fit.n == 120 and fit.N == 480 and fit.looks == 1 and len(fit.chosen_per_fold) == 4
    assert fit.ci[1] - fit.ci[0] < fit.humans_ci[1] - fit.humans_ci[0]  # the judge helps
    covered = 0
    for seed in range(40):
        ids, truth, cands, human = _world(100 + seed)
        fit = cross_fit(cands, human, "accuracy", "share:1", folds=5, seed=seed)
        true_share = np.mean([truth[i] == "1" for i in ids])
        covered += fit.ci[0] <= true_share <= fit.ci[1]
    assert covered >= 34  # 95% nominal; 34/40 = 0.85 leaves room for 40 draws


def test_estimate_cross_fit_command_counts_a_look(tmp_path: Path) -> None:
    ids, _truth, cands, human = _world(1, n_all=200, n_lab=60)
    tune = tmp_path / "tune"
    for name, series in cands.items():
        (tune / name).mkdir(parents=True)
        rows = pd.DataFrame({"item": series.index, "rater": f"judge-{name}", "label": series})
        rows.to_csv(tune / name / "labels.csv", index=False)
    (tune / "ranking.json").write_text(
        json.dumps({"statistic": "accuracy", "select": [[n, 0.0] for n in cands]})
    )
    test = list(human.index[:20])
    (tune / "splits.json").write_text(
        json.dumps({"test_hash": test_hash(test), "test": test, "tune": [], "select": []})
    )
    humans = pd.DataFrame({"item": human.index, "rater": "ann", "label": human.values})
    humans.to_csv(tmp_path / "h.csv", index=False)
    args = ["calibrate", "estimate", "--judge", str(tune / "good"), "--human",
            str(tmp_path / "h.csv"), "--tuned", str(tune), "--cross-fit"]  # fmt: skip
    proc = judgekit(*args, code=2)
    assert "--target" in proc.stdout + proc.stderr
    proc = judgekit(*args, "--target", "share:maybe", code=2)  # no figure: no look counted
    assert not (tune / "looks.json").exists()
    proc = judgekit(*args, "--target", "share:1")
    assert "cross-PPI" in proc.stdout and "humans only" in proc.stdout
    assert "looks at the sealed test split: 1" in proc.stdout
    assert "n=60 labelled, N=140 unlabelled, 5 folds" in proc.stdout
    assert json.loads((tune / "looks.json").read_text())["by"] == ["calibrate estimate --cross-fit"]
