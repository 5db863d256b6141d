"""The human ceiling beside each judge on the ceiling's own rows (like for like), the rater
left out of the humans said by ``calibrate compare`` as on the page, and the small-sample
marks of the "Which judge?" tab, on a table small enough to check by hand."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from judgekit.calibration.compare import CompareOptions, compare
from judgekit.calibration.compare.labels import label_facet
from judgekit.cli import app
from judgekit.labels.table import LabelTable
from judgekit.view.which_judge import MIN_N, tab_data

# items a..c rated by h1, h2, h3; item d by h1, h2 only (its majority ties)
HUMANS = pd.DataFrame(
    {
        "h1": ["x", "x", "y", "x"],
        "h2": ["x", "x", "y", "y"],
        "h3": ["x", "y", "y", None],
    },
    index=["a", "b", "c", "d"],
    dtype=object,
)
JUDGE = pd.Series(["x", "y", "x", "x"], index=["a", "b", "c", "d"], dtype=object)


def test_judge_on_the_ceilings_rows_by_hand() -> None:
    """Majority: a x, b x, c y, d tie. The judge vs the majority (tie on d left out): a right,
    b wrong, c wrong = 1/3 on 3 items. Ceiling rows (each human vs the majority of the
    others, ties left out): a 3 rows all right; b: h1 and h2 see a tie (x vs y, left out), h3
    (y) vs x wrong; c 3 rows all right; d: h1 (x) vs h2's y wrong, h2 (y) vs h1's x wrong:
    humans 6/9 on 4 items. The judge on those 9 rows: a 3 right, b 0 (y vs x), c 0 (x vs y),
    d: vs y wrong, vs x right = 4/9, on the same 4 items."""
    facet = label_facet({"J": JUDGE}, LabelTable(HUMANS), facet="all", n_resamples=100)
    main = next(f for f in facet.families if f.statistic == "accuracy")
    assert main.values["J"] == pytest.approx(1 / 3) and main.n == 3
    rows = {r.judge: r for r in facet.ceiling if r.statistic == "accuracy"}
    ceiling, judge = rows["human ceiling"], rows["J on the ceiling's rows"]
    assert ceiling.value == pytest.approx(6 / 9) and judge.value == pytest.approx(4 / 9)
    assert ceiling.n == judge.n == 4  # items, for both
    assert "9 (human, item) rows" in ceiling.note and "9 (human, item) rows" in judge.note
    assert judge.rank is None and judge.ci_low is not None  # unranked, same resamples


def _write(tmp_path) -> tuple[str, str]:
    humans = tmp_path / "humans.csv"
    lines = ["item,rater,label"]
    for rater in HUMANS.columns:
        lines += [f"{i},{rater},{v}" for i, v in HUMANS[rater].items() if v is not None]
    lines += [f"{i},J,{v}" for i, v in JUDGE.items()]  # the judge's own rater among the humans
    humans.write_text("\n".join(lines) + "\n", encoding="utf-8")
    judge = tmp_path / "judge.csv"
    judge.write_text(
        "item,label\n" + "".join(f"{i},{v}\n" for i, v in JUDGE.items()), encoding="utf-8"
    )
    return str(humans), str(judge)


def _compare(humans: str, judge: str, *extra: str):
    """``calibrate compare`` of judge J against ``humans`` (50 resamples, 20 permutations)."""
    args = ["calibrate", "compare", "--human", humans, "--judge", f"J={judge}",
            "--n-resamples", "50", "--permutations", "20", *extra]  # fmt: skip
    return CliRunner().invoke(app, args, env={"COLUMNS": "250"})


def test_compare_prints_the_rater_left_out_and_the_ceiling_rows(tmp_path) -> None:
    humans, judge = _write(tmp_path)
    result = _compare(humans, judge)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "note: human rater 'J' is left out of the humans for judge 'J'" in out
    assert "each human vs the majority of the others" in out  # the line under the table
    assert "ceiling's" in out  # the rows (a narrow console wraps their names)
    shown = _compare(humans, judge, "--json")
    rows = {(r["judge"], r["statistic"]): r for r in json.loads(shown.stdout)["rows"]}
    on_rows = rows["J on the ceiling's rows", "accuracy"]
    ceiling = rows["human ceiling", "accuracy"]
    assert on_rows["value"] == pytest.approx(4 / 9) and on_rows["n"] == 4  # by hand, above
    assert ceiling["value"] == pytest.approx(6 / 9) and ceiling["n"] == 4


def test_tab_places_notes_and_marks_small_samples(tmp_path) -> None:
    humans, judge = _write(tmp_path)
    result = compare(humans, [f"J={judge}"], CompareOptions(n_resamples=50))
    left = next(n for n in result.notes if "left out of the humans" in n)
    tab = tab_data(result)
    assert left in tab["notes"]  # the summary keeps it
    accuracy = next(t for t in tab["facets"][0]["tables"] if t["statistic"]["key"] == "accuracy")
    (judge_row,) = accuracy["judges"]
    assert left in accuracy["ceiling"]["notes"] and left not in judge_row["notes"]
    (on_rows,) = accuracy["on_ceiling"]
    assert on_rows["judge"] == "J" and on_rows["n"] == accuracy["ceiling"]["n"] == 4
    assert on_rows["value"] == pytest.approx(4 / 9)
    for figure in (judge_row, accuracy["ceiling"], on_rows):
        assert figure["small"] == (figure["n"] < MIN_N) is True
        width = figure["ci_high"] - figure["ci_low"]
        assert figure["collapsed"] == (width == 0)


def test_judges_ceiling_rows_have_no_ci_above_the_row_limit(monkeypatch) -> None:
    """Above CEILING_CI_ROWS human labels the judge's ceiling-rows figure is the value alone,
    with a note; the human ceiling keeps its CI."""
    import judgekit.calibration.compare.labels as labels

    monkeypatch.setattr(labels, "CEILING_CI_ROWS", 8)  # the table has 11 labels
    facet = label_facet({"J": JUDGE}, LabelTable(HUMANS), facet="all", n_resamples=50)
    rows = {r.judge: r for r in facet.ceiling if r.statistic == "accuracy"}
    judge = rows["J on the ceiling's rows"]
    assert judge.value == pytest.approx(4 / 9) and judge.ci_low is None
    assert "no CI above 8 human labels" in judge.note
    assert rows["human ceiling"].ci_low is not None


def test_others_score_as_the_judge_argument_does() -> None:
    """``human_ceiling(others=...)`` gives each judge what ``human_ceiling(judge)`` gives it:
    the same rows, value and resamples (so the same CI)."""
    from judgekit.calibration.judge import human_ceiling

    alone = human_ceiling(LabelTable(HUMANS), JUDGE, n_resamples=200)
    both = human_ceiling(LabelTable(HUMANS), n_resamples=200, others={"J": JUDGE})
    got = both.others["J"]
    assert got["n_rows"] == alone.n_rows == 9 and got["n_items"] == alone.n_items == 4
    for metric, est in alone.judge.items():
        assert got["scores"][metric].value == pytest.approx(est.value)
        assert got["scores"][metric].ci == pytest.approx(est.ci)
    assert both.humans["accuracy"].ci == pytest.approx(alone.humans["accuracy"].ci)
