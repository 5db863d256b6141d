"""Character-level span P/R/F1 (WMT23 QE task 2 scheme) and category agreement."""

from __future__ import annotations

import math
from collections import defaultdict

import pytest
from conftest import shared_path

from judgekit.metrics import mqm
from judgekit.metrics.spans import (
    Span,
    SpanCounts,
    category_agreement,
    segment_counts,
    span_scores,
)


def test_exact_and_partial_overlap():
    # gold chars 0-9, predicted 5-14: 5 shared characters, both major.
    counts = segment_counts([Span(5, 15, "major")], [Span(0, 10, "major")])
    assert counts == SpanCounts(tp=5.0, n_pred=10, n_gold=10)
    assert (counts.precision, counts.recall, counts.f1) == (0.5, 0.5, 0.5)
    same = segment_counts([(0, 10, "Major")], [(0, 10, "major")])
    assert (same.precision, same.recall, same.f1) == (1.0, 1.0, 1.0)


def test_severity_mismatch_counts_half():
    counts = segment_counts([Span(0, 10, "minor")], [Span(0, 10, "major")])
    assert counts == SpanCounts(tp=5.0, n_pred=10, n_gold=10)
    assert counts.f1 == 0.5
    # critical counts as major; neutral spans are not errors.
    assert segment_counts([(0, 4, "Critical")], [(0, 4, "Major")]).tp == 4.0
    assert segment_counts([(0, 4, "Neutral")], [(0, 4, "Major")]) == SpanCounts(0.0, 0, 4)


def test_gold_with_both_severities_and_empty_spans():
    # gold: 0-3 major, 2-5 minor -> 0,1 major only; 2,3 both; 4,5 minor only.
    # predicted 0-5 minor: 0.5 + 0.5 + 1 + 1 + 1 + 1 = 5 of 6 characters.
    counts = segment_counts([Span(0, 6, "minor")], [Span(0, 4, "major"), Span(2, 6, "minor")])
    assert counts == SpanCounts(tp=5.0, n_pred=6, n_gold=6)
    assert counts.precision == pytest.approx(5 / 6)
    # an empty span marks its one position (the official scorer's s == e case).
    assert segment_counts([(3, 3, "major")], [(3, 3, "major")]) == SpanCounts(1.0, 1, 1)
    with pytest.raises(ValueError, match="before its start"):
        segment_counts([(5, 2, "major")], [])


def test_degenerate_segments():
    assert segment_counts([], []).f1 == 1.0  # both say "no error"
    missed = segment_counts([], [(0, 3, "minor")])
    assert (missed.precision, missed.recall, missed.f1) == (0.0, 0.0, 0.0)
    false_alarm = segment_counts([(0, 3, "minor")], [])
    assert (false_alarm.precision, false_alarm.recall) == (0.0, 0.0)  # nothing to find


def test_corpus_is_micro_averaged():
    pred = [[Span(0, 10, "major")], [Span(0, 2, "minor")]]
    gold = [[Span(0, 10, "major")], [Span(0, 8, "minor")]]
    scores = span_scores(pred, gold)
    # tp = 10 + 2, n_pred = 12, n_gold = 18 (a macro average would give recall 0.625).
    assert scores.total == SpanCounts(12.0, 12, 18)
    assert scores.precision == 1.0 and scores.recall == pytest.approx(12 / 18)
    assert scores.f1 == pytest.approx(2 * (12 / 18) / (1 + 12 / 18))
    assert [s.recall for s in scores.segments] == [1.0, 0.25]
    with pytest.raises(ValueError, match="1 predicted segments but 2 gold"):
        span_scores(pred[:1], gold)


def test_category_agreement_hand_computed():
    pred = [
        [Span(0, 5, "major", "Accuracy/Mistranslation"), Span(10, 12, "minor", "Fluency/Grammar")],
        [Span(0, 3, "minor", "Style/Awkward")],
    ]
    gold = [
        [Span(3, 8, "minor", "Accuracy/Omission"), Span(11, 15, "minor", "fluency/grammar")],
        [Span(5, 9, "minor", "Style/Awkward")],  # no overlap: not counted
    ]
    exact = category_agreement(pred, gold)
    assert (exact.n_pairs, exact.n_same, exact.agreement) == (2, 1, 0.5)
    top = category_agreement(pred, gold, depth=1)
    assert (top.n_pairs, top.n_same, top.agreement) == (2, 2, 1.0)
    assert category_agreement([[]], [[]]).agreement is None


def _official_task2(segments):
    """The WMT23 QE task 2 scorer (qe-eval-scripts wmt23/task2_evaluate.py), per-character arrays.

    ``segments``: (target, pred spans, gold spans). Written from the official loop, as an
    independent oracle for the set-based implementation.
    """
    tp = total_sys = total_gold = 0.0
    for target, pred, gold in segments:
        arrays = {}
        for name, spans in (("sys", pred), ("gold", gold)):
            marks = {"major": [0] * (len(target) + 1), "minor": [0] * (len(target) + 1)}
            for s, e, sev, _ in spans:
                sev = sev.lower()
                if sev not in marks:
                    continue
                e = min(e, len(target))
                for i in [s] if s == e else range(s, e):
                    marks[sev][i] += 1
            arrays[name] = marks
        g, p = arrays["gold"], arrays["sys"]
        for gm, pm, gn, pn in zip(g["major"], p["major"], g["minor"], p["minor"], strict=True):
            total_gold += bool(gm or gn)
            total_sys += bool(pm or pn)
            if gm and not gn:
                tp += 1 if pm else 0.5 if pn else 0
            elif gn and not gm:
                tp += 1 if pn else 0.5 if pm else 0
            elif gm and gn:
                tp += 1 if (pm or pn) else 0
    return tp / total_sys, tp / total_gold


def test_ted_rater_against_rater_on_identical_translations():
    # TED has one rater per (system, segment); where two systems produced the same translation,
    # two different raters annotated the same text: score the first rater against the second.
    rows = mqm.read_mqm_tsv(shared_path("mqm", "google_mqm_ted_ende.systems-subset.tsv"))
    spans = mqm.target_spans(rows)
    target_of = {(*r.segment, r.rater): r.target for r in rows}
    by_text = defaultdict(dict)
    for rating, target in target_of.items():
        _, doc, seg_id, rater = rating
        by_text[(doc, seg_id, target)].setdefault(rater, rating)
    pairs = [sorted(raters.items())[:2] for raters in by_text.values() if len(raters) >= 2]
    assert len(pairs) == 744
    pred = [spans[a[1]] for a, _ in pairs]
    gold = [spans[b[1]] for _, b in pairs]
    scores = span_scores(pred, gold)
    for value in (scores.precision, scores.recall, scores.f1):
        assert math.isfinite(value) and 0.0 < value < 1.0
    targets = [target_of[a[1]] for a, _ in pairs]
    annotated = [(t, p, g) for t, p, g in zip(targets, pred, gold, strict=True) if p or g]
    official = _official_task2(annotated)
    assert (scores.precision, scores.recall) == pytest.approx(official)
    agreement = category_agreement(pred, gold)
    assert agreement.n_pairs > 0 and 0.0 <= agreement.agreement <= 1.0

    identical = span_scores(gold, gold)
    assert (identical.precision, identical.recall, identical.f1) == (1.0, 1.0, 1.0)
    assert category_agreement(gold, gold).n_same >= sum(len(g) for g in gold) > 0  # self-pairs
