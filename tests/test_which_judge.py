"""The "Which judge?" tab's data (judgekit.view.which_judge) on a hand-made label comparison:
the same figures as ``calibrate compare``, the ceiling on the same items, the paired difference
to the best judge, wide CIs marked, and the label notes the comparison raises beside them."""

from __future__ import annotations

import pytest
from test_compare_labels import _files as label_files

from judgekit.calibration.compare import CompareOptions, compare
from judgekit.view.which_judge import STATISTICS, tab_data, which_judge


def _files(tmp_path, upper: bool = False) -> tuple[str, str]:
    humans, judges = label_files(tmp_path, upper)
    return str(humans), str(judges)


def test_tab_equals_compare_with_best_judge_differences(tmp_path):
    humans, judges = _files(tmp_path)
    options = CompareOptions(n_resamples=200)
    result = compare(humans, [judges], options)
    tab = tab_data(result)
    assert [f["facet"] for f in tab["facets"]] == ["overall"]
    facet = tab["facets"][0]
    assert facet["items"] == 8
    accuracy = next(t for t in facet["tables"] if t["statistic"]["key"] == "accuracy")
    assert accuracy["statistic"]["name"] == "Agreement" and accuracy["statistic"]["meaning"]
    j1, j2 = accuracy["judges"]
    assert (j1["judge"], j1["value"], j1["n"], j1["versus_best"]) == ("j1", 1.0, 8, None)
    assert j2["judge"] == "j2" and j2["value"] == pytest.approx(6 / 8)
    row = next(r for r in result.rows if r.judge == "j2" and r.statistic == "accuracy")
    assert (j2["ci_low"], j2["ci_high"]) == (row.ci_low, row.ci_high)
    assert j2["wide"] == (row.ci_high - row.ci_low > 0.2)
    pair = next(p for p in result.pairs if p.statistic == "accuracy")
    assert pair.delta == pytest.approx(0.25)
    assert j2["versus_best"]["delta"] == pytest.approx(-pair.delta)
    assert j2["versus_best"]["p_value"] == pair.p_value
    ceiling = accuracy["ceiling"]
    assert ceiling["judge"] == "human ceiling" and ceiling["rank"] is None and ceiling["n"] == 8
    assert {t["statistic"]["key"] for t in facet["tables"]} <= set(STATISTICS)


def test_per_language_facets_follow_overall_and_wide_cis_are_marked(tmp_path):
    humans, judges = _files(tmp_path)
    tab = which_judge(humans, [judges], CompareOptions(n_resamples=200, by="language"))
    assert [f["facet"] for f in tab["facets"]] == ["fr", "hi"]
    for facet in tab["facets"]:
        assert facet["items"] == 4
        for table in facet["tables"]:
            for figure in table["judges"]:
                width = figure["ci_high"] - figure["ci_low"]
                assert figure["n"] == 4 and figure["wide"] == (width > 0.2)
    fr = next(t for t in tab["facets"][0]["tables"] if t["statistic"]["key"] == "accuracy")
    j2 = next(f for f in fr["judges"] if f["judge"] == "j2")  # 2 of 4 right: a wide CI
    assert j2["value"] == pytest.approx(0.5) and j2["wide"]


def test_folded_spellings_reach_the_tab_as_notes(tmp_path):
    humans, judges = _files(tmp_path, upper=True)
    tab = which_judge(humans, [judges], CompareOptions(n_resamples=50))
    assert any("differ only in case" in n for n in tab["notes"]), tab["notes"]
    accuracy = next(t for t in tab["facets"][0]["tables"] if t["statistic"]["key"] == "accuracy")
    assert {f["judge"]: f["value"] for f in accuracy["judges"]}["j1"] == 1.0


def test_wide_share_is_checked(tmp_path):
    humans, judges = _files(tmp_path)
    result = compare(humans, [judges], CompareOptions(n_resamples=20))
    with pytest.raises(ValueError, match="wide_share"):
        tab_data(result, wide_share=0)
