"""``calibrate compare`` on label judges stays linear in items: the bootstrap is scored in blocks
of resamples (the same draws as all at once), so memory does not grow with resamples x items,
and the majority vote and the ceiling's item filter do no per-item scan of every item.

No timing here (bench/compare.py --labels measures 100,000 items); these tests pin the
results to the unblocked computation and bound the memory of a 20,000-item comparison.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pytest

from judgekit.calibration.compare.labels import _Coded, _resampled, label_facet
from judgekit.labels.majority import TIE, majority_vote
from judgekit.labels.table import LabelTable
from judgekit.metrics.bootstrap import resample_blocks, resample_weights
from judgekit.metrics.classification import cell_metrics
from judgekit.metrics.perm_both import PermutationSettings

NONE = PermutationSettings(n_permutations=0)


def tables(n: int, seed: int = 0) -> tuple[dict[str, pd.Series], LabelTable]:
    rng = np.random.default_rng(seed)
    names = np.array(["pos", "neg", "neu"])
    truth = rng.integers(0, 3, n)
    index = [f"i{k}" for k in range(n)]

    def noisy(p: float) -> np.ndarray:
        x = truth.copy()
        flip = rng.random(n) < p
        x[flip] = rng.integers(0, 3, int(flip.sum()))
        return names[x]

    humans = pd.DataFrame(
        {"h1": noisy(0.2), "h2": noisy(0.3), "h3": noisy(0.4)}, index=index, dtype=object
    )
    judges = {f"j{k}": pd.Series(noisy(p), index=index) for k, p in enumerate((0.3, 0.5))}
    return judges, LabelTable(humans)


def test_resample_blocks_are_the_draws_of_resample_weights() -> None:
    whole = resample_weights(37, 230, seed=5)
    blocks = list(resample_blocks(37, 230, seed=5, block=50))
    assert [b.shape[0] for b in blocks] == [50, 50, 50, 50, 30]
    assert np.array_equal(np.concatenate(blocks), whole)


def test_blocked_bootstrap_equals_the_whole_weight_matrix() -> None:
    judges, humans = tables(300)
    result = label_facet(judges, humans, facet="all", n_resamples=120, seed=3, permutations=NONE)
    majority = majority_vote(humans)
    kept = majority[majority != TIE]
    weights = resample_weights(len(kept), 120, seed=3)
    universe = sorted(set(kept) | {v for j in judges.values() for v in j[kept.index]})
    code = {label: k for k, label in enumerate(universe)}
    t = kept.map(code).to_numpy()
    for name, labels in judges.items():
        p = labels[kept.index].map(code).to_numpy()
        onehot = np.zeros((len(kept), len(universe) ** 2))
        onehot[np.arange(len(kept)), t * len(universe) + p] = 1
        cells = (weights @ onehot).reshape(-1, len(universe), len(universe))
        expected = cell_metrics(cells, np.ones(len(universe), bool))
        for family in result.families:
            assert family.dists[name] == pytest.approx(expected[family.statistic], nan_ok=True)


def test_majority_vote_counts_every_item_with_ties_and_gaps() -> None:
    frame = pd.DataFrame(
        {
            "a": ["x", "x", "y", None, 1],
            "b": ["x", "y", "y", None, "1"],
            "c": ["y", None, "y", None, 2],
        },
        index=["i1", "i2", "i3", "i4", "i5"],
        dtype=object,
    )
    vote = majority_vote(LabelTable(frame))
    assert vote.to_dict() == {"i1": "x", "i2": TIE, "i3": "y", "i5": "1"}  # i4: no rating


def test_the_bootstrap_of_20000_items_and_1000_resamples_stays_small() -> None:
    judges, humans = tables(20_000)
    reference = majority_vote(humans)
    base = pd.DataFrame({"item": reference.index, "reference": reference.to_numpy()})
    base = base[base["reference"] != TIE].reset_index(drop=True)
    pairs = {j: base.assign(label=s[base["item"]].to_numpy()) for j, s in judges.items()}
    coded = _Coded(pairs, "exclude")
    tracemalloc.start()
    try:
        dists = _resampled(coded, len(base), 1000, seed=0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert all(len(d["accuracy"]) == 1000 for d in dists.values())
    # a (1000, 20000) weight matrix alone is 160 MB (and its draws as much); blocks of 50: 8 MB
    assert peak < 60 * 2**20, f"peak {peak / 2**20:.0f} MiB"
