"""Coverage and label savings of the label designs (issue 37; docs/designs.md) on real data.

Populations (every item has a human and a judge value; bench/estimates.py reads the first two):
GEMBA-MQM vs expert MQM on WMT23 en-de and zh-en (one population per system); LLMBar (one per
judge/prompting; the judge's verdict averaged over both presentation orders); the 400
Global-MMLU-Lite CS/CA items (human label: CS) with a synthetic calibrated judge (its p(CS) is
the exact posterior of a noisy signal of the label; the embedded judge's own probabilities are
not recorded for these items); a synthetic calibrated judge on 2,000 synthetic items.

Designs, each drawn ``--draws`` times per population at n = 50 and 100 labels (expected):

* ``uniform``: Poisson, n / N each; PPI++ (the baseline of ``active-raw``);
* ``active-raw``: the judge's uncertainty taken at face value, floor 0.2 (main before this
  change): distance of a score to the median (closer = less sure), ``sqrt(f (1 - f))`` for a
  probability or a verdict averaged over two orders;
* ``uniform-2``: two rounds, both uniform: a pilot of 40% of n, then the rest; the pilot's items
  are known and the estimate covers the others (:func:`combine_rounds`);
* ``active``: the same pilot, then the active design fitted on it (``sqrt(E[e^2 | feature])``,
  a line or 4 bins, floor and fit chosen by leave-one-out projection) or uniform when the pilot
  projects less than 10% saving (the safeguard); feature: the judge's score (MQM, LLMBar), or
  ``sqrt(p (1 - p))`` for a label probability;
* ``stratified``: four strata by the judge's value, proportional allocation with at least
  ``MIN_PER_STRATUM`` (5) labels per stratum (``calibrate plan`` without a pilot).

Intervals: ``calibrate estimate``'s rule (a mean: design-respecting bootstrap-t below 100 labels;
a share: t below 50; CLT from there), checked against the full-human mean. Saving:
``1 - (w_a / w_b)^2`` at n = 100, median over populations: the share of labels the design saves
for the baseline's width (widths scale as 1 / sqrt(n)); ``active`` against ``uniform-2`` (same
pilot, same estimator), ``active-raw`` against ``uniform``.

Usage: ``python bench/designs.py [--draws 1000]`` (default 30 draws: quick; 1,000 draws is the
issue's validation and takes hours on 2 cores); prints ``<name>: <figure> (target ...)``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from estimates import gemba_populations, llmbar_populations  # noqa: E402

from judgekit.calibration.design.estimators import (  # noqa: E402
    combine_rounds,
    stratified_ppi,
    weighted_ppi,
)
from judgekit.calibration.design.pilot import choose, pilot_residuals  # noqa: E402
from judgekit.calibration.design.probabilities import (  # noqa: E402
    active_probabilities,
    neyman_allocation,
)

SIZES = (50, 100)
DESIGNS = ("uniform", "active-raw", "uniform-2", "active", "stratified")
PILOT = 0.4
LITE = REPO.parent / "shared" / "data" / "benchmark-items" / "global-mmlu-lite-en"


def uncertainty(f: np.ndarray) -> np.ndarray:
    """The judge's raw uncertainty per item (module docstring, ``active-raw``)."""
    if ((f >= 0) & (f <= 1)).all():
        return np.sqrt(f * (1 - f))
    d = np.abs(f - np.median(f))
    return 1 - d / d.max() if d.max() > 0 else np.ones(len(f))


def feature(f: np.ndarray) -> np.ndarray:
    """The feature the pilot fits the expected residual on (module docstring, ``active``)."""
    probability = ((f >= 0) & (f <= 1)).all() and len(np.unique(f)) > 3
    return np.sqrt(f * (1 - f)) if probability else f


def synthetic(n: int = 2000, seed: int = 1) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """A calibrated judge: p(label 1) per item, the human label drawn from it."""
    rng = np.random.default_rng(seed)
    p = np.where(rng.random(n) < 0.7, rng.choice([0.03, 0.97], n), rng.uniform(0.3, 0.7, n))
    return {"calibrated": ((rng.random(n) < p).astype(float), p)}


def lite_population(seed: int = 3, d: float = 1.0) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Global-MMLU-Lite CS/CA: y = CS (1) / CA (0) of the 400 items; the judge reports
    ``p = P(CS | s)`` for a signal ``s ~ N(+d, 1)`` (CS) or ``N(-d, 1)`` (CA) with equal priors,
    i.e. ``p = 1 / (1 + exp(-2 d s))``: calibrated by construction (seeded)."""
    rows = [json.loads(line) for line in (LITE / "global_mmlu_lite_en_test.jsonl").open()]
    y = np.array([r["cs_label"] == "CS" for r in rows], dtype=float)
    s = np.random.default_rng(seed).normal(np.where(y == 1, d, -d), 1.0)
    return {"cs-ca": (y, 1 / (1 + np.exp(-2 * d * s)))}


def strata_of(f: np.ndarray) -> np.ndarray:
    """Four strata by the judge's value (quartiles; fewer where values tie)."""
    edges = np.unique(np.quantile(f, [0.25, 0.5, 0.75]))
    return np.digitize(f, edges).astype(str)


def _two_rounds(y, f, n, rng, active, kind):
    """A uniform pilot of PILOT * n, then the rest uniform or active (fitted, safeguarded)."""
    big_n = len(y)
    lab = np.flatnonzero(rng.random(big_n) < PILOT * n / big_n)
    rest = np.setdiff1d(np.arange(big_n), lab)
    n2 = max(n - len(lab), 2)
    pi = np.full(len(rest), n2 / len(rest))
    if active:
        x = feature(f)
        pick = choose(x[lab], pilot_residuals(y[lab], f[lab], f), x[rest], n2)
        if pick.design == "active":
            pi = active_probabilities(pick.score, n2, pick.floor)
    hit = rng.random(len(rest)) < pi
    est = weighted_ppi(y[rest][hit], f[rest][hit], f[rest], pi[hit], design="active", kind=kind)
    return combine_rounds(est, y[lab], big_n)


def one_draw(y, f, design, n, rng, u, strata):
    """(covered, half-width) of one draw of ``n`` labels under ``design``; the interval rule of
    ``calibrate estimate`` for the target's kind (binary human values: a share)."""
    kind = "share" if set(np.unique(y)) <= {0.0, 1.0} else "mean"
    if design == "stratified":
        sizes = {h: int((strata == h).sum()) for h in np.unique(strata)}
        alloc = neyman_allocation(sizes, dict.fromkeys(sizes, 1.0), n)  # proportional: no pilot
        idx = np.concatenate([rng.choice(np.flatnonzero(strata == h), alloc[h], replace=False)
                              for h in sizes])  # fmt: skip
        est = stratified_ppi(y[idx], f[idx], strata[idx], f, strata, kind=kind)
    elif design in ("uniform-2", "active"):
        est = _two_rounds(y, f, n, rng, design == "active", kind)
    else:
        raw = design == "active-raw"
        pi = active_probabilities(u, n, 0.2) if raw else np.full(len(y), n / len(y))
        hit = rng.random(len(y)) < pi
        est = weighted_ppi(y[hit], f[hit], f, pi[hit], design="active" if raw else "uniform",
                           kind=kind)  # fmt: skip
    return est.low <= y.mean() <= est.high, est.half_width


def _population(args):
    """The rows of one population (a worker's task)."""
    name, y, f, draws, seed = args
    u, strata = uncertainty(f), strata_of(f)
    rows = []
    for n in SIZES:
        if n >= len(y):
            continue
        for design in DESIGNS:
            rng = np.random.default_rng(seed)
            res = [one_draw(y, f, design, n, rng, u, strata) for _ in range(draws)]
            cov, width = zip(*res, strict=True)
            rows.append((name, design, n, float(np.mean(cov)), float(np.mean(width)),
                         float(np.std(width, ddof=1) / np.sqrt(draws)) if draws > 1 else 0.0,
                         draws))  # fmt: skip
    return rows


def study(populations: dict, draws: int, seed: int = 0, jobs: int = 1) -> pd.DataFrame:
    """One row per population, design and n: coverage and mean half-width over ``draws``;
    ``jobs`` worker processes (one population each at a time)."""
    tasks = [(name, y, f, draws, seed) for name, (y, f) in populations.items()]
    if jobs > 1:
        from multiprocessing import Pool

        with Pool(jobs) as pool:
            parts = pool.map(_population, tasks)
    else:
        parts = [_population(t) for t in tasks]
    rows = [r for part in parts for r in part]
    return pd.DataFrame(rows, columns=["facet", "design", "n", "coverage", "half_width",
                                       "half_width_se", "draws"])  # fmt: skip


def savings(frame: pd.DataFrame, design: str = "active", base: str = "uniform-2",
            n: int = 100) -> tuple[float, float]:  # fmt: skip
    """Median over facets of ``design``'s label saving at ``base``'s width, and its Monte-Carlo
    standard error: the median over facets of each facet's delta-method SE of
    ``1 - (w_a / w_b)^2`` from the two mean half-widths' SEs (draws taken as independent)."""
    at = frame[frame["n"] == n].pivot(index="facet", columns="design", values="half_width")
    se = frame[frame["n"] == n].pivot(index="facet", columns="design", values="half_width_se")
    ratio = (at[design] / at[base]) ** 2
    rel = np.sqrt((se[design] / at[design]) ** 2 + (se[base] / at[base]) ** 2)
    return float(np.median(1 - ratio)), float(np.median(2 * ratio * rel))


def coverage_se(g: pd.DataFrame) -> tuple[float, float]:
    """Monte-Carlo SEs of the mean coverage over facets and of the worst facet's coverage
    (binomial, ``sqrt(p (1 - p) / draws)``)."""
    se = np.sqrt(g["coverage"] * (1 - g["coverage"]) / g["draws"])
    worst = g["coverage"].idxmin()
    return float(np.sqrt((se**2).sum()) / len(g)), float(se[worst])


LOADERS = {
    "wmt23-en-de": lambda: gemba_populations("en-de"),
    "wmt23-zh-en": lambda: gemba_populations("zh-en"),
    "llmbar": llmbar_populations,
    "global-mmlu-lite": lite_population,
    "synthetic": synthetic,
}
REAL = ("wmt23-en-de", "wmt23-zh-en", "llmbar", "global-mmlu-lite")


def report(name: str, frame: pd.DataFrame, draws: int) -> float:
    """Print the coverage and saving lines of one set; return the active design's saving."""
    for (design, n), g in frame.groupby(["design", "n"], sort=False):
        se_mean, se_worst = coverage_se(g)
        print(f"designs {name} {design} n={n} coverage: mean {g['coverage'].mean():.3f} "
              f"(SE {se_mean:.3f}), worst {g['coverage'].min():.3f} (SE {se_worst:.3f}) over "
              f"{draws} draws (target mean >= 0.93, worst facet >= 0.90)")  # fmt: skip
    (before, b_se), (after, a_se) = savings(frame, "active-raw", "uniform"), savings(frame)
    print(f"designs {name} active label saving: {after:.1%} (SE {a_se:.1%}) at the width of "
          f"uniform-2 (before: {before:.1%} (SE {b_se:.1%}) at the uniform width), n = 100, "
          f"{draws} draws (target >= 25% on 2 of 3 sets; baselines uniform-2, uniform: same "
          "draws)")  # fmt: skip
    return after


def main(argv: list[str] | None = None) -> dict[str, pd.DataFrame]:
    """Run the study and print the issue's target lines."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--draws", type=int, default=30, help="1000: the issue's validation.")
    parser.add_argument("--sets", default=",".join(LOADERS))
    parser.add_argument("--jobs", type=int, default=1, help="Worker processes.")
    parser.add_argument("--csv", type=Path, help="Write each set's table to CSV/<set>.csv.")
    args = parser.parse_args(argv)
    out, reached, real = {}, 0, 0
    for name in args.sets.split(","):
        out[name] = study(LOADERS[name](), args.draws, jobs=args.jobs)
        if args.csv:
            args.csv.mkdir(parents=True, exist_ok=True)
            out[name].to_csv(args.csv / f"{name}.csv", index=False)
        saved = report(name, out[name], args.draws)
        sys.stdout.flush()
        if name in REAL:
            real += 1
            reached += saved >= 0.25
    print(f"designs sets with >= 25% saving: {reached} of {real} real sets, {args.draws} draws "
          "(target >= 2 of 3)")  # fmt: skip
    return out


if __name__ == "__main__":
    main()
