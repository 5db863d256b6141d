"""A tune.json edited by hand: the tune card (:func:`judgekit.view.tune.tune_blocks`) shows its
texts as they are or stops with one located error, never a traceback: a ``chosen`` or
``baseline`` that is no text, ``facets`` that are no object, an old tune.json without
``fold_choices``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judgekit.errors import InputError
from judgekit.view.tune import tune_blocks

REPORT = {"chosen": "a", "baseline": "a", "statistic": "accuracy", "n_test": 12,
          "test_figure": 0.8, "test_ci": [0.7, 0.9], "gain": 0.05, "gain_ci": [0.0, 0.1],
          "p_value": 0.2, "test_name": "McNemar", "optimism": 0.01, "looks": 1,
          "mode": "nested 3-fold", "notes": [], "fold_choices": ["a", "b", "a"]}  # fmt: skip


def tune_dir(tmp_path: Path, **edit: Any) -> Path:
    (tmp_path / "tune.json").write_text(json.dumps({**REPORT, **edit}), encoding="utf-8")
    (tmp_path / "splits.json").write_text('{"select": [], "test": []}', encoding="utf-8")
    return tmp_path / "a"


def test_fold_choices_are_rows_of_text_and_may_be_absent(tmp_path: Path) -> None:
    hostile = ["<script>alert(1)</script>", "[bold]b[/]", "a"]
    (card, *_), _ = tune_blocks(tune_dir(tmp_path, fold_choices=hostile))
    rows = [row[:2] for row in card["items"] if row[0].startswith("chosen without fold")]
    assert rows == [[f"chosen without fold {k + 1}", name] for k, name in enumerate(hostile)]
    old = {k: v for k, v in REPORT.items() if k != "fold_choices"}
    (tmp_path / "tune.json").write_text(json.dumps(old), encoding="utf-8")
    (card, *_), _ = tune_blocks(tmp_path / "a")
    assert not [row for row in card["items"] if row[0].startswith("chosen without fold")]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("chosen", 5),
        ("baseline", ["a"]),
        ("chosen", None),
        ("facets", "x"),
        ("facets", {"values": [1]}),
        ("facets", {"values": {"en": 0.5}}),
    ],  # fmt: skip
)
def test_a_field_of_the_wrong_type_is_one_located_error(tmp_path: Path, key: str, value) -> None:
    with pytest.raises(InputError, match=f"field '{key}'"):  # before: TypeError, AttributeError
        tune_blocks(tune_dir(tmp_path, **{key: value, "by": "lang"}))


def test_facets_without_their_name_are_one_located_error(tmp_path: Path) -> None:
    facets = {"values": {"en": {"figure": 0.5}}, "p_value": 0.3}
    with pytest.raises(InputError, match="field 'by'"):  # before: KeyError
        tune_blocks(tune_dir(tmp_path, facets=facets))
    (card, facet), _ = tune_blocks(tune_dir(tmp_path, facets=facets, by="lang"))
    assert facet["items"][0] == ["lang en", 0.5, ["tune", "facets", "values", "en", "figure"]]
