"""Honest judge tuning (issue 35): sealed splits, looks, choice on select, report on test."""

from __future__ import annotations

import numpy as np
import pytest

from judgekit.calibration.tune import (
    choose,
    few_shot_examples,
    read_looks,
    record_look,
    report_on_test,
    split_items,
    test_hash,
)


def _items(n=200, seed=1):
    rng = np.random.default_rng(seed)
    ids = [f"it{i:03d}" for i in range(n)]
    langs = [["cs", "ca", "de"][i % 3] for i in range(n)]
    human = {i: str(rng.integers(0, 2)) for i in ids}
    return ids, langs, human


def test_split_is_seeded_disjoint_and_stratified():
    ids, langs, human = _items()
    strata = [f"{lang}|{human[i]}" for i, lang in zip(ids, langs, strict=True)]
    a = split_items(ids, strata, seed=7)
    assert a == split_items(list(reversed(ids)), list(reversed(strata)), seed=7)
    assert a != split_items(ids, strata, seed=8)
    parts = [set(a.tune), set(a.select), set(a.test)]
    assert sum(map(len, parts)) == len(ids) and set().union(*parts) == set(ids)
    assert not (parts[0] & parts[1] or parts[0] & parts[2] or parts[1] & parts[2])
    sizes = (len(a.tune), len(a.select), len(a.test))
    assert all(abs(n - t) <= 6 for n, t in zip(sizes, (80, 60, 60), strict=True))  # 6 strata
    by = dict(zip(ids, strata, strict=True))
    for stratum in set(strata):
        n = strata.count(stratum)
        in_test = sum(by[i] == stratum for i in a.test)
        assert abs(in_test - 0.3 * n) <= 1
    assert a.test_hash == test_hash(list(reversed(a.test)))
    with pytest.raises(ValueError, match="duplicate"):
        split_items(["x", "x"], ["a", "a"])


def test_looks_are_counted_and_bound_to_the_test_hash(tmp_path):
    assert read_looks(tmp_path) == 0
    assert record_look(tmp_path, "h1", "calibrate tune") == 1
    assert record_look(tmp_path, "h1", "calibrate estimate") == 2
    assert read_looks(tmp_path) == 2
    with pytest.raises(ValueError, match="recorded test hash"):
        record_look(tmp_path, "h2", "calibrate tune")


def test_memorising_judge_wins_on_select_gains_nothing_on_test():
    """Leakage: a stub that answers the human label for items it has seen (tune + select)."""
    ids, langs, human = _items(n=300)
    rng = np.random.default_rng(3)
    strata = [f"{lang}|{human[i]}" for i, lang in zip(ids, langs, strict=True)]
    s = split_items(ids, strata, seed=0)
    # an honest judge right 75% of the time; the memoriser is that judge plus a lookup table
    honest = {i: human[i] if rng.random() < 0.75 else str(1 - int(human[i])) for i in ids}
    seen = set(s.tune) | set(s.select)
    memoriser = {i: human[i] if i in seen else honest[i] for i in ids}
    cands = {"honest": honest, "memoriser": memoriser}
    ranking = choose(cands, human, s.select, "accuracy")
    assert ranking.chosen == "memoriser" and dict(ranking.figures)["memoriser"] == 1.0
    rep = report_on_test(cands, human, s.test, ranking, baseline="honest", looks=1, n_boot=200)
    assert rep.gain == 0.0 and rep.gain_ci[0] <= 0.0 <= rep.gain_ci[1]
    assert rep.optimism > 0.15 and rep.test_name == "McNemar exact" and rep.p_value == 1.0
    assert rep.looks == 1 and rep.n_test == len(s.test)


def test_report_finds_a_real_gain_with_kappa_and_tau_b():
    ids, _langs, human = _items(n=240)
    rng = np.random.default_rng(5)
    good = {i: human[i] if rng.random() < 0.9 else str(1 - int(human[i])) for i in ids}
    bad = {i: human[i] if rng.random() < 0.6 else str(1 - int(human[i])) for i in ids}
    s = split_items(ids, [human[i] for i in ids], seed=2)
    ranking = choose({"bad": bad, "good": good}, human, s.select, "kappa")
    assert ranking.chosen == "good"
    # 399 permutations: a two-sided p of 2/400 at best, below the 0.01 asserted (999 by default)
    rep = report_on_test({"bad": bad, "good": good}, human, s.test, ranking, "bad", n_boot=200,
                         n_perm=399)  # fmt: skip
    assert rep.gain > 0.3 and rep.gain_ci[0] > 0 and rep.p_value < 0.01
    assert rep.test_name == "paired permutation"
    scores = {i: float(rng.normal()) for i in ids}
    near = {i: scores[i] + float(rng.normal(0, 0.3)) for i in ids}
    far = {i: scores[i] + float(rng.normal(0, 3)) for i in ids}
    ranking = choose({"far": far, "near": near}, scores, s.select, "tau_b")
    # its p is not asserted: 199 permutations
    rep = report_on_test({"far": far, "near": near}, scores, s.test, ranking, "far", n_boot=200,
                         n_perm=199)  # fmt: skip
    assert ranking.chosen == "near" and rep.gain_ci[0] > 0


def test_few_shot_examples_come_only_from_tune():
    ids, langs, _human = _items(n=90)
    s = split_items(ids, langs, seed=4)
    for seed in range(20):
        shots = few_shot_examples(s, 5, seed=seed)
        assert len(set(shots)) == 5 and set(shots) <= set(s.tune)
        assert not set(shots) & (set(s.select) | set(s.test))
    with pytest.raises(ValueError, match="tune split has"):
        few_shot_examples(s, len(s.tune) + 1)


def test_llmbar_quick_resplits_cover_the_all_items_gain():
    """bench/tune.py with 8 resplits (the bench runs 200): LLMBar's 12 recorded judge x prompt
    candidates, choice on select, test-gain interval vs the all-items gain."""
    import importlib.util
    import sys

    from conftest import REPO, shared_path

    shared_path("judge-vs-human", "llmbar", "llm_judge_verdicts.tsv")
    spec = importlib.util.spec_from_file_location("bench_tune", REPO / "bench" / "tune.py")
    bench = importlib.util.module_from_spec(spec)
    sys.modules["bench_tune"] = bench
    spec.loader.exec_module(bench)
    cands, gold, _strata = bench.load()
    assert len(cands) == 12 and len(gold) == 419
    coverage, optimism, _naive = bench.run(resplits=8, boot=150)
    assert coverage >= 0.75 and abs(optimism) <= 0.05

    # the WMT23 en-de half: GEMBA-MQM, BLEU and chrF against expert MQM by tau_b
    shared_path("judge-vs-human", "wmt23-gemba-mqm-vs-human-mqm")
    cands, gold, strata = bench.load_wmt23()
    assert sorted(cands) == ["BLEU", "GEMBA-MQM", "chrF"] and len(gold) == 1840
    assert {s.split("|")[0] for s in strata.values()} == {
        "GPT4-5shot", "NLLB_Greedy", "NLLB_MBR_BLEU", "ONLINE-A"}  # fmt: skip
    coverage, optimism, _naive = bench.run(resplits=3, boot=100, dataset="wmt23")
    assert coverage >= 2 / 3 and abs(optimism) <= 0.05


def test_tune_writers_print_looks_and_round_trip(tmp_path):
    import csv
    import json

    from judgekit.report.tune import tune_lines, write_tune_csv, write_tune_json

    ids, _langs, human = _items(n=120)
    good = dict(human)
    bad = {i: "0" for i in ids}
    s = split_items(ids, [human[i] for i in ids], seed=1)
    ranking = choose({"bad": bad, "good": good}, human, s.select)
    rep = report_on_test(
        {"bad": bad, "good": good}, human, s.test, ranking, "bad", looks=3, n_boot=50
    )
    lines = tune_lines(rep)
    assert lines[-1] == "looks at the sealed test split: 3" and "chosen good" in lines[0]
    write_tune_json(rep, tmp_path / "t.json")
    data = json.loads((tmp_path / "t.json").read_text())
    assert data["looks"] == 3 and data["gain"] == rep.gain and len(data["gain_ci"]) == 2
    write_tune_csv(rep, tmp_path / "t.csv")
    (row,) = list(csv.DictReader((tmp_path / "t.csv").open()))
    assert float(row["gain_ci_lo"]) == rep.gain_ci[0] and row["chosen"] == "good"


def test_split_by_language_and_label_keeps_each_share_and_tests_the_facets(tmp_path):
    from judgekit.calibration.tune.strata import facet_report, facet_values, strata
    from judgekit.errors import InputError

    ids, langs, human = _items(n=240, seed=2)
    rows = ["item,rater,label,language"]
    rows += [f"{i},ann,{human[i]},{lang}" for i, lang in zip(ids, langs, strict=True)]
    (tmp_path / "h.csv").write_text("\n".join(rows) + "\n")
    by, facet = facet_values([tmp_path / "h.csv"], ids, None)
    assert by == "language" and facet == dict(zip(ids, langs, strict=True))
    with pytest.raises(InputError, match="domain"):
        facet_values([tmp_path / "h.csv"], ids, "domain")
    s = split_items(ids, strata(ids, human, facet), seed=3)
    for lang in ("cs", "ca", "de"):
        for label in ("0", "1"):
            n = sum(facet[i] == lang and human[i] == label for i in ids)
            for part, share in ((s.tune, 0.4), (s.select, 0.3), (s.test, 0.3)):
                got = sum(facet[i] == lang and human[i] == label for i in part)
                assert abs(got - share * n) <= 1, (lang, label)
    # a judge right on cs and ca, at chance on de: Cochran's Q finds the language difference
    rng = np.random.default_rng(0)
    judge = {i: human[i] if facet[i] != "de" or rng.random() < 0.5 else "x" for i in ids}
    per = facet_report(judge, human, s.test, facet, "accuracy", n_boot=150)
    assert per["values"]["cs"]["figure"] == 1.0 and per["values"]["de"]["figure"] < 0.8
    assert per["df"] == 2 and per["p_value"] is None  # zero bootstrap spread on cs: no test
    judge = {i: human[i] if rng.random() < (0.9 if facet[i] != "de" else 0.5) else "x" for i in ids}
    per = facet_report(judge, human, s.test, facet, "accuracy", n_boot=150)
    assert per["p_value"] < 0.01 and per["spread"] > 0.2


def test_nested_cv_holds_each_item_out_once_and_reports_the_procedure():
    from judgekit.calibration.tune.nested import fold_items, nested_cv

    ids, langs, human = _items(n=100, seed=4)
    strata = [f"{lang}|{human[i]}" for i, lang in zip(ids, langs, strict=True)]
    folds = fold_items(ids, strata, k=5, seed=1)
    assert sorted(i for f in folds for i in f) == sorted(ids)
    assert max(map(len, folds)) - min(map(len, folds)) <= 1
    assert folds == fold_items(list(reversed(ids)), list(reversed(strata)), k=5, seed=1)
    with pytest.raises(ValueError, match="folds"):
        fold_items(ids[:3], strata[:3], k=4)
    rng = np.random.default_rng(9)
    honest = {i: human[i] if rng.random() < 0.75 else str(1 - int(human[i])) for i in ids}
    # a candidate right on 60 of the items: chosen in every fold, its advantage is spread over
    # the folds, so the inner (choice-side) and held-out figures agree: no optimism
    memoriser = {i: human[i] if k < 60 else honest[i] for k, i in enumerate(sorted(ids))}
    noisy = {i: str(rng.integers(0, 2)) for i in ids}
    cands = {"honest": honest, "memoriser": memoriser, "noisy": noisy}
    res = nested_cv(cands, human, folds, "accuracy", "honest", looks=1, n_boot=200)
    assert res.report.mode == "nested 5-fold" and res.report.n_test == 100
    assert set(res.chosen_per_fold) == {"memoriser"} and res.ranking.chosen == "memoriser"
    overall = statistic_of(memoriser, human, ids)
    assert res.report.test_figure == pytest.approx(overall)  # pooled: each fold its own choice
    assert abs(res.report.optimism) < 0.02 and res.report.gain_ci[0] > 0
    assert res.report.fold_choices == res.chosen_per_fold


def test_nested_report_says_the_choice_per_fold_and_why_a_gain_over_itself():
    from dataclasses import replace

    from judgekit.calibration.tune.report import TestReport
    from judgekit.report.tune import tune_lines

    rep = TestReport("a", "a", "accuracy", 40, 0.8, (0.7, 0.9), 0.05, (0.0, 0.1), 0.2,
                     "McNemar", 0.01, 1, mode="nested 5-fold",
                     fold_choices=("a", "b", "a", "a", "b"))  # fmt: skip
    lines = tune_lines(rep)
    assert "gain of the procedure over a: +0.050 [+0.000, +0.100], McNemar p=0.2" in lines
    assert "chosen without each fold: a (3 of 5), b (2 of 5)" in lines
    assert any("need not be zero although a is chosen on all items" in x for x in lines)
    same = tune_lines(replace(rep, fold_choices=("a",) * 5))
    assert "chosen without each fold: a (5 of 5)" in same
    assert not any("need not be zero" in x for x in same)
    split = tune_lines(replace(rep, mode="split", fold_choices=()))
    assert split[1].startswith("gain over a: ") and not any("fold" in x for x in split)


def statistic_of(out, human, ids):
    from judgekit.calibration.tune import statistic

    return statistic("accuracy", [out[i] for i in ids], [human[i] for i in ids])
