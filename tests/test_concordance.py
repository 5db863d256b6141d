"""Concordance among judges: Cohen's kappa pairs, Kendall's W, position consistency (LLMBar)."""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pandas as pd
import pytest
from conftest import shared_path
from scipy import stats

from judgekit.errors import JudgekitError
from judgekit.metrics.concordance import (
    agreement_matrix,
    kendalls_w,
    pairwise_agreement,
    position_consistency,
    unswap_verdicts,
)


def test_cohen_wikipedia_grant_example():
    """Wikipedia 'Cohen's kappa': 50 applications, p_o = 0.7, kappa = 0.4."""
    vectors = json.loads(shared_path("agreement", "agreement_test_vectors.json").read_text())
    vector = next(v for v in vectors["vectors"] if v["id"] == "cohen_wikipedia_2x2_grant")
    (yy, yn), (ny, nn) = vector["data"]
    a = ["yes"] * (yy + yn) + ["no"] * (ny + nn)
    b = ["yes"] * yy + ["no"] * yn + ["yes"] * ny + ["no"] * nn
    pairs = pairwise_agreement(pd.DataFrame({"A": a, "B": b}))
    assert pairs.loc[0, "percent_agreement"] == pytest.approx(vector["expected"]["p_o"])
    assert pairs.loc[0, "cohen_kappa"] == pytest.approx(vector["expected"]["kappa"])


def test_pairwise_uses_items_both_rated():
    verdicts = pd.DataFrame(
        {"j1": ["1", "2", "1", None], "j2": ["1", "2", "2", "1"], "j3": [None, "2", "1", "1"]}
    )
    pairs = pairwise_agreement(verdicts).set_index(["judge_a", "judge_b"])
    assert pairs.loc[("j1", "j2"), "n_items"] == 3
    assert pairs.loc[("j1", "j2"), "percent_agreement"] == pytest.approx(2 / 3)
    assert pairs.loc[("j1", "j3"), "n_items"] == 2
    assert pairs.loc[("j1", "j3"), "cohen_kappa"] == pytest.approx(1.0)
    matrix = agreement_matrix(pairs.reset_index(), "percent_agreement")
    assert matrix.loc["j2", "j1"] == matrix.loc["j1", "j2"]
    assert matrix.loc["j3", "j3"] == 1.0


def test_kendalls_w_by_hand():
    # Ranks (1 = best): J1 1,2,3,4; J2 1,3,2,4; J3 2,1,3,4 -> rank sums 4, 6, 8, 12.
    # S = 3.5^2 + 1.5^2 + 0.5^2 + 4.5^2 = 35; W = 12 S / (m^2 (n^3 - n)) = 420 / 540.
    ranks = pd.DataFrame(
        [[1, 2, 3, 4], [1, 3, 2, 4], [2, 1, 3, 4]],
        index=["J1", "J2", "J3"],
        columns=["a", "b", "c", "d"],
    )
    res = kendalls_w(-ranks)  # scores: higher is better
    assert res.w == pytest.approx(420 / 540)
    assert res.chi2 == pytest.approx(7.0)  # m (n - 1) W
    assert res.df == 3
    assert res.p_value == pytest.approx(stats.chi2.sf(7.0, 3))
    assert res.mean_ranks == {"a": 4 / 3, "b": 2.0, "c": 8 / 3, "d": 4.0}
    # mean pairwise Spearman rho = (m W - 1) / (m - 1) without ties
    rhos = [
        stats.spearmanr(ranks.loc[i], ranks.loc[j]).statistic
        for i, j in itertools.combinations(ranks.index, 2)
    ]
    assert res.mean_spearman == pytest.approx(np.mean(rhos))


def test_kendalls_w_tie_correction_equals_friedman():
    scores = pd.DataFrame(
        [[0.9, 0.7, 0.7, 0.2, 0.1], [0.8, 0.8, 0.5, 0.3, 0.3], [0.6, 0.9, 0.4, 0.4, 0.1]],
        index=["J1", "J2", "J3"],
    )
    res = kendalls_w(scores)
    friedman = stats.friedmanchisquare(*[scores[c] for c in scores.columns])
    assert res.chi2 == pytest.approx(friedman.statistic)
    assert res.p_value == pytest.approx(friedman.pvalue)
    assert res.tie_correction == 24.0  # four tied pairs, each 2^3 - 2 = 6


def test_kendalls_w_drops_incomplete_models_and_perfect_agreement():
    scores = pd.DataFrame({"a": [3, 3, 3], "b": [2, 2, 2], "c": [1, 1, 1], "d": [1, None, 2]})
    res = kendalls_w(scores)
    assert res.w == pytest.approx(1.0)
    assert res.dropped_models == ("d",)
    with pytest.raises(JudgekitError, match="undefined"):
        kendalls_w(pd.DataFrame({"a": [1, 1], "b": [1, 1]}))


def test_position_consistency_missing_policies():
    original = ["1", "2", None, None, "1"]
    swapped = unswap_verdicts(["2", "2", None, "1", "1"])  # as given with outputs swapped
    assert list(swapped) == ["1", "1", None, "2", "2"]
    gold = ["1", "2", "1", "2", "2"]
    inc = position_consistency(original, swapped, gold)
    assert (inc.n_consistent, inc.n_compared) == (1, 5)
    assert inc.accuracy_original == pytest.approx(2 / 5)
    assert inc.accuracy_swapped == pytest.approx(3 / 5)
    assert inc.accuracy_both == pytest.approx(1 / 5)
    assert position_consistency(original, swapped, missing="as_label").n_consistent == 2
    drop = position_consistency(original, swapped, missing="drop")
    assert (drop.n_consistent, drop.n_compared) == (1, 3)
    with pytest.raises(JudgekitError, match="missing must be"):
        position_consistency(original, swapped, missing="ignore")


def _llmbar():
    folder = shared_path("judge-vs-human", "llmbar")
    verdicts = pd.read_csv(
        folder / "llm_judge_verdicts.tsv", sep="\t", dtype=str, keep_default_na=False
    )
    published = json.loads((folder / "published_statistics.json").read_text())
    return verdicts, published


def _fraction(text: str) -> float:
    num, den = re.match(r"(\d+) / (\d+)", text).groups()
    return int(num) / int(den)


def test_llmbar_published_accuracy_and_positional_agreement():
    """All 60 LLMBar statistics.json: correct_False/True/both/average, equal, kappa_agreement."""
    verdicts, published = _llmbar()
    groups = verdicts.groupby(["subset", "evaluator_model", "prompting"])
    assert groups.ngroups == 60
    for (subset, evaluator, prompting), g in groups:
        stat = published[f"{subset}|{evaluator}|{prompting}"]
        res = position_consistency(
            g["winner_original_order"],
            g["winner_swapped_order"],
            g["gold_label"],
            missing="as_label",  # LLMBar counts None == None as equal
        )
        assert res.consistency == pytest.approx(_fraction(stat["equal"]), abs=1e-12)
        assert res.accuracy_original == pytest.approx(_fraction(stat["correct_False"]), abs=1e-12)
        assert res.accuracy_swapped == pytest.approx(_fraction(stat["correct_True"]), abs=1e-12)
        assert res.accuracy_both == pytest.approx(_fraction(stat["correct_both"]), abs=1e-12)
        average = float(stat["correct_average"].rstrip("%")) / 100
        assert res.accuracy_mean == pytest.approx(average, abs=1e-12)
        # kappa_agreement: order A vs order B with '2' and 'None' both mapped to 0
        binary = pd.DataFrame(
            {
                "original": (g["winner_original_order"] == "1").astype(int).to_numpy(),
                "swapped": (g["winner_swapped_order"] == "1").astype(int).to_numpy(),
            }
        )
        kappa = pairwise_agreement(binary).loc[0, "cohen_kappa"]
        assert kappa == pytest.approx(stat["kappa_agreement"], abs=1e-12)


def test_llmbar_judge_agreement_matrix_on_natural():
    """12 evaluator/prompting judges on Natural (100 items), verdicts in the original order."""
    verdicts, _ = _llmbar()
    natural = verdicts[verdicts["subset"] == "Natural"].assign(
        judge=lambda d: d["evaluator_model"] + "/" + d["prompting"]
    )
    table = natural.pivot(index="item_index", columns="judge", values="winner_original_order")
    pairs = pairwise_agreement(table)
    assert len(pairs) == 66
    matrix = agreement_matrix(pairs, "cohen_kappa")
    assert matrix.shape == (12, 12)
    assert np.allclose(matrix.to_numpy(), matrix.to_numpy().T)
    gpt4 = pairs.set_index(["judge_a", "judge_b"]).loc[("GPT-4/CoT", "GPT-4/Vanilla")]
    same = (table["GPT-4/CoT"] == table["GPT-4/Vanilla"]).sum()
    assert (gpt4["n_items"], same) == (100, 97)
    assert gpt4["percent_agreement"] == pytest.approx(0.97)
    assert gpt4["cohen_kappa"] == pytest.approx(0.938975, abs=1e-6)  # computed here


def test_llmbar_kendalls_w_of_evaluator_rankings():
    """Do the 10 test conditions (5 subsets x 2 promptings) rank the 6 evaluators alike?

    Each condition ranks the evaluators by mean accuracy over both output orders. W from the
    verdicts equals W from LLMBar's published ``correct_average`` values: 0.7135 (computed
    here; LLMBar reports no W). GPT-4 is first in every condition (mean rank 1.0).
    """
    verdicts, published = _llmbar()
    rows = []
    for (subset, evaluator, prompting), g in verdicts.groupby(
        ["subset", "evaluator_model", "prompting"]
    ):
        res = position_consistency(
            g["winner_original_order"], g["winner_swapped_order"], g["gold_label"]
        )
        stat = published[f"{subset}|{evaluator}|{prompting}"]
        rows.append(
            {
                "condition": f"{subset}|{prompting}",
                "evaluator": evaluator,
                "ours": res.accuracy_mean,
                "published": float(stat["correct_average"].rstrip("%")),
            }
        )
    frame = pd.DataFrame(rows)
    ours = kendalls_w(frame.pivot(index="condition", columns="evaluator", values="ours"))
    paper = kendalls_w(frame.pivot(index="condition", columns="evaluator", values="published"))
    assert (ours.n_judges, ours.n_models) == (10, 6)
    assert ours.w == pytest.approx(paper.w, abs=1e-12)
    assert ours.w == pytest.approx(0.7135, abs=1e-4)
    assert ours.mean_ranks["GPT-4"] == 1.0
    assert ours.p_value < 1e-5
