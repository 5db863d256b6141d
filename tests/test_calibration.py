"""Judge vs human majority (tie policies), human ceiling, Alternative Annotator Test, CLI."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import shared_path
from scipy import stats
from sklearn.metrics import accuracy_score, cohen_kappa_score, f1_score, precision_score
from typer.testing import CliRunner

from judgekit.calibration.aat import alt_test
from judgekit.calibration.judge import human_ceiling, judge_vs_humans
from judgekit.errors import JudgekitError
from judgekit.labels.majority import TIE, majority_vote
from judgekit.labels.table import LabelTable
from judgekit.metrics.classification import ReferenceScorer

# Three humans, seven items; i3 and i6 tie (1-1), i7 has no judge label.
HUMANS = LabelTable(
    pd.DataFrame(
        {
            "h1": ["CS", "CA", "CS", "CA", "CS", "CA", "CS"],
            "h2": ["CS", "CA", "CA", "CA", "CS", "CS", "CS"],
            "h3": ["CA", "CA", None, "CS", "CS", None, "CS"],
        },
        index=[f"i{k}" for k in range(1, 8)],
    )
)
JUDGE = {"i1": "CS", "i2": "CS", "i3": "CS", "i4": "CA", "i5": "CA", "i6": "CA"}


def test_majority_vote_reports_ties():
    majority = majority_vote(HUMANS)
    assert majority.to_dict() == {
        "i1": "CS", "i2": "CA", "i3": TIE, "i4": "CA", "i5": "CS", "i6": TIE, "i7": "CS"
    }  # fmt: skip


def test_judge_vs_humans_excluding_ties():
    report = judge_vs_humans(JUDGE, HUMANS, tie_policy="exclude", ci=False)
    # i1, i2, i4, i5: reference CS CA CA CS, judge CS CS CA CA.
    assert (report.n_items, report.n_ties, report.n_unjudged) == (4, 2, 1)
    assert report.accuracy.value == 0.5 and report.accuracy.ci is None
    assert report.macro_f1.value == 0.5
    assert report.kappa.value == 0.0  # p_o = p_e = .5
    assert report.errors == [
        {"human": "CA", "judge": "CS", "count": 1},
        {"human": "CS", "judge": "CA", "count": 1},
    ]
    assert report.confusion.to_numpy().tolist() == [[1, 1], [1, 1]]


def test_judge_vs_humans_counting_ties_as_errors():
    report = judge_vs_humans(JUDGE, HUMANS, tie_policy="error", ci=False)
    assert report.n_items == 6 and report.accuracy.value == pytest.approx(2 / 6)
    # precision 1/3, recall 1/2 for both classes -> F1 = 0.4; the tie class is not averaged.
    assert report.macro_f1.value == pytest.approx(0.4)
    per_class = report.per_class.set_index("label")
    assert per_class.loc["CS", "precision"] == pytest.approx(1 / 3)
    assert per_class.loc["CS", "recall"] == pytest.approx(1 / 2)
    assert list(report.confusion.index) == ["CA", "CS", TIE]
    assert list(report.confusion.columns) == ["CA", "CS"]
    assert report.kappa.value == pytest.approx(0.0)  # p_o = p_e = 1/3


def test_judge_vs_humans_with_ties_as_their_own_class():
    report = judge_vs_humans(JUDGE, HUMANS, tie_policy="own_class", ci=False)
    assert report.accuracy.value == pytest.approx(2 / 6)
    assert report.macro_f1.value == pytest.approx((0.4 + 0.4 + 0.0) / 3)
    assert list(report.per_class["label"]) == ["CA", "CS", TIE]
    assert {(e["human"], e["judge"]) for e in report.errors} == {
        ("CA", "CS"), ("CS", "CA"), (TIE, "CS"), (TIE, "CA")
    }  # fmt: skip


def test_unknown_tie_policy_and_disjoint_items():
    with pytest.raises(JudgekitError, match="unknown tie policy"):
        judge_vs_humans(JUDGE, HUMANS, tie_policy="coin")
    with pytest.raises(JudgekitError, match="no item has both"):
        judge_vs_humans({"item-1": "CS"}, HUMANS)


def test_bootstrap_replicates_match_sklearn_with_sample_weights():
    rng = np.random.default_rng(0)
    pairs = pd.DataFrame(
        {
            "item": rng.integers(0, 40, 120),
            "reference": rng.choice(["a", "b", "c", TIE], 120),
            "label": rng.choice(["a", "b", "c"], 120),
        }
    )
    scorer = ReferenceScorer(pairs, "error")
    for _ in range(5):
        idx = rng.integers(0, len(scorer.items), len(scorer.items))
        w = np.bincount(idx, minlength=len(scorer.items))[scorer.item_codes]
        t, p = pairs["reference"], pairs["label"]
        assert scorer.metric("accuracy", idx) == pytest.approx(
            accuracy_score(t, p, sample_weight=w)
        )
        assert scorer.metric("macro_f1", idx) == pytest.approx(
            f1_score(t, p, labels=["a", "b", "c"], average="macro", sample_weight=w)
        )
        assert scorer.metric("kappa", idx) == pytest.approx(
            cohen_kappa_score(t, p, labels=["a", "b", "c", TIE], sample_weight=w)
        )
        assert scorer.metric("precision:b", idx) == pytest.approx(
            precision_score(t, p, labels=["b"], average="macro", sample_weight=w)
        )


def test_human_ceiling_against_majority_of_the_others():
    ceiling = human_ceiling(HUMANS, ci=False)
    # Each human has 5 untied rows (ties: h1 and h2 on i1 and i4), 3 of them correct.
    assert (ceiling.n_rows, ceiling.n_ties) == (15, 4)
    assert ceiling.humans["accuracy"].value == pytest.approx(9 / 15)
    assert ceiling.per_human["accuracy"].tolist() == pytest.approx([0.6, 0.6, 0.6])
    with_judge = human_ceiling(HUMANS, JUDGE, n_resamples=200)
    # i7 has no judge label: 12 rows; humans 6 correct, the judge 4 on the same references.
    assert with_judge.n_rows == 12
    assert with_judge.humans["accuracy"].value == pytest.approx(0.5)
    assert with_judge.judge["accuracy"].value == pytest.approx(4 / 12)
    assert with_judge.per_human["judge_accuracy"].tolist() == pytest.approx([0, 0.5, 0.5])
    low, high = with_judge.humans["accuracy"].ci
    assert low <= 0.5 <= high


def test_alt_test_by_hand():
    result = alt_test(JUDGE, HUMANS, min_items=3)
    # d = W_human - W_judge per item, alignment = share of the other annotators matched.
    d = {"h1": [0, 1, 0, 0, 1, 0], "h2": [0, 1, -1, 0, 1, -1], "h3": [-1, 1, -1, 1]}
    per = result.per_annotator.set_index("annotator")
    assert per["n_items"].to_dict() == {"h1": 6, "h2": 6, "h3": 4}
    assert per["rho_judge"].tolist() == pytest.approx([4 / 6, 4 / 6, 2 / 4])
    for annotator, diffs in d.items():
        expected = stats.ttest_1samp(diffs, 0.2, alternative="less").pvalue
        assert per.loc[annotator, "p_value"] == pytest.approx(expected)
        assert per.loc[annotator, "mean_difference"] == pytest.approx(np.mean(diffs))
    assert result.advantage_probability == pytest.approx((4 / 6 + 4 / 6 + 2 / 4) / 3)
    assert result.winning_rate == 0.0 and not result.passed
    # With the paper's minimum of 30 items per annotator nobody qualifies.
    with pytest.raises(JudgekitError, match="no annotator"):
        alt_test(JUDGE, HUMANS)


def _mmlu():
    path = shared_path("benchmark-items", "global-mmlu-lite-en", "global_mmlu_lite_en_test.jsonl")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    humans = LabelTable.from_rows(
        (r["id"], f"annotator{j + 1}", "CA" if v == "none" else "CS")
        for r in rows
        for j, v in enumerate(r["required_knowledge"])
    )
    return humans, {r["id"]: r["cs_label"] for r in rows}


def test_global_mmlu_cs_label_is_the_majority_with_ties_labelled_cs():
    # MANIFEST: CA iff fewer than half the votes are non-"none"; 83 CS items are exact ties.
    humans, cs_label = _mmlu()
    exclude = judge_vs_humans(cs_label, humans, tie_policy="exclude", n_resamples=200)
    assert (exclude.n_items, exclude.n_ties) == (317, 83)
    assert exclude.accuracy.value == 1.0 and exclude.kappa.value == 1.0
    error = judge_vs_humans(cs_label, humans, tie_policy="error", n_resamples=200)
    assert error.accuracy.value == pytest.approx(317 / 400)
    assert error.errors == [{"human": TIE, "judge": "CS", "count": 83}]
    assert error.accuracy.ci[0] < 317 / 400 < error.accuracy.ci[1]
    per_class = error.per_class.set_index("label")
    assert per_class.loc["CS", "precision"] == pytest.approx(117 / 200)
    own = judge_vs_humans(cs_label, humans, tie_policy="own_class", ci=False)
    assert own.confusion.loc[TIE].tolist() == [0, 83, 0]
    # The majority-derived label passes the alt-test (the paper's optimal-jury result, rho = 1).
    result = alt_test(cs_label, humans)
    assert result.passed and result.advantage_probability == 1.0
    assert set(result.skipped) == {"annotator7", "annotator8"}  # 18 and 6 items < 30


def test_cli_agreement_and_judge(tmp_path):
    from judgekit.cli import app
    from judgekit.cli import calibrate as _  # noqa: F401  (registers `calibrate`)

    labels = tmp_path / "humans.csv"
    rows = ["item,rater,label"]
    for item, row in HUMANS.frame.iterrows():
        rows += [f"{item},{rater},{label}" for rater, label in row.items() if label is not None]
    labels.write_text("\n".join(rows) + "\n")
    run = tmp_path / "run"
    run.mkdir()
    judge_rows = [f"{item},judge,{label}" for item, label in JUDGE.items()]
    (run / "labels.csv").write_text("item,rater,label\n" + "\n".join(judge_rows) + "\n")
    runner = CliRunner()
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["calibrate", "agreement", str(labels), "--n-resamples", "50", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    table = pd.read_csv(out / "agreement.csv").set_index("statistic")
    assert table.loc["unanimous share", "value"] == pytest.approx(3 / 7)  # i2, i5, i7
    payload = json.loads((out / "agreement.json").read_text())
    assert payload["prevalence"]["n_ratings"] == 19
    assert payload["signature"]["n_resamples"] == 50
    result = runner.invoke(
        app,
        ["calibrate", "judge", "--judge", str(run), "--human", str(labels)]
        + ["--tie-policy", "error", "--min-items", "3", "--n-resamples", "50", "--out", str(out)],
    )
    assert result.exit_code == 0, result.output
    summary = pd.read_csv(out / "judge_calibration.csv")
    accuracy = summary.query("metric == 'accuracy'").set_index("comparison")["value"]
    assert accuracy["judge vs human majority"] == pytest.approx(2 / 6)
    payload = json.loads((out / "judge_calibration.json").read_text())
    assert payload["alt_test"]["advantage_probability"] == pytest.approx(0.6111, abs=1e-4)
    assert (out / "confusion_matrix.csv").exists() and (out / "alt_test.csv").exists()


def test_cli_judge_with_one_label_on_both_sides_says_why_kappa_is_undefined(tmp_path):
    from cli_inproc import run_main

    human, judge = tmp_path / "humans.csv", tmp_path / "judge.csv"
    human.write_text("item,rater,label\n" + "".join(f"i{k},h1,yes\n" for k in range(6)))
    judge.write_text("item,rater,label\n" + "".join(f"i{k},j,yes\n" for k in range(6)))
    result = run_main("calibrate", "judge", "--judge", str(judge), "--human", str(human),
                      "--n-resamples", "20", env={"COLUMNS": "200"})  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # scikit-learn's "A single label was found" is ours to say
    assert ("Cohen's kappa of judge vs human majority: undefined (-): both sides give one and "
            "the same label only, so chance agreement is 1") in result.stdout  # fmt: skip
    assert "judge vs human majority │ 6 │ 1.000 [1.000, 1.000]" in result.stdout
