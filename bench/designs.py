"""Coverage and label savings of the label designs (issue 37; docs/designs.md) on real data.

Populations (every item has a human and a judge value; bench/estimates.py reads them):
GEMBA-MQM vs expert MQM on WMT23 en-de and zh-en (one population per system; uncertainty:
distance of the judge's score to the population's median, the decision boundary, closer = less
sure); LLMBar (one population per judge/prompting; uncertainty ``sqrt(f (1 - f))`` of the
judge's verdict averaged over both presentation orders, so a judge that disagrees with itself
is unsure); a synthetic calibrated judge (label probabilities, 2,000 items). Each draw labels
items under the uniform, active (Poisson, floor 0.2) and stratified (four strata by the
judge's value, Neyman with the judge's spread) designs and checks the 95% CI against the
full-human mean. The saving is ``1 - (w_active / w_uniform)^2`` at n = 100: the share of
labels the active design saves for the uniform design's width (widths scale as 1 / sqrt(n)).

Usage: ``python bench/designs.py [--draws 1000]``; prints ``<name>: <figure> (target ...)``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from estimates import gemba_populations, llmbar_populations  # noqa: E402

from judgekit.calibration.design.estimators import stratified_ppi, weighted_ppi  # noqa: E402
from judgekit.calibration.design.probabilities import (  # noqa: E402
    active_probabilities,
    neyman_allocation,
)

SIZES = (50, 100)


def uncertainty(f: np.ndarray) -> np.ndarray:
    """The judge's uncertainty per item (module docstring)."""
    if ((f >= 0) & (f <= 1)).all():
        return np.sqrt(f * (1 - f))
    d = np.abs(f - np.median(f))
    return 1 - d / d.max() if d.max() > 0 else np.ones(len(f))


def synthetic(n: int = 2000, seed: int = 1) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """A calibrated judge: p(label 1) per item, the human label drawn from it."""
    rng = np.random.default_rng(seed)
    p = np.where(rng.random(n) < 0.7, rng.choice([0.03, 0.97], n), rng.uniform(0.3, 0.7, n))
    return {"calibrated": ((rng.random(n) < p).astype(float), p)}


def strata_of(f: np.ndarray) -> np.ndarray:
    """Four strata by the judge's value (quartiles; fewer where values tie)."""
    edges = np.unique(np.quantile(f, [0.25, 0.5, 0.75]))
    return np.digitize(f, edges).astype(str)


def one_draw(y, f, design, n, rng, u, strata, floor=0.2):
    """(covered, half-width) of one draw of ``n`` labels under ``design``."""
    truth = y.mean()
    if design == "stratified":
        sizes = {h: int((strata == h).sum()) for h in np.unique(strata)}
        sig = {h: float(f[strata == h].std()) for h in sizes}
        alloc = neyman_allocation(sizes, sig, n)
        idx = np.concatenate([rng.choice(np.flatnonzero(strata == h), alloc[h], replace=False)
                              for h in sizes])  # fmt: skip
        est = stratified_ppi(y[idx], f[idx], strata[idx], f, strata)
    else:
        pi = (
            active_probabilities(u, n, floor) if design == "active" else np.full(len(y), n / len(y))
        )
        hit = rng.random(len(y)) < pi
        est = weighted_ppi(y[hit], f[hit], f, pi[hit], design=design)
    return est.low <= truth <= est.high, est.half_width


def study(populations: dict, draws: int, seed: int = 0, floor: float = 0.2) -> pd.DataFrame:
    """One row per population, design and n: coverage and mean half-width over ``draws``."""
    rows = []
    for name, (y, f) in populations.items():
        u, strata = uncertainty(f), strata_of(f)
        for n in SIZES:
            if n >= len(y):
                continue
            for design in ("uniform", "active", "stratified"):
                rng = np.random.default_rng(seed)
                res = [one_draw(y, f, design, n, rng, u, strata, floor) for _ in range(draws)]
                cov, width = zip(*res, strict=True)
                rows.append((name, design, n, float(np.mean(cov)), float(np.mean(width))))
    return pd.DataFrame(rows, columns=["facet", "design", "n", "coverage", "half_width"])


def savings(frame: pd.DataFrame, n: int = 100) -> float:
    """Median over facets of the active design's label saving at the uniform width."""
    at = frame[frame["n"] == n].pivot(index="facet", columns="design", values="half_width")
    return float(np.median(1 - (at["active"] / at["uniform"]) ** 2))


def main(argv: list[str] | None = None) -> dict[str, pd.DataFrame]:
    """Run the study and print the issue's target lines."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--floor", type=float, default=0.2, help="Active: uniform share.")
    parser.add_argument("--sets", default="wmt23-en-de,wmt23-zh-en,llmbar,synthetic")
    args = parser.parse_args(argv)
    loaders = {"wmt23-en-de": lambda: gemba_populations("en-de"),
               "wmt23-zh-en": lambda: gemba_populations("zh-en"),
               "llmbar": llmbar_populations, "synthetic": synthetic}  # fmt: skip
    out, reached = {}, 0
    for name in args.sets.split(","):
        frame = study(loaders[name](), args.draws, floor=args.floor)
        out[name] = frame
        for design, g in frame.groupby("design"):
            print(f"designs {name} {design} coverage: mean {g['coverage'].mean():.3f}, worst "
                  f"{g['coverage'].min():.3f} over {args.draws} draws at n = 50, 100 "
                  "(target mean >= 0.93, worst facet >= 0.90)")  # fmt: skip
        saved = savings(frame)
        reached += saved >= 0.25
        print(f"designs {name} active label saving: {saved:.1%} at the uniform width, n = 100 "
              "(target >= 25% on 2 of 3 sets; baseline uniform, same draws)")  # fmt: skip
    print(f"designs sets with >= 25% saving: {reached} of {len(out)} (target >= 2 of 3 real sets)")
    return out


if __name__ == "__main__":
    main()
