"""Character-level agreement of error spans: P/R/F1 with severity partial credit, and categories.

Scheme of the WMT23 QE shared task 2 (fine-grained error span detection; Blain et al. 2023,
"Findings of the WMT 2023 Shared Task on Quality Estimation", and its official scorer
``task2_evaluate.py`` in WMT-QE-Task/qe-eval-scripts):

* A span ``(start, end)`` covers the characters ``start .. end - 1`` of the translation (end
  exclusive); an empty span (``start == end``, e.g. an omission marked at an insertion point)
  covers the one position ``start``. Severities are ``minor`` and ``major`` (``critical`` counts
  as major); spans of any other severity (``neutral``, ``no-error``) are ignored.
* Each character is labelled by the set of severities of the spans that cover it.
  ``n_gold`` (``n_pred``) = characters with at least one gold (predicted) label.
* True positives, per gold-labelled character: 1 when the gold label is major only and a
  predicted span marks it major, or minor only and a predicted span marks it minor; 0.5 when the
  prediction marks it only with the other severity; 1 when gold marks it both major and minor
  and any prediction marks it; 0 when no prediction marks it.
* precision = TP / n_pred, recall = TP / n_gold, F1 = 2PR / (P + R). Over a corpus the counts
  are summed first (micro average), as the official scorer does per language pair.
* Degenerate cases (the official scorer divides by zero there): with no predicted characters
  precision is 1 if there are no gold characters either, else 0; recall likewise with no gold
  characters; F1 is 0 when P + R = 0.

Category agreement (for the error typing judge, DESIGN 3.3): over every pair of a predicted and a
gold span in the same segment whose character sets overlap, the share of pairs whose categories
are equal (case-insensitive, optionally compared on the first ``depth`` levels of ``A/B/C``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

MAJOR, MINOR = "major", "minor"
_SEVERITY = {"major": MAJOR, "critical": MAJOR, "minor": MINOR}


class Span(NamedTuple):
    """An error span: character offsets into the translation (end exclusive), severity, category."""

    start: int
    end: int
    severity: str
    category: str = ""


@dataclass(frozen=True)
class SpanCounts:
    """Character counts of one segment or a corpus; precision, recall and f1 are in [0, 1]."""

    tp: float
    n_pred: int
    n_gold: int

    def __add__(self, other: SpanCounts) -> SpanCounts:
        return SpanCounts(
            self.tp + other.tp, self.n_pred + other.n_pred, self.n_gold + other.n_gold
        )

    @property
    def precision(self) -> float:
        if self.n_pred == 0:
            return 1.0 if self.n_gold == 0 else 0.0
        return self.tp / self.n_pred

    @property
    def recall(self) -> float:
        if self.n_gold == 0:
            return 1.0 if self.n_pred == 0 else 0.0
        return self.tp / self.n_gold

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 0.0 if p + r == 0 else 2 * p * r / (p + r)


@dataclass(frozen=True)
class SpanScores:
    """Micro-averaged corpus scores plus the counts of every segment, in input order."""

    total: SpanCounts
    segments: tuple[SpanCounts, ...]

    @property
    def precision(self) -> float:
        return self.total.precision

    @property
    def recall(self) -> float:
        return self.total.recall

    @property
    def f1(self) -> float:
        return self.total.f1


@dataclass(frozen=True)
class CategoryAgreement:
    """Share of overlapping (predicted, gold) span pairs with the same category.

    ``agreement`` is in [0, 1], or None when no predicted span overlaps a gold span.
    """

    n_pairs: int
    n_same: int

    @property
    def agreement(self) -> float | None:
        return None if self.n_pairs == 0 else self.n_same / self.n_pairs


def _positions(span: Sequence) -> range:
    start, end = int(span[0]), int(span[1])
    if end < start:
        raise ValueError(f"span end {end} is before its start {start}")
    return range(start, end) if end > start else range(start, start + 1)


def _labels(spans: Sequence[Sequence]) -> dict[int, set[str]]:
    labels: dict[int, set[str]] = {}
    for span in spans:
        severity = _SEVERITY.get(str(span[2]).strip().lower())
        if severity is None:
            continue
        for pos in _positions(span):
            labels.setdefault(pos, set()).add(severity)
    return labels


def segment_counts(pred: Sequence[Sequence], gold: Sequence[Sequence]) -> SpanCounts:
    """Character counts of one segment (WMT23 QE task 2 scheme, see the module docstring).

    Args:
        pred, gold: spans as :class:`Span` or ``(start, end, severity[, category])`` tuples.

    Raises:
        ValueError: a span whose end is before its start.
    """
    pred_labels, gold_labels = _labels(pred), _labels(gold)
    tp = 0.0
    for pos, gold_sev in gold_labels.items():
        pred_sev = pred_labels.get(pos)
        if not pred_sev:
            continue
        if len(gold_sev) == 2 or gold_sev & pred_sev:
            tp += 1.0
        else:
            tp += 0.5
    return SpanCounts(tp, len(pred_labels), len(gold_labels))


def span_scores(
    pred_segments: Sequence[Sequence[Sequence]], gold_segments: Sequence[Sequence[Sequence]]
) -> SpanScores:
    """Character-level P/R/F1 over a corpus, micro-averaged (counts summed over segments).

    Args:
        pred_segments, gold_segments: one list of spans per segment, aligned by position.

    Raises:
        ValueError: the two lists differ in length, or a span is inverted.
    """
    if len(pred_segments) != len(gold_segments):
        raise ValueError(
            f"{len(pred_segments)} predicted segments but {len(gold_segments)} gold segments"
        )
    counts = tuple(segment_counts(p, g) for p, g in zip(pred_segments, gold_segments, strict=True))
    total = sum(counts, SpanCounts(0.0, 0, 0))
    return SpanScores(total, counts)


def _category(value: str, depth: int | None) -> str:
    parts = [p.strip().lower() for p in str(value).split("/")]
    return "/".join(parts if depth is None else parts[:depth])


def category_agreement(
    pred_segments: Sequence[Sequence[Sequence]],
    gold_segments: Sequence[Sequence[Sequence]],
    *,
    depth: int | None = None,
) -> CategoryAgreement:
    """Category agreement on overlapping span pairs, over a corpus.

    Args:
        pred_segments, gold_segments: one list of ``(start, end, severity, category)`` per
            segment; severity is not used here.
        depth: compare only the first ``depth`` levels of ``Accuracy/Mistranslation``-style
            categories (1 = top level); None compares the whole category.

    Raises:
        ValueError: the two lists differ in length, or a span is inverted.
    """
    if len(pred_segments) != len(gold_segments):
        raise ValueError(
            f"{len(pred_segments)} predicted segments but {len(gold_segments)} gold segments"
        )
    n_pairs = n_same = 0
    for pred, gold in zip(pred_segments, gold_segments, strict=True):
        gold_sets = [(set(_positions(g)), _category(g[3], depth)) for g in gold]
        for p in pred:
            p_pos, p_cat = set(_positions(p)), _category(p[3], depth)
            for g_pos, g_cat in gold_sets:
                if p_pos & g_pos:
                    n_pairs += 1
                    n_same += p_cat == g_cat
    return CategoryAgreement(n_pairs, n_same)
