"""Judge confidence: ECE, Brier, reliability bins, selective judging, against hand figures and
on LLMBar-like synthetic pairwise verdicts (a calibrated and an overconfident judge)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import brier_score_loss
from typer.testing import CliRunner

from judgekit.calibration.confidence import confidence_report
from judgekit.calibration.confidence_inputs import load_label_probs
from judgekit.calibration.judge_report import calibrate_judge
from judgekit.cli import app
from judgekit.errors import InputError
from judgekit.labels.table import LabelTable
from judgekit.report.judge import write_judge_calibration

# four items, labels A/B: (p(A), p(B)), human majority
TINY = pd.DataFrame(
    {"A": [0.9, 0.8, 0.3, 0.6], "B": [0.1, 0.2, 0.7, 0.4]}, index=["i1", "i2", "i3", "i4"]
)
TINY_REF = pd.Series(["A", "B", "B", "A"], index=TINY.index)


def test_ece_and_brier_match_a_hand_computation() -> None:
    rep = confidence_report(TINY, TINY_REF, n_resamples=0)
    # top-label confidence 0.9 (right), 0.8 (wrong), 0.7 (right), 0.6 (right): one per bin of 10
    # ECE = (|1-0.9| + |0-0.8| + |1-0.7| + |1-0.6|) / 4 = (0.1 + 0.8 + 0.3 + 0.4) / 4 = 0.4
    assert rep.ece.value == pytest.approx(0.4)
    # Brier: (0.1^2 + 0.1^2) + (0.8^2 + 0.8^2) + (0.3^2 + 0.3^2) + (0.4^2 + 0.4^2)
    #      = 0.02 + 1.28 + 0.18 + 0.32 = 1.80, mean 0.45
    assert rep.brier.value == pytest.approx(0.45)
    # two labels: the multiclass form is twice sklearn's binary mean (p(A) - [ref == A])^2
    binary = brier_score_loss([1, 0, 0, 1], TINY["A"])
    assert rep.brier.value == pytest.approx(2 * binary)
    assert rep.accuracy == pytest.approx(0.75)
    filled = [(b["bin"], b["n"], b["accuracy"]) for b in rep.bins if b["n"]]
    assert filled == [(5, 1, 1.0), (6, 1, 1.0), (7, 1, 0.0), (8, 1, 1.0)]
    # items with confidence >= 0.7: i1, i2, i3: share 3/4, accuracy 2/3
    at = {s["threshold"]: s for s in rep.selective}
    assert at[0.7]["share"] == pytest.approx(0.75)
    assert at[0.7]["accuracy"] == pytest.approx(2 / 3)
    assert at[0.9]["n"] == 1
    # two bins: all four in (0.5, 1], mean confidence 0.75 = accuracy 0.75: ECE 0
    assert confidence_report(TINY, TINY_REF, n_bins=2, n_resamples=0).ece.value == pytest.approx(
        0.0
    )


def test_ties_and_outside_labels_are_left_out_and_counted() -> None:
    ref = pd.Series(["A", "<tie>", "C", "A"], index=TINY.index)
    rep = confidence_report(TINY, ref, n_resamples=0)
    assert (rep.n_items, rep.n_ties, rep.n_outside) == (2, 1, 1)


def _llmbar_like(seed: int, n: int = 1500) -> tuple[pd.Series, LabelTable, np.ndarray]:
    """Pairwise verdicts 'Output (a)' / 'Output (b)': the chance p that (a) is better is drawn,
    the human verdict ~ Bernoulli(p) (three humans agreeing: the majority is that verdict)."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.0, 1.0, n)
    truth = np.where(rng.uniform(size=n) < p, "Output (a)", "Output (b)")
    items = [f"llmbar-{i}" for i in range(n)]
    humans = LabelTable(pd.DataFrame({h: truth for h in ("h1", "h2", "h3")}, index=items))
    return pd.Series(truth, index=items), humans, p


def _probs(p_a: np.ndarray, items: pd.Index) -> pd.DataFrame:
    return pd.DataFrame({"Output (a)": p_a, "Output (b)": 1 - p_a}, index=items)


def _overconfident(p: np.ndarray) -> np.ndarray:
    logit = np.log(p / (1 - p))
    return 1 / (1 + np.exp(-4 * logit))


def test_calibrated_and_overconfident_judges_are_separated(tmp_path: Path) -> None:
    truth, humans, p = _llmbar_like(seed=7)
    p = np.clip(p, 1e-6, 1 - 1e-6)
    results = {}
    for name, p_a in (("calibrated", p), ("overconfident", _overconfident(p))):
        probs = _probs(p_a, truth.index)
        labels = probs.idxmax(axis=1)
        res = calibrate_judge(labels, humans, probs=probs, n_resamples=200, min_items=10)
        write_judge_calibration(res, {"judge": name}, tmp_path / name)
        results[name] = res.confidence
        png = tmp_path / name / "reliability.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        payload = json.loads((tmp_path / name / "judge_calibration.json").read_text())
        assert payload["confidence"]["ece"]["value"] == pytest.approx(res.confidence.ece.value)
    cal, over = results["calibrated"], results["overconfident"]
    assert cal.ece.ci[1] < over.ece.ci[0]  # disjoint intervals
    assert cal.ece.value < 0.05 < 0.1 < over.ece.value
    assert cal.brier.value < over.brier.value
    # the reliability curve: calibrated bins lie near the diagonal, overconfident ones below it
    gap = {
        k: max(abs(b["accuracy"] - b["mean_confidence"]) for b in r.bins if b["n"] >= 30)
        for k, r in results.items()
    }
    assert gap["calibrated"] < 0.1 < gap["overconfident"]
    top = [b for b in over.bins if b["bin"] == 9][0]
    assert top["accuracy"] < top["mean_confidence"] - 0.05


def test_cli_reads_probability_columns_and_refuses_bad_ones(tmp_path: Path) -> None:
    truth, humans, p = _llmbar_like(seed=3, n=200)
    human_file = tmp_path / "humans.csv"
    rows = [f"{i},h{k},{v}" for i, v in truth.items() for k in (1, 2, 3)]
    human_file.write_text("item,rater,label\n" + "\n".join(rows) + "\n")
    judge_file = tmp_path / "judge.csv"
    labels = np.where(p >= 0.5, "Output (a)", "Output (b)")
    rows_p = zip(truth.index, labels, p, strict=True)
    lines = [f"{i},judge,{lab},{q:.6f},{1 - q:.6f}" for i, lab, q in rows_p]
    header = "item,rater,label,p:Output (a),p:Output (b)\n"
    judge_file.write_text(header + "\n".join(lines) + "\n")
    out = tmp_path / "out"
    args = ["calibrate", "judge", "--judge", str(judge_file), "--human", str(human_file)]
    result = CliRunner().invoke(
        app, args + ["--n-resamples", "50", "--min-items", "10", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "ECE" in result.output and "Selective judging" in result.output
    bins = pd.read_csv(out / "reliability.csv")
    assert int(bins["n"].sum()) == 200
    assert (out / "reliability.png").is_file()
    summary = pd.read_csv(out / "judge_calibration.csv").set_index("metric")
    assert 0 <= summary.loc["ece", "value"] < 0.2
    judge_file.write_text("item,rater,label,p:A,p:B\nx,judge,A,0.9,0.3\n")
    with pytest.raises(InputError, match="sum to 1.2"):
        load_label_probs(judge_file)
    judge_file.write_text("item,rater,label,p:A,p:B\nx,judge,A,0.5,0.5\ny,judge,A,-5,6\n")
    with pytest.raises(InputError) as err:
        load_label_probs(judge_file)
    assert err.value.line == 3 and err.value.field == "p:A"


def test_estimate_reads_the_target_probability_and_narrows_the_interval(tmp_path: Path) -> None:
    from judgekit.calibration.estimate.inputs import Target, load_judge
    from judgekit.calibration.estimate.widths import width_with_and_without

    judge_file = tmp_path / "judge.csv"
    judge_file.write_text("item,rater,label,p:CS,p:CA\na,judge,CS,0.8,0.2\nb,judge,CA,0.4,0.6\n")
    goal = Target.parse("share:CS")
    probs, _, _ = load_judge(judge_file, goal)
    hard, _, _ = load_judge(judge_file, goal, probabilities=False)
    assert probs.to_dict() == {"a": 0.8, "b": 0.4}
    assert hard.to_dict() == {"a": 1.0, "b": 0.0}
    rng = np.random.default_rng(1)
    p = rng.uniform(size=3000)
    y = (rng.uniform(size=3000) < p).astype(float)
    hard_v = (p >= 0.5).astype(float)
    w = width_with_and_without(y[:300], hard_v[:300], p[:300], hard_v[300:], p[300:])
    assert w["probabilities"] < w["hard"] < w["classical"]


def test_estimate_cli_reports_the_hard_label_row_beside_the_probabilities(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    p = rng.uniform(size=400)
    items = [f"i{k}" for k in range(400)]
    labels = np.where(p >= 0.5, "CS", "CA")
    judge_file = tmp_path / "judge.csv"
    rows = [
        f"{i},judge,{lab},{q:.6f},{1 - q:.6f}" for i, lab, q in zip(items, labels, p, strict=True)
    ]
    judge_file.write_text("item,rater,label,p:CS,p:CA\n" + "\n".join(rows) + "\n")
    human = np.where(rng.uniform(size=80) < p[:80], "CS", "CA")
    human_file = tmp_path / "humans.csv"
    human_rows = [f"{i},h1,{v}" for i, v in zip(items[:80], human, strict=True)]
    human_file.write_text("item,rater,label\n" + "\n".join(human_rows) + "\n")
    args = ["calibrate", "estimate", "--judge", str(judge_file), "--human", str(human_file),
            "--target", "share:CS", "--resamples", "200", "--json"]  # fmt: skip
    soft = CliRunner().invoke(app, args)
    assert soft.exit_code == 0, soft.output
    soft_out = json.loads(soft.output)
    predictor = soft_out["predictor"]
    assert predictor["used"] == "probabilities"
    assert soft_out["signature"]["parameters"]["predictor"] == "probabilities"
    hard = CliRunner().invoke(app, args + ["--hard-labels"])
    assert hard.exit_code == 0, hard.output
    hard_out = json.loads(hard.output)
    assert hard_out["predictor"] == {"used": "hard"}
    hard_row = next(e for e in hard_out["estimates"] if e["method"] == "ppi++")
    soft_row = next(e for e in soft_out["estimates"] if e["method"] == "ppi++")
    # the row reported beside the probabilities is the --hard-labels estimate, same draws
    assert predictor["hard"]["all"]["estimate"] == pytest.approx(hard_row["estimate"])
    assert predictor["hard"]["all"]["ci_low"] == pytest.approx(hard_row["ci_low"])
    assert soft_row["estimate"] != pytest.approx(hard_row["estimate"])
    width = soft_row["ci_high"] - soft_row["ci_low"]
    hard_width = hard_row["ci_high"] - hard_row["ci_low"]
    assert predictor["width_ratio"]["all"] == pytest.approx(width / hard_width)
    table = CliRunner().invoke(app, args[:-1])
    assert "width ratio" in table.output and "--hard-labels" in table.output


def test_missing_probability_cells_are_missing_in_every_spelling(tmp_path: Path) -> None:
    """Issue 32.8 at the p:LABEL reader: a row whose p: cells are all NA, N/A, NaN, null or
    empty has no probabilities (counted), as every label reader reads them; 'NA' was an error
    ("probability 'NA' ... is not a number") and 'NaN' one of "not in [0, 1]"."""
    rows = ["item,rater,label,p:CS,p:CA", "i1,j,CS,0.9,0.1", "i2,j,CA,NA,N/A", "i3,j,CA,,",
            "i4,j,CS,null,NaN", "i5,j,CA,0.2,0.8"]  # fmt: skip
    path = tmp_path / "probs.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    probs, missing = load_label_probs(path)
    assert list(probs.index) == ["i1", "i5"] and missing == 3
    assert probs.loc["i1", "CS"] == pytest.approx(0.9)


def test_estimate_counts_items_left_on_their_hard_label(tmp_path: Path) -> None:
    """Issue 32 (nothing silent): judged items with no label probabilities keep the hard label
    as the predictor; the count is in --json and the console, not swallowed."""
    rows = ["item,rater,label,p:CS,p:CA"]
    rows += [f"i{k},judge,{'CS' if k % 2 else 'CA'},{0.7 if k % 2 else 0.3},"
             f"{0.3 if k % 2 else 0.7}" for k in range(30)]  # fmt: skip
    rows += [f"i{k},judge,CS,NA," for k in range(30, 40)]  # 10 judged items with no probabilities
    judge_file = tmp_path / "judge.csv"
    judge_file.write_text("\n".join(rows) + "\n")
    human_file = tmp_path / "humans.csv"
    human_file.write_text("item,rater,label\n" + "".join(
        f"i{k},h1,{'CS' if k % 3 else 'CA'}\n" for k in range(0, 40, 2)))  # fmt: skip
    args = ["calibrate", "estimate", "--judge", str(judge_file), "--human", str(human_file),
            "--target", "share:CS", "--resamples", "200"]  # fmt: skip
    out = CliRunner().invoke(app, [*args, "--json"])
    assert out.exit_code == 0, out.output
    predictor = json.loads(out.output)["predictor"]
    assert predictor["used"] == "probabilities"
    assert predictor["items_without_probabilities"] == 10
    table = CliRunner().invoke(app, args)
    assert "10 judged items have no label probabilities" in table.output
