"""Pairwise-preference judges: verdict resolution across output orders, position bias, accuracy.

A pairwise judge sees an instruction and two outputs twice, in the original order and swapped,
and names the better output (``"1"``, ``"2"``, or ``"tie"`` where allowed). Verdicts here are
always in the original outputs' identities: a swapped-order answer "the first shown" is
``"2"`` (LLMBar's ``evaluate.py`` stores it so; see :func:`~judgekit.metrics.concordance.
unswap_verdicts`).

Statistics, per judge (LLMBar: Zeng et al. 2024, "Evaluating Large Language Models at
Evaluating Instruction Following", ICLR 2024, sec. 4 and ``statistics.json``):

* ``accuracy``: LLMBar's average accuracy (``correct_average``, "Acc."), the mean of the
  accuracies in the two orders, a missing verdict counting as wrong; with a percentile
  bootstrap CI over items. ``accuracy_original`` / ``accuracy_swapped`` / ``accuracy_both``
  are ``correct_False`` / ``correct_True`` / ``correct_both``.
* ``positional_agreement``: LLMBar's ``equal`` ("Agr."), the share of items whose two verdicts
  agree (a verdict missing in both orders counts as agreeing, as in LLMBar).
* ``first_position_win_rate``: the share of decisive verdicts (both orders pooled, ties and
  missing verdicts left out) that pick the output shown first. Every item is shown once each
  way, so a judge without position bias scores 0.5 whatever the gold labels (Zheng et al. 2023,
  MT-Bench, sec. 3.3, "position bias").
* ``tie_rate``: ties among the verdicts given (both orders pooled).
* Resolution (one verdict per item): the two orders agree -> that verdict; they disagree ->
  position-inconsistent, resolved by the policy (``tie``: a tie; ``exclude``: no verdict;
  ``first-order``: the original order's verdict); a verdict missing in either order -> the item
  is incomplete and has no resolved verdict. ``resolved_accuracy`` is over resolved items with
  gold, with its bootstrap CI; the counts say what was left out.

The positional agreement and the ``correct_*`` accuracies come from
:func:`~judgekit.metrics.concordance.position_consistency`, so published verdicts and judgekit
runs are scored by the same code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np
import pandas as pd

from judgekit.errors import JudgekitError
from judgekit.metrics.bootstrap import bootstrap_ci
from judgekit.metrics.concordance import position_consistency, verdict_labels

ResolvePolicy = Literal["tie", "exclude", "first-order"]
RESOLVE_POLICIES: tuple[str, ...] = ("tie", "exclude", "first-order")
ALL_SUBSETS = "all"


def resolve_verdicts(
    original: Sequence | np.ndarray | pd.Series,
    swapped: Sequence | np.ndarray | pd.Series,
    policy: ResolvePolicy = "tie",
) -> tuple[np.ndarray, np.ndarray]:
    """One verdict per item from the verdicts in both orders.

    Args:
        original, swapped: verdicts per item (``"1"``, ``"2"``, ``"tie"``, None for missing),
            both in the original outputs' identities.
        policy: what a position-inconsistent item gets (see the module doc).

    Returns:
        ``(resolved, status)``: object arrays; ``resolved`` holds the verdict or None,
        ``status`` one of ``consistent``, ``inconsistent``, ``incomplete`` per item.

    Raises:
        JudgekitError: an unknown policy or inputs of different lengths.
    """
    if policy not in RESOLVE_POLICIES:
        raise JudgekitError(f"inconsistent-verdict policy must be one of {RESOLVE_POLICIES}")
    a, b = verdict_labels(original), verdict_labels(swapped)
    if len(a) != len(b):
        raise JudgekitError("original and swapped verdicts must have equal lengths")
    resolved = np.empty(len(a), dtype=object)
    status = np.empty(len(a), dtype=object)
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x is None or y is None:
            resolved[i], status[i] = None, "incomplete"
        elif x == y:
            resolved[i], status[i] = x, "consistent"
        else:
            status[i] = "inconsistent"
            resolved[i] = {"tie": "tie", "exclude": None, "first-order": x}[policy]
    return resolved, status


def first_position_wins(
    original: Sequence | np.ndarray | pd.Series, swapped: Sequence | np.ndarray | pd.Series
) -> tuple[int, int]:
    """``(wins, decisive)``: verdicts picking the output shown first, out of the decisive ones.

    Shown first: output 1 in the original order (verdict ``"1"``), output 2 in the swapped order
    (verdict ``"2"`` in original identities). Ties and missing verdicts are not decisive.
    """
    a, b = verdict_labels(original), verdict_labels(swapped)
    wins = int(np.sum(a == "1") + np.sum(b == "2"))
    decisive = int(np.isin(a, ["1", "2"]).sum() + np.isin(b, ["1", "2"]).sum())
    return wins, decisive


@dataclass(frozen=True)
class PairwiseStats:
    """One judge's statistics on a set of items (definitions in the module doc).

    Shares are in [0, 1] (NaN when undefined, e.g. no decisive verdict); CIs are None with fewer
    than 2 items. ``n_gold`` items have a gold label; accuracies are over those.
    """

    n_items: int
    n_gold: int
    accuracy: float
    accuracy_ci: tuple[float, float] | None
    accuracy_original: float
    accuracy_swapped: float
    accuracy_both: float
    positional_agreement: float
    n_agree: int
    first_position_win_rate: float
    n_decisive: int
    tie_rate: float
    n_verdicts: int
    n_consistent: int
    n_inconsistent: int
    n_incomplete: int
    policy: str
    n_resolved_gold: int
    resolved_accuracy: float
    resolved_accuracy_ci: tuple[float, float] | None

    def to_dict(self) -> dict:
        return asdict(self)


def _share(num: float, den: float) -> float:
    return float(num / den) if den else float("nan")


def pairwise_stats(
    original: Sequence | np.ndarray | pd.Series,
    swapped: Sequence | np.ndarray | pd.Series,
    gold: Sequence | np.ndarray | pd.Series | None = None,
    *,
    policy: ResolvePolicy = "tie",
    n_resamples: int = 1000,
    seed: int = 0,
) -> PairwiseStats:
    """Every per-judge statistic of the module doc, for one judge on one set of items.

    Args:
        original, swapped: verdict per item in the two orders (original identities).
        gold: gold label per item (None entries: no gold; those items count for agreement and
            bias, not for accuracy). None: no accuracies (NaN).
        policy: resolution of position-inconsistent items.
        n_resamples, seed: the bootstrap of the accuracy CIs (items resampled).

    Raises:
        JudgekitError: no item, inputs of different lengths, or an unknown policy.
    """
    a, b = verdict_labels(original), verdict_labels(swapped)
    g = np.full(len(a), None, dtype=object) if gold is None else verdict_labels(gold)
    if not len(a) == len(b) == len(g):
        raise JudgekitError("original, swapped and gold verdicts must have equal lengths")
    agreement = position_consistency(a, b, missing="as_label")  # LLMBar's `equal`
    resolved, status = resolve_verdicts(a, b, policy)
    wins, decisive = first_position_wins(a, b)
    given = [v for v in (*a, *b) if v is not None]
    has_gold = np.array([v is not None for v in g])
    nan = float("nan")
    acc = dict(accuracy_original=nan, accuracy_swapped=nan, accuracy_both=nan, accuracy=nan)
    acc_ci = res_ci = None
    if has_gold.any():
        scored = position_consistency(a[has_gold], b[has_gold], g[has_gold], missing="as_label")
        acc = dict(
            accuracy_original=scored.accuracy_original,
            accuracy_swapped=scored.accuracy_swapped,
            accuracy_both=scored.accuracy_both,
            accuracy=scored.accuracy_mean,
        )
        per_item = ((a == g).astype(float) + (b == g).astype(float))[has_gold] / 2
        acc_ci = bootstrap_ci(
            len(per_item), lambda i: per_item[i].mean(), n_resamples=n_resamples, seed=seed
        )
    keep = has_gold & np.array([v is not None for v in resolved])
    correct = (resolved[keep] == g[keep]).astype(float)
    if len(correct):
        res_ci = bootstrap_ci(
            len(correct), lambda i: correct[i].mean(), n_resamples=n_resamples, seed=seed
        )
    counts = pd.Series(status).value_counts()
    return PairwiseStats(
        n_items=len(a),
        n_gold=int(has_gold.sum()),
        accuracy=acc["accuracy"],
        accuracy_ci=acc_ci,
        accuracy_original=acc["accuracy_original"],
        accuracy_swapped=acc["accuracy_swapped"],
        accuracy_both=acc["accuracy_both"],
        positional_agreement=agreement.consistency,
        n_agree=agreement.n_consistent,
        first_position_win_rate=_share(wins, decisive),
        n_decisive=decisive,
        tie_rate=_share(given.count("tie"), len(given)),
        n_verdicts=len(given),
        n_consistent=int(counts.get("consistent", 0)),
        n_inconsistent=int(counts.get("inconsistent", 0)),
        n_incomplete=int(counts.get("incomplete", 0)),
        policy=policy,
        n_resolved_gold=len(correct),
        resolved_accuracy=_share(correct.sum(), len(correct)),
        resolved_accuracy_ci=res_ci,
    )


def judge_table(
    verdicts: pd.DataFrame,
    *,
    policy: ResolvePolicy = "tie",
    n_resamples: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """:func:`pairwise_stats` per judge, over all items and per subset.

    Args:
        verdicts: a verdict frame (``judge, subset, item, gold, original, swapped``; see
            :mod:`judgekit.data.pairwise`), one row per (judge, item); ``subset`` may be None.

    Returns:
        One row per (judge, subset): one row per named subset of the judge's items, and a row
        ``"all"`` over every item when there is more than one subset or some item has none
        (a judge whose items all lie in one subset gets that one row). Columns: ``judge``,
        ``subset`` and the :class:`PairwiseStats` fields, CIs split into ``*_low`` /
        ``*_high``. Judges in order of first appearance.

    Raises:
        JudgekitError: a column is missing.
    """
    missing = {"judge", "subset", "original", "swapped", "gold"} - set(verdicts.columns)
    if missing:
        raise JudgekitError(f"verdict frame lacks columns {sorted(missing)}")
    rows = []
    for judge, frame in verdicts.groupby("judge", sort=False):
        names = frame["subset"].dropna().unique()
        parts = [(str(s), frame[frame["subset"] == s]) for s in names]
        if len(parts) != 1 or frame["subset"].isna().any():
            parts = [(ALL_SUBSETS, frame), *parts]
        for subset, part in parts:
            stats = pairwise_stats(
                part["original"], part["swapped"], part["gold"],
                policy=policy, n_resamples=n_resamples, seed=seed,
            )  # fmt: skip
            row = {"judge": judge, "subset": subset, **stats.to_dict()}
            for name in ("accuracy_ci", "resolved_accuracy_ci"):
                ci = row.pop(name)
                stem = name.removesuffix("_ci")
                row[f"{stem}_low"], row[f"{stem}_high"] = ci if ci else (np.nan, np.nan)
            rows.append(row)
    return pd.DataFrame(rows)
