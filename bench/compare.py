"""``calibrate compare`` on a WMT23 zh-en-sized table: 4 judges x 1,976 segments x 16 systems.

Every cell scored; the humans' scores are MQM-like (negated weighted error counts: many ties),
the judges the humans' plus noise of four sizes, one rounded to MQM-like steps (ties). The run
computes every statistic of both levels (system: Pearson, pairwise accuracy, SPA; segment:
tau-b, item-grouped tau-b, acc_eq with tie calibration), 1,000 bootstrap resamples, and every
paired test of the 6 judge pairs with 1,000 permutations each, early stopping off (so every
test runs all 1,000). The time of each statistic's 6 tests is printed. The baseline, measured
in the same run, is the tau-b PERM-BOTH test done with ``scipy.stats.kendalltau`` per hybrid
(its 100 first permutations of one pair, timed, scaled to 6 pairs x 1,000): what the test would
cost without judgekit's numba kernels. Usage::

    python bench/compare.py [--permutations 1000] [--resamples 1000]

Ends with ``compare: <seconds> s (target < 60 s on 2 cores) ...``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judgekit.calibration.compare.scores import ScoreMatrix, score_facet  # noqa: E402
from judgekit.metrics.meta_eval import zscore  # noqa: E402
from judgekit.metrics.perm_both import PermutationSettings, pair_rng, swap_test  # noqa: E402

SYSTEMS, SEGMENTS = 16, 1976


def table(seed: int = 0) -> tuple[ScoreMatrix, dict[str, ScoreMatrix]]:
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=(SYSTEMS, 1, 1))
    errors = rng.poisson(np.exp(-0.5 - 0.4 * quality), size=(SYSTEMS, SEGMENTS, 2))
    human = -(5.0 * errors[..., 0] + 1.0 * errors[..., 1])
    judges = {}
    for k, noise in enumerate((2.0, 4.0, 6.0, 8.0)):
        scores = human + rng.normal(scale=noise, size=human.shape)
        judges[f"judge{k + 1}"] = ScoreMatrix(np.round(scores) if k == 0 else scores)
    return ScoreMatrix(human), judges


def scipy_baseline(human: ScoreMatrix, judges: dict[str, ScoreMatrix], n: int) -> float:
    from scipy import stats

    h = human.seg.ravel()
    a, b = (zscore(judges[j].seg.ravel()) for j in ("judge1", "judge2"))

    def stat(rows: np.ndarray) -> np.ndarray:
        return np.array([stats.kendalltau(r, h, variant="b").statistic for r in rows])

    settings = PermutationSettings(n_permutations=n, early_stop=False)
    started = time.perf_counter()
    swap_test(stat, a, b, settings, pair_rng(0, "baseline"))
    return (time.perf_counter() - started) / n * 1000 * 6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--permutations", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    human, judges = table()
    settings = PermutationSettings(n_permutations=args.permutations, early_stop=False)
    score_facet(
        human,
        {k: v for k, v in list(judges.items())[:2]},
        facet="warm-up",
        n_resamples=2,
        permutations=PermutationSettings(n_permutations=2),
    )  # numba JIT
    load = os.getloadavg()
    started = time.perf_counter()
    result = score_facet(
        human, judges, facet="bench", n_resamples=args.resamples, permutations=settings
    )
    points = time.perf_counter() - started
    names = list(judges)
    tests = {}
    for family in result.families:
        begun = time.perf_counter()
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                assert family.test(a, b).n_permutations == args.permutations
        tests[family.statistic] = time.perf_counter() - begun
    total = points + sum(tests.values())
    baseline = scipy_baseline(human, judges, 100)
    for name, seconds in tests.items():
        print(f"  {name}: 6 tests x {args.permutations} permutations in {seconds:.1f} s")
    print(f"  statistics and {args.resamples} bootstrap resamples: {points:.1f} s")
    print(
        f"  baseline, tau_b tests with scipy.stats.kendalltau: {baseline:.0f} s "
        f"(judgekit {tests['tau_b']:.1f} s)"
    )
    print(f"  load average before the run: {load[0]:.2f} (1 min), cores: {os.cpu_count()}")
    print(
        f"compare: {total:.1f} s (target < 60 s on 2 cores; 4 judges x {SEGMENTS:,} segments x "
        f"{SYSTEMS} systems, {args.permutations:,} permutations, no early stopping)"
    )


if __name__ == "__main__":
    main()
