"""The label-set check in every judge-vs-human command (calibrate judge, estimate, grid, audit
validation: disjoint sets are one error, a partial overlap a warning or a note; view --labels in
test_label_vocabulary.py, beside its classify run) and the label vocabulary's own rules (missing
markers, numbers, booleans, numbers too large for a float)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from label_helpers import judgekit, write_long

from judgekit.errors import InputError, JudgekitWarning
from judgekit.labels.table import load_labels


# -- the overlap check, in every judge-vs-human command ----------------------------------------
def test_calibrate_judge_disjoint_labels_are_one_error_naming_both_sets(tmp_path) -> None:
    judge = write_long(tmp_path / "j.csv", [("a", "judge", "CS"), ("b", "judge", "CA")])
    human = write_long(tmp_path / "h.csv", [("a", "h1", "cultural"), ("b", "h1", "agnostic")])
    proc = judgekit("calibrate", "judge", "--judge", str(judge), "--human", str(human))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "share no label" in proc.stderr
    assert "{'CA', 'CS'}" in proc.stderr and "{'agnostic', 'cultural'}" in proc.stderr
    partial = write_long(tmp_path / "p.csv", [("a", "h1", "CS"), ("b", "h1", "unsure")])
    proc = judgekit("calibrate", "judge", "--judge", str(judge), "--human", str(partial),
                    "--n-resamples", "0")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "warning: labels seen on one side only" in proc.stderr
    assert "only {'CA'}" in proc.stderr and "only {'unsure'}" in proc.stderr


def test_estimate_checks_the_labels_folds_case_and_refuses_disjoint_sets(tmp_path) -> None:
    from judgekit.calibration.estimate.run import run_estimate
    from judgekit.labels.overlap import LabelSetError

    judge = write_long(tmp_path / "j.csv", [(f"i{k}", "judge", "CS" if k % 2 else "CA")
                                           for k in range(8)])  # fmt: skip
    human = write_long(
        tmp_path / "h.csv",
        [(f"i{k}", "h1", "cs" if k % 2 else "ca") for k in range(0, 8, 2)] + [("i1", "h1", "cs")],
    )
    with pytest.warns(JudgekitWarning, match="differ only in case"):
        result = run_estimate(str(judge), str(human), target="share:CS")
    classical = next(e for e in result.estimates if e.method == "classical")
    assert classical.estimate == pytest.approx(1 / 5)  # i1 'cs' is CS; i0,2,4,6 'ca' are CA
    assert result.labels["folded"] == {"ca": "CA", "cs": "CS"}
    other = write_long(tmp_path / "o.csv", [("i0", "h1", "yes"), ("i1", "h1", "no")])
    with pytest.raises(LabelSetError, match="share no label"):
        run_estimate(str(judge), str(other), target="share:CS")
    proc = judgekit("calibrate", "estimate", "--judge", str(judge), "--human", str(other),
                    "--target", "share:CS")  # fmt: skip
    assert proc.returncode == 2 and "share no label" in proc.stderr


def test_grid_cell_partial_overlap_is_kept_as_its_label_note(tmp_path: Path) -> None:
    from judgekit.calibration.grid.config import Cell, GridOptions
    from judgekit.calibration.grid.report import score_cell
    from judgekit.labels.table import LabelTable

    cell = Cell("j", "default", tmp_path, ())
    humans = LabelTable(pd.DataFrame({"h1": ["TRUE", "FALSE", "n/a"]}, index=["i1", "i2", "i3"]))
    verdicts = pd.Series({"i1": "true", "i2": "true", "i3": "maybe"})
    with pytest.warns(JudgekitWarning, match="one side only"):
        row = score_cell(cell, verdicts, humans, GridOptions(n_resamples=0))
    assert row["accuracy"] == 0.5 and row["n_compared"] == 2  # n/a is missing: i3 has no human
    assert "'maybe'" in row["label_note"]


def test_audit_validation_refuses_votes_outside_the_rubric_that_meet_no_judge_label() -> None:
    from judgekit.calibration.cultural import validate_subset
    from judgekit.data.items import BenchmarkItem
    from judgekit.labels.human_votes import human_votes
    from judgekit.labels.overlap import LabelSetError

    items = [
        BenchmarkItem(id=f"q{k}", benchmark="b", question="?", choices=("x", "y"), answer="A",
                      subject=None, subject_category=None, language="en",
                      extra={"required_knowledge": ["none", "none"],
                             "time_sensitive": ["TRUE", "TRUE"]})
        for k in range(3)
    ]  # fmt: skip
    votes = human_votes(items)
    frame = pd.DataFrame([{"key": it.key, "id": it.id, "status": "annotated", "cs_label": "CA",
                           "required_knowledge": "none", "time_sensitive": "no",
                           "by_judge": {"j": "CA"}} for it in items])  # fmt: skip
    with pytest.raises(LabelSetError, match="time-sensitive") as err:
        validate_subset("all", [it.key for it in items], frame, votes, n_resamples=0)
    assert "{'no'}" in str(err.value) and "{'true'}" in str(err.value)
    # a judge that answered CA on every item while the humans said CS is a figure, not an error
    frame["time_sensitive"] = "yes"
    votes = human_votes([replace(it, extra={"required_knowledge": ["regional"]}) for it in items])
    rows = validate_subset("all", [it.key for it in items], frame, votes, n_resamples=0)
    got = {(r["section"], r["metric"]): r["value"] for r in rows}
    assert got[("CS/CA vs majority, ties excluded", "accuracy")] == 0.0


def test_audit_human_label_file_in_lower_case_is_read_as_the_rubrics_cs_ca(tmp_path) -> None:
    from judgekit.data.items import BenchmarkItem
    from judgekit.labels.human_votes import load_human_votes

    items = [BenchmarkItem(id=i, benchmark="b", question="?", choices=("x", "y"), answer="A",
                           subject=None, subject_category=None, language="en")
             for i in ("q1", "q2")]  # fmt: skip
    path = write_long(tmp_path / "h.csv", [("q1", "h1", "cs"), ("q2", "h1", "ca")])
    with pytest.warns(JudgekitWarning, match="only in case"):
        votes = load_human_votes(items, path, {"none": "CA", "regional": "CS"})
    assert votes.cs.column("h1").tolist() == ["CS", "CA"]  # was: labels must be ... or CS/CA


# -- the vocabulary itself -----------------------------------------------------------------------
def test_missing_markers_numbers_and_booleans_read_alike_in_csv_and_jsonl(tmp_path) -> None:
    csv = tmp_path / "l.csv"
    csv.write_text("item,rater,label\na,h,1\nb,h,2.0\nc,h,NA\nd,h,null\ne,h,\nf,h,none\n", "utf-8")
    jsonl = tmp_path / "l.jsonl"
    jsonl.write_text("".join(json.dumps({"item": i, "rater": "h", "label": v}) + "\n" for i, v in
                     (("a", 1.0), ("b", "2"), ("c", None), ("d", "null"), ("e", ""),
                      ("f", "none"))), "utf-8")  # fmt: skip
    for path in (csv, jsonl):
        assert load_labels(path).column("h").tolist() == ["1", "2", None, None, None, "none"]
    numbers = tmp_path / "n.jsonl"
    numbers.write_text('{"item": 1, "rater": "h", "label": 1.0}\n'
                       '{"item": 2.0, "rater": "h", "label": "3"}\n', "utf-8")  # fmt: skip
    table = load_labels(numbers)
    assert table.items == ["1", "2"] and table.column("h").tolist() == [1, 3]
    assert load_labels(csv, numeric=False).column("h").tolist()[:2] == ["1", "2.0"]
    with pytest.raises(InputError, match="not all numeric"):
        load_labels(csv, numeric=True)


def test_the_overlap_check_rules() -> None:
    from judgekit.labels.overlap import LabelSetError, check_label_sets

    same = check_label_sets(["CS", "CA"], ["CA", "CS", "<tie>", None], warn=False)
    assert same.common == ("CA", "CS") and not same.notes
    # case tells two human labels apart: nothing folded, so the sets do not meet
    with pytest.raises(LabelSetError):
        check_label_sets(["cs"], ["CS", "Cs"], warn=False)
    # every label inside the declared set: a class one side never gave is no mismatch
    inside = check_label_sets(["CA"], ["CS"], declared=["CS", "CA"], warn=False)
    assert inside.declared and inside.notes == ()
    boolean = check_label_sets([True], ["FALSE"], warn=False)  # booleans declare themselves
    assert boolean.declared and boolean.judge_only == ("true",)
    numbers = check_label_sets([1, 2.0], ["1", "2"], warn=False)  # 1 = 1.0 = "1"
    assert numbers.common == ("1", "2")


def test_numbers_too_large_for_a_float_are_refused_where_labels_are_read(tmp_path) -> None:
    huge = "1" + "0" * 400
    long = tmp_path / "l.csv"
    long.write_text(f"item,rater,label\na,h,0\nb,h,1\nc,h,{huge}\n", "utf-8")
    with pytest.raises(InputError, match=r"l.csv:4: field 'label': .*too large for a float"):
        load_labels(long)
    wide = tmp_path / "w.csv"
    wide.write_text("item,ann,bob\na,0,1\nb,1e999,1\n", "utf-8")
    with pytest.raises(InputError, match=r"w.csv:3: field 'ann': label '1e999'"):
        load_labels(wide)
    jsonl = tmp_path / "l.jsonl"
    jsonl.write_text(f'{{"item": "a", "rater": "h", "label": 1}}\n'
                     f'{{"item": "b", "rater": "h", "label": {huge}}}\n', "utf-8")  # fmt: skip
    with pytest.raises(InputError, match=r"l.jsonl:2: field 'label'"):
        load_labels(jsonl)
    assert load_labels(long, numeric=False).column("h").tolist()[2] == huge  # declared text
    for args in (("calibrate", "agreement", str(long)),
                 ("calibrate", "estimate", "--judge", str(long), "--human", str(long),
                  "--target", "mean")):  # fmt: skip
        done = judgekit(*args)
        assert done.returncode == 2 and "l.csv:4: field 'label'" in done.stderr
        assert "Traceback" not in done.stderr
