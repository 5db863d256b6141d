"""Label tables: loaders for long and wide CSV/JSONL, run directories, and their errors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judgekit.errors import InputError
from judgekit.labels.table import LabelTable, load_labels


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_long_csv_builds_items_by_raters_with_missing_cells(tmp_path):
    path = write(
        tmp_path / "labels.csv",
        "item,rater,label\nq1,ann1,CS\nq1,ann2,CA\nq2,ann1,CA\nq3,ann2,\n",
    )
    table = load_labels(path)
    assert table.items == ["q1", "q2", "q3"]
    assert table.raters == ["ann1", "ann2"]
    assert table.frame.loc["q1", "ann2"] == "CA"
    assert table.frame.loc["q2", "ann2"] is None  # never rated
    assert table.frame.loc["q3", "ann2"] is None  # empty cell = missing
    assert table.categories == ["CA", "CS"]
    assert table.ratings_per_item().tolist() == [2, 1, 0]


def test_run_directory_reads_its_labels_csv(tmp_path):
    write(tmp_path / "labels.csv", "item,rater,label,extra\nw1,judge,valid,x\nw2,judge,invalid,y\n")
    table = load_labels(tmp_path)
    assert table.raters == ["judge"]
    assert table.column("judge").tolist() == ["valid", "invalid"]


def test_run_directory_without_labels_csv_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no labels.csv"):
        load_labels(tmp_path)


def test_wide_csv_and_numeric_labels(tmp_path):
    path = write(tmp_path / "wide.csv", "item,A,B,C\nu1,1,1,\nu2,2,3,2\n")
    table = load_labels(path, format="wide")
    assert table.raters == ["A", "B", "C"]
    assert table.frame.loc["u2"].tolist() == [2, 3, 2]  # numeric text becomes int
    assert table.frame.loc["u1", "C"] is None
    assert load_labels(path).raters == ["A", "B", "C"]  # auto: no rater/label column -> wide


def test_label_none_is_a_category_not_missing(tmp_path):
    path = write(tmp_path / "l.csv", "item,rater,label\ni,a,none\ni,b,regional\n")
    assert load_labels(path).frame.loc["i"].tolist() == ["none", "regional"]


def test_long_and_wide_jsonl(tmp_path):
    long = write(
        tmp_path / "long.jsonl",
        '{"item": 1, "rater": "h1", "label": "yes"}\n\n{"item": 1, "rater": "h2", "label": null}\n',
    )
    table = load_labels(long)
    assert table.items == ["1"]  # ids are text: the JSON 1 is the CSV's "1"
    assert table.frame.loc["1"].tolist() == ["yes", None]
    wide = write(
        tmp_path / "wide.jsonl", '{"item": "a", "h1": 3, "h2": 4}\n{"item": "b", "h1": 5}\n'
    )
    table = load_labels(wide)
    assert table.frame.loc["b"].tolist() == [5, None]


def test_duplicate_item_rater_pair_names_file_line_and_field(tmp_path):
    path = write(tmp_path / "dup.csv", "item,rater,label\nq1,a,CS\nq2,a,CA\nq1,a,CA\n")
    with pytest.raises(InputError) as err:
        load_labels(path)
    assert err.value.line == 4 and err.value.field == "rater"
    assert "first on line 2" in str(err.value) and str(path) in str(err.value)


def test_duplicate_item_in_wide_layout(tmp_path):
    path = write(tmp_path / "w.csv", "item,a,b\nq1,x,y\nq1,x,x\n")
    with pytest.raises(InputError) as err:
        load_labels(path, format="wide")
    assert (err.value.line, err.value.field) == (3, "item")


def test_missing_column_is_reported(tmp_path):
    path = write(tmp_path / "bad.csv", "item,annotator,label\nq1,a,CS\n")
    with pytest.raises(InputError) as err:
        load_labels(path, format="long")
    assert (err.value.line, err.value.field) == (1, "rater")
    assert "missing column 'rater'" in str(err.value)


def test_unknown_label_with_allowed_set(tmp_path):
    path = write(tmp_path / "l.csv", "item,rater,label\nq1,a,CS\nq2,a,cs\n")
    with pytest.raises(InputError) as err:
        load_labels(path, allowed=["CS", "CA"])
    assert (err.value.line, err.value.field) == (3, "label")
    assert "unknown label 'cs'" in str(err.value)
    wide = write(tmp_path / "w.csv", "item,a,b\nq1,1,2\nq2,1,7\n")
    with pytest.raises(InputError) as err:
        load_labels(wide, allowed=[1, 2])
    assert (err.value.line, err.value.field) == (3, "b")


def test_malformed_rows(tmp_path):
    ragged = write(tmp_path / "r.csv", "item,rater,label\nq1,a\n")
    with pytest.raises(InputError) as err:
        load_labels(ragged)
    assert err.value.line == 2
    bad_json = write(tmp_path / "b.jsonl", '{"item": 1, "rater": "a", "label": 1}\n{oops\n')
    with pytest.raises(InputError) as err:
        load_labels(bad_json)
    assert err.value.line == 2
    empty_item = write(tmp_path / "e.csv", "item,rater,label\n,a,CS\n")
    with pytest.raises(InputError) as err:
        load_labels(empty_item)
    assert (err.value.line, err.value.field) == (2, "item")


def test_from_rows_and_from_frame_helpers():
    table = LabelTable.from_rows(
        [("i1", "h1", "a"), {"item": "i1", "rater": "h2", "label": "b"}, ("i2", "h1", np.nan)]
    )
    assert table.frame.loc["i1"].tolist() == ["a", "b"]
    assert table.frame.loc["i2"].tolist() == [None, None]
    with pytest.raises(InputError) as err:
        LabelTable.from_rows([("i1", "h1", "a"), ("i1", "h1", "b")])
    assert err.value.line == 2
    frame = pd.DataFrame({"item": ["x", "y"], "h1": ["a", None], "h2": ["a", "b"]})
    table = LabelTable.from_frame(frame, item_column="item")
    assert table.items == ["x", "y"] and table.n_raters == 2
    with pytest.raises(InputError, match="unknown label 'b'"):
        LabelTable.from_frame(frame, item_column="item", allowed=["a"])


def test_long_round_trip(tmp_path):
    table = LabelTable.from_rows([("i1", "h1", "a"), ("i1", "h2", "b"), ("i2", "h2", "a")])
    table.write_csv(tmp_path / "labels.csv")
    again = load_labels(tmp_path)
    assert again.frame.equals(table.frame)
    assert json.loads(table.to_long().to_json(orient="records"))[1] == {
        "item": "i1",
        "rater": "h2",
        "label": "b",
    }
