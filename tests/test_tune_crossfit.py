"""Cross-fitting a tuned judge's estimate (issue 35, point 4): ppi_py's crossppi_mean_ci with the
choice made on K-1 folds, checked against ppi_py by hand, for coverage, and through
`calibrate estimate --tuned DIR --cross-fit` (a look counted)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_tune_cli import judgekit

from judgekit.calibration.tune import choose, test_hash
from judgekit.calibration.tune.crossfit import cross_fit
from judgekit.calibration.tune.nested import fold_items
from judgekit.errors import InputError


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


def test_cross_fit_by_facet_matches_ppi_py_on_one_facet():
    from ppi_py import crossppi_mean_ci, crossppi_mean_pointestimate

    from judgekit.calibration.tune.crossfit import cross_fit_facets

    ids, _truth, cands, human = _world(3)
    lang = pd.Series({i: ("de", "fr", "ja")[k % 3] for k, i in enumerate(ids)})
    fits = cross_fit_facets(cands, human, "accuracy", "share:1", lang, "language", folds=4,
                            seed=2, looks=2)  # fmt: skip
    assert [f.facet for f in fits] == ["all", "de", "fr", "ja"] and {f.looks for f in fits} == {2}
    overall = cross_fit(cands, human, "accuracy", "share:1", folds=4, seed=2, looks=2)
    assert fits[0] == overall
    # the "fr" row by hand: that facet's items only, the same folds rule (4, seed 2, by label)
    members = [i for i in ids if lang[i] == "fr"]
    labelled = [i for i in members if i in human.index]
    unl = [i for i in members if i not in human.index]
    folds = fold_items(labelled, [human[i] for i in labelled], 4, 2)
    outputs = {k: v.to_dict() for k, v in cands.items()}
    yhat, cols, chosen = {}, [], []
    for part in folds:
        rest = [i for i in labelled if i not in set(part)]
        name = choose(outputs, human.to_dict(), rest, "accuracy").chosen
        chosen.append(name)
        yhat.update({i: outputs[name][i] for i in part})
        cols.append([float(outputs[name][i] == "1") for i in unl])
    y = np.array([float(human[i] == "1") for i in labelled])
    y_hat = np.array([float(yhat[i] == "1") for i in labelled])
    low, high = crossppi_mean_ci(y, y_hat, np.column_stack(cols), alpha=0.05)
    fr = fits[2]
    assert fr.ci == pytest.approx((float(low[0]), float(high[0])))
    point = crossppi_mean_pointestimate(y, y_hat, np.column_stack(cols))
    assert fr.estimate == pytest.approx(float(np.ravel(point)[0]))
    assert (fr.n, fr.N) == (len(labelled), len(unl)) and list(fr.chosen_per_fold) == chosen
    assert fr.humans_only == pytest.approx(y.mean()) and fr.ci != overall.ci


def _tune_dir(tmp_path: Path, cands: dict, human: pd.Series) -> Path:
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
    return tune


def test_estimate_cross_fit_by_language_per_facet_and_its_refusals(tmp_path: Path) -> None:
    from judgekit.calibration.estimate import facet_groups
    from judgekit.calibration.tune.crossfit import cross_fit_facets, cross_fit_tuned

    ids, _truth, cands, human = _world(4, n_all=240, n_lab=90)
    tune = _tune_dir(tmp_path, cands, human)
    pd.DataFrame({"item": human.index, "rater": "ann", "label": human.values}).to_csv(
        tmp_path / "h.csv", index=False
    )
    lang = {i: ("de", "fr")[k % 2] for k, i in enumerate(ids)}
    pd.DataFrame({"item": ids, "language": [lang[i] for i in ids]}).to_csv(
        tmp_path / "facets.csv", index=False
    )
    args = ["calibrate", "estimate", "--judge", str(tune / "good"), "--human",
            str(tmp_path / "h.csv"), "--tuned", str(tune), "--cross-fit", "--target", "share:1",
            "--facets", str(tmp_path / "facets.csv")]  # fmt: skip
    proc = judgekit(*args, "--by", "nosuch", code=2)  # the overall path's refusal, no look
    assert "no facet 'nosuch'" in proc.stdout + proc.stderr and "Traceback" not in proc.stderr
    assert not (tune / "looks.json").exists()
    proc = judgekit(*args, "--by", "language", "--json")
    doc = json.loads(proc.stdout)
    assert doc["by"] == "language" and [e["facet"] for e in doc["estimates"]] == ["all", "de", "fr"]
    groups = facet_groups(pd.Index(ids), pd.DataFrame({"language": lang}), "language")
    expected = cross_fit_facets(cands, human, "accuracy", "share:1", groups, "language")
    for row, fit in zip(doc["estimates"], expected, strict=True):
        assert row["ci"] == pytest.approx(list(fit.ci)) and row["n"] == fit.n
        assert row["N"] == fit.N and row["looks"] == 1
    proc = judgekit(*args, "--by", "language")
    assert "language de: share:1: cross-PPI" in proc.stdout
    assert "language fr: share:1: humans only" in proc.stdout
    assert proc.stdout.count("looks at the sealed test split: 2") == 1

    # a facet value whose items are all labelled, or too few for the folds: refused as the
    # overall path refuses (its message after the facet), no look counted
    unlabelled = [i for i in ids if i not in human.index]
    cases = {"xx": ("language xx: no unlabelled item", list(human.index[:10])),
             "yy": ("language yy: need 2 <= folds <= items, got 5 folds for 3",
                    list(human.index[:3]) + unlabelled[:5])}  # fmt: skip
    for value, (said, some) in cases.items():
        table = pd.DataFrame({"item": ids, "language": [value if i in some else lang[i]
                                                         for i in ids]})  # fmt: skip
        table.to_csv(tmp_path / "facets.csv", index=False)
        with pytest.raises(InputError, match=re.escape(said)) as caught:
            cross_fit_tuned(tune, tmp_path / "h.csv", "share:1", by="language",
                            facet_paths=[tmp_path / "facets.csv"])  # fmt: skip
        assert caught.value.field == "--human"
        assert json.loads((tune / "looks.json").read_text())["looks"] == 2


def test_cross_fit_share_is_clipped_to_0_1_with_the_note_overall_and_per_facet():
    from ppi_py import crossppi_mean_ci

    from judgekit.calibration.tune.crossfit import cross_fit_facets

    ids = [f"i{k:02d}" for k in range(60)]
    labelled = ids[:40]  # humans say false on 2 of them; both candidates always say true
    human = pd.Series({i: "false" if i in ("i03", "i24") else "true" for i in labelled})
    cands = {name: pd.Series(dict.fromkeys(ids, "true")) for name in ("a", "b")}
    lang = pd.Series({i: ("de", "fr")[k % 2] for k, i in enumerate(ids)})
    fits = cross_fit_facets(cands, human, "accuracy", "share:true", lang, "language", folds=4,
                            seed=0)  # fmt: skip
    y = np.array([float(human[i] == "true") for i in labelled])
    _, high = crossppi_mean_ci(y, np.ones(40), np.ones((20, 4)), alpha=0.05)
    assert float(np.ravel(high)[0]) > 1  # what ppi_py gives: past a share's range
    assert [f.facet for f in fits] == ["all", "de", "fr"]
    for fit in fits:
        assert 0 <= fit.ci[0] <= fit.estimate <= fit.ci[1] <= 1, fit
        assert 0 <= fit.humans_ci[0] <= fit.humans_ci[1] <= 1, fit
    assert fits[0].ci[1] == 1.0 and fits[0].note is not None
    assert re.match(r"clipped to \[0, 1\], a share's range \(was ci_high 1\.\d{3}", fits[0].note)
    assert all(f.note and "clipped to [0, 1]" in f.note for f in fits)  # every facet row too
