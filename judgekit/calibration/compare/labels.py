"""Label judges compared with each other against the human majority, on the same items.

Every judge is scored on the items that the humans and *every* judge labelled (so the paired
tests and the clusters compare like with like; the items a judge lacks are counted), against
the humans' majority label with the calibration's tie policy (:mod:`judgekit.labels.majority`):

* accuracy, macro-F1 and Cohen's kappa as ``calibrate judge`` computes them
  (:class:`judgekit.metrics.classification.ReferenceScorer`, scikit-learn), and Gwet's AC1 by
  irrCAC over the category set of the whole comparison (every label any side used), so that
  AC1's chance term is the same for every judge;
* a percentile bootstrap CI over items (the same resampled items for every judge, so the CI of
  a difference between two judges is the paired bootstrap's);
* for every pair of judges the paired permutation test (:func:`judgekit.metrics.perm_both.
  swap_test`, the units being items: each permutation exchanges the two judges' labels on each
  item with probability 1/2), and the rank clusters;
* the human ceiling as a row: each human against the majority of the other humans, pooled over
  humans (:func:`judgekit.calibration.judge.human_ceiling`), on the same items, unranked
  because its references differ from the judges'.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from judgekit.calibration.compare.results import HUMAN_CEILING, Family, Row
from judgekit.calibration.judge import human_ceiling
from judgekit.errors import JudgekitError
from judgekit.labels.majority import TIE, TiePolicy, apply_ties, majority_vote
from judgekit.labels.table import LabelTable
from judgekit.metrics.agreement import gwet_ac1
from judgekit.metrics.bootstrap import resample_weights
from judgekit.metrics.classification import CELL_METRICS, ReferenceScorer, cell_metrics
from judgekit.metrics.perm_both import PermutationSettings, pair_rng, swap_test

LEVEL = "item"


@dataclass
class LabelFacet:
    """One facet value's label comparison: the families (one per statistic), the human
    ceiling rows, ``n_items`` compared, ``n_ties`` and notes (items each judge lacks)."""

    families: list[Family]
    ceiling: list[Row]
    n_items: int
    n_ties: int
    notes: list[str] = field(default_factory=list)


class _Coded:
    """The compared items coded once: reference codes ``t`` (n,), judge codes, the category
    set ``universe`` (TIE last) and each judge's macro-F1 classes."""

    def __init__(self, pairs: dict[str, pd.DataFrame], tie_policy: str) -> None:
        first = next(iter(pairs.values()))
        seen = set(first["reference"]).union(*(set(p["label"]) for p in pairs.values()))
        self.universe = sorted(seen - {TIE}) + ([TIE] if TIE in seen else [])
        code = {label: k for k, label in enumerate(self.universe)}
        self.q = len(self.universe)
        self.t = first["reference"].map(code).to_numpy()
        self.codes = {j: p["label"].map(code).to_numpy() for j, p in pairs.items()}
        self.countable = np.array([c != TIE or tie_policy == "own_class" for c in self.universe])

    def cells(self, rows: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """Confusion matrices (B, q, q) of label-code rows (B, n), optionally weighted (B, n)."""
        rows = np.atleast_2d(rows)
        flat = (np.arange(rows.shape[0])[:, None] * self.q**2 + self.t * self.q + rows).ravel()
        w = None if weights is None else np.asarray(weights, dtype=float).ravel()
        counts = np.bincount(flat, weights=w, minlength=rows.shape[0] * self.q**2)
        return counts.reshape(rows.shape[0], self.q, self.q)

    def stat(self, name: str, cells: np.ndarray, classes: np.ndarray | None = None) -> np.ndarray:
        if classes is None:  # the labels seen (reference or judge) in each row, as sklearn's
            classes = ((cells.sum(axis=-1) + cells.sum(axis=-2)) > 0) & self.countable
        return cell_metrics(cells, classes)[name]


def _points(pairs: pd.DataFrame, coded: _Coded, tie_policy: TiePolicy) -> dict[str, float]:
    scorer = ReferenceScorer(pairs, tie_policy)
    out = {m: scorer.metric(m) for m in ("accuracy", "macro_f1", "kappa")}
    frame = pd.DataFrame({"r": pairs["reference"].to_numpy(), "j": pairs["label"].to_numpy()})
    out["ac1"] = (
        float(gwet_ac1(frame, categories=coded.universe).value) if len(frame) > 1 else np.nan
    )
    return out


def _ceiling(
    humans: LabelTable,
    items: list[str],
    tie_policy: TiePolicy,
    facet: str,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> tuple[list[Row], str]:
    if humans.n_raters < 2:
        return [], "human ceiling: one human rater, no held-out human to compare"
    frame = humans.frame.loc[[i for i in humans.frame.index if str(i) in set(items)]]
    try:
        report = human_ceiling(
            LabelTable(frame, humans.source),
            tie_policy=tie_policy,
            ci=n_resamples > 0,
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
            metrics=CELL_METRICS,
        )
    except JudgekitError as exc:
        return [], f"human ceiling: {exc}"
    rows = []
    for name, est in report.humans.items():
        low, high = est.ci if est.ci else (None, None)
        rows.append(
            Row(
                HUMAN_CEILING,
                facet,
                LEVEL,
                name,
                est.value,
                low,
                high,
                None,
                report.n_items,
                f"{report.n_rows} (human, item) rows",
            )
        )
    return rows, ""


def label_facet(
    judges: dict[str, pd.Series],
    humans: LabelTable,
    *,
    facet: str,
    tie_policy: TiePolicy = "exclude",
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    permutations: PermutationSettings | None = None,
) -> LabelFacet:
    """Compare label ``judges`` (name -> Series item -> label text) against ``humans`` (module
    doc) on one facet value's items.

    Raises:
        JudgekitError: no item labelled by the humans and every judge.
    """
    perm = permutations or PermutationSettings()
    reference = majority_vote(humans)
    items = [i for i in reference.index if all(i in j.index for j in judges.values())]
    notes = [
        f"{name}: {len(reference.index.difference(j.index))} human-labelled items not "
        "labelled (left out for every judge)"
        for name, j in judges.items()
        if len(reference.index.difference(j.index))
    ]
    if not items:
        raise JudgekitError(f"{facet}: no item is labelled by the humans and every judge")
    n_ties = int((reference[items] == TIE).sum())
    base = apply_ties(
        pd.DataFrame({"item": items, "reference": reference[items].to_numpy()}), tie_policy
    )
    if base.empty:
        raise JudgekitError(f"{facet}: every item shared by the judges is a human tie")
    pairs = {
        j: base.assign(label=labels[base["item"]].to_numpy()).reset_index(drop=True)
        for j, labels in judges.items()
    }
    coded = _Coded(pairs, tie_policy)
    points = {j: _points(p, coded, tie_policy) for j, p in pairs.items()}
    n = len(base)
    weights = resample_weights(n, n_resamples, seed) if n_resamples > 0 else None
    dists: dict[str, dict[str, np.ndarray]] = {}
    for judge, codes in coded.codes.items():
        if weights is None:
            dists[judge] = {}
            continue
        rows = np.broadcast_to(codes, weights.shape)
        seen = np.isin(np.arange(coded.q), np.unique(np.r_[coded.t, codes])) & coded.countable
        cells = coded.cells(rows, weights)
        dists[judge] = {m: coded.stat(m, cells, seen) for m in CELL_METRICS}
    families = []
    for name in CELL_METRICS:

        def test(a: str, b: str, name: str = name):
            stat = lambda rows: coded.stat(name, coded.cells(rows))  # noqa: E731
            rng = pair_rng(perm.seed, facet, LEVEL, name, a, b)
            return swap_test(stat, coded.codes[a], coded.codes[b], perm, rng)

        def delta(a: str, b: str, name: str = name):
            return dists[a][name] - dists[b][name]

        families.append(
            Family(
                LEVEL,
                name,
                {j: points[j][name] for j in judges},
                {j: dists[j].get(name) for j in judges},
                test,
                n,
                delta_dist=delta if weights is not None else None,
            )
        )
    ceiling, note = _ceiling(
        humans, list(base["item"]), tie_policy, facet, n_resamples, confidence, seed
    )
    return LabelFacet(families, ceiling, n, n_ties, notes + ([note] if note else []))
