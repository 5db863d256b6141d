"""Ranking agreement over models: hand-computed Spearman, Kendall tau-b and top-k overlap."""

from __future__ import annotations

import pandas as pd
import pytest

from judgekit.errors import JudgekitError
from judgekit.metrics.ranking import (
    ranking_agreement,
    ranking_agreement_frame,
    top_k,
    top_k_overlap,
)

# B swaps the models ranked 3rd and 4th by A: 1 discordant pair of 10.
A = {"m1": 0.9, "m2": 0.8, "m3": 0.7, "m4": 0.6, "m5": 0.5}
B = {"m1": 0.95, "m2": 0.85, "m3": 0.55, "m4": 0.65, "m5": 0.45}


def test_hand_computed_rank_correlations():
    res = ranking_agreement(A, B, k=3, n_resamples=0)
    assert res.kendall_tau_b == pytest.approx((9 - 1) / 10)
    # Spearman rho = 1 - 6 * sum d^2 / (n (n^2 - 1)) = 1 - 6 * 2 / 120
    assert res.spearman == pytest.approx(0.9)
    assert res.top_k_a == ("m1", "m2", "m3")
    assert res.top_k_b == ("m1", "m2", "m4")
    assert res.top_k_overlap == pytest.approx(2 / 3)
    assert res.kendall_ci is None


def test_top_k_overlap_and_direction():
    assert top_k_overlap(A, B, k=2) == 1.0
    assert top_k_overlap(A, B, k=4) == 1.0
    # lower is better (e.g. error rates): the bottom of A and B
    assert top_k(A, 2, higher_is_better=False) == ("m5", "m4")
    assert top_k_overlap(A, B, k=2, higher_is_better=False) == 0.5


def test_top_k_ties_broken_by_name():
    assert top_k({"b": 1.0, "a": 1.0, "c": 0.0}, 1) == ("a",)


def test_bootstrap_ci_over_models():
    a = {f"m{i}": float(i) for i in range(20)}
    b = {f"m{i}": float(i) + (3.0 if i % 4 == 0 else 0.0) for i in range(20)}
    res = ranking_agreement(a, b, n_resamples=500, seed=1)
    again = ranking_agreement(a, b, n_resamples=500, seed=1)
    assert res.kendall_ci == again.kendall_ci
    assert res.kendall_ci[0] <= res.kendall_tau_b <= res.kendall_ci[1]
    assert res.spearman_ci[0] <= res.spearman <= res.spearman_ci[1]
    assert res.kendall_p < 0.001


def test_models_in_one_input_only_are_dropped():
    b = dict(B, extra=0.1)
    b.pop("m5")
    res = ranking_agreement(A, b, k=5, n_resamples=0)
    assert res.n_models == 4
    assert res.dropped == ("extra", "m5")
    assert res.k == 4  # clipped to the shared models


def test_frame_input():
    frame = pd.DataFrame({"model": list(A), "native": list(A.values()), "proxy": list(B.values())})
    res = ranking_agreement_frame(frame, "native", "proxy", k=3, n_resamples=0)
    assert res.kendall_tau_b == pytest.approx(0.8)
    with pytest.raises(JudgekitError, match="columns not found"):
        ranking_agreement_frame(frame, "native", "nope")


def test_errors():
    with pytest.raises(JudgekitError, match=">= 3 models"):
        ranking_agreement({"a": 1, "b": 2}, {"a": 1, "b": 2})
    with pytest.raises(JudgekitError, match="exceeds"):
        top_k_overlap(A, B, k=6)
    with pytest.raises(JudgekitError, match="must be numbers"):
        ranking_agreement({"a": "x", "b": 1, "c": 2}, {"a": 1, "b": 2, "c": 3})
