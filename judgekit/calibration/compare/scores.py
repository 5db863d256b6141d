"""Score judges compared with each other against human scores: the WMT metrics meta-evaluation.

Inputs are systems x segments matrices (:class:`ScoreMatrix`, "higher is better", NaN where
missing). Only the cells that the humans and every judge scored are used (the common cells);
every statistic of every judge is computed on them, so that two judges meet on the same data.

* system level (one score per system: the system file where given, else the mean over the
  common cells of that system): Pearson r, pairwise accuracy and soft pairwise accuracy (SPA,
  over the segments every kept system has, :mod:`judgekit.metrics.meta_eval`);
* segment level: Kendall tau-b over all common cells ("no grouping", ``tau_b``), tau-b within
  each source segment averaged over segments (``tau_b_item``), and acc_eq with tie calibration
  grouped by item (``acc_eq``: one epsilon per judge, searched by
  :func:`judgekit.metrics.tie_calibration.tie_calibration`), as the WMT23 metrics task defined
  its segment-level accuracy (Freitag et al. 2023, sec. 3; Deutsch et al. 2023, sec. 5).

Significance: PERM-BOTH between every pair of judges (z-normalised scores swapped per system at
the system level, per cell at the segment level), the pair-swapping variant for acc_eq
(:mod:`judgekit.metrics.perm_both`), then rank clusters. Bootstrap CIs: segments resampled (all
their systems together) for segment-level statistics and for system scores that are means of
segments; systems resampled where a system file gives the scores (they cannot be recomputed from
resampled segments); source segments for the item-grouped ones (epsilon fixed at its value).
SPA gets no CI: in a resample the repeated segments make every permutation p-value more
extreme, so the resampled SPA sits below the estimate (the percentile interval of the WMT23
en-de GEMBA-MQM SPA, 0.982, was [0.940, 0.981]); its paired test is the permutation test.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from scipy import stats

from judgekit.calibration.compare.coverage import Coverage, own_coverage_families
from judgekit.calibration.compare.results import Family
from judgekit.errors import JudgekitError
from judgekit.metrics.bootstrap import resample_weights
from judgekit.metrics.correlation import undefined_reasons
from judgekit.metrics.kendall_fast import (
    GroupedTau,
    HybridTau,
    WeightedTau,
    group_pairs,
    tau_b_rows,
)
from judgekit.metrics.meta_eval import (
    SPA_PERMUTATIONS,
    SPA_SEED,
    acc_eq_pairs,
    complementary_p_values,
    pairwise_accuracy_rows,
    pairwise_p_values,
    pearson_rows,
    spa_from_p,
    spa_signs,
    zscore,
)
from judgekit.metrics.perm_both import (
    PermutationSettings,
    linear_swap_test,
    pair_rng,
    swap_test,
)
from judgekit.metrics.tie_calibration import tie_calibration

SYSTEM_STATS = ("pearson", "pairwise_accuracy", "spa")
SEGMENT_STATS = ("tau_b", "tau_b_item", "acc_eq")
CHUNK = 50  # resamples or permutations scored per SPA batch


@dataclass
class ScoreMatrix:
    """Scores of one side: ``seg`` shape (systems, segments), NaN = missing; ``sys`` the
    system scores from a system file (shape (systems,), NaN = missing) or None."""

    seg: np.ndarray
    sys: np.ndarray | None = None


@dataclass
class ScoreFacet:
    """One facet value's comparison: the families, counts and notes (epsilons, dropped)."""

    families: list[Family]
    counts: dict[str, int]
    notes: list[str] = field(default_factory=list)
    epsilons: dict[str, float] = field(default_factory=dict)


@dataclass
class _Settings:
    facet: str
    n_resamples: int
    seed: int
    perm: PermutationSettings
    spa_permutations: int
    spa_seed: int


def _batched(fn, rows: np.ndarray) -> np.ndarray:
    return np.concatenate([fn(rows[k : k + CHUNK]) for k in range(0, rows.shape[0], CHUNK)])


def _system_vectors(side: ScoreMatrix, mask: np.ndarray) -> np.ndarray:
    if side.sys is not None:
        return side.sys
    with np.errstate(all="ignore"):
        return np.where(mask, side.seg, 0).sum(axis=1) / mask.sum(axis=1)


def _segment_means(side: ScoreMatrix, mask: np.ndarray, weights: np.ndarray) -> np.ndarray:
    sums = np.where(mask, side.seg, 0) @ weights.T
    with np.errstate(all="ignore"):
        return (sums / (mask.astype(float) @ weights.T)).T  # (R, S)


def _system_families(
    human: ScoreMatrix, judges: dict[str, ScoreMatrix], mask: np.ndarray, s: _Settings
) -> tuple[list[Family], list[str]]:
    keep = mask.any(axis=1)
    vectors = {j: _system_vectors(m, mask)[keep] for j, m in judges.items()}
    h = _system_vectors(human, mask)[keep]
    ok = ~np.isnan(h) & np.all([~np.isnan(v) for v in vectors.values()], axis=0)
    notes = [f"{int((~ok).sum())} systems without a system score left out"] if (~ok).any() else []
    h, vectors = h[ok], {j: v[ok] for j, v in vectors.items()}
    rows = np.flatnonzero(keep)[ok]
    sub = mask[rows]
    if h.size < 3:
        raise JudgekitError(f"{s.facet}: system level needs >= 3 systems, got {h.size}")
    fns = {"pearson": pearson_rows, "pairwise_accuracy": pairwise_accuracy_rows}
    dists: dict[str, dict[str, np.ndarray]] = {j: {} for j in judges}
    if s.n_resamples:
        systems = np.random.default_rng(s.seed).integers(0, h.size, (s.n_resamples, h.size))
        segments = resample_weights(mask.shape[1], s.n_resamples, s.seed)
        for j, m in judges.items():
            if m.sys is None and human.sys is None:
                x = _segment_means(ScoreMatrix(m.seg[rows]), sub, segments)
                y = _segment_means(ScoreMatrix(human.seg[rows]), sub, segments)
            else:
                x, y = vectors[j][systems], h[systems]
            dists[j] = {name: fn(x, y) for name, fn in fns.items()}
    families = []
    for name, fn in fns.items():

        def test(a: str, b: str, fn=fn, name=name):
            rng = pair_rng(s.perm.seed, s.facet, "system", name, a, b)
            return swap_test(
                lambda x: fn(x, h), zscore(vectors[a]), zscore(vectors[b]), s.perm, rng
            )

        values = {j: float(fn(v[None], h)[0]) for j, v in vectors.items()}
        family = Family(
            "system", name, values, {j: dists[j].get(name) for j in judges}, test, int(h.size)
        )
        family.notes = undefined_reasons(values, {j: (v, h) for j, v in vectors.items()})
        families.append(family)
    families.append(_spa_family(human, judges, mask[rows], rows, s))
    return families, notes


def _spa_family(
    human: ScoreMatrix,
    judges: dict[str, ScoreMatrix],
    sub: np.ndarray,
    rows: np.ndarray,
    s: _Settings,
) -> Family:
    columns = np.flatnonzero(sub.all(axis=0))
    if columns.size < 2:
        raise JudgekitError(f"{s.facet}: SPA needs segments scored for every system")
    signs = spa_signs(columns.size, s.spa_permutations, s.spa_seed)
    hs = human.seg[np.ix_(rows, columns)]
    js = {j: m.seg[np.ix_(rows, columns)] for j, m in judges.items()}
    p_h = pairwise_p_values(hs, signs)
    shape = hs.shape
    values = {j: float(spa_from_p(p_h, pairwise_p_values(v, signs))) for j, v in js.items()}
    dists: dict[str, np.ndarray | None] = {j: None for j in judges}  # no CI (module doc)

    def stat(x: np.ndarray) -> np.ndarray:
        return spa_from_p(p_h, pairwise_p_values(x.reshape(-1, *shape), signs))

    def test(a: str, b: str):
        rng = pair_rng(s.perm.seed, s.facet, "system", "spa", a, b)
        za, zb = zscore(js[a].ravel()), zscore(js[b].ravel())
        total = (za + zb).reshape(shape)

        def both(swap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            left = np.where(swap, zb, za).reshape(-1, *shape)
            p_left, p_right = complementary_p_values(left, total, signs)
            return spa_from_p(p_h, p_left), spa_from_p(p_h, p_right)

        return swap_test(stat, za, zb, s.perm, rng, pair_stat=both)

    family = Family("system", "spa", values, dists, test, int(shape[0]))
    family.notes = {j: f"over {columns.size} segments" for j in judges}
    return family


def _group_taus(x: np.ndarray, y: np.ndarray, first, second, bounds) -> np.ndarray:
    dx, dy = np.sign(x[first] - x[second]), np.sign(y[first] - y[second])
    starts = bounds[:-1]
    s = np.add.reduceat(dx * dy, starts)
    tx = np.add.reduceat((dx == 0).astype(float), starts)
    ty = np.add.reduceat((dy == 0).astype(float), starts)
    n0 = np.diff(bounds).astype(float)
    with np.errstate(all="ignore"):
        return np.where((n0 > tx) & (n0 > ty), s / np.sqrt((n0 - tx) * (n0 - ty)), np.nan)


def _resample_groups(per_group: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    defined = per_group[~np.isnan(per_group)]
    w = resample_weights(defined.size, n_resamples, seed)
    return (w @ defined) / defined.size


def _segment_families(
    human: ScoreMatrix, judges: dict[str, ScoreMatrix], mask: np.ndarray, s: _Settings
) -> tuple[list[Family], dict[str, float]]:
    cells = mask.T  # segment-major: a segment's cells side by side (the grouped kernels' memory)
    h = human.seg.T[cells]
    js = {j: m.seg.T[cells] for j, m in judges.items()}
    groups = np.nonzero(cells)[0]
    first, second, bounds = group_pairs(groups)
    epsilons, credits = {}, {}
    for j, x in js.items():
        calibration = tie_calibration(x, h, groups)
        epsilons[j] = calibration.epsilon
        credits[j], weights = acc_eq_pairs(x, h, first, second, bounds, calibration.epsilon)
    taus = {j: _group_taus(x, h, first, second, bounds) for j, x in js.items()}
    shares = {j: np.add.reduceat(c, bounds[:-1]) / np.diff(bounds) for j, c in credits.items()}
    values = {
        "tau_b": {j: float(stats.kendalltau(x, h, variant="b").statistic) for j, x in js.items()},
        "tau_b_item": {j: float(np.nanmean(t)) for j, t in taus.items()},
        "acc_eq": {j: float(c @ weights) for j, c in credits.items()},
    }
    dists: dict[str, dict[str, np.ndarray]] = {j: {} for j in judges}
    if s.n_resamples:
        segments, cell_segment = np.unique(groups, return_inverse=True)
        cell_weights = resample_weights(segments.size, s.n_resamples, s.seed)[:, cell_segment]
        for j, x in js.items():
            dists[j] = {
                "tau_b": WeightedTau(x, h)(cell_weights),  # segments resampled, systems with them
                "tau_b_item": _resample_groups(taus[j], s.n_resamples, s.seed),
                "acc_eq": _resample_groups(shares[j], s.n_resamples, s.seed),
            }
    z = {j: zscore(x) for j, x in js.items()}
    grouped = GroupedTau(h, groups)

    def test_tau(a: str, b: str):
        rng = pair_rng(s.perm.seed, s.facet, "segment", "tau_b", a, b)
        both = HybridTau(z[a], z[b], h)
        return swap_test(lambda x: tau_b_rows(x, h), z[a], z[b], s.perm, rng, pair_stat=both)

    def test_item(a: str, b: str):
        rng = pair_rng(s.perm.seed, s.facet, "segment", "tau_b_item", a, b)
        return swap_test(grouped, z[a], z[b], s.perm, rng, pair_stat=grouped.hybrids(z[a], z[b]))

    def test_acc(a: str, b: str):
        rng = pair_rng(s.perm.seed, s.facet, "segment", "acc_eq", a, b)
        return linear_swap_test(credits[a], credits[b], weights, s.perm, rng)

    families = []
    for name, test in (("tau_b", test_tau), ("tau_b_item", test_item), ("acc_eq", test_acc)):
        n = int(h.size) if name == "tau_b" else int(bounds.size - 1)
        family = Family(
            "segment", name, values[name], {j: dists[j].get(name) for j in judges}, test, n
        )
        if name == "acc_eq":
            family.notes = {j: f"epsilon {e:.4g}" for j, e in epsilons.items()}
        else:
            family.notes = undefined_reasons(values[name], {j: (x, h) for j, x in js.items()})
        families.append(family)
    return families, epsilons


def score_facet(
    human: ScoreMatrix,
    judges: dict[str, ScoreMatrix],
    *,
    facet: str,
    levels: tuple[str, ...] = ("system", "segment"),
    n_resamples: int = 1000,
    seed: int = 0,
    permutations: PermutationSettings | None = None,
    spa_permutations: int = SPA_PERMUTATIONS,
    spa_seed: int = SPA_SEED,
    common: bool = False,
) -> ScoreFacet:
    """Every statistic of the module doc for every judge.

    Coverage, as MT-Metrics-Eval computes it: each judge's statistics and CIs on the cells it
    and the humans scored, each pair's test on the cells both judges and the humans scored, and
    a note giving the cells of every judge and pair, so adding a judge with partial coverage
    changes no other judge's figures. With ``common`` (or where every judge covers the same
    cells) everything is on the cells every judge scored (a like-for-like table).

    Args:
        human, judges: systems x segments matrices on the same systems and segments.
        levels: which of "system", "segment" to compute.

    Raises:
        JudgekitError: no cell scored by the humans and every judge (with ``common``) or by the
            humans and some judge; fewer than 3 systems at the system level.
    """
    scored = ~np.isnan(human.seg)
    own = {}
    for name, m in judges.items():
        if m.seg.shape != human.seg.shape:
            raise JudgekitError("every judge needs the humans' systems x segments shape")
        own[name] = scored & ~np.isnan(m.seg)
    mask = np.logical_and.reduce(list(own.values()))
    settings = _Settings(
        facet, n_resamples, seed, permutations or PermutationSettings(), spa_permutations, spa_seed
    )
    if common or all((m == mask).all() for m in own.values()):
        if not mask.any():
            raise JudgekitError(f"{facet}: no segment scored by the humans and every judge")
        families, notes, epsilons = _families_on(human, judges, mask, settings, levels)
        return ScoreFacet(families, _counts(mask), notes, epsilons)
    return _own_coverage(human, judges, own, settings, levels)


def _counts(mask: np.ndarray) -> dict[str, int]:
    return {"systems": int(mask.any(axis=1).sum()), "segments": int(mask.any(axis=0).sum()),
            "cells": int(mask.sum())}  # fmt: skip


def _families_on(
    human: ScoreMatrix, judges: dict[str, ScoreMatrix], mask: np.ndarray, settings: _Settings,
    levels: tuple[str, ...],
) -> tuple[list[Family], list[str], dict[str, float]]:  # fmt: skip
    """The families of ``levels`` for ``judges`` on the cells of ``mask``."""
    families: list[Family] = []
    notes: list[str] = []
    epsilons: dict[str, float] = {}
    if "system" in levels:
        found, notes = _system_families(human, judges, mask, settings)
        families += found
    if "segment" in levels:
        found, epsilons = _segment_families(human, judges, mask, settings)
        families += found
    return families, notes, epsilons


def _own_coverage(
    human: ScoreMatrix, judges: dict[str, ScoreMatrix], own: dict[str, np.ndarray],
    settings: _Settings, levels: tuple[str, ...],
) -> ScoreFacet:  # fmt: skip
    """:func:`score_facet` where coverage differs (:mod:`judgekit.calibration.compare.coverage`):
    one judge at a time on its own cells, each pair's test (no resamples) on the pair's common
    cells."""
    notes = [f"{j}: no cell scored by it and the humans (left out)" for j, m in own.items()
             if not m.any()]  # fmt: skip
    own = {j: m for j, m in own.items() if m.any()}
    if not own:
        raise JudgekitError(f"{settings.facet}: no segment scored by the humans and a judge")
    epsilons: dict[str, float] = {}
    quick = replace(settings, n_resamples=0)

    def run(names: list[str], mask: np.ndarray, pair: bool) -> list[Family]:
        found, said, eps = _families_on(human, {j: judges[j] for j in names}, mask,
                                        quick if pair else settings, levels)  # fmt: skip
        if not pair:
            notes.extend(said)
            epsilons.update(eps)
        return found

    coverage = Coverage(own, np.logical_and, lambda m: int(m.sum()), "cells", "scored",
                        int(np.logical_and.reduce(list(own.values())).sum()))  # fmt: skip
    families = own_coverage_families(coverage, run, notes)
    return ScoreFacet(families, _counts(np.logical_or.reduce(list(own.values()))), notes, epsilons)
