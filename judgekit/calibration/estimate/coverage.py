"""Coverage and width of the estimates on fully labelled data: draw the human-labelled subset
many times and count how often each method's interval holds the full-human value.

This is how judgekit validates its intervals on real data (docs/estimates.md,
``bench/estimates.py``): with every item labelled by humans, the full-human mean is known; a
draw keeps the human labels of ``n`` items chosen at random and hides the rest, and each
method's CI is checked against the full-human mean.

All draws of one setting are computed at once, with the formulas of
:mod:`judgekit.calibration.estimate.intervals` (``ppi_py``'s estimate, SE and ``lam`` rule,
tested equal to ``ppi_py``): the CLT and t intervals from each draw's sums, and the bootstrap-t
from the same resamples ``calibrate estimate`` draws with the same seed. The resample indices
(:func:`~judgekit.metrics.bootstrap.resample_indices`) become count matrices, and
a resample's sums over a draw's items are the count matrix times the draw's values (one matrix
product for every draw), so each draw's interval is the one ``estimate_mean`` gives on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from judgekit.calibration.estimate import intervals as iv
from judgekit.errors import JudgekitError
from judgekit.metrics.bootstrap import resample_indices

COVERAGE_METHODS = ("classical", "ppi", "ppi++")
STUDY_INTERVALS = ("clt", "t", "bootstrap-t", "auto")
DRAW_CHUNK_VALUES = 2_000_000  # draws x resamples held at once


@dataclass(frozen=True)
class Coverage:
    """Result of one setting (one population, one ``n``) for one method and interval.

    Attributes:
        method: ``classical``, ``ppi`` or ``ppi++``; interval: ``clt``, ``t``, ``bootstrap-t``
            or ``auto`` (the interval ``auto`` picks for this n and kind).
        n: human-labelled items per draw; ``n_items`` the population size.
        draws: number of draws; ``coverage`` the share of draws whose CI holds ``truth``.
        mean_width, median_width: CI width (ci_high - ci_low), in the target's unit.
        truth: the full-human mean.
        fallbacks: draws whose bootstrap-t bound was undefined (they get the t interval).
        covered, widths: per draw, shape (draws,).
    """

    method: str
    n: int
    n_items: int
    draws: int
    coverage: float
    mean_width: float
    truth: float
    interval: str = "clt"
    median_width: float = float("nan")
    fallbacks: int = 0
    covered: np.ndarray = field(default_factory=lambda: np.zeros(0, bool), repr=False)
    widths: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)


def resample_counts(rng: np.random.Generator, b: int, size: int) -> np.ndarray:
    """The resamples of :func:`resample_indices` as counts, shape (B, size), int16."""
    out = []
    for idx in resample_indices(rng, b, size):
        rows = len(idx)
        flat = (idx + size * np.arange(rows)[:, None]).ravel()
        out.append(np.bincount(flat, minlength=rows * size).reshape(rows, size).astype(np.int16))
    return np.concatenate(out)


def _boot_sums(counts: np.ndarray, values: list[np.ndarray]) -> list[np.ndarray]:
    """counts (B, m) times each value matrix (draws, m): sums of shape (draws, B)."""
    step = max(1, iv.CHUNK_VALUES // max(counts.shape[1], 1))
    out: list[list[np.ndarray]] = [[] for _ in values]
    for start in range(0, len(counts), step):
        chunk = counts[start : start + step].astype(float)
        for k, v in enumerate(values):
            out[k].append(v @ chunk.T)
    return [np.concatenate(parts, axis=1) for parts in out]


def draw_sums(
    y: np.ndarray, h: np.ndarray, u: np.ndarray, boot: tuple[np.ndarray, np.ndarray] | None
) -> tuple[iv.Sums, iv.Sums | None]:
    """The sums of every draw (rows of y, h: shape (draws, n); u: (draws, N)), shape (draws,),
    and with ``boot`` (count matrices of the labelled and unlabelled resamples, (B, n) and
    (B, N)) the sums of every draw's resamples, shape (draws, B)."""
    n, big_n = y.shape[1], u.shape[1]
    terms = iv.labelled_terms(y, h)
    sample = iv.Sums.build(n, big_n, [v.sum(axis=1) for v in terms],
                           [u.sum(axis=1), (u * u).sum(axis=1)])  # fmt: skip
    if boot is None:
        return sample, None
    ys = _boot_sums(boot[0], terms)
    us = _boot_sums(boot[1], [u, u * u]) if big_n else [np.zeros_like(ys[0])] * 2
    return sample, iv.Sums.build(n, big_n, ys, us)


def _intervals(
    y: np.ndarray, h: np.ndarray, u: np.ndarray, lam: float | None, alpha: float,
    boot: tuple[np.ndarray, np.ndarray] | None, lam_rule: str = iv.DEFAULT_LAM,
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:  # fmt: skip
    """Per interval: (low, high, fallback) for every draw (rows of y, h, u)."""
    n = y.shape[1]
    sample, sums = draw_sums(y, h, u, boot)
    point, se = iv.point_and_se(sample, iv.lam_for(sample, lam_rule) if lam is None else lam)
    none = np.zeros(len(y), bool)
    out = {}
    for name in ("clt", "t"):
        q = iv.quantile(name, n, alpha)
        out[name] = (point - q * se, point + q * se, none)
    if sums is not None:
        b_point, b_se = iv.point_and_se(sums, iv.lam_for(sums, lam_rule) if lam is None else lam)
        low, high, _ = iv.bootstrap_t_bounds(point, se, b_point, b_se, alpha)
        bad = np.isnan(low)
        t_low, t_high, _ = out["t"]
        out["bootstrap-t"] = (np.where(bad, t_low, low), np.where(bad, t_high, high), bad)
    return out


def draw_intervals(
    y: np.ndarray, h: np.ndarray, u: np.ndarray, method: str, interval: str, *,
    alpha: float = 0.05, kind: str = "mean", resamples: int = iv.RESAMPLES,
    boot_seed: int = iv.SEED, lam_rule: str = iv.DEFAULT_LAM,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """The intervals ``calibrate estimate`` gives on many samples at once.

    Args:
        y, h: human and judge values of each sample's labelled items, shape (draws, n).
        u: judge values of each sample's unlabelled items, shape (draws, N).
        method: ``classical``, ``ppi`` or ``ppi++``; interval: one of :data:`STUDY_INTERVALS`.
        lam_rule: PPI++'s ``lam`` rule (:mod:`judgekit.calibration.estimate.moments`).

    Returns:
        (low, high, fallback), each of shape (draws,): the bounds, and whether the bootstrap-t
        fell back to the t interval.
    """
    name = iv.resolve(interval, kind, y.shape[1], method)
    boot = None
    if name == "bootstrap-t":
        brng = np.random.default_rng(boot_seed)
        boot = (
            resample_counts(brng, resamples, y.shape[1]),
            resample_counts(brng, resamples, u.shape[1]),
        )
    lam = {"classical": 0.0, "ppi": 1.0}.get(method)
    values = (y, h, u[:, :0]) if method == "classical" else (y, h, u)
    return _intervals(*values, lam, alpha, boot, lam_rule)[name]


def coverage_study(
    human: np.ndarray, judge: np.ndarray, n: int, *, draws: int = 1000, seed: int = 0,
    alpha: float = 0.05, kind: str = "mean", intervals: tuple[str, ...] = STUDY_INTERVALS,
    resamples: int = iv.RESAMPLES, boot_seed: int = iv.SEED,
    methods: tuple[str, ...] = COVERAGE_METHODS, lam_rule: str = iv.DEFAULT_LAM,
) -> dict[str, Coverage]:  # fmt: skip
    """Coverage of the full-human mean by the classical, PPI and PPI++ intervals.

    Args:
        human: the human value of every item, shape (N,).
        judge: the judge's value of the same items, shape (N,).
        n: items labelled per draw, 2 <= n < N.
        draws: simple random samples drawn (seeded by ``seed``).
        alpha: error level of the intervals; kind: the target's kind (``mean``, ``share``,
            ``rate``), which decides what ``auto`` picks.
        intervals: among :data:`STUDY_INTERVALS`; resamples, boot_seed: B and the seed of the
            bootstrap-t (as ``calibrate estimate --resamples --seed``); lam_rule: PPI++'s
            ``lam`` rule (:mod:`judgekit.calibration.estimate.moments`).

    Returns:
        ``method`` -> :class:`Coverage` for the first interval, and ``"method/interval"`` ->
        :class:`Coverage` for every interval.

    Raises:
        JudgekitError: shapes differ, ``n`` is out of range, or an unknown interval.
    """
    human, judge = np.asarray(human, float), np.asarray(judge, float)
    if human.shape != judge.shape or human.ndim != 1:
        raise JudgekitError(
            f"human and judge must be 1-D of one length ({human.shape}, {judge.shape})"
        )
    size = len(human)
    if not 2 <= n < size:
        raise JudgekitError(f"n must be in [2, {size - 1}], got {n}")
    unknown = set(intervals) - set(STUDY_INTERVALS)
    if unknown:
        raise JudgekitError(f"unknown interval(s) {sorted(unknown)}")
    rng = np.random.default_rng(seed)
    order = np.argsort(rng.random((draws, size)), axis=1)
    truth = float(human.mean())
    wanted = {iv.resolve(i, kind, n, m) for i in intervals for m in methods}
    boot = None
    if "bootstrap-t" in wanted:
        brng = np.random.default_rng(boot_seed)
        boot = (resample_counts(brng, resamples, n), resample_counts(brng, resamples, size - n))
    step = max(1, DRAW_CHUNK_VALUES // (resamples if boot is not None else 1))
    parts: dict[str, list] = {}
    for start in range(0, draws, step):
        rows = order[start : start + step]
        y, h, u = human[rows[:, :n]], judge[rows[:, :n]], judge[rows[:, n:]]
        for method in methods:
            lam = {"classical": 0.0, "ppi": 1.0}.get(method)
            values = (y, h, u[:, :0]) if method == "classical" else (y, h, u)
            for name, bounds in _intervals(*values, lam, alpha, boot, lam_rule).items():
                parts.setdefault(f"{method}/{name}", []).append(bounds)
    out = {}
    for method in methods:
        for name in intervals:
            chunks = parts[f"{method}/{iv.resolve(name, kind, n, method)}"]
            low, high, fell = (np.concatenate([c[k] for c in chunks]) for k in range(3))
            covered, widths = (low <= truth) & (truth <= high), high - low
            out[f"{method}/{name}"] = Coverage(
                method, n, size, draws, float(covered.mean()), float(widths.mean()), truth,
                name, float(np.median(widths)), int(fell.sum()), covered, widths,
            )  # fmt: skip
        out.setdefault(method, out[f"{method}/{intervals[0]}"])
    return out
