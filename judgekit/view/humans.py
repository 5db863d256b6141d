"""What the judge-vs-humans views add to :func:`judgekit.view.compare.against_humans`: every
human vote per item, the human majority per item, the human ceiling next to each judge, and the
items of every confusion cell.

* votes and majority: the long ``item,rater,label`` table as ``{unit: [[rater, label], ...]}``
  and :func:`judgekit.labels.majority.majority_vote` (``"<tie>"`` where the top count is shared),
  so each disagreement shows the individual votes behind it;
* ceiling: :func:`judgekit.calibration.judge.human_ceiling`, the figure ``judgekit calibrate
  judge`` prints: each human against the majority of the *other* humans, pooled, and the judge
  on exactly the same references and rows (so "judge 0.74 vs ceiling 0.79" compares like with
  like); a note where it cannot be computed (one human only);
* cells: the items of the confusion matrix cell (human majority, judge label) with the record
  row behind each, listed in natural order (at most ``MAX_LISTED`` per agreeing cell).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from judgekit.errors import JudgekitError
from judgekit.labels.majority import TIE
from judgekit.view.order import natural_key, ordered

MAX_LISTED = 500  # agreeing items listed per label; the count is always whole


def votes_and_majority(humans: Any) -> dict[str, Any]:
    """``{"votes": {item: [[rater, label], ...]}, "majority": {item: label}}`` of a label
    table (:class:`judgekit.labels.table.LabelTable`), raters in the table's order."""
    from judgekit.labels.majority import majority_vote

    votes: dict[str, list[list[str]]] = {}
    frame = humans.frame
    for rater in frame.columns:
        for item, label in frame[rater].items():
            if label is not None and not (isinstance(label, float) and pd.isna(label)):
                votes.setdefault(str(item), []).append([str(rater), str(label)])
    majority = {str(k): str(v) for k, v in majority_vote(humans).items()}
    return {"votes": votes, "majority": majority}


def ceiling(table: Any, labels: pd.Series, *, tie_policy: str, n_resamples: int,
            seed: int) -> dict[str, Any]:  # fmt: skip
    """The human ceiling of one judge (module doc): ``{"humans": {metric: {value, ci}},
    "judge": {...}, "n_rows", "n_items", "n_ties"}`` (accuracy and macro-F1 in [0, 1], kappa in
    [-1, 1]; CIs from a bootstrap over items), or ``{"note"}`` when it cannot be computed."""
    from judgekit.calibration.judge import human_ceiling

    try:
        report = human_ceiling(table, labels, tie_policy=tie_policy,  # type: ignore[arg-type]
                               ci=n_resamples > 0, n_resamples=n_resamples, seed=seed)  # fmt: skip
    except JudgekitError as exc:
        return {"note": str(exc)}
    out = report.to_dict()
    return {k: out[k] for k in ("humans", "judge", "n_rows", "n_items", "n_ties")}


def cells(labels: dict[str, str], reference: pd.Series, row: Any) -> dict[str, Any]:
    """Every item the judge and a (non-tie) human majority both label, by cell:
    ``{"disagreements": [[item, majority, judge, row], ...], "agreements": {label: {"n",
    "units": [[item, row], ...]}}}``; ``row(item)`` is the judge's record row (-1: none)."""
    wrong: list[list[Any]] = []
    agree: dict[str, dict[str, Any]] = {}
    for item in sorted(labels, key=natural_key):
        ref = reference.get(item)
        if ref is None or ref == TIE:
            continue
        if ref != labels[item]:
            wrong.append([item, ref, labels[item], row(item)])
            continue
        entry = agree.setdefault(str(ref), {"n": 0, "units": []})
        entry["n"] += 1
        if entry["n"] <= MAX_LISTED:
            entry["units"].append([item, row(item)])
    return {"disagreements": wrong, "agreements": agree}


def in_order(confusion: dict[str, Any]) -> dict[str, Any]:
    """A ``{index, columns, data}`` confusion matrix with rows and columns in display order
    (:func:`judgekit.view.order.ordered`: severities as a scale, ids as numbers)."""
    index, columns = list(confusion["index"]), list(confusion["columns"])
    rows, cols = ordered(index), ordered(columns)
    data = [[confusion["data"][index.index(r)][columns.index(c)] for c in cols] for r in rows]
    return {"index": rows, "columns": cols, "data": data}


def judges_left_out(humans: Any, found: list[dict[str, Any]]) -> tuple[Any, list[str]]:
    """The humans' table without every rater that is a judge on the page (a human file that
    also holds a judge's rater name), and one note per rater left out
    (:func:`judgekit.labels.overlap.without_judge`, as ``calibrate judge`` and the Which judge?
    tab leave it out): every judge is scored against the same humans, so the human majority and
    its tie count are one figure on the whole page."""
    from judgekit.labels.overlap import without_judge

    notes = []
    for source in found:
        humans, note = without_judge(
            humans, source["rater"], judge_name=f"judge '{source['name']}'", warn=False
        )
        if note:
            notes.append(note)
    return humans, notes
