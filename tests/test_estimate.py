"""Prediction-powered estimates: targets, the four methods against hand-computed values, tie
policy, facets of every pipeline's run directory, ranking, labelling plan, and the CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_inproc import Ran, run_main
from conftest import shared_path
from scipy.stats import norm
from scipy.stats import t as student_t

from judgekit.calibration.estimate import (
    IntervalRule,
    estimate_mean,
    estimate_table,
    facet_groups,
    split,
)
from judgekit.calibration.estimate.facets import item_facets
from judgekit.calibration.estimate.inputs import (
    Target,
    default_target,
    load_human,
    load_judge,
)
from judgekit.calibration.estimate.plan import draw_items, plan_size, run_plan, simulated_size
from judgekit.calibration.estimate.rank import ranking
from judgekit.errors import InputError

REPO = Path(__file__).resolve().parents[1]
Z = norm.ppf(0.975)
CLT = IntervalRule("clt")


def judgekit(*args: str) -> Ran:
    """The command in this process (tests/cli_inproc.py): no new interpreter per call."""
    return run_main(*args, env={"COLUMNS": "200"})  # tables wide enough to read whole cells


def write_long(path: Path, rows: list[tuple]) -> Path:
    pd.DataFrame(rows, columns=["item", "rater", "label"]).to_csv(path, index=False)
    return path


# -- targets ---------------------------------------------------------------------------------
def test_targets_read_labels():
    assert Target.parse("share:CS").value("CS", "x") == 1.0
    assert Target.parse("share:CS").value("CA", "x") == 0.0
    assert Target.parse("share:1").value(1, "x") == 1.0  # compared as text
    rate = Target.parse("rate")  # the spilling rate: invalid meanings / judged meanings
    assert (rate.value("false", "x"), rate.value("True", "x")) == (1.0, 0.0)
    assert Target.parse("mean").value("-2.5", "x") == -2.5
    with pytest.raises(InputError, match="not boolean"):
        rate.value("maybe", "f.csv: item 'a'")
    with pytest.raises(InputError, match="item 'a'.*not a number"):
        Target.parse("mean").value("bad", "f.csv: item 'a'")
    with pytest.raises(InputError, match="unknown target"):
        Target.parse("share:")


# -- the four methods --------------------------------------------------------------------------
def test_classical_and_judge_only_by_hand():
    y = np.array([1.0, 0, 1, 1, 0, 1, 0, 1])
    yhat = np.array([1.0, 0, 1, 0, 0, 1, 1, 1])
    unlabelled = np.array([1.0, 1, 0, 1, 0, 1, 1, 0, 1, 1])
    rows = {e.method: e for e in estimate_mean(y, yhat, unlabelled, alpha=0.05, rule=CLT)}
    half = Z * y.std() / math.sqrt(len(y))  # ppi_py's CLT interval (ddof 0)
    c = rows["classical"]
    assert c.estimate == pytest.approx(0.625)
    assert (c.ci_low, c.ci_high) == (pytest.approx(0.625 - half), pytest.approx(0.625 + half))
    assert (c.n_labelled, c.n_unlabelled, c.effective_n) == (8, 10, 8.0)
    j = rows["judge_only"]
    assert j.estimate == pytest.approx((yhat.sum() + unlabelled.sum()) / 18)
    assert (j.ci_low, j.ci_high, j.effective_n) == (None, None, None)


def test_ppi_by_hand():
    y = np.array([2.0, 4, 6, 8, 10])
    yhat = y + 1.0  # the judge is off by +1 everywhere
    unlabelled = np.array([3.0, 5, 7, 9, 11, 13])
    ppi = {e.method: e for e in estimate_mean(y, yhat, unlabelled, rule=CLT)}["ppi"]
    # PPI: mean of the judge on the unlabelled items + mean correction (human - judge) = -1
    assert ppi.estimate == pytest.approx(unlabelled.mean() - 1.0)
    rectifier = (y - yhat).std() / math.sqrt(5)  # 0: the correction is exact
    imputed = unlabelled.std() / math.sqrt(6)
    assert ppi.ci_high - ppi.ci_low == pytest.approx(2 * Z * math.hypot(rectifier, imputed))


def test_constant_judge_gives_the_classical_interval():
    rng = np.random.default_rng(0)
    y = rng.normal(size=40)
    rows = {e.method: e for e in estimate_mean(y, np.zeros(40), np.zeros(100))}
    c, p = rows["classical"], rows["ppi++"]
    assert (p.estimate, p.ci_low, p.ci_high) == pytest.approx((c.estimate, c.ci_low, c.ci_high))
    assert p.effective_n == pytest.approx(40.0)


def test_informative_judge_narrows_the_interval():
    rng = np.random.default_rng(1)
    truth = rng.normal(size=1000)
    judge = truth + rng.normal(scale=0.3, size=1000)
    rows = {e.method: e for e in estimate_mean(truth[:100], judge[:100], judge[100:])}
    assert rows["ppi++"].width < 0.5 * rows["classical"].width
    assert rows["ppi++"].effective_n > 400


def test_few_labels_give_no_interval():
    rows = {e.method: e for e in estimate_mean(np.array([1.0]), np.array([1.0]), np.ones(5))}
    assert rows["classical"].estimate == 1.0 and rows["classical"].ci_low is None
    assert rows["ppi++"].estimate is None and rows["judge_only"].estimate == 1.0


def test_human_item_not_judged_is_one_clear_error():
    judge = pd.Series({"a": 1.0, "b": 0.0})
    human = pd.Series({"a": 1.0, "c": 0.0, "d": 1.0})
    with pytest.raises(InputError, match=r"human.csv: 2 item\(s\) labelled by humans but not "
                                         r"judged \('c', 'd'\)"):  # fmt: skip
        split(judge, human, "human.csv")


# -- tables, ties, facets -------------------------------------------------------------------
def test_jury_is_averaged_and_human_ties_follow_the_policy(tmp_path: Path):
    judge = write_long(tmp_path / "judge.csv", [
        ("i1", "j1", "CS"), ("i1", "j2", "CA"), ("i2", "j1", "CS"), ("i2", "j2", "CS"),
        ("i3", "j1", "CA"), ("i3", "j2", "CA"),
    ])  # fmt: skip
    humans = write_long(tmp_path / "human.csv", [
        ("i1", "h1", "CS"), ("i1", "h2", "CS"), ("i2", "h1", "CS"), ("i2", "h2", "CA"),
    ])  # fmt: skip
    target = Target.parse("share:CS")
    values, raters, source = load_judge(judge, target)
    assert values.to_dict() == {"i1": 0.5, "i2": 1.0, "i3": 0.0} and raters == ["j1", "j2"]
    assert len(source.sha256) == 64
    only_j1, _, _ = load_judge(judge, target, ["j1"])
    assert only_j1.to_dict() == {"i1": 1.0, "i2": 1.0, "i3": 0.0}
    excluded, n_ties, _ = load_human(humans, target, "exclude")
    assert excluded.to_dict() == {"i1": 1.0} and n_ties == 1
    kept, _, _ = load_human(humans, target, "error")
    assert kept.to_dict() == {"i1": 1.0, "i2": 0.0}  # "<tie>" is never CS
    with pytest.raises(InputError, match="no rater 'j9'"):
        load_judge(judge, target, ["j9"])


def test_spilling_run_directory(tmp_path: Path):
    run = tmp_path / "spill"
    run.mkdir()
    pd.DataFrame([{"model": "m1", "lang": "de", "word": "bank", "sample": 0},
                  {"model": "m1", "lang": "fr", "word": "bank", "sample": 0}]).to_csv(
        run / "items.csv", index=False)  # fmt: skip
    rows = [(f"m1|{lang}|bank|s0|m{i}", "judge", v)
            for lang, vals in (("de", "tftff"), ("fr", "ttttf"))
            for i, v in enumerate({"t": "true", "f": "false"}[c] for c in vals)]  # fmt: skip
    write_long(run / "labels.csv", rows)
    (run / "summary.json").write_text(json.dumps({"signature": {"pipeline": "spilling"}}))
    assert str(default_target(run)) == "rate"
    values, _, source = load_judge(run, default_target(run))
    assert values.mean() == pytest.approx(4 / 10)  # 3 + 1 invalid meanings of 10
    assert source.run_signature == {"pipeline": "spilling"}
    facets = item_facets(run)
    assert facets.loc["m1|fr|bank|s0|m3", "lang"] == "fr"
    groups = facet_groups(values.index, facets, "lang")
    assert groups.value_counts().to_dict() == {"de": 5, "fr": 5}
    with pytest.raises(InputError, match="no facet 'system'.*facets: .*lang"):
        facet_groups(values.index, facets, "system")


def errors_run(tmp_path: Path) -> tuple[Path, Path]:
    """An errors run on 3 systems x 8 segments of the TED MQM sample, and that TSV."""
    tsv = shared_path("mqm", "google_mqm_ted_ende.systems-subset.tsv")
    from judgekit.metrics.mqm import read_mqm_tsv, segment_mqm

    segs = segment_mqm(read_mqm_tsv(tsv))
    systems = sorted({s.system for s in segs})[:3]
    chosen = [s for s in segs if s.system in systems][:24]
    run = tmp_path / "errors"
    run.mkdir()
    with (run / "segments.jsonl").open("w") as fh:
        for k, s in enumerate(chosen):  # a judge scoring half the human MQM
            status = "unscored" if k == 23 else "scored"
            fh.write(json.dumps({"id": f"{s.system}|{s.doc}|{s.seg_id}", "system": s.system,
                                 "doc": s.doc, "seg_id": s.seg_id, "status": status,
                                 "mqm": s.score / 2 if status == "scored" else None})
                     + "\n")  # fmt: skip
    return run, tsv


def test_errors_run_against_the_mqm_tsv(tmp_path: Path):
    run, tsv = errors_run(tmp_path)
    target = default_target(run)
    assert str(target) == "mean"
    judged, _, _ = load_judge(run, target)
    assert len(judged) == 23  # the unscored segment is not judged
    human, _, _ = load_human(tsv, target)
    sample = human.reindex(judged.index[::2])  # humans on 12 of the judged segments
    data = split(judged, sample)
    groups = facet_groups(data.index, item_facets(run), "system")
    rows = estimate_table(data, groups)
    assert [e.facet for e in rows][::4] == ["all", *sorted(set(groups))]
    classical = rows[0]
    assert classical.estimate == pytest.approx(sample.mean())
    assert (classical.n_labelled, classical.n_unlabelled) == (12, 11)
    # the full TSV has human MQM on segments outside the run: one clear error
    with pytest.raises(InputError, match="labelled by humans but not judged"):
        split(judged, human)


def test_ranking_rank_intervals():
    rng = np.random.default_rng(2)
    frames, groups = [], []
    for name, centre in (("A", 0.0), ("B", 10.0), ("C", 10.2)):
        truth = rng.normal(centre, 1.0, size=300)
        judge = truth + rng.normal(scale=0.5, size=300)
        human = np.where(np.arange(300) < 60, truth, np.nan)
        frames.append(pd.DataFrame({"judge": judge, "human": human},
                                   index=[f"{name}{i}" for i in range(300)]))  # fmt: skip
        groups += [name] * 300
    data = pd.concat(frames)
    ranks = ranking(data, pd.Series(groups, index=data.index), higher_is_better=False)
    assert [r["facet"] for r in ranks] == ["A", "B", "C"]
    assert (ranks[0]["rank_low"], ranks[0]["rank_high"]) == (1, 1)  # A is surely the best
    assert [(r["rank_low"], r["rank_high"]) for r in ranks[1:]] == [(2, 3), (2, 3)]
    # 60 labels of a mean: the bootstrap-t, with B x K resamples for the alpha / K tails
    assert {(r["interval"], r["resamples"]) for r in ranks} == {("bootstrap-t", 6000)}
    clt = ranking(data, pd.Series(groups, index=data.index), higher_is_better=False, rule=CLT)
    assert {(r["interval"], r["resamples"]) for r in clt} == {("clt", None)}


# -- plan ---------------------------------------------------------------------------------------
def test_plan_size_matches_the_closed_form():
    n_items, sigma, rho, width = 460, 10.0, 0.45, 2.0
    n0 = math.ceil((Z * sigma / width) ** 2)
    n_cl, n_ppi, reachable = plan_size(n_items, sigma, rho, width)
    assert n_cl == n0 and reachable
    expected = n0 * n_items * (1 - rho**2) / (n_items - rho**2 * n0)
    assert abs(n_ppi - expected) <= 1
    assert plan_size(n_items, sigma, 0.0, width)[1] == n0  # uninformative: as many as classical
    assert plan_size(100, sigma, 0.5, 0.5) == (100, 100, False)


def test_plan_size_follows_the_interval_rule():
    """Below 50 labels a share gets the t interval: the plan solves n again with the t quantile
    (more labels than the z quantile asks for); a mean below 100 without a pilot to simulate
    the bootstrap-t gets the t quantile too."""
    clt = plan_size(150, 0.5, 0.6, 0.15, kind="share", interval="clt")
    auto = plan_size(150, 0.5, 0.6, 0.15, kind="share", interval="auto")
    assert clt[0] < 50 and clt[0] < auto[0] and clt[1] < auto[1]
    # the t quantile at the planned n reproduces the planned n (a fixed point)
    assert auto[0] == math.ceil((student_t.ppf(0.975, auto[0] - 1) * 0.5 / 0.15) ** 2)
    assert plan_size(150, 0.5, 0.6, 0.05, kind="share", interval="auto") == plan_size(
        150, 0.5, 0.6, 0.05, kind="share", interval="clt"
    )  # 50 or more labels: the CLT


def test_draw_items_is_seeded_and_stratified():
    items = [f"i{k}" for k in range(100)]
    groups = pd.Series(["a"] * 80 + ["b"] * 20, index=items)
    first = draw_items(items, {"a": 10, "b": 5}, groups, seed=3)
    assert first == draw_items(items, {"a": 10, "b": 5}, groups, seed=3)
    assert first != draw_items(items, {"a": 10, "b": 5}, groups, seed=4)
    assert sum(groups[first] == "b") == 5 and len(first) == 15 == len(set(first))


def test_plan_from_a_pilot(tmp_path: Path):
    rng = np.random.default_rng(4)
    truth = rng.normal(size=500)
    judge = write_long(tmp_path / "j.csv", [(f"i{k}", "j", round(v + rng.normal(scale=0.5), 3))
                                            for k, v in enumerate(truth)])  # fmt: skip
    pilot = write_long(tmp_path / "p.csv", [(f"i{k}", "h", round(truth[k], 3)) for k in range(40)])
    result = run_plan(str(judge), 0.1, pilot=str(pilot), target="mean", seed=1)
    (plan,) = result.plans
    assert plan.source == "pilot" and plan.n_pilot == 40 and 0.8 < plan.rho < 0.95
    assert plan.n_ppi < plan.n_classical and len(result.items) == plan.n_ppi
    assert result.signature["inputs"]["pilot"]["sha256"]


def test_stratified_sample_combines_the_strata():
    rng = np.random.default_rng(6)
    truth = np.r_[rng.normal(0, 1, 100), rng.normal(5, 1, 300)]
    human = truth.copy()
    human[np.r_[np.arange(50, 100), np.arange(110, 400)]] = np.nan  # A: 50 of 100, B: 10 of 300
    data = pd.DataFrame({"judge": truth + rng.normal(size=400), "human": human},
                        index=[f"i{k}" for k in range(400)])  # fmt: skip
    groups = pd.Series(["A"] * 100 + ["B"] * 300, index=data.index)
    rows = estimate_table(data, groups, stratified=True, rule=CLT)
    by = {(e.facet, e.method): e for e in rows}
    a, b, overall = by[("A", "classical")], by[("B", "classical")], by[("all", "classical")]
    assert overall.estimate == pytest.approx(0.25 * a.estimate + 0.75 * b.estimate)
    se = math.hypot(0.25 * a.width, 0.75 * b.width) / 2  # in units of z
    assert overall.width == pytest.approx(2 * se)
    pooled = estimate_table(data, groups)[0]  # pooling the items over-weighs stratum A
    assert pooled.estimate == pytest.approx(np.nanmean(human))
    assert (overall.n_labelled, overall.n_unlabelled) == (60, 340)
    auto = {(e.facet, e.method): e for e in estimate_table(data, groups, stratified=True)}
    assert auto[("A", "ppi++")].interval == "bootstrap-t"  # 50 labels of a mean
    assert auto[("all", "ppi++")].interval == "t"  # no bootstrap-t of the strata's sum
    assert auto[("all", "ppi++")].note == "strata combined: t interval"
    assert auto[("all", "classical")].width > overall.width  # t quantile at 58 df > z


def test_facets_of_a_cultural_run_and_of_an_items_file(tmp_path: Path):
    run = tmp_path / "cultural"
    run.mkdir()
    rows = [{"key": f"mmlu|q{k}", "benchmark": "mmlu", "language": lang, "subject": "law",
             "split": "test", "item_subject_category": "Humanities"}
            for k, lang in enumerate(["en", "en", "ja"])]  # fmt: skip
    (run / "annotations.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    write_long(run / "labels.csv", [(r["key"], "judge", "CS") for r in rows])
    (run / "summary.json").write_text(json.dumps({"signature": {"pipeline": "cultural"}}))
    assert str(default_target(run)) == "share:CS"
    facets = item_facets(run)
    assert facets.loc["mmlu|q2", "language"] == "ja"
    assert facets.loc["mmlu|q0", "subject_category"] == "Humanities"
    items = tmp_path / "items.jsonl"  # a classify items file: id, text and any other field
    items.write_text('{"id": "a", "text": "x", "domain": "news"}\n{"id": "b", "text": "y"}\n')
    extra = item_facets(None, items)
    assert extra.loc["a", "domain"] == "news" and pd.isna(extra.loc["b", "domain"])


def test_vectorised_draws_equal_one_by_one_estimates():
    """coverage_study runs all draws at once (sums, count matrices of the same resamples);
    each draw's CI, for every method and interval, is the one estimate_mean gives on the same
    split with the same seed."""
    from judgekit.calibration.estimate.coverage import STUDY_INTERVALS, coverage_study

    rng = np.random.default_rng(8)
    human = -np.abs(rng.standard_t(3, size=120))  # skewed, as MQM
    judge = human + rng.normal(scale=0.7, size=120)
    draws, n, seed = 4, 30, 11
    order = np.argsort(np.random.default_rng(seed).random((draws, 120)), axis=1)
    truth = human.mean()
    result = coverage_study(human, judge, n, draws=draws, seed=seed, resamples=500)
    for interval in STUDY_INTERVALS:
        rule = IntervalRule(interval, "mean", resamples=500)
        widths: dict[str, list[float]] = {m: [] for m in ("classical", "ppi", "ppi++")}
        covered = {m: 0 for m in widths}
        for row in order:
            lab, unl = row[:n], row[n:]
            for e in estimate_mean(human[lab], judge[lab], judge[unl], rule=rule):
                if e.method in covered:
                    covered[e.method] += e.ci_low <= truth <= e.ci_high
                    widths[e.method].append(e.width)
        for method in widths:
            c = result[f"{method}/{interval}"]
            assert c.coverage == pytest.approx(covered[method] / draws)
            assert c.widths == pytest.approx(widths[method], rel=1e-9)
    assert result["ppi++/auto"].interval == "auto" and result["ppi++"] is result["ppi++/clt"]
    assert result["ppi++/auto"].widths == pytest.approx(result["ppi++/bootstrap-t"].widths)


def test_an_item_with_two_values_of_a_facet_is_one_located_error(tmp_path: Path):
    facets = tmp_path / "facets.csv"
    facets.write_text("item,lang\na,de\nb,de\na,fr\n", encoding="utf-8")
    with pytest.raises(InputError, match="item 'a': lang is both 'de' and 'fr'") as err:
        item_facets(facets, by="lang")
    assert err.value.line == 4 and err.value.field == "lang"
    assert item_facets(facets).loc["a", "lang"] == "de"  # a column not estimated by: the first
    long = write_long(tmp_path / "long.csv", [("a", "h1", "CS"), ("a", "h2", "CA")])
    long.write_text("item,rater,label,lang\na,h1,CS,de\na,h2,CA,de\n", encoding="utf-8")
    assert item_facets(long).loc["a", "lang"] == "de"  # the same value on every rater's row


def test_a_bad_label_value_names_its_file_not_the_command_line(tmp_path: Path):
    judge = write_long(tmp_path / "judge.csv", [("a", "j", "1.5"), ("b", "j", "inf")])
    with pytest.raises(InputError) as err:
        load_judge(judge, Target.parse("mean"))
    assert err.value.path == str(judge) and err.value.field == "label"
    assert "item 'b', rater 'j': label 'inf' is not finite" in str(err.value).lower()
    # "NaN" is a missing marker (judgekit.data.vocabulary), as NA, null and the empty cell
    judge = write_long(tmp_path / "judge.csv", [("a", "j", "1.5"), ("b", "j", "NaN")])
    assert load_judge(judge, Target.parse("mean"))[0].to_dict() == {"a": 1.5}


def test_every_resample_is_ppi_py_on_that_resample():
    """The bootstrap-t's vectorised resample statistics (lam re-tuned by ppi_py's rule, the
    estimate and its SE) equal ppi_py's functions run on each resample, one by one."""
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    from judgekit.calibration.estimate import intervals as iv

    rng = np.random.default_rng(1)
    y = -np.abs(rng.standard_t(3, size=40))
    yhat, unlabelled = y + rng.normal(size=40), -np.abs(rng.standard_t(3, size=300))
    sums = iv.resample_sums(y, yhat, unlabelled, 6, np.random.default_rng(0))
    draw = np.random.default_rng(0)
    lab = np.concatenate(list(iv.resample_indices(draw, 6, 40)))
    unl = np.concatenate(list(iv.resample_indices(draw, 6, 300)))
    point, se = iv.point_and_se(sums, iv.tuned_lam(sums))
    for k in range(6):
        args = (y[lab[k]], yhat[lab[k]], unlabelled[unl[k]])
        assert point[k] == pytest.approx(ppi_mean_pointestimate(*args)[0], rel=1e-10)
        low, high = ppi_mean_ci(*args, alpha=0.05)
        assert se[k] == pytest.approx((high[0] - low[0]) / (2 * Z), rel=1e-9)


def test_a_share_and_its_interval_stay_in_zero_one_with_a_note():
    """Issue 32.2: 1 positive human label in 30, the judge says 5 of 300: PPI and the t
    intervals went below 0 (classical and PPI++ CI from -0.034, PPI from -0.017); every row is
    now in [0, 1] and a clipped row says what it was. A mean is left unbounded."""
    from judgekit.calibration.estimate import IntervalRule, in_range

    rng = np.random.default_rng(0)
    judge = np.zeros(300)
    judge[rng.choice(300, 5, replace=False)] = 1
    human = np.full(300, np.nan)
    human[:30] = 0
    human[0] = 1
    data = pd.DataFrame({"judge": judge, "human": human}, index=[f"i{k}" for k in range(300)])
    rows = estimate_table(data, rule=IntervalRule(kind="share"))
    for row in rows:
        for value in (row.estimate, row.ci_low, row.ci_high):
            assert value is None or 0.0 <= value <= 1.0
    by = {r.method: r for r in rows}
    assert by["ppi"].ci_low == 0.0
    assert by["ppi"].note == "clipped to [0, 1], a share's range (was ci_low -0.017)"
    assert by["judge_only"].note is None
    mean = estimate_table(data, rule=IntervalRule(kind="mean"))
    assert min(r.ci_low for r in mean if r.ci_low is not None) < 0  # a mean is unbounded
    assert in_range(mean, "mean") == mean


def test_plan_sizes_on_a_small_set_stay_within_it():
    # a half-width no sample reaches (1e-300 overflowed the closed form), and a simulated
    # bootstrap-t size on 20 items (it drew up to 100 and left no unlabelled item: 1/0)
    assert plan_size(20, 1.5, 0.5, 1e-300) == (20, 20, False)
    rng = np.random.default_rng(0)
    human = rng.integers(0, 5, 10).astype(float)
    n = simulated_size(human, human + rng.normal(0, 1, 10), rng.normal(2, 1.5, 20), 2, 1e-3,
                       resamples=50)  # fmt: skip
    assert n == 20
