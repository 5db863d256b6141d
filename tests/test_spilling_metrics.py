"""Spilling-rate arithmetic on hand-computed cases (paper 002, §3.4)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from judgekit.metrics.spilling import backcheck_table, spilling_table

ITEMS = pd.DataFrame(
    [
        # model, lang, word, n_judged, n_invalid
        ("m1", "de", "head", 5, 1),
        ("m1", "de", "line", 5, 3),
        ("m1", "fr", "head", 5, 0),
        ("m2", "de", "head", 5, 5),
    ],
    columns=["model", "lang", "word", "n_judged", "n_invalid"],
)


def test_rate_per_model_and_language() -> None:
    table = spilling_table(ITEMS, ["model", "lang"]).set_index(["model", "lang"])
    # m1/de: (1 + 3) / 10 = 0.4; item rates 0.2 and 0.6 -> mean 0.4, sd (ddof 1) 0.2828...
    assert table.loc[("m1", "de"), "spilling_rate"] == pytest.approx(0.4)
    assert table.loc[("m1", "de"), "std_item_rate"] == pytest.approx(math.sqrt(0.08))
    assert table.loc[("m1", "fr"), "spilling_rate"] == 0.0
    assert math.isnan(table.loc[("m1", "fr"), "std_item_rate"])  # one item: no sd
    assert table.loc[("m2", "de"), "spilling_rate"] == 1.0


def test_rate_per_language_pools_models() -> None:
    table = spilling_table(ITEMS, ["lang"]).set_index("lang")
    assert table.loc["de", "n_judged"] == 15 and table.loc["de", "n_invalid"] == 9
    assert table.loc["de", "spilling_rate"] == pytest.approx(9 / 15)
    # mean of item rates 0.2, 0.6, 1.0
    assert table.loc["de", "mean_item_rate"] == pytest.approx(0.6)


def test_rate_per_word() -> None:
    table = spilling_table(ITEMS, ["word"]).set_index("word")
    assert table.loc["head", "spilling_rate"] == pytest.approx(6 / 15)
    assert table.loc["line", "n_items"] == 1


def test_bad_counts_raise() -> None:
    bad = ITEMS.assign(n_invalid=[6, 0, 0, 0])
    with pytest.raises(ValueError, match="invalid counts"):
        spilling_table(bad, ["lang"])


def test_backcheck_share() -> None:
    rows = pd.DataFrame(
        [("de", 4, 3), ("de", 1, 0), ("fr", 2, 2)], columns=["lang", "n_rejected", "n_accepted_en"]
    )
    table = backcheck_table(rows, ["lang"]).set_index("lang")
    assert table.loc["de", "accepted_share"] == pytest.approx(0.6)
    assert table.loc["fr", "accepted_share"] == 1.0


def test_every_language_is_reported_with_its_rate_or_why_it_has_none() -> None:
    from types import SimpleNamespace

    from judgekit.pipelines.spilling import ItemResult, _generation_exclusion
    from judgekit.report.spilling import item_status
    from judgekit.runlog import Record

    def gen(status: str, reason: str | None) -> Record:
        return Record(key="k", stage="generate", role="generator", route="r", model="m",
                      prompt_id="p", prompt_hash="h", status=status, reason=reason)  # fmt: skip

    assert _generation_exclusion(gen("unscored", "schema: meanings are not distinct")) == (
        "not_5_distinct_meanings"
    )
    assert _generation_exclusion(gen("unscored", "truncated: finish_reason=length")) == (
        "generation_truncated"
    )
    assert _generation_exclusion(gen("error", "transient: timeout")) == "generation_error"
    results = [
        ItemResult("m", "hi", "head", "सिर", 0, excluded="not_5_distinct_meanings"),
        ItemResult("m", "de", "head", "Kopf", 0, valid=[True] * 5),
        ItemResult("m", "hi", "line", "रेखा", 0, excluded="generation_truncated"),
        ItemResult("m", "de", "line", "Linie", 0, excluded="no_dictionary_entry"),
    ]
    run = SimpleNamespace(results=results, options=SimpleNamespace(languages=["de", "hi"]))
    assert item_status(run) == [
        {"model": "m", "lang": "de", "planned": 2, "judged": 1,
         "excluded": {"no_dictionary_entry": 1}},
        {"model": "m", "lang": "hi", "planned": 2, "judged": 0,
         "excluded": {"not_5_distinct_meanings": 1, "generation_truncated": 1}},
    ]  # fmt: skip
