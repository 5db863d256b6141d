"""The judges' confidence against the human labels, for ``judgekit view --labels``.

A source (:func:`judgekit.view.compare.sources`) whose run's ``ok`` records carry
``label_probs`` gets the figures of ``judgekit calibrate judge`` with probabilities: its
probabilities are read by :func:`judgekit.calibration.confidence_inputs.load_label_probs` (the
one reader of label probabilities) and scored by
:func:`judgekit.calibration.confidence.confidence_report` against the majority of the other
human raters (the label sets case-folded as ``calibrate judge`` folds them): expected
calibration error and Brier score with bootstrap CIs, the reliability bins (n, mean
confidence, accuracy) and selective judging. The page draws the reliability diagram from the
bins; no figure is computed in the page.

A run whose records hold no ``label_probs`` gives nothing (no card, no note). A source whose
probabilities cannot be scored (no item with a human majority, a rater without probabilities,
a pairwise judge, whose records are not read) gets ``{"source", "name", "note"}``: said on the
page, never silent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.data.jsonfile import json_safe
from judgekit.errors import InputError, JudgekitError
from judgekit.view.data import RunData
from judgekit.view.humans import judges_left_out


def has_label_probs(run: RunData) -> bool:
    """True when an ``ok`` record of ``run`` carries ``label_probs``."""
    return any(r.get("status") == "ok" and r.get("label_probs") for r in run.records)


def confidence_vs_humans(
    found: list[dict[str, Any]],
    runs: list[RunData],
    labels_path: str | Path,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """One entry per source with label probabilities, in source order: ``{"source", "name",
    **ConfidenceReport.to_dict()}`` (ECE in [0, 1], Brier in [0, 2], each ``{value, ci}``;
    ``bins`` and ``selective`` as :class:`~judgekit.calibration.confidence.ConfidenceReport`
    gives them), or ``{"source", "name", "note"}``; [] when no run has ``label_probs``.

    Raises:
        InputError: the labels file is missing or malformed, or a record's probabilities are
            not numbers in [0, 1] summing to 1 (file, line, field).
    """
    from judgekit.calibration.confidence import confidence_report
    from judgekit.calibration.confidence_inputs import load_label_probs
    from judgekit.labels.majority import judge_labels, majority_vote
    from judgekit.labels.overlap import align_labels
    from judgekit.labels.table import load_labels

    with_probs = {i for i, run in enumerate(runs) if has_label_probs(run)}
    chosen = [s for s in found if s["run"] in with_probs and s["labels"]]
    if not chosen:
        return []
    humans, _ = judges_left_out(load_labels(labels_path, format="long"), found)
    out = []
    for source in chosen:
        entry: dict[str, Any] = {"source": source["id"], "name": source["name"]}
        try:
            probs, _ = load_label_probs(runs[source["run"]].path, source["rater"])
        except InputError as exc:
            if exc.field != "rater":  # a malformed record: the file's error, as calibrate says
                raise
            entry["note"] = f"no confidence figures: {exc.message}"
            out.append(entry)
            continue
        if probs.empty:  # pairwise records (two orders) are not read: load_label_probs
            entry["note"] = (
                "no confidence figures: no label probabilities of this rater are read"
                " (a pairwise judge's are not: its two orders need unswapping)"
            )
            out.append(entry)
            continue
        table = humans
        try:
            labels, table, _ = align_labels(
                judge_labels(pd.Series(source["labels"], dtype=object)), table,
                judge_name=f"judge '{source['name']}'", warn=False,
            )  # fmt: skip
            report = confidence_report(probs, majority_vote(table), judge_labels=labels,
                                       n_resamples=n_resamples, seed=seed)  # fmt: skip
        except JudgekitError as exc:
            entry["note"] = f"no confidence figures: {exc}"
        else:
            entry.update(report.to_dict())
        out.append(json_safe(entry))
    return out
