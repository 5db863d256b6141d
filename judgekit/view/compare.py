"""Judges side by side and against humans, with judgekit's own statistics.

A *source* is one rater's labels in one run: the rows of the run's ``labels.csv`` (what
``judgekit calibrate`` reads), or, for a run without one, the labels its records give
(:mod:`judgekit.view.profiles`). Two runs over the same items (other judges or prompts) give
two sources; a jury run gives one per judge.

* :func:`compare_sources`: for every pair of sources with shared units, percent agreement (with
  a percentile bootstrap CI over units) and Cohen's kappa (with its asymptotic 95% CI,
  statsmodels via :func:`judgekit.metrics.agreement.cohen_kappa`; Cohen 1960), the confusion
  matrix and every disagreement, each linked to the record rows of both sides.
* :func:`against_humans`: each source against the human majority of a long ``item,rater,label``
  table by :func:`judgekit.calibration.judge.judge_vs_humans` (accuracy, macro-F1, Cohen's
  kappa with bootstrap CIs over items, confusion matrix; paper 001's validation protocol), the
  human ceiling next to it, every item where the judge and the majority differ, the items of
  each confusion cell, and every human vote (:mod:`judgekit.view.humans`).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.data.jsonfile import json_safe
from judgekit.data.vocabulary import canonical_id, label_text
from judgekit.errors import JudgekitError
from judgekit.labels.majority import TIE
from judgekit.labels.overlap import fold
from judgekit.view.data import RunData
from judgekit.view.humans import (
    MAX_LISTED,
    ceiling,
    cells,
    in_order,
    judges_left_out,
    votes_and_majority,
)
from judgekit.view.order import natural_sorted, ordered
from judgekit.view.profiles import profile

MAX_PAIRS = 28  # 8 sources


def sources(runs: list[RunData]) -> tuple[list[dict[str, Any]], list[dict[tuple[str, str], int]]]:
    """(sources, per run the link ``(unit, rater) -> row``) of ``runs`` (module doc).

    A source is ``{"id", "run", "rater", "name", "labels": {unit: label}, "origin"}``. The
    labels a run's records give are gathered only for a run without a labels.csv (the page shows
    the labels.csv sources of the others, never those).
    """
    out: list[dict[str, Any]] = []
    links: list[dict[tuple[str, str], int]] = []
    names = [r.name for r in runs]
    for index, run in enumerate(runs):
        link, derived = _links(run, derive=run.labels is None)
        links.append(link)
        if run.labels is not None:
            per: dict[str, dict[str, str]] = {}
            for item, rater, label in run.labels:
                per.setdefault(rater, {})[item] = label
            origin = "labels.csv"
        else:
            per, origin = derived, "records"
        for rater, labels in per.items():
            prefix = f"{run.name}" if names.count(run.name) == 1 else f"{run.name}#{index + 1}"
            name = rater if len(runs) == 1 else f"{prefix}: {rater}"
            out.append({"id": len(out), "run": index, "rater": rater, "name": name,
                        "labels": labels, "origin": origin})  # fmt: skip
    return out, links


def _links(
    run: RunData, *, derive: bool
) -> tuple[dict[tuple[str, str], int], dict[str, dict[str, str]]]:
    """(the link ``(unit, rater) -> first row`` of every labelled unit of ``run``'s records,
    and, where ``derive``, the labels they give per rater ``{rater: {unit: label}}``, the
    first a unit's; else {}). Units and labels in the text form labels.csv is read in."""
    prof = profile(run.pipeline)
    units_of, raters_of = prof.units, prof.raters
    link: dict[tuple[str, str], int] = {}
    derived: dict[str, dict[str, str]] = {}
    multi = len({r.get("sample_index") or 0 for r in run.records}) > 1
    for row, record in enumerate(run.records):
        for unit, label in units_of(record):
            unit, label = canonical_id(unit), label_text(label)  # as labels.csv reads
            if unit is None or label is None:
                continue
            raters = raters_of(record, multi)
            for rater in raters:
                link.setdefault((unit, rater), row)
            if derive:
                derived.setdefault(raters[0], {}).setdefault(unit, label)
    return link, derived


def _row(links: list[dict[tuple[str, str], int]], source: dict[str, Any], unit: str) -> int:
    return links[source["run"]].get((unit, source["rater"]), -1)


def _confusion(a: pd.Series, b: pd.Series) -> dict[str, Any]:
    table = pd.crosstab(a, b)
    table = table.loc[ordered(table.index), ordered(table.columns)]
    return {"index": [str(x) for x in table.index], "columns": [str(x) for x in table.columns],
            "data": table.to_numpy().tolist()}  # fmt: skip


def _lists(shared: list[str], la: list[str], lb: list[str], rows: list[list[int]]) -> dict:
    """Every disagreement ``[unit, label A, label B, row A, row B]``, and the units both sides
    label alike, per label: ``{label: {"n", "units": [[unit, row A, row B], ...]}}``, at most
    ``MAX_LISTED`` units a label (``n`` counts them all)."""
    differ, agree = [], {}
    for unit, x, y, (ra, rb) in zip(shared, la, lb, rows, strict=True):
        if x != y:
            differ.append([unit, x, y, ra, rb])
            continue
        entry = agree.setdefault(str(x), {"n": 0, "units": []})
        entry["n"] += 1
        if entry["n"] <= MAX_LISTED:
            entry["units"].append([unit, ra, rb])
    return {"disagreements": differ, "agreements": agree}


def shared_pairs(found: list[dict[str, Any]]) -> int:
    """How many pairs of sources share at least one unit (compared or not)."""
    units = [set(s["labels"]) for s in found]
    return sum(1 for i, a in enumerate(units) for b in units[i + 1 :] if a & b)


def compare_sources(
    found: list[dict[str, Any]],
    links: list[dict[tuple[str, str], int]],
    *,
    n_resamples: int = 1000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Every pair of sources with at least one shared unit (at most ``MAX_PAIRS``)."""
    from judgekit.metrics.agreement import cohen_kappa, percent_agreement

    pairs = []
    keys: dict[str, Any] = {}  # each unit's natural sort key, made once for every pair
    for i, a in enumerate(found):
        for b in found[i + 1 :]:
            if len(pairs) == MAX_PAIRS:
                break
            shared = natural_sorted(a["labels"].keys() & b["labels"].keys(), keys)
            if not shared:
                continue
            la, lb = (
                list(map(a["labels"].__getitem__, shared)),
                list(map(b["labels"].__getitem__, shared)),
            )
            frame = pd.DataFrame({"A": la, "B": lb}, index=shared, dtype=object)
            agree = percent_agreement(frame, ci=n_resamples > 0, n_resamples=n_resamples,
                                      seed=seed)  # fmt: skip
            kappa = cohen_kappa(frame)
            link_a, link_b = links[a["run"]], links[b["run"]]
            rows = [[link_a.get((unit, a["rater"]), -1), link_b.get((unit, b["rater"]), -1)]
                    for unit in shared]  # fmt: skip
            figures = json_safe({  # the lists below are plain text and ints already
                "agreement": {"value": agree.value, "ci": agree.ci},
                "kappa": {"value": kappa.value, "ci": kappa.details.get("asymptotic_ci")},
                "confusion": _confusion(frame["A"], frame["B"]),
            })  # fmt: skip
            pairs.append({
                "a": a["id"], "b": b["id"], "n": len(shared),
                "only_a": len(a["labels"]) - len(shared), "only_b": len(b["labels"]) - len(shared),
                **figures, **_lists(shared, la, lb, rows),
            })  # fmt: skip
    return pairs


def against_humans(
    found: list[dict[str, Any]],
    links: list[dict[tuple[str, str], int]],
    labels_path: str | Path,
    *,
    tie_policy: str = "exclude",
    n_resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Each source against the human majority of ``labels_path`` (module doc).

    Each source's label set is checked against the humans' first
    (:mod:`judgekit.labels.overlap`): labels that differ in case alone are one label (a
    warning says so), labels seen on one side only are a warning, both kept in the entry's
    ``labels``; a source that shares no label with the humans gets the error as its ``note``.

    Raises:
        InputError: the labels file is missing or malformed (file, line, field).
        LabelSetError: no source shares a label with the humans.
    """
    from judgekit.calibration.judge import judge_vs_humans
    from judgekit.labels.majority import majority_vote
    from judgekit.labels.overlap import LabelSetError
    from judgekit.labels.table import load_labels

    humans, left_out = judges_left_out(load_labels(labels_path, format="long"), found)
    reference = majority_vote(humans)
    disjoint: list[LabelSetError] = []
    out: dict[str, Any] = {"path": str(labels_path), "raters": [str(r) for r in humans.raters],
                           "n_items": int(len(reference)), "tie_policy": tie_policy,
                           "n_ties": int((reference == TIE).sum()), "judges": [],
                           "left_out": left_out, **votes_and_majority(humans)}  # fmt: skip
    for source in found:
        table = humans
        entry: dict[str, Any] = {"source": source["id"]}
        try:
            report = judge_vs_humans(
                pd.Series(source["labels"], dtype=object),
                table,
                tie_policy=tie_policy,  # type: ignore[arg-type]
                ci=n_resamples > 0,
                n_resamples=n_resamples,
                seed=seed,
                judge_name=f"judge '{source['name']}'",
            )
        except JudgekitError as exc:
            if isinstance(exc, LabelSetError):
                disjoint.append(exc)
            entry["note"] = str(exc)
            out["judges"].append(entry)
            continue
        result = report.to_dict()
        folded = result["labels"].get("folded") or {}
        ref = majority_vote(table).map(lambda v, f=folded: fold(v, f))
        listed = cells(source["labels"], ref, lambda unit, s=source: _row(links, s, unit))
        entry.update(
            n_items=result["n_items"], n_ties=result["n_ties"], n_unjudged=result["n_unjudged"],
            accuracy=result["accuracy"], macro_f1=result["macro_f1"], kappa=result["kappa"],
            confusion=in_order(result["confusion"]), per_class=result["per_class"],
            errors=result["errors"], **listed, labels=result["labels"],
            ceiling=ceiling(table, pd.Series(source["labels"], dtype=object),
                            tie_policy=tie_policy, n_resamples=n_resamples, seed=seed),
        )  # fmt: skip
        out["judges"].append(json_safe(entry))
    if found and len(disjoint) == len(found):
        raise disjoint[0]
    return out


def label_counts(source: dict[str, Any]) -> dict[str, int]:
    """How often each label occurs in a source."""
    return dict(Counter(source["labels"].values()).most_common())
