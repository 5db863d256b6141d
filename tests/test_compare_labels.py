"""``calibrate compare`` of label judges: the label facet and the human ceiling by hand, the
CLI's JSON shape, facets and errors, the label check, and partial coverage (each judge on the
items it labelled, no judge changing another's figures)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from cli_inproc import run_main
from sklearn.metrics import cohen_kappa_score
from typer.testing import CliRunner

from judgekit.calibration.compare.labels import label_facet
from judgekit.cli import app
from judgekit.errors import JudgekitError, JudgekitWarning
from judgekit.labels.overlap import LabelSetError
from judgekit.labels.table import LabelTable
from judgekit.metrics.perm_both import PermutationSettings

runner = CliRunner()


HUMANS = pd.DataFrame(
    {"h1": list("aabbabab"), "h2": list("aabbbbaa"), "h3": list("abbbabab")},
    index=[f"i{k}" for k in range(8)],
)  # majority: a a b b a b a b


def test_label_facet_by_hand():
    judges = {
        "good": pd.Series(list("aabbabab"), index=HUMANS.index),
        "poor": pd.Series(list("abababab"), index=HUMANS.index),
    }
    result = label_facet(
        judges,
        LabelTable(HUMANS),
        facet="all",
        n_resamples=200,
        permutations=PermutationSettings(n_permutations=500, early_stop=False),
    )
    values = {f.statistic: f.values for f in result.families}
    assert values["accuracy"] == {"good": 1.0, "poor": 0.75}  # 8/8 and 6/8
    majority = list("aabbabab")
    assert values["kappa"]["poor"] == pytest.approx(cohen_kappa_score(majority, list("abababab")))
    family = next(f for f in result.families if f.statistic == "accuracy")
    test = family.test("good", "poor")
    assert test.delta == pytest.approx(0.25)
    # the 2 items where they differ decide: only the no-swap pattern of those 2 reaches 0.25
    assert test.p_value == pytest.approx(1 / 4, abs=0.06)
    ceiling = {r.statistic: r for r in result.ceiling}
    assert ceiling["accuracy"].rank is None and 0 < ceiling["accuracy"].value <= 1


@pytest.mark.parametrize("common", [True, False])
def test_the_ceiling_of_two_raters_is_their_agreement_not_1(common: bool) -> None:
    """The judges are scored where the humans' majority does not tie; the ceiling is on every
    judged item: with two raters, keeping the non-tied items would keep only their agreements."""
    two = HUMANS[["h1", "h2"]]  # they agree on 6 of 8 items
    judges = {"good": two["h1"], "poor": pd.Series(list("abababab"), index=HUMANS.index)}
    if not common:
        judges["poor"] = judges["poor"].iloc[:6]  # partial coverage: each judge on its own items
    result = label_facet(judges, LabelTable(two), facet="all", n_resamples=0, common=common)
    ceiling = {r.statistic: r for r in result.ceiling if r.judge == "human ceiling"}
    assert ceiling["accuracy"].value == pytest.approx(6 / 8)  # 12 of 16 (rater, item) rows
    good = {r.statistic: r for r in result.ceiling if r.judge == "good on the ceiling's rows"}
    # good = h1: against h2 on h1's rows (6 of 8), against h1 itself on h2's rows (8 of 8)
    assert good["accuracy"].value == pytest.approx(14 / 16)
    assert good["accuracy"].n == ceiling["accuracy"].n == 8  # items, both
    accuracy = next(f for f in result.families if f.statistic == "accuracy")
    assert accuracy.values["good"] == 1.0  # on the 6 non-tied items


def _files(tmp_path, upper: bool = False):
    """humans.csv (HUMANS, with a language column) and judges.csv: j1 the majority (in upper
    case with ``upper``), j2 alternating."""
    rows = [
        (i, r, HUMANS.loc[i, r], "fr" if k < 4 else "hi")
        for k, i in enumerate(HUMANS.index)
        for r in HUMANS.columns
    ]
    pd.DataFrame(rows, columns=["item", "rater", "label", "language"]).to_csv(
        tmp_path / "humans.csv", index=False
    )
    j1 = "AABBABAB" if upper else "aabbabab"
    judge = [(i, "j1", lab) for i, lab in zip(HUMANS.index, j1, strict=True)]
    judge += [(i, "j2", lab) for i, lab in zip(HUMANS.index, "abababab", strict=True)]
    pd.DataFrame(judge, columns=["item", "rater", "label"]).to_csv(
        tmp_path / "judges.csv", index=False
    )
    return tmp_path / "humans.csv", tmp_path / "judges.csv"


def test_cli_json_has_the_exact_shape(tmp_path):
    humans, judges = _files(tmp_path)
    result = runner.invoke(
        app,
        [
            "calibrate",
            "compare",
            "--human",
            str(humans),
            "--judge",
            str(judges),
            "--json",
            "--n-resamples",
            "50",
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout[: result.stdout.rindex("}") + 1])
    assert set(doc) == {"signature", "rows", "pairs", "counts", "notes"}
    assert set(doc["rows"][0]) == {
        "judge",
        "facet",
        "level",
        "statistic",
        "value",
        "ci_low",
        "ci_high",
        "rank",
        "n",
        "note",
    }
    assert set(doc["pairs"][0]) == {"a", "b", "facet", "level", "statistic", "delta", "p_value",
                                    "p_adjusted", "n_permutations"}  # fmt: skip
    assert all(p["p_value"] > 0 for p in doc["pairs"])  # (k + 1) / (n + 1): never 0
    stats_seen = {r["statistic"] for r in doc["rows"]}
    assert stats_seen == {"accuracy", "macro_f1", "kappa", "ac1"}
    top = {r["judge"]: r for r in doc["rows"] if r["statistic"] == "accuracy"}
    assert top["j1"]["value"] == 1.0 and top["j1"]["rank"] == 1
    assert top["human ceiling"]["rank"] is None
    for name in ("compare.json", "compare_rows.csv", "compare_pairs.csv", "compare.png"):
        assert (tmp_path / "out" / name).stat().st_size > 0


def test_cli_by_facet_and_errors(tmp_path):
    humans, judges = _files(tmp_path)
    args = ["calibrate", "compare", "--human", str(humans), "--judge", str(judges)]
    result = runner.invoke(app, [*args, "--by", "language", "--json", "--n-resamples", "100"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert {r["facet"] for r in doc["rows"]} == {"fr", "hi"}
    assert doc["facet_tests"] and doc["facet_tests"][0]["df"] == 1
    for extra, message in (
        (["--level", "system"], "--level item"),
        (["--by", "domain"], "no column 'domain'"),
        (["--correction", "fdr"], "unknown --correction"),
    ):
        bad = runner.invoke(app, [*args, *extra])
        assert isinstance(bad.exception, JudgekitError) and message in str(bad.exception)
    proc = run_main(*args, "--level", "segment")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "label judges are compared at --level item" in proc.stderr


def test_label_judges_pass_the_label_check(tmp_path):
    """A judge in other case than the humans is folded with a warning (the same accuracy as
    in the humans' spelling); a judge with no label in common is one error naming both sets."""
    humans, _ = _files(tmp_path)
    judge = [(i, "upper", lab.upper()) for i, lab in zip(HUMANS.index, "aabbabab", strict=True)]
    judge += [(i, "alien", "yes") for i in HUMANS.index]
    pd.DataFrame(judge, columns=["item", "rater", "label"]).to_csv(tmp_path / "j.csv", index=False)
    args = ["calibrate", "compare", "--human", str(humans), "--n-resamples", "50", "--json"]
    with pytest.warns(JudgekitWarning, match="differ only in case"):
        ok = runner.invoke(app, [*args, "--judge", f"upper={tmp_path / 'j.csv'}::upper"])
    assert ok.exit_code == 0, ok.output
    doc = json.loads(ok.stdout[: ok.stdout.rindex("}") + 1])
    accuracy = {r["judge"]: r["value"] for r in doc["rows"] if r["statistic"] == "accuracy"}
    assert accuracy["upper"] == 1.0
    bad = runner.invoke(app, [*args, "--judge", f"alien={tmp_path / 'j.csv'}::alien"])
    assert isinstance(bad.exception, LabelSetError)
    assert "share no label" in str(bad.exception) and "'yes'" in str(bad.exception)


def test_a_label_judge_with_partial_coverage_changes_no_other_judges_figures(tmp_path) -> None:
    """Issue 32.4 for label judges, the rule of score judges (one helper): each judge on the
    items it and the humans labelled, each pair tested on the items both labelled, the items
    said and printed beside every figure; --common keeps the like-for-like table."""
    rng = np.random.default_rng(11)
    items = [f"i{k}" for k in range(60)]
    truth = rng.choice(list("xyz"), size=60)
    humans = pd.DataFrame({f"h{r}": np.where(rng.random(60) < 0.8, truth,
                                             rng.choice(list("xyz"), size=60))
                           for r in range(3)}, index=items)  # fmt: skip

    def judge(right: float) -> pd.Series:
        return pd.Series(np.where(rng.random(60) < right, truth, rng.choice(list("xyz"), 60)),
                         index=items, dtype=object)  # fmt: skip

    judges = {"a": judge(0.9), "b": judge(0.6), "c": judge(0.8).iloc[:30]}  # c: half the items
    kw = {"facet": "all", "n_resamples": 50, "permutations": PermutationSettings(200)}

    def figures(facet) -> dict[tuple[str, str], tuple]:
        return {(f.statistic, j): (v, None if f.dists[j] is None else tuple(f.dists[j]))
                for f in facet.families for j, v in f.values.items()}  # fmt: skip

    table = LabelTable(humans)
    alone = figures(label_facet({k: judges[k] for k in "ab"}, table, **kw))
    mixed = label_facet(judges, table, **kw)
    got = figures(mixed)
    for key, (value, dist) in alone.items():
        assert got[key][0] == pytest.approx(value, nan_ok=True)  # a and b untouched by c
        assert got[key][1] == pytest.approx(dist, nan_ok=True)
    c_only = figures(label_facet({"c": judges["c"]}, LabelTable(humans.iloc[:30]), **kw))
    for name in ("accuracy", "kappa", "ac1"):
        assert got[name, "c"][0] == pytest.approx(c_only[name, "c"][0])
        assert got[name, "c"][1] == pytest.approx(c_only[name, "c"][1])
    accuracy = next(f for f in mixed.families if f.statistic == "accuracy")
    n = accuracy.n_by_judge
    assert n["a"] == n["b"] > n["c"] == c_only_items(judges["c"], table)
    assert accuracy.test("a", "c").p_value is not None
    said = " ".join(mixed.notes)
    assert "coverage differs" in said and f"a {n['a']}, b {n['b']}, c {n['c']}" in said
    assert f"pair a / c: tested on the {n['c']} items both labelled" in said
    assert accuracy.delta_dist is not None and accuracy.delta_dist("a", "c").shape == (50,)
    common = figures(label_facet(judges, table, common=True, **kw))
    assert common["accuracy", "a"][0] != pytest.approx(alone["accuracy", "a"][0])  # c's items
    files = {
        "humans": [(i, f"h{r}", humans.loc[i, f"h{r}"]) for i in items for r in range(3)],
        "judges": [(i, j, lab) for j, s in judges.items() for i, lab in s.items()],
    }
    for name, rows in files.items():
        frame = pd.DataFrame(rows, columns=["item", "rater", "label"])
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    args = ["calibrate", "compare", "--human", str(tmp_path / "humans.csv"), "--judge",
            str(tmp_path / "judges.csv"), "--n-resamples", "50",
            "--permutations", "100"]  # fmt: skip
    printed = runner.invoke(app, args)
    assert printed.exit_code == 0, printed.output
    assert f"n={n['c']}" in printed.output and "coverage differs" in printed.output


def c_only_items(labels: pd.Series, table: LabelTable) -> int:
    """Items a judge labelled whose human majority is not a tie (what the judge is scored on)."""
    from judgekit.labels.majority import TIE, majority_vote

    reference = majority_vote(table)
    return int(sum(reference[i] != TIE for i in labels.index if i in reference.index))
