"""PPI++ interval width of a share with the judge's probability vs its hard label (issue 26).

Synthetic LLMBar-like verdicts (seeded): p(a better) ~ Uniform(0, 1), the human verdict ~
Bernoulli(p), a calibrated judge reports p (hard label: p >= 0.5); 200 labelled of 2000 items,
the widths averaged over 50 draws, the hard-label width the baseline in the same run.
"""

from __future__ import annotations

import numpy as np

from judgekit.calibration.estimate.widths import width_with_and_without


def main(draws: int = 50, n_items: int = 2000, n_labelled: int = 200, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    out: dict[str, list[float]] = {"hard": [], "probabilities": [], "classical": []}
    for _ in range(draws):
        p = rng.uniform(size=n_items)
        y = (rng.uniform(size=n_items) < p).astype(float)
        hard = (p >= 0.5).astype(float)
        lab = rng.permutation(n_items)[:n_labelled]
        rest = np.setdiff1d(np.arange(n_items), lab)
        w = width_with_and_without(y[lab], hard[lab], p[lab], hard[rest], p[rest])
        for k, v in w.items():
            out[k].append(v)
    m = {k: float(np.mean(v)) for k, v in out.items()}
    print(
        f"estimate_probs_width: {m['probabilities']:.4f} with probabilities vs {m['hard']:.4f} "
        f"hard labels vs {m['classical']:.4f} classical (target: probabilities narrower)"
    )


if __name__ == "__main__":
    main()
