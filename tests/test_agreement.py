"""Agreement statistics: every published worked example, missing data, CIs, degenerate tables
and the CLI (the real data sets: test_agreement_data.py)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from cli_inproc import run_main
from conftest import SHARED_DATA, shared_path

from judgekit.errors import InputError, JudgekitError
from judgekit.labels.table import LabelTable
from judgekit.metrics.agreement import (
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    item_agreement,
    krippendorff_alpha,
    percent_agreement,
    prevalence,
    unanimous_share,
)

VECTORS = ("agreement", "agreement_test_vectors.json")


# -- the published worked examples, one test per vector ----------------------------------------
def _counts_to_rows(counts):
    """Subjects x categories counts -> subjects x raters labels (rater order is irrelevant)."""
    return [[k for k, n in enumerate(row) for _ in range(n)] for row in counts]


def _table_to_pairs(table):
    """Rater-1 x rater-2 contingency table -> one (label_1, label_2) row per subject."""
    return [[i, j] for i, row in enumerate(table) for j, n in enumerate(row) for _ in range(n)]


def _fleiss_wikipedia(data):
    rows = _counts_to_rows(data)
    return {"kappa": fleiss_kappa(rows).value, "P_i_per_subject": item_agreement(rows).tolist()}


def _fleiss_1971(data):
    result = fleiss_kappa(data)
    return {
        "kappa_published_Fleiss1971": result.value,
        "kappa_R_irr_kappam.fleiss": result.value,
        "z_R_irr": result.details["z"],
        "category_totals": list(prevalence(data).counts.values()),
    }


def _cohen_sas(data):
    out = {}
    for prefix, kappa_key, weights in (
        ("simple", "simple_kappa", None),
        ("weighted", "weighted_kappa_linear(Cicchetti-Allison)", "linear"),
    ):
        r = cohen_kappa(_table_to_pairs(data), weights=weights)
        out[kappa_key] = r.value
        out[f"{prefix}_ASE"] = r.details["ase"]
        out[f"{prefix}_CI95"] = r.details["asymptotic_ci"]
        out[f"{prefix}_ASE_H0"] = r.details["ase_h0"]
        out[f"{prefix}_Z"] = r.details["z"]
    return out


def _cohen_wikipedia(data):
    r = cohen_kappa(_table_to_pairs(data))
    assert percent_agreement(_table_to_pairs(data)).value == pytest.approx(r.details["p_o"])
    return {"p_o": r.details["p_o"], "p_e": r.details["p_e"], "kappa": r.value}


def _krippendorff(data):
    units = np.array(data, dtype=float).T  # vectors are observers x units
    out = {}
    for level in ("nominal", "ordinal", "interval", "ratio"):
        result = krippendorff_alpha(units, level=level)
        assert result.level == level
        out[level] = out[f"{level}_6dp"] = result.value
    return out


CHECKERS = {
    "fleiss_wikipedia_10x5_14raters": _fleiss_wikipedia,
    "fleiss_1971_diagnoses_30x6": _fleiss_1971,
    "cohen_sas_3x3": _cohen_sas,
    "cohen_wikipedia_2x2_grant": _cohen_wikipedia,
    "krippendorff_2011_4observers_12units": _krippendorff,
    "krippendorff_wikipedia_3coders_15units": _krippendorff,
}


def _vector_ids():
    path = SHARED_DATA.joinpath(*VECTORS)
    if not path.exists():
        return ["(vectors absent)"]
    return [v["id"] for v in json.loads(path.read_text())["vectors"]]


@pytest.mark.parametrize("vector_id", _vector_ids())
def test_published_worked_example(vector_id):
    vectors = json.loads(shared_path(*VECTORS).read_text())["vectors"]
    vector = next(v for v in vectors if v["id"] == vector_id)
    assert vector_id in CHECKERS, f"new test vector {vector_id}: add a checker"
    computed = CHECKERS[vector_id](vector["data"])
    tolerance = vector["tolerance"]
    for key, expected in vector["expected"].items():
        tol = tolerance.get(key, tolerance.get("*"))
        if tol is None:  # counts: exact
            assert computed[key] == expected, key
        else:
            assert np.allclose(computed[key], expected, rtol=0, atol=tol), (key, computed[key])


# -- definitions on small hand-computed tables -------------------------------------------------
MISSING = [["a", "a", None], ["a", "b", "b"], ["b", None, None], ["b", "b", "b"]]


def test_percent_agreement_and_unanimity_with_missing_ratings():
    # item 1: 1 pair, agrees (1); item 2: 3 pairs, 1 agrees (1/3); item 3: 1 rating, left out;
    # item 4: all 3 pairs agree (1).
    assert percent_agreement(MISSING).value == pytest.approx((1 + 1 / 3 + 1) / 3)
    assert percent_agreement(MISSING).n_items == 3
    assert unanimous_share(MISSING).value == pytest.approx(2 / 3)
    per_item = item_agreement(MISSING)
    assert per_item.iloc[:2].tolist() == pytest.approx([1, 1 / 3]) and math.isnan(per_item[2])


def test_cohen_kappa_drops_items_missing_either_rating():
    a = ["x", "x", "y", "y", None]
    b = ["x", "y", "y", "y", "x"]
    result = cohen_kappa(list(zip(a, b, strict=True)))
    # 4 pairs, p_o = 3/4; marginals a: x .5 y .5, b: x .25 y .75 -> p_e = .5, kappa = .5
    assert result.n_items == 4
    assert result.details["p_o"] == pytest.approx(0.75)
    assert result.value == pytest.approx(0.5)


def test_cohen_kappa_needs_two_raters():
    with pytest.raises(JudgekitError, match="exactly two raters"):
        cohen_kappa(MISSING)
    frame = pd.DataFrame(MISSING, columns=["h1", "h2", "h3"])
    assert cohen_kappa(frame, raters=("h2", "h3")).n_items == 2


def test_gwet_and_fleiss_with_missing_ratings_match_gwet_reference_values():
    # Krippendorff's 12-unit example as a units x raters table: irrCAC's `raw_4raters`,
    # whose documented values (Gwet's R package irrCAC) are AC1 .77544, Fleiss .76117.
    vectors = json.loads(shared_path(*VECTORS).read_text())["vectors"]
    data = next(v for v in vectors if v["id"].startswith("krippendorff_2011"))["data"]
    units = np.array(data, dtype=float).T
    assert gwet_ac1(units).value == pytest.approx(0.77544, abs=5e-6)
    fleiss = fleiss_kappa(units)
    assert fleiss.value == pytest.approx(0.76117, abs=5e-6)
    assert "Gwet" in fleiss.details["method"]


def test_fleiss_generalisation_equals_fleiss_1971_on_complete_data():
    from judgekit.metrics import agreement
    from judgekit.metrics.label_codes import encode

    rows = [[1, 1, 2], [2, 2, 2], [1, 3, 3], [3, 3, 3], [1, 2, 3]]
    coded, _ = encode(rows)
    gwet_route = agreement._cac(coded, np.arange(5)).fleiss()["est"]["coefficient_value"]
    assert fleiss_kappa(rows).value == pytest.approx(gwet_route, abs=1e-12)


def test_weighted_ac2_uses_numeric_distances():
    rows = [[1, 2], [2, 2], [3, 3], [1, 1], [3, 2]]
    ac1, ac2 = gwet_ac1(rows), gwet_ac1(rows, weights="quadratic")
    assert ac1.statistic == "Gwet's AC1" and ac2.statistic.startswith("Gwet's AC2")
    assert ac2.value > ac1.value  # near misses earn partial credit


def test_input_types_give_the_same_value():
    frame = pd.DataFrame(MISSING)
    values = {
        krippendorff_alpha(data).value
        for data in (MISSING, np.array(MISSING, dtype=object), frame, LabelTable(frame))
    }
    assert len(values) == 1


def test_alpha_bootstrap_replicates_equal_the_krippendorff_package():
    import krippendorff

    from judgekit.metrics.krippendorff_alpha import alpha_replicate
    from judgekit.metrics.label_codes import encode

    rng = np.random.default_rng(7)
    for vector_id in ("krippendorff_2011_4observers_12units", "krippendorff_wikipedia_3coders"):
        vectors = json.loads(shared_path(*VECTORS).read_text())["vectors"]
        data = next(v for v in vectors if v["id"].startswith(vector_id))["data"]
        coded, _ = encode(np.array(data, dtype=float).T)
        counts = coded.counts()[coded.counts().sum(axis=1) >= 2]
        for level in ("nominal", "ordinal", "interval", "ratio"):
            domain = np.arange(coded.q) if level == "nominal" else coded.numeric_categories()
            for _ in range(5):
                idx = rng.integers(0, len(counts), len(counts))
                package = krippendorff.alpha(
                    value_counts=counts[idx], value_domain=domain, level_of_measurement=level
                )
                assert alpha_replicate(counts, domain, level, idx) == pytest.approx(
                    package, abs=1e-12
                )


def test_interval_level_needs_numbers_and_level_is_stated():
    with pytest.raises(JudgekitError, match="numeric labels"):
        krippendorff_alpha(MISSING, level="interval")
    with pytest.raises(JudgekitError, match="unknown level"):
        krippendorff_alpha(MISSING, level="cardinal")
    assert krippendorff_alpha([[1, 2], [2, 2]], level="ratio").level == "ratio"


def test_one_category_leaves_chance_corrected_coefficients_undefined():
    same = [["a", "a"], ["a", "a"]]
    assert percent_agreement(same).value == 1.0
    for fn in (fleiss_kappa, gwet_ac1, krippendorff_alpha):
        assert math.isnan(fn(same).value)


def test_no_item_with_two_ratings_gives_nan_not_an_error():
    single = [["a", None], [None, "b"], ["a", None]]
    for fn in (percent_agreement, unanimous_share, fleiss_kappa, gwet_ac1, krippendorff_alpha):
        result = fn(single, n_resamples=20)
        assert math.isnan(result.value) and result.ci is None


def test_ci_only_when_asked_and_seeded():
    assert fleiss_kappa(MISSING * 5).ci is None
    first = fleiss_kappa(MISSING * 5, ci=True, n_resamples=200, seed=3)
    again = fleiss_kappa(MISSING * 5, n_resamples=200, seed=3)
    assert first.ci == again.ci and first.n_resamples == 200 and first.seed == 3
    assert first.ci[0] <= first.value <= first.ci[1]
    assert percent_agreement(MISSING * 5, ci=True).n_resamples == 1000


def test_prevalence_counts_and_shares():
    result = prevalence(MISSING, n_resamples=100)
    assert result.counts == {"a": 3, "b": 6}
    assert result.category == "b" and result.value == pytest.approx(6 / 9)
    assert result.per_category["a"].value == pytest.approx(3 / 9)
    assert result.per_category["a"].ci is not None


# -- degenerate tables (issue 12, case 2) -----------------------------------------------------
def test_known_category_set_gives_ac1_where_defined_and_reasons_where_not():
    # (a) five items, two raters, every label 1, categories {1, 2}: p_a = 1, p_e = 0 -> AC1 = 1
    same = [[1, 1]] * 5
    ac1 = gwet_ac1(same, categories=[1, 2], n_resamples=50)
    assert ac1.value == 1.0 and ac1.note is None
    assert ac1.details["p_a"] == 1.0 and ac1.details["p_e"] == 0.0
    assert math.isnan(gwet_ac1(same).value) and "category set" in gwet_ac1(same).note
    for fn in (cohen_kappa, fleiss_kappa, krippendorff_alpha):  # p_e = 1: 0 / 0
        result = fn(same, categories=[1, 2])
        assert math.isnan(result.value) and result.note.startswith("no variation")
    assert prevalence(same, categories=[1, 2]).counts == {1: 10, 2: 0}
    # (b) seven raters x two items, all 0: Fleiss undefined, AC1 = 1 with two categories
    zeros = [[0] * 7] * 2
    assert gwet_ac1(zeros, categories=[0, 1]).value == 1.0
    fleiss = fleiss_kappa(zeros, categories=[0, 1])
    assert math.isnan(fleiss.value) and fleiss.note.startswith("no variation")
    # (c) the paired items all one category, a singly rated item another: alpha's units with one
    # value drop out, so its reason speaks of the paired ratings (the prevalence counts all)
    alpha = krippendorff_alpha([[1, 1], [1, 1], [2, None]])
    assert math.isnan(alpha.value)
    assert alpha.note.startswith("no variation: every rating on the items with 2 or more")
    # a label outside the given set is an error, not a silent recode
    with pytest.raises(JudgekitError, match="not among the categories"):
        gwet_ac1(same, categories=[2, 3])


def test_one_item_is_a_value_or_a_reason_never_an_exception():
    # (c) one item, three raters 0, 0, 1 (irrCAC divides by n - 1 = 0 for AC1)
    one = [[0, 0, 1]]
    assert percent_agreement(one).value == pytest.approx(1 / 3)
    # Fleiss 1971 by hand: P = 1/3, p = (2/3, 1/3), P_e = 5/9 -> (1/3 - 5/9) / (4/9) = -0.5
    assert fleiss_kappa(one).value == pytest.approx(-0.5)
    ac1 = gwet_ac1(one, n_resamples=0)
    assert math.isnan(ac1.value) and ac1.note.startswith("one item")
    assert krippendorff_alpha(one).note is None
    missing = [[0, 1, None], [1, None, None]]  # one item with 2 ratings, unequal counts: irrCAC
    for fn in (fleiss_kappa, gwet_ac1):
        result = fn(missing, n_resamples=20)
        assert not math.isnan(result.value) or result.note.startswith("one item")


def test_cli_agreement_categories_and_reasons(tmp_path):
    from typer.testing import CliRunner

    from judgekit.cli import app
    from judgekit.cli import calibrate as _  # noqa: F401  (registers `calibrate`)

    runner = CliRunner()
    one = tmp_path / "one_item.csv"
    one.write_text("item,r1,r2,r3\n1,0,0,1\n")
    result = runner.invoke(app, ["calibrate", "agreement", str(one), "--n-resamples", "0"])
    assert result.exit_code == 0 and result.exception is None, result.output
    assert "Gwet's AC1: undefined (one item" in result.output
    same = tmp_path / "same.csv"
    same.write_text("item,a,b\n" + "".join(f"{i},1,1\n" for i in range(5)))
    out = tmp_path / "out"
    args = ["calibrate", "agreement", str(same), "--n-resamples", "0", "--out", str(out)]
    result = runner.invoke(app, [*args, "--categories", "1,2"])
    assert result.exit_code == 0, result.output
    assert "Cohen's kappa: undefined (no variation" in result.output
    table = pd.read_csv(out / "agreement.csv").set_index("statistic")
    assert table.loc["Gwet's AC1", "value"] == 1.0
    assert table.loc["Fleiss' kappa", "note"].startswith("no variation")
    assert json.loads((out / "agreement.json").read_text())["signature"]["categories"] == [1, 2]
    bad = runner.invoke(app, [*args, "--categories", "2,3"])
    assert isinstance(bad.exception, InputError) and "labels not in --categories" in str(
        bad.exception
    )


ORDINAL_ROWS = [["low", "low", "medium"], ["medium", "high", "high"], ["high", "high", "high"],
                ["low", "medium", "low"], ["medium", "medium", "high"], ["low", "low", "low"],
                ["high", "medium", "high"], ["medium", "low", "medium"]]  # fmt: skip


def test_ordered_statistics_take_the_declared_order_and_refuse_text_without_one() -> None:
    """Issue 32.1: text labels are never ordered alphabetically (high < low < medium gave
    alpha 0.102 here); numbers are ordered as numbers; the refusal names the labels seen."""
    frame = pd.DataFrame(ORDINAL_ROWS, columns=["a", "b", "c"])
    declared = krippendorff_alpha(frame, level="ordinal", categories=["low", "medium", "high"])
    assert declared.value == pytest.approx(0.640625)
    numbers = frame.apply(lambda col: col.map({"low": 1, "medium": 2, "high": 3}))
    assert krippendorff_alpha(numbers, level="ordinal").value == pytest.approx(0.640625)
    for call in (lambda: krippendorff_alpha(frame, level="ordinal"),
                 lambda: cohen_kappa(frame, raters=("a", "b"), weights="linear"),
                 lambda: gwet_ac1(frame, weights="quadratic")):  # fmt: skip
        with pytest.raises(JudgekitError, match=r"no order declared \(seen: high, low, medium\)"):
            call()
    assert krippendorff_alpha(frame).level == "nominal"  # nominal needs no order
    weighted = cohen_kappa(frame, raters=("a", "b"), weights="linear",
                           categories=["low", "medium", "high"])  # fmt: skip
    assert weighted.value == pytest.approx(cohen_kappa(numbers, raters=("a", "b"),
                                                       weights="linear").value)  # fmt: skip


def test_cli_ordinal_alpha_on_text_labels_needs_categories(tmp_path) -> None:
    path = tmp_path / "ordinal.csv"
    lines = ["item,rater,label"] + [f"i{i},r{j},{label}" for i, row in enumerate(ORDINAL_ROWS)
                                    for j, label in enumerate(row)]  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    cmd = ["calibrate", "agreement", str(path), "--level", "ordinal", "--n-resamples", "0",
           "--out", str(tmp_path / "out")]  # fmt: skip
    refused = run_main(*cmd)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "seen: high, low, medium" in refused.stderr + refused.stdout
    assert not (tmp_path / "out").exists()  # nothing written for a refused statistic
    done = run_main(*cmd, "--categories", "low,medium,high")
    assert done.returncode == 0, done.stderr
    rows = pd.read_csv(tmp_path / "out" / "agreement.csv").set_index("statistic")
    assert rows.loc["Krippendorff's alpha", "value"] == pytest.approx(0.640625)


def test_a_run_directory_gives_the_order_its_config_declared(tmp_path) -> None:
    """Issue 32.1: a run's config ``labels:`` list (kept in summary.json's signature) is the
    order of its labels.csv for every statistic that needs one; a label outside the list
    leaves the table unordered (refused, as a file without an order is)."""
    import json

    from typer.testing import CliRunner

    from judgekit.cli import app
    from judgekit.labels.table import load_labels

    run = tmp_path / "run"
    run.mkdir()
    lines = ["item,rater,label"] + [f"i{i},r{j},{label}" for i, row in enumerate(ORDINAL_ROWS)
                                    for j, label in enumerate(row)]  # fmt: skip
    (run / "labels.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    summary = {"signature": {"pipeline": "classify", "labels": ["low", "medium", "high"]}}
    (run / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    assert load_labels(run).order == ("low", "medium", "high")
    assert krippendorff_alpha(load_labels(run), level="ordinal").value == pytest.approx(0.640625)
    out = CliRunner().invoke(app, ["calibrate", "agreement", str(run), "--level", "ordinal",
                                   "--n-resamples", "0"])  # fmt: skip
    assert out.exit_code == 0, out.output
    summary["signature"]["labels"] = ["low", "medium"]  # 'high' is not in the list
    (run / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    assert load_labels(run).order is None
    with pytest.raises(JudgekitError, match="no order declared"):
        krippendorff_alpha(load_labels(run), level="ordinal")


def test_missing_markers_are_missing_in_the_python_api_too() -> None:
    """Issue 32.8: '' was a category in the Python API (alpha 0.333 where 1.0 is right); every
    missing spelling is missing in every statistic, as the file readers already read them."""
    rows = [["a", "a", ""], ["b", "b", "NA"], ["a", "a", "N/A"], ["b", "b", None],
            ["a", "a", "null"], ["b", "b", float("nan")], ["a", "a", " n/a "]]  # fmt: skip
    for statistic in (krippendorff_alpha, fleiss_kappa, gwet_ac1, percent_agreement):
        assert statistic(rows).value == pytest.approx(1.0), statistic.__name__
    assert LabelTable(pd.DataFrame(rows)).categories == ["a", "b"]
