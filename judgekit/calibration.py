"""A judge against human labels: majority reference, human ceiling, Alternative Annotator Test.

* :func:`majority_vote`: the humans' majority label per item, ties reported, never broken.
* :func:`judge_vs_humans`: accuracy, macro-F1, Cohen's kappa (bootstrap CIs over items),
  confusion matrix, per-class recall and precision, direction of errors (paper 001, Sec. on
  validating the annotation pipeline: "35 CA->CS versus 12 CS->CA errors").
* :func:`human_ceiling`: each human against the majority of the *other* humans, pooled, on the
  same footing (same metrics, same tie policy), and the judge against those same references.
* :func:`alt_test`: the Alternative Annotator Test (Calderon, Reichart & Dror, ACL 2025).

Labels are compared as text (``1`` and ``"1"`` match). Tie policies for an item whose human
votes tie (two or more categories share the top count):

* ``"exclude"``: the item is left out of every metric (and counted in ``n_ties``);
* ``"error"``: the item stays with reference ``"<tie>"``, which no judge label matches, so it
  counts as an error; macro-F1 and per-class scores average over the real categories only;
* ``"own_class"``: ``"<tie>"`` is a category like the others (a judge may answer it).
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.metrics import (
    accuracy_score,
    cohen_kappa_score,
    confusion_matrix,
    f1_score,
    precision_recall_fscore_support,
)
from statsmodels.stats.multitest import multipletests

from judgekit.errors import JudgekitError
from judgekit.metrics.agreement import LabelData, as_label_table
from judgekit.metrics.bootstrap import bootstrap_ci

TiePolicy = Literal["exclude", "error", "own_class"]
TIE_POLICIES = ("exclude", "error", "own_class")
TIE = "<tie>"
JudgeLabels = pd.Series | Mapping[Hashable, Hashable] | LabelData


@dataclass(frozen=True)
class Estimate:
    """A scalar with its bootstrap interval ((low, high) or None)."""

    value: float
    ci: tuple[float, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "ci": list(self.ci) if self.ci else None}

    def __str__(self) -> str:
        ci = f" [{self.ci[0]:.3f}, {self.ci[1]:.3f}]" if self.ci else ""
        return f"{self.value:.3f}{ci}"


class _Report:
    """``to_dict`` for the report dataclasses: Estimates as {value, ci}, tables as records
    (the confusion matrix as {index, columns, data})."""

    def to_dict(self) -> dict[str, Any]:
        def convert(value: Any) -> Any:
            if isinstance(value, Estimate):
                return value.to_dict()
            if isinstance(value, pd.DataFrame):
                if isinstance(value.index, pd.RangeIndex):
                    return value.to_dict(orient="records")
                return value.to_dict(orient="split")
            if isinstance(value, dict):
                return {k: convert(v) for k, v in value.items()}
            return value

        return {f.name: convert(getattr(self, f.name)) for f in fields(self)}  # type: ignore[arg-type]


def _text(series: pd.Series) -> pd.Series:
    """Index and labels as text, missing labels dropped."""
    series = series[series.notna()]
    return pd.Series(series.astype(str).to_numpy(), index=series.index.astype(str))


def majority_vote(humans: LabelData) -> pd.Series:
    """The majority label of each item, or ``"<tie>"`` where the top count is shared.

    Returns a Series indexed by item (as text) of labels (as text); items without any rating
    are left out. A single rating is its own majority.
    """
    frame = as_label_table(humans).frame
    out = {}
    for item, row in frame.iterrows():
        votes = Counter(str(v) for v in row if v is not None)
        if not votes:
            continue
        (top, n), *rest = votes.most_common()
        out[str(item)] = TIE if rest and rest[0][1] == n else top
    return pd.Series(out, dtype=object)


def judge_labels(judge: JudgeLabels, rater: Hashable | None = None) -> pd.Series:
    """One rater's labels as a Series (item -> label, text) from a Series, mapping or table.

    Raises:
        JudgekitError: a table with several raters and no (or an unknown) ``rater``.
    """
    if isinstance(judge, pd.Series):
        return _text(judge)
    if isinstance(judge, Mapping):
        return _text(pd.Series(dict(judge), dtype=object))
    table = as_label_table(judge)
    if rater is None:
        if table.n_raters != 1:
            raise JudgekitError(f"choose the judge among raters {table.raters}")
        rater = table.raters[0]
    if rater not in table.raters:
        raise JudgekitError(f"no rater '{rater}' among {table.raters}")
    return _text(table.frame[rater])


def _apply_ties(pairs: pd.DataFrame, tie_policy: TiePolicy) -> pd.DataFrame:
    if tie_policy not in TIE_POLICIES:
        raise JudgekitError(f"unknown tie policy '{tie_policy}' (use {', '.join(TIE_POLICIES)})")
    return pairs[pairs["reference"] != TIE] if tie_policy == "exclude" else pairs


def _label_sets(pairs: pd.DataFrame, tie_policy: TiePolicy) -> tuple[list[str], list[str]]:
    """(all labels for kappa and the confusion matrix, classes averaged in macro scores)."""
    seen = sorted(set(pairs["reference"]) | set(pairs["label"]))
    everything = [x for x in seen if x != TIE] + ([TIE] if TIE in seen else [])
    classes = everything if tie_policy == "own_class" else [x for x in everything if x != TIE]
    return everything, classes


class _Scorer:
    """Accuracy, macro-F1 and kappa of ``label`` against ``reference``, bootstrapped by item.

    ``pairs`` has columns item, reference, label; several rows may share an item (pooled
    human ceiling); a bootstrap resample of items becomes sklearn ``sample_weight``.
    """

    def __init__(self, pairs: pd.DataFrame, tie_policy: TiePolicy) -> None:
        self.pairs = pairs
        self.everything, self.classes = _label_sets(pairs, tie_policy)
        self.item_codes, self.items = pd.factorize(pairs["item"])
        self.y_true = pairs["reference"].to_numpy()
        self.y_pred = pairs["label"].to_numpy()
        code = {label: k for k, label in enumerate(self.everything)}
        self.t_codes = np.array([code[x] for x in self.y_true], dtype=int)
        self.p_codes = np.array([code[x] for x in self.y_pred], dtype=int)
        self.class_codes = [code[c] for c in self.classes]
        self._cache: dict[bytes, dict[str, float]] = {}

    def _all(self, idx: np.ndarray | None) -> dict[str, float]:
        """Every metric on all rows (sklearn) or on one bootstrap resample of items.

        A resample is scored from its weighted confusion matrix (same formulas as sklearn,
        checked against it in tests; sklearn's per-call validation would make 1000 resamples
        take minutes). Results are cached: each metric's bootstrap replays the same resamples.
        """
        key = b"" if idx is None else idx.tobytes()
        if key not in self._cache:
            self._cache[key] = self._sklearn() if idx is None else self._from_counts(idx)
        return self._cache[key]

    def _sklearn(self) -> dict[str, float]:
        t, p = self.y_true, self.y_pred
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            out = {
                "accuracy": float(accuracy_score(t, p)),
                "macro_f1": float(f1_score(t, p, labels=self.classes, average="macro")),
                "kappa": float(cohen_kappa_score(t, p, labels=self.everything)),
            }
            prec, rec, _, _ = precision_recall_fscore_support(
                t, p, labels=self.classes, zero_division=np.nan
            )
        out.update({f"recall:{c}": float(r) for c, r in zip(self.classes, rec, strict=True)})
        out.update({f"precision:{c}": float(x) for c, x in zip(self.classes, prec, strict=True)})
        return out

    def _from_counts(self, idx: np.ndarray) -> dict[str, float]:
        q = len(self.everything)
        weights = np.bincount(idx, minlength=len(self.items))[self.item_codes]
        cells = np.bincount(self.t_codes * q + self.p_codes, weights=weights, minlength=q * q)
        cells = cells.reshape(q, q)
        n, tp = cells.sum(), np.diag(cells)
        true, pred = cells.sum(axis=1), cells.sum(axis=0)
        with np.errstate(all="ignore"):
            p_e = float(true @ pred) / n**2
            f1 = np.where(true + pred > 0, 2 * tp / (true + pred), 0.0)
            out = {
                "accuracy": float(tp.sum() / n),
                "macro_f1": float(f1[self.class_codes].mean()),
                "kappa": float((tp.sum() / n - p_e) / (1 - p_e)),
            }
            for c, k in zip(self.classes, self.class_codes, strict=True):
                out[f"recall:{c}"] = float(tp[k] / true[k]) if true[k] else float("nan")
                out[f"precision:{c}"] = float(tp[k] / pred[k]) if pred[k] else float("nan")
        return out

    def metric(self, name: str, idx: np.ndarray | None = None) -> float:
        return self._all(idx)[name]

    def estimate(self, name: str, n_resamples: int, confidence: float, seed: int) -> Estimate:
        value = self.metric(name) if len(self.pairs) else float("nan")
        ci = None
        if n_resamples and len(self.pairs):
            ci = bootstrap_ci(
                len(self.items),
                lambda idx: self.metric(name, idx),
                n_resamples=n_resamples,
                confidence=confidence,
                seed=seed,
            )
        return Estimate(value, ci)


@dataclass(frozen=True)
class JudgeReport(_Report):
    """A judge against the human majority.

    Attributes:
        n_items: items scored. n_ties: items whose human votes tie (before the tie policy).
        n_unjudged: items with human labels but no judge label (left out, never guessed).
        accuracy, macro_f1, kappa: rates in [0, 1] / kappa in [-1, 1], with bootstrap CIs.
        per_class: DataFrame (label, support, recall, recall_low, recall_high, precision, ...).
        confusion: DataFrame, rows = human majority label, columns = judge label, counts.
        errors: disagreements by direction, [{"human", "judge", "count"}], most frequent first.
    """

    n_items: int
    n_ties: int
    n_unjudged: int
    tie_policy: str
    accuracy: Estimate
    macro_f1: Estimate
    kappa: Estimate
    per_class: pd.DataFrame
    confusion: pd.DataFrame
    errors: list[dict[str, Any]]


def _boots(ci: bool, n_resamples: int) -> int:
    return n_resamples if ci else 0


def judge_vs_humans(
    judge: JudgeLabels,
    humans: LabelData,
    *,
    judge_rater: Hashable | None = None,
    tie_policy: TiePolicy = "exclude",
    ci: bool = True,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> JudgeReport:
    """Score a judge against the humans' majority label (sklearn metrics, bootstrap CIs).

    Args:
        judge: the judge's labels (Series or mapping item -> label, or a table; pick the rater
            with ``judge_rater`` when it has several).
        humans: items x human raters.
        tie_policy: "exclude", "error" or "own_class" (module docstring).

    The items scored are those with a human majority and a judge label. Source of the
    protocol: paper 001 (CS/CA validation: accuracy, macro-F1, per-class recall, direction of
    errors, ties counted as errors as a variant).
    """
    reference = majority_vote(humans)
    predicted = judge_labels(judge, judge_rater)
    n_unjudged = int((~reference.index.isin(predicted.index)).sum())
    pairs = pd.DataFrame({"reference": reference})
    pairs["label"] = predicted.reindex(pairs.index)
    pairs = pairs[pairs["label"].notna()].rename_axis("item").reset_index()
    if pairs.empty:
        raise JudgekitError(
            "no item has both a judge label and a human label (judge items such as "
            f"{list(predicted.index[:3])}, human items such as {list(reference.index[:3])})"
        )
    n_ties = int((pairs["reference"] == TIE).sum())
    pairs = _apply_ties(pairs, tie_policy)
    if pairs.empty:
        raise JudgekitError("every item shared with the judge is a human tie (tie policy exclude)")
    scorer = _Scorer(pairs, tie_policy)
    boots = _boots(ci, n_resamples)

    def est(name: str) -> Estimate:
        return scorer.estimate(name, boots, confidence, seed)

    rows = []
    for label in scorer.classes:
        rec, prec = est(f"recall:{label}"), est(f"precision:{label}")
        rows.append(
            {
                "label": label,
                "support": int((pairs["reference"] == label).sum()),
                "recall": rec.value,
                "recall_low": rec.ci[0] if rec.ci else None,
                "recall_high": rec.ci[1] if rec.ci else None,
                "precision": prec.value,
                "precision_low": prec.ci[0] if prec.ci else None,
                "precision_high": prec.ci[1] if prec.ci else None,
            }
        )
    labels = scorer.everything
    cells = confusion_matrix(pairs["reference"], pairs["label"], labels=labels)
    confusion = pd.DataFrame(cells, index=labels, columns=labels).loc[
        [x for x in labels if x in set(pairs["reference"]) or x in scorer.classes],
        [x for x in labels if x in set(pairs["label"]) or x in scorer.classes],
    ]
    confusion.index.name, confusion.columns.name = "human", "judge"
    wrong = pairs[pairs["reference"] != pairs["label"]]
    errors = [
        {"human": h, "judge": j, "count": int(n)}
        for (h, j), n in Counter(zip(wrong["reference"], wrong["label"], strict=True)).most_common()
    ]
    return JudgeReport(
        n_items=len(pairs),
        n_ties=n_ties,
        n_unjudged=n_unjudged,
        tie_policy=tie_policy,
        accuracy=est("accuracy"),
        macro_f1=est("macro_f1"),
        kappa=est("kappa"),
        per_class=pd.DataFrame(rows),
        confusion=confusion,
        errors=errors,
    )


@dataclass(frozen=True)
class CeilingReport(_Report):
    """Each human against the majority of the other humans, pooled over humans.

    Attributes:
        humans: pooled accuracy, macro-F1, kappa of human vs majority(other humans), with CIs
            from a bootstrap over items (all of an item's rows move together).
        judge: the judge's scores against exactly the same references and rows (None without
            a judge), so "judge 0.74 [..] vs human ceiling 0.79 [..]" compares like with like.
        per_human: DataFrame (human, n_items, accuracy, macro_f1, kappa[, judge_*]).
        n_rows, n_items: pooled (human, item) rows and distinct items; n_ties: tied references.
    """

    tie_policy: str
    humans: dict[str, Estimate]
    judge: dict[str, Estimate] | None
    per_human: pd.DataFrame
    n_rows: int
    n_items: int
    n_ties: int


METRICS = ("accuracy", "macro_f1", "kappa")


def human_ceiling(
    humans: LabelData,
    judge: JudgeLabels | None = None,
    *,
    judge_rater: Hashable | None = None,
    tie_policy: TiePolicy = "exclude",
    ci: bool = True,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> CeilingReport:
    """Agreement of each human with the majority of the others, on the judge's footing.

    For every human h and item i rated by h and by at least one other human, the reference is
    the majority of the other humans' labels on i (``"<tie>"`` when it ties, then the tie
    policy applies). The (reference, h's label) rows of all humans are pooled and scored with
    the metrics of :func:`judge_vs_humans`. With a judge, only items it labelled are kept, and
    the judge is scored on the same rows (its label against the same leave-one-out reference),
    with the same bootstrap resamples (same seed), so the two are directly comparable.
    """
    table = as_label_table(humans)
    predicted = judge_labels(judge, judge_rater) if judge is not None else None
    frames = []
    for rater in table.raters:
        own = _text(table.frame[rater])
        reference = majority_vote(table.drop([rater]))
        rows = pd.DataFrame({"label": own, "reference": reference.reindex(own.index)})
        rows = rows[rows["reference"].notna()].rename_axis("item").reset_index()
        rows["human"] = str(rater)
        if predicted is not None:
            rows["judge"] = predicted.reindex(rows["item"]).to_numpy()
            rows = rows[rows["judge"].notna()]
        frames.append(rows)
    pooled = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if pooled.empty:
        raise JudgekitError(
            "no item is rated by two humans (and labelled by the judge): no human ceiling"
        )
    n_ties = int((pooled["reference"] == TIE).sum())
    pooled = _apply_ties(pooled, tie_policy)
    boots = _boots(ci, n_resamples)

    def scores(frame: pd.DataFrame, column: str, boot: int) -> dict[str, Estimate]:
        scorer = _Scorer(frame.assign(label=frame[column]), tie_policy)
        return {m: scorer.estimate(m, boot, confidence, seed) for m in METRICS}

    per_human = []
    for rater, rows in pooled.groupby("human", sort=False):
        entry: dict[str, Any] = {"human": rater, "n_items": len(rows)}
        entry.update({m: e.value for m, e in scores(rows, "label", 0).items()})
        if predicted is not None:
            entry.update({f"judge_{m}": e.value for m, e in scores(rows, "judge", 0).items()})
        per_human.append(entry)
    return CeilingReport(
        tie_policy=tie_policy,
        humans=scores(pooled, "label", boots),
        judge=scores(pooled, "judge", boots) if predicted is not None else None,
        per_human=pd.DataFrame(per_human),
        n_rows=len(pooled),
        n_items=int(pooled["item"].nunique()),
        n_ties=n_ties,
    )


@dataclass(frozen=True)
class AltTestResult(_Report):
    """Outcome of the Alternative Annotator Test.

    Attributes:
        winning_rate: omega in [0, 1], share of annotators whose null is rejected after
            Benjamini-Yekutieli correction. passed: omega >= 0.5.
        advantage_probability: rho in [0, 1], mean over annotators of the share of items where
            the judge's alignment >= the annotator's.
        per_annotator: DataFrame (annotator, n_items, rho_judge, rho_human, mean_difference,
            p_value, p_adjusted, rejected).
        skipped: annotators left out, with the reason (fewer than ``min_items`` items).
    """

    winning_rate: float
    advantage_probability: float
    passed: bool
    epsilon: float
    q: float
    scoring: str
    per_annotator: pd.DataFrame
    skipped: dict[str, str] = field(default_factory=dict)
    n_items: int = 0


def _accuracy(pred: Any, others: list[Any]) -> float:
    return float(np.mean([pred == o for o in others]))


def _neg_rmse(pred: Any, others: list[Any]) -> float:
    return -float(np.sqrt(np.mean([(float(pred) - float(o)) ** 2 for o in others])))


SCORINGS: dict[str, Callable[[Any, list[Any]], float]] = {
    "accuracy": _accuracy,
    "neg_rmse": _neg_rmse,
}


def alt_test(
    judge: JudgeLabels,
    humans: LabelData,
    *,
    judge_rater: Hashable | None = None,
    epsilon: float = 0.2,
    q: float = 0.05,
    scoring: str = "accuracy",
    min_humans_per_item: int = 2,
    min_items: int = 30,
) -> AltTestResult:
    """Alternative Annotator Test (Calderon, Reichart & Dror, ACL 2025, Sec. 3; public code).

    Procedure:

    1. Keep items with a judge label and at least ``min_humans_per_item`` human labels.
    2. For each annotator j with at least ``min_items`` kept items (others are skipped and
       reported), and each item i that j labelled: S_judge = alignment of the judge's label
       with the labels of the *other* annotators on i, S_j = the same for j's label. The
       alignment is "accuracy" (share of the others with the same label; labels as text) or
       "neg_rmse" (minus the RMSE to the others; numeric labels).
    3. W_judge = [S_judge >= S_j], W_j = [S_j >= S_judge]; d_i = W_j - W_judge.
       rho_j = mean(W_judge) (the judge's advantage probability against j).
    4. One-sided one-sample t-test of H0: mean(d) >= epsilon against H1: mean(d) < epsilon
       (scipy ``ttest_1samp(d, epsilon, alternative="less")``; equivalently, the judge's
       advantage rho_judge - rho_j exceeds -epsilon). Epsilon is the cost-benefit margin:
       0.2 for expert annotators, 0.15 skilled, 0.1 crowd workers (paper's guidance). When
       every d_i is equal the t statistic is infinite: p = 0 if d < epsilon, else 1.
    5. Benjamini-Yekutieli FDR correction at level ``q`` over annotators (statsmodels
       ``multipletests(method="fdr_by")``); winning rate omega = share of rejected nulls; the
       judge passes when omega >= 0.5. Advantage probability rho = mean of rho_j.

    Raises:
        JudgekitError: unknown scoring, or no annotator with ``min_items`` items.
    """
    if scoring not in SCORINGS:
        raise JudgekitError(f"unknown alignment scoring '{scoring}' (use {', '.join(SCORINGS)})")
    score = SCORINGS[scoring]
    table = as_label_table(humans)
    frame = table.frame.copy()
    frame.index = frame.index.astype(str)
    predicted = judge_labels(judge, judge_rater)
    if scoring == "accuracy":
        frame = frame.apply(lambda col: col.map(lambda v: None if v is None else str(v)))
    counts = frame.notna().sum(axis=1)
    keep = frame.index[(counts >= min_humans_per_item) & frame.index.isin(predicted.index)]
    frame = frame.loc[keep]
    rows, skipped = [], {}
    for rater in frame.columns:
        mine = frame[rater].dropna()
        if len(mine) < min_items:
            skipped[str(rater)] = f"{len(mine)} items < {min_items}"
            continue
        w_judge, w_human = [], []
        for item, label in mine.items():
            others = [v for r, v in frame.loc[item].items() if r != rater and v is not None]
            s_judge, s_human = score(predicted[item], others), score(label, others)
            w_judge.append(float(s_judge >= s_human))
            w_human.append(float(s_human >= s_judge))
        d = np.asarray(w_human) - np.asarray(w_judge)
        if np.all(d == d[0]):
            p_value = 0.0 if d[0] < epsilon else 1.0
        else:
            p_value = float(stats.ttest_1samp(d, epsilon, alternative="less").pvalue)
        rows.append(
            {
                "annotator": str(rater),
                "n_items": len(d),
                "rho_judge": float(np.mean(w_judge)),
                "rho_human": float(np.mean(w_human)),
                "mean_difference": float(d.mean()),
                "p_value": p_value,
            }
        )
    if not rows:
        raise JudgekitError(
            f"alt-test: no annotator has {min_items} items shared with the judge and "
            f"{min_humans_per_item - 1}+ other annotators (skipped: {skipped})"
        )
    per = pd.DataFrame(rows)
    rejected, adjusted, _, _ = multipletests(per["p_value"], alpha=q, method="fdr_by")
    per["p_adjusted"], per["rejected"] = adjusted, rejected
    omega = float(np.mean(rejected))
    return AltTestResult(
        winning_rate=omega,
        advantage_probability=float(per["rho_judge"].mean()),
        passed=omega >= 0.5,
        epsilon=epsilon,
        q=q,
        scoring=scoring,
        per_annotator=per,
        skipped=skipped,
        n_items=len(frame),
    )
