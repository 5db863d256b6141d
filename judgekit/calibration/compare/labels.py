"""Label judges compared with each other against the human majority.

Every judge is scored on the items it and the humans labelled, each pair of judges tested on
the items both labelled, the items of each said (:mod:`judgekit.calibration.compare.coverage`,
the rule of score judges too); ``--common`` puts every judge on the items that the humans and
*every* judge labelled (like for like; the items a judge lacks are counted). The reference is
the humans' majority label with the calibration's tie policy (:mod:`judgekit.labels.majority`):

* accuracy, macro-F1 and Cohen's kappa as ``calibrate judge`` computes them
  (:class:`judgekit.metrics.classification.ReferenceScorer`, scikit-learn), and Gwet's AC1 by
  irrCAC over the category set of the items compared (every label the reference or a judge
  compared on them used), so that AC1's chance term is the same for the judges compared there;
* a percentile bootstrap CI over items (on shared items the same resampled items for every
  judge, so the CI of a difference between two judges, on the pair's items, is the paired
  bootstrap's);
* for every pair of judges the paired permutation test (:func:`judgekit.metrics.perm_both.
  swap_test`, the units being items: each permutation exchanges the two judges' labels on each
  item with probability 1/2), and the rank clusters;
* the human ceiling as a row: each human against the majority of the other humans, pooled over
  humans (:func:`judgekit.calibration.judge.human_ceiling`), on the items compared (any
  judge's with differing coverage), unranked
  because its references differ from the judges'; beside it each judge on the ceiling's own
  rows (``"<judge> on the ceiling's rows"``: its label against the same leave-one-out
  references, same resamples, ``n`` in items as the ceiling's), unranked too.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import sparse

from judgekit.calibration.compare.coverage import Coverage, own_coverage_families
from judgekit.calibration.compare.results import HUMAN_CEILING, Family, Row, on_ceiling
from judgekit.calibration.judge import human_ceiling
from judgekit.errors import JudgekitError, JudgekitWarning
from judgekit.labels.majority import TIE, TiePolicy, apply_ties, majority_vote
from judgekit.labels.table import LabelTable
from judgekit.metrics.agreement import gwet_ac1
from judgekit.metrics.bootstrap import resample_blocks
from judgekit.metrics.classification import CELL_METRICS, ReferenceScorer, cell_metrics
from judgekit.metrics.perm_both import PermutationSettings, pair_rng, swap_test

LEVEL = "item"
# the judges' rows on the ceiling's rows get a bootstrap CI up to this many human labels:
# human_ceiling's bootstrap scores each resample in Python (about 25 s per judge at 300,000
# rows, measured on a loaded shared 2-core machine); above it, the value alone, with a note
CEILING_CI_ROWS = 20_000
_BLOCK = 50  # bootstrap resamples drawn and scored at a time


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


def _resampled(coded: _Coded, n: int, n_resamples: int, seed: int) -> dict[str, dict]:
    """Each judge's bootstrap distribution of every statistic (name -> (n_resamples,)), from
    the same item resamples for every judge (the draws of
    :func:`judgekit.metrics.bootstrap.resample_weights`).

    Counts per item: an item adds its resample weight to one confusion cell, so a block of
    resamples' cells is one matrix product ``weights (B, n) @ one-hot cells (n, q * q)``; the
    resamples are drawn ``_BLOCK`` at a time (the same draws as all at once), so memory stays
    ``O(_BLOCK * n)`` and time linear in items."""
    if n_resamples <= 0:
        return {judge: {} for judge in coded.codes}
    q2 = coded.q * coded.q
    onehot = {  # (q * q, n): which cell each item adds to, sparse (memory O(n) for any q)
        j: sparse.csr_matrix((np.ones(n), (coded.t * coded.q + codes, np.arange(n))), (q2, n))
        for j, codes in coded.codes.items()
    }
    blocks: dict[str, list[np.ndarray]] = {j: [] for j in coded.codes}
    for weights in resample_blocks(n, n_resamples, seed, _BLOCK):
        w = weights.T.astype(np.float64)
        for judge, cells in onehot.items():
            blocks[judge].append(np.asarray(cells @ w).T.reshape(-1, coded.q, coded.q))
    dists = {}
    for judge, codes in coded.codes.items():
        seen = np.isin(np.arange(coded.q), np.unique(np.r_[coded.t, codes])) & coded.countable
        cells = np.concatenate(blocks[judge])
        dists[judge] = {m: coded.stat(m, cells, seen) for m in CELL_METRICS}
    return dists


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
    judges: dict[str, pd.Series] | None = None,
) -> tuple[list[Row], str]:
    """The human ceiling rows on ``items``: the items the judges labelled, the humans' majority
    ties INCLUDED (each human's leave-one-out reference has its own ties, under the policy).
    Keeping only the items whose majority does not tie would keep the items the humans agree
    on: with two raters, a ceiling of 1 by construction.

    Then, per judge of ``judges``, its row on the ceiling's own rows (``on_ceiling(name)``:
    :func:`human_ceiling` given the judge, its label against the same leave-one-out
    references, same resamples), ``n`` in the same unit as the ceiling's (distinct items); its
    CI only up to :data:`CEILING_CI_ROWS` human labels (said in the row's note above)."""
    if humans.n_raters < 2:
        return [], "human ceiling: one human rater, no held-out human to compare"
    keep = set(items)  # once: a set per index entry made this quadratic in items
    table = LabelTable(humans.frame.loc[[i for i in humans.frame.index if str(i) in keep]],
                       humans.source)  # fmt: skip
    labelled = int(table.frame.notna().to_numpy().sum())
    others_ci = n_resamples > 0 and labelled <= CEILING_CI_ROWS
    try:
        with warnings.catch_warnings():  # the label check was said once, by check_overlap
            warnings.simplefilter("ignore", JudgekitWarning)
            report = human_ceiling(table, tie_policy=tie_policy, ci=n_resamples > 0,
                                   n_resamples=n_resamples, confidence=confidence, seed=seed,
                                   metrics=CELL_METRICS, others=judges or {},
                                   others_ci=others_ci)  # fmt: skip
    except JudgekitError as exc:
        return [], f"human ceiling: {exc}"
    rows = _ceiling_rows(HUMAN_CEILING, report.humans, report.n_rows, report.n_items, facet)
    for name, got in report.others.items():
        got_rows = _ceiling_rows(on_ceiling(name), got["scores"], got["n_rows"], got["n_items"],
                                 facet)  # fmt: skip
        if n_resamples > 0 and not others_ci:
            for row in got_rows:
                row.note += f"; no CI above {CEILING_CI_ROWS:,} human labels (its bootstrap's time)"
        rows += got_rows
    return rows, ""


def _ceiling_rows(name: str, estimates: dict, n_rows: int, n_items: int, facet: str) -> list[Row]:
    """One row per statistic of a ceiling report's ``estimates``; ``n`` = distinct items."""
    rows = []
    for statistic, est in estimates.items():
        low, high = est.ci if est.ci else (None, None)
        rows.append(
            Row(name, facet, LEVEL, statistic, est.value, low, high, None, n_items,
                f"{n_rows} (human, item) rows, each human vs the majority of the others")
        )  # fmt: skip
    return rows


def _families(
    judges: dict[str, pd.Series], base: pd.DataFrame, *, facet: str,
    tie_policy: TiePolicy, n_resamples: int, seed: int, perm: PermutationSettings,
) -> list[Family]:  # fmt: skip
    """One family per statistic of ``judges`` on the items of ``base`` (``item`` and
    ``reference`` columns, ties already applied): values, bootstrap distributions, the paired
    permutation test and the paired bootstrap of a delta."""
    pairs = {
        j: base.assign(label=labels[base["item"]].to_numpy()).reset_index(drop=True)
        for j, labels in judges.items()
    }
    coded = _Coded(pairs, tie_policy)
    points = {j: _points(p, coded, tie_policy) for j, p in pairs.items()}
    n = len(base)
    dists = _resampled(coded, n, n_resamples, seed)
    families = []
    for name in CELL_METRICS:

        def test(a: str, b: str, name: str = name):
            stat = lambda rows: coded.stat(name, coded.cells(rows))  # noqa: E731
            rng = pair_rng(perm.seed, facet, LEVEL, name, a, b)
            return swap_test(stat, coded.codes[a], coded.codes[b], perm, rng)

        def delta(a: str, b: str, name: str = name):
            return dists[a][name] - dists[b][name]

        families.append(Family(
            LEVEL, name, {j: points[j][name] for j in judges},
            {j: dists[j].get(name) for j in judges}, test, n,
            delta_dist=delta if n_resamples > 0 else None,
        ))  # fmt: skip
    return families


def _base(reference: pd.Series, items: list[str], tie_policy: TiePolicy) -> pd.DataFrame:
    frame = pd.DataFrame({"item": items, "reference": reference[items].to_numpy()})
    return apply_ties(frame, tie_policy)


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
    common: bool = False,
) -> LabelFacet:
    """Compare label ``judges`` (name -> Series item -> label text) against ``humans`` (module
    doc) on one facet value's items.

    Coverage, as :func:`judgekit.calibration.compare.scores.score_facet` (one rule,
    :mod:`judgekit.calibration.compare.coverage`): each judge's statistics and CIs on the items
    it and the humans labelled (a human tie counted as the tie policy says), each pair's test
    and delta CI on the items both judges labelled, a note giving the items of every judge and
    pair, so adding a judge with partial coverage changes no other judge's figures. With
    ``common`` (or where every judge labelled the same items) everything is on the items every
    judge labelled, the human ceiling included.

    Raises:
        JudgekitError: no item labelled by the humans and every judge (with ``common``) or by
            the humans and some judge; every such item is a human tie (under "exclude").
    """
    perm = permutations or PermutationSettings()
    reference = majority_vote(humans)
    labelled = {name: [i for i in reference.index if i in j.index] for name, j in judges.items()}
    first = next(iter(labelled.values()))
    run = dict(facet=facet, tie_policy=tie_policy, n_resamples=n_resamples, seed=seed, perm=perm)
    if common or all(items == first for items in labelled.values()):
        return _common_facet(judges, humans, reference, confidence, run)
    kept = set(_base(reference, list(reference.index), tie_policy)["item"])
    own = {j: [i for i in items if i in kept] for j, items in labelled.items()}
    notes = [f"{j}: no item labelled by it and the humans, human ties left out (left out)"
             for j, items in own.items() if not items]  # fmt: skip
    own = {j: items for j, items in own.items() if items}
    if not own:
        raise JudgekitError(f"{facet}: no item is labelled by the humans and a judge")

    def families_on(names: list[str], items: list[str], pair: bool) -> list[Family]:
        part = {j: judges[j] for j in names}
        return _families(part, _base(reference, items, tie_policy), **run)  # type: ignore[arg-type]

    def both(a: list[str], b: list[str]) -> list[str]:
        inside = set(b)
        return [i for i in a if i in inside]

    coverage = Coverage(
        own, both, len, "items", "labelled", len(set.intersection(*map(set, own.values())))
    )
    families = own_coverage_families(coverage, families_on, notes)
    union = set().union(*own.values())
    items = [i for i in reference.index if i in union]
    judged = list(set().union(*labelled.values()))
    n_ties = int((reference[judged] == TIE).sum())
    ceiling, note = _ceiling(humans, judged, tie_policy, facet, n_resamples, confidence, seed,
                             judges)  # fmt: skip
    notes += [note] if note else []
    return LabelFacet(families, ceiling, len(items), n_ties, notes)


def _common_facet(
    judges: dict[str, pd.Series], humans: LabelTable, reference: pd.Series, confidence: float,
    run: dict,
) -> LabelFacet:  # fmt: skip
    """:func:`label_facet` on the items every judge labelled."""
    facet = run["facet"]
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
    base = _base(reference, items, run["tie_policy"])
    if base.empty:
        raise JudgekitError(f"{facet}: every item shared by the judges is a human tie")
    families = _families(judges, base, **run)
    ceiling, note = _ceiling(humans, items, run["tie_policy"], facet, run["n_resamples"],
                             confidence, run["seed"], judges)  # fmt: skip
    return LabelFacet(families, ceiling, len(base), n_ties, notes + ([note] if note else []))
