"""``calibrate compare`` on published data: WMT23 en-de and zh-en (expert MQM as the humans;
GEMBA-MQM-src, BLEU-refA, chrF-refA and DA+SQM as judges) and LLMBar's 12 judge x prompt
combinations. Every figure is checked against an independent computation from the files."""

from __future__ import annotations

import csv
import itertools

import numpy as np
import pandas as pd
import pytest
from conftest import shared_path
from scipy import stats

from judgekit.calibration.compare import CompareOptions, compare
from judgekit.metrics.correlation import pair_counts
from judgekit.metrics.perm_both import PermutationSettings

LPS = ["en-de", "zh-en"]
SYSTEMS = {"en-de": 12, "zh-en": 15}  # WMT23: refA and synthetic_ref left out
FAST = dict(n_resamples=100, permutations=PermutationSettings(n_permutations=1000))


def _wmt():
    d = shared_path("judge-vs-human", "wmt23-gemba-mqm-vs-human-mqm")
    m = shared_path("mt", "wmt23")
    judges = {
        "GEMBA-MQM": (d, "GEMBA-MQM-src"),
        "BLEU": (m, "BLEU-refA"),
        "chrF": (m, "chrF-refA"),
        "DA+SQM": (d, "da-sqm"),
    }
    human = f"{d}/{{lp}}.mqm.seg.score.tsv,{d}/{{lp}}.mqm.sys.score.tsv"
    specs = [
        f"{n}={p}/{{lp}}.{f}.seg.score.tsv,{p}/{{lp}}.{f}.sys.score.tsv"
        for n, (p, f) in judges.items()
    ]
    return d, judges, human, specs


def _read(path) -> pd.DataFrame:
    """An MT-Metrics-Eval file read here with the csv module (independent of judgekit)."""
    with open(path, encoding="utf-8") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
    frame = pd.DataFrame(rows, columns=["system", "score"])
    frame["position"] = frame.groupby("system").cumcount()
    frame["score"] = [float("nan") if v == "None" else float(v) for v in frame["score"]]
    return frame


def test_reader_check_gemba_system_pearson_with_nothing_excluded():
    d, _, human, _ = _wmt()
    gemba = (
        f"GEMBA-MQM={d}/{{lp}}.GEMBA-MQM-src.seg.score.tsv,{d}/{{lp}}.GEMBA-MQM-src.sys.score.tsv"
    )
    options = CompareOptions(
        lps=LPS,
        levels=("system",),
        exclude_systems=(),
        n_resamples=0,
        permutations=PermutationSettings(n_permutations=0),
    )
    result = compare(human, [gemba], options)
    pearson = {r.facet: r for r in result.rows if r.statistic == "pearson"}
    assert pearson["en-de"].value == pytest.approx(0.9885, abs=5e-5)  # the MANIFEST's figures
    assert pearson["zh-en"].value == pytest.approx(0.9819, abs=5e-5)
    assert (pearson["en-de"].n, pearson["zh-en"].n) == (13, 16)


@pytest.fixture(scope="module")
def wmt23():
    _, judges, human, specs = _wmt()
    return judges, compare(human, specs, CompareOptions(lps=LPS, **FAST))


def test_wmt23_system_level_against_scipy_and_brute_force(wmt23):
    judges, result = wmt23
    d = shared_path("judge-vs-human", "wmt23-gemba-mqm-vs-human-mqm")
    for lp in LPS:
        human = _read(d / f"{lp}.mqm.sys.score.tsv").set_index("system")["score"]
        sys_files = {
            n: _read(p / f"{lp}.{f}.sys.score.tsv").set_index("system")["score"]
            for n, (p, f) in judges.items()
        }
        systems = [
            s
            for s in human.index
            if s not in ("refA", "synthetic_ref") and all(s in v.index for v in sys_files.values())
        ]
        assert len(systems) == SYSTEMS[lp]
        rows = {(r.judge, r.statistic): r for r in result.rows if r.facet == lp}
        for name, scores in sys_files.items():
            x, y = scores[systems].to_numpy(), human[systems].to_numpy()
            assert rows[name, "pearson"].value == pytest.approx(stats.pearsonr(x, y)[0])
            pairs = list(itertools.combinations(range(len(x)), 2))
            brute = np.mean([np.sign(x[i] - x[j]) == np.sign(y[i] - y[j]) for i, j in pairs])
            assert rows[name, "pairwise_accuracy"].value == pytest.approx(brute)


def test_wmt23_segment_level_against_scipy(wmt23):
    """Each judge on the segments it and the humans scored (MT-Metrics-Eval's coverage rule):
    its figures are those of that judge alone, whatever the other judges' coverage."""
    judges, result = wmt23
    d = shared_path("judge-vs-human", "wmt23-gemba-mqm-vs-human-mqm")
    for lp in LPS:
        human = _read(d / f"{lp}.mqm.seg.score.tsv").rename(columns={"score": "human"})
        rows = {(r.judge, r.statistic): r for r in result.rows if r.facet == lp}
        for name, (p, f) in judges.items():
            part = _read(p / f"{lp}.{f}.seg.score.tsv").rename(columns={"score": name})
            joined = human.merge(part, on=["system", "position"])
            joined = joined[~joined["system"].isin(["refA", "synthetic_ref"])].dropna()
            assert rows[name, "tau_b"].n == len(joined)
            groups = list(joined.groupby("position"))
            tau = stats.kendalltau(joined[name], joined["human"], variant="b").statistic
            assert rows[name, "tau_b"].value == pytest.approx(tau, abs=1e-10)
            per_item = [stats.kendalltau(g[name], g["human"]).statistic for _, g in groups]
            assert rows[name, "tau_b_item"].value == pytest.approx(np.nanmean(per_item), abs=1e-10)
            epsilon = float(rows[name, "acc_eq"].note.split()[-1])
            acc = np.mean(
                [
                    pair_counts(
                        g[name].to_numpy(), g["human"].to_numpy(), epsilon * (1 + 1e-9)
                    ).acc_eq
                    for _, g in groups
                ]
            )
            assert rows[name, "acc_eq"].value == pytest.approx(acc, abs=1e-3)


def test_wmt23_gemba_mqm_in_the_top_cluster_everywhere(wmt23):
    _, result = wmt23
    for row in result.rows:
        if row.judge == "GEMBA-MQM":
            assert row.rank == 1, (row.facet, row.statistic)
    # BLEU and chrF are separated from GEMBA-MQM at the segment level in both pairs
    for pair in result.pairs:
        if pair.level == "segment" and pair.a == "GEMBA-MQM" and pair.b in ("BLEU", "chrF"):
            assert pair.p_value < 0.05
    assert {r.n for r in result.rows if r.statistic == "pearson"} == {12, 15}


def _llmbar_truth(path) -> pd.DataFrame:
    frame = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    frame["key"] = frame["subset"] + "/" + frame["item_index"]
    frame["judge"] = frame["evaluator_model"] + "/" + frame["prompting"]
    complete = (frame["winner_original_order"] != "None") & (
        frame["winner_swapped_order"] != "None"
    )
    frame = frame[complete]  # each judge on the items it has both verdicts of (issue 32.4)
    right = (frame["winner_original_order"] == frame["gold_label"]) & (
        frame["winner_swapped_order"] == frame["gold_label"]
    )
    return frame.assign(right=right)


def test_llmbar_twelve_judges_ranked_with_gpt4_on_top():
    path = shared_path("judge-vs-human", "llmbar", "llm_judge_verdicts.tsv")
    result = compare(str(path), [str(path)], CompareOptions(by="set", **FAST))
    truth = _llmbar_truth(path)
    truth["set"] = truth["subset"].str.split("/").str[0]
    accuracy = [r for r in result.rows if r.statistic == "accuracy"]
    assert len({r.judge for r in accuracy}) == 12
    for facet in ("Natural", "Adversarial"):
        rows = {r.judge: r for r in accuracy if r.facet == facet}
        expected = truth[truth["set"] == facet].groupby("judge")["right"].mean()
        for judge, value in expected.items():
            assert rows[judge].value == pytest.approx(value)  # both orders right = resolved right
        assert rows["GPT-4/Vanilla"].rank == 1
        best = max(rows.values(), key=lambda r: r.value)
        assert best.judge.startswith("GPT-4/")
    assert result.facet_tests and all(t.df == 1 for t in result.facet_tests)
