"""Nested cross-validation of the choice at small n (issue 35, point 1).

With few labels a single tune / select / test split leaves a test split too small to say much
(40/30/30 of 100 items: 30 test items, a 95% CI of an accuracy near 0.8 about +-0.15 wide). The
nested mode reports the *choosing procedure* instead of one split: the items are cut into K
stratified folds; for each outer fold the candidates are ranked on the other K-1 folds (the inner
step: the choice) and the fold's items are judged by the candidate chosen without them. Every item
is thus a test item exactly once, for a choice that never saw it (Varma & Simon 2006, "Bias in
error estimation when using cross-validation for model selection", BMC Bioinformatics 7:91;
Cawley & Talbot 2010, JMLR 11, sec. 5). The judge written to best.yaml is the one chosen on all
items; the reported figure, gain and optimism are those of the procedure.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from judgekit.calibration.tune.choose import Ranking, choose
from judgekit.calibration.tune.report import TestReport, report_on_test

DEFAULT_FOLDS = 5
NESTED_BELOW = 150  # mode auto: nested CV when fewer labelled items than this
COMPOSITE = "nested choice"


@dataclass(frozen=True)
class NestedResult:
    """``folds`` (item ids per outer fold), the candidate chosen in each fold, the ranking on all
    items (the judge best.yaml names), the pooled report of the procedure and ``held_out``: each
    item's output from the candidate chosen without its fold."""

    folds: tuple[tuple[str, ...], ...]
    chosen_per_fold: tuple[str, ...]
    ranking: Ranking
    report: TestReport
    held_out: dict[str, object]


def fold_items(
    item_ids: Sequence[str], strata: Sequence[str], k: int = DEFAULT_FOLDS, seed: int = 0
) -> tuple[tuple[str, ...], ...]:
    """``k`` disjoint folds covering ``item_ids``, stratified: each stratum's items are shuffled
    (``numpy.random.default_rng(seed)``) and dealt round-robin, continuing where the previous
    stratum stopped, so fold sizes differ by at most one. Raises ValueError when ``k`` < 2 or
    exceeds the number of items."""
    if not 2 <= k <= len(item_ids):
        raise ValueError(f"need 2 <= folds <= items, got {k} folds for {len(item_ids)} items")
    groups: dict[str, list[str]] = defaultdict(list)
    for item, stratum in zip(item_ids, strata, strict=True):
        groups[stratum].append(item)
    rng = np.random.default_rng(seed)
    folds: list[list[str]] = [[] for _ in range(k)]
    turn = 0
    for stratum in sorted(groups):
        members = sorted(groups[stratum])
        rng.shuffle(members)
        for item in members:
            folds[turn % k].append(item)
            turn += 1
    return tuple(tuple(sorted(f)) for f in folds)


def nested_cv(
    candidates: Mapping[str, Mapping[str, object]],
    human: Mapping[str, object],
    folds: Sequence[Sequence[str]],
    stat: str,
    baseline: str,
    looks: int = 0,
    n_boot: int = 1000,
    seed: int = 0,
) -> NestedResult:
    """Choose on K-1 folds, judge the held-out fold with that choice, pool the K folds.

    The report (:func:`judgekit.calibration.tune.report.report_on_test` on the pooled items)
    gives the procedure's figure with its bootstrap CI, the paired gain over ``baseline`` with
    its CI and test, and the optimism = mean inner (choice-side) figure of the chosen candidates
    minus the pooled held-out figure; ``chosen`` is the candidate chosen on all items and
    ``fold_choices`` the candidate chosen without each fold (the gain is theirs: it can differ
    from zero although ``chosen`` is ``baseline``, where a fold chose another candidate).
    """
    composite: dict[str, object] = {}
    chosen, inner = [], []
    for fold in folds:
        held = set(fold)
        rest = [i for f in folds for i in f if i not in held]
        ranking = choose(candidates, human, rest, stat)
        chosen.append(ranking.chosen)
        inner.append(ranking.figures[0][1])
        composite.update({i: candidates[ranking.chosen][i] for i in fold})
    items = [i for f in folds for i in f]
    pooled = {COMPOSITE: composite, baseline: candidates[baseline]}
    ranking = Ranking(stat, ((COMPOSITE, float(np.nanmean(inner))),))
    report = report_on_test(pooled, human, items, ranking, baseline, looks, n_boot, seed)
    overall = choose(candidates, human, items, stat)
    report = replace(report, chosen=overall.chosen, mode=f"nested {len(folds)}-fold",
                     fold_choices=tuple(chosen))  # fmt: skip
    return NestedResult(tuple(tuple(f) for f in folds), tuple(chosen), overall, report, composite)
