"""Per judge on the "Which judge?" tab: label-probability calibration (ECE) and cost per 1,000
items, each with the ``n`` it rests on.

* ECE: the expected calibration error of the judge's label probabilities against the human
  majority, as ``judgekit calibrate judge`` computes it (:func:`judgekit.calibration.confidence.
  confidence_report`, via :func:`judgekit.view.confidence.confidence_vs_humans`: top-label
  confidence, equal-width bins; Guo et al. 2017, "On Calibration of Modern Neural Networks",
  section 2), in [0, 1], lower is better; only where the run's records carry ``label_probs``.
* languages: the language of each item, where the run's ``items.jsonl`` rows carry one
  (``lang`` or ``language``), for the tab's per-language tables.
* cost per 1,000 items: the run's known cost in US dollars (``summary.json`` ``usage.totals``:
  :func:`judgekit.run_usage.usage_summary`) over the items the judge labelled, times 1,000; only
  where every call's price is known (``cost_unknown`` 0) and the run holds this one judge.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judgekit.data.languages import LANGUAGE_FIELDS, check_item_languages, language_value
from judgekit.view.data import RunData


def _cost(run: RunData, n_sources: int, n_items: int) -> dict[str, Any]:
    totals = (run.summary.get("usage") or {}).get("totals") or {}
    cost, unknown = totals.get("cost_usd"), totals.get("cost_unknown")
    if n_sources != 1:
        return {"note": "the run holds several judges: its cost is not split between them"}
    if cost is None or unknown is None or not n_items:
        return {"note": "the run's usage gives no cost"}
    if unknown:
        return {"note": f"{unknown} calls of unknown price: no cost per item"}
    return {"usd_per_1000": float(cost) / n_items * 1000, "n": n_items, "usd": float(cost)}


def judge_facts(
    found: list[dict[str, Any]],
    data: list[RunData],
    confidence: list[dict[str, Any]],
    wide_share: float,
) -> list[dict[str, Any]]:
    """One entry per label source: ``{"source", "name", "n_items", "ece": {"value", "ci", "n",
    "wide"} | {"note"}, "cost": {"usd_per_1000", "n", "usd"} | {"note"}}`` (module doc);
    ``wide``: the ECE's CI is wider than ``wide_share``. ``confidence`` is
    :func:`judgekit.view.confidence.confidence_vs_humans` of the same sources."""
    by_source = {c["source"]: c for c in confidence}
    per_run: dict[int, int] = {}
    for source in found:
        per_run[source["run"]] = per_run.get(source["run"], 0) + 1
    out = []
    for source in found:
        if not source["labels"]:
            continue
        n_items = len(source["labels"])
        conf = by_source.get(source["id"])
        if conf is None:
            ece: dict[str, Any] = {"note": "no label probabilities in this run's records"}
        elif "ece" not in conf:
            ece = {"note": conf.get("note", "no confidence figures")}
        else:
            ci = conf["ece"].get("ci")
            wide = ci is not None and ci[1] - ci[0] > wide_share
            ece = {"value": conf["ece"]["value"], "ci": ci, "n": conf["n_items"], "wide": wide}
        cost = _cost(data[source["run"]], per_run[source["run"]], n_items)
        out.append(
            {"source": source["id"], "name": source["name"], "n_items": n_items, "ece": ece,
             "cost": cost}
        )  # fmt: skip
    return out


def item_languages(data: list[RunData]) -> dict[str, str]:
    """item id -> language, from the ``lang`` (or ``language``) field of the runs' ``items.jsonl``
    rows (the first run that names an item's language wins); empty where no item carries one.
    Languages are read by the rule of every facet reader (:mod:`judgekit.data.languages`:
    ``DE`` is ``de``).

    Raises:
        InputError: a language that is not text, or an item whose ``language`` and ``lang``
            disagree (the run's ``items.jsonl``, field).
    """
    out: dict[str, str] = {}
    for run in data:
        path = Path(run.path) / "items.jsonl"
        for row in run.side.get("items.jsonl") or []:
            values = {f: language_value(row.get(f), path=path, field=f) for f in LANGUAGE_FIELDS}
            check_item_languages(str(row.get("id")), values, path=path)
            lang = values["lang"] or values["language"]
            if lang is not None and row.get("id") is not None:
                out.setdefault(str(row["id"]), lang)
    return out
