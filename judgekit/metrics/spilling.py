"""Spilling rates (paper 002, §3.4): the share of judged meanings the judge found invalid.

Input is one row per judged generation: ``model``, ``lang``, ``word``, ``sample``,
``n_judged`` (meanings judged, normally 5) and ``n_invalid`` (judged false). For every grouping
the tables give the pooled rate (sum invalid / sum judged, in [0, 1]), the mean and standard
deviation (ddof=1; NaN for one item) of the per-item rates, and the counts behind them.
Models are compared on their common items (:func:`model_comparison`,
:mod:`judgekit.metrics.common_items`).
"""

from __future__ import annotations

import pandas as pd

from judgekit.metrics.common_items import coverage

GROUPINGS: dict[str, list[str]] = {
    "by_item": ["model", "lang", "word"],
    "by_model_lang": ["model", "lang"],
    "by_lang": ["lang"],
    "by_model": ["model"],
    "by_word": ["word"],
}

_COLUMNS = ["n_items", "n_judged", "n_invalid", "spilling_rate", "mean_item_rate", "std_item_rate"]


def spilling_table(items: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Aggregate judged items by the columns ``by``.

    Args:
        items: one row per judged generation with columns model, lang, word, n_judged,
            n_invalid (n_invalid <= n_judged, n_judged >= 1).

    Returns:
        One row per group: ``by`` columns, n_items, n_judged, n_invalid, spilling_rate
        (pooled, [0, 1]), mean_item_rate and std_item_rate (over the group's items).

    Raises:
        ValueError: a row has n_judged < 1 or n_invalid outside [0, n_judged].
    """
    if items.empty:
        return pd.DataFrame(columns=[*by, *_COLUMNS])
    bad = (
        (items["n_judged"] < 1)
        | (items["n_invalid"] < 0)
        | (items["n_invalid"] > items["n_judged"])
    )
    if bad.any():
        raise ValueError(f"invalid counts in {int(bad.sum())} item rows")
    frame = items.assign(item_rate=items["n_invalid"] / items["n_judged"])
    grouped = frame.groupby(by, sort=True)
    out = grouped.agg(
        n_items=("item_rate", "size"),
        n_judged=("n_judged", "sum"),
        n_invalid=("n_invalid", "sum"),
        mean_item_rate=("item_rate", "mean"),
        std_item_rate=("item_rate", "std"),
    ).reset_index()
    out["spilling_rate"] = out["n_invalid"] / out["n_judged"]
    return out[[*by, *_COLUMNS]]


def all_tables(items: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Every grouping in ``GROUPINGS`` (per item, model x language, language, model, word)."""
    return {name: spilling_table(items, by) for name, by in GROUPINGS.items()}


def backcheck_table(rows: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """English back-check (paper 002, §5): share of rejected meanings accepted in English.

    Args:
        rows: one row per back-checked generation with n_rejected (meanings sent to the
            English judge) and n_accepted_en (judged valid against the English dictionary).

    Returns:
        ``by`` columns, n_rejected, n_accepted_en, accepted_share in [0, 1].
    """
    if rows.empty:
        return pd.DataFrame(columns=[*by, "n_rejected", "n_accepted_en", "accepted_share"])
    out = rows.groupby(by, sort=True)[["n_rejected", "n_accepted_en"]].sum().reset_index()
    out["accepted_share"] = out["n_accepted_en"] / out["n_rejected"]
    return out


MODEL_COLUMNS = ["model", "n_common", "n_judged_common", "n_invalid_common",
                 "spilling_rate_common", "rank", "incomplete"]  # fmt: skip


def model_comparison(items: pd.DataFrame) -> pd.DataFrame:
    """Spilling rate per model on the common items: the (lang, word, sample) generations judged
    for every model (:mod:`judgekit.metrics.common_items`).

    Args:
        items: one row per planned generation that any model could have had judged (items
            excluded up front for every model, with no translation or dictionary entry, left
            out) with columns model, lang, word, sample, excluded (None when judged), n_judged,
            n_invalid.

    Returns:
        One row per model: ``n_common`` (common items), ``n_judged_common`` and
        ``n_invalid_common`` (meanings on them), ``spilling_rate_common`` in [0, 1] (pooled; NaN
        without common items), ``rank`` (1 = lowest rate; NA without common items) and
        ``incomplete`` (the model has a generation that was not judged).
    """
    if items.empty:
        return pd.DataFrame(columns=MODEL_COLUMNS)
    keys = list(zip(items["lang"], items["word"], items["sample"], strict=True))
    cov = coverage(zip(items["model"], keys, items["excluded"].isna(), strict=True))
    in_common = pd.Series([k in cov.common for k in keys], index=items.index)
    common = items[in_common & items["excluded"].isna()]
    rows = []
    for model in sorted(cov.groups):
        part = common[common["model"] == model]
        judged, invalid = int(part["n_judged"].sum()), int(part["n_invalid"].sum())
        rows.append({"model": model, "n_common": cov.n_common, "n_judged_common": judged,
                     "n_invalid_common": invalid,
                     "spilling_rate_common": invalid / judged if judged else float("nan"),
                     "incomplete": cov.incomplete(model)})  # fmt: skip
    out = pd.DataFrame(rows)
    out["rank"] = out["spilling_rate_common"].rank(method="min").astype("Int64")
    return out[MODEL_COLUMNS]
