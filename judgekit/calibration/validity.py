"""Proxy validity of benchmark scores (paper 001, "Gold vs. Translation", §4): for each proxy
column, ranking agreement with the native score (Kendall tau-b with a model-level bootstrap CI,
top-k overlap) and incremental validity (nested OLS, Delta R^2, F-test, bootstrap CI of beta,
leave-one-family-out refits, an evidence label). ``judgekit calibrate validity`` prints and
writes (:mod:`judgekit.report.validity`) what :func:`proxy_report` returns.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.data.scores import read_scores_csv
from judgekit.metrics.ranking import ranking_agreement
from judgekit.metrics.validity import ValidityResult, proxy_validity


def _row(result: ValidityResult, ranking: dict) -> dict:
    """One flat CSV row per proxy."""
    lofo_pass = sum(
        1
        for r in result.lofo
        if math.copysign(1, r.beta) == math.copysign(1, result.beta) and r.p_value < result.alpha
    )
    ci = result.beta_ci or (math.nan, math.nan)
    dci = result.delta_r2_ci or (math.nan, math.nan)
    kci = ranking["kendall_ci"] or (math.nan, math.nan)
    return {
        "native": result.native,
        "proxy": result.proxy,
        "controls": ";".join(result.controls),
        "n_models": result.n_models,
        "kendall_tau_b": ranking["kendall_tau_b"],
        "kendall_ci_low": kci[0],
        "kendall_ci_high": kci[1],
        "kendall_p": ranking["kendall_p"],
        "spearman": ranking["spearman"],
        "top_k": ranking["k"],
        "top_k_overlap": ranking["top_k_overlap"],
        "r2_base": result.r2_base,
        "r2_full": result.r2_full,
        "delta_r2": result.delta_r2,
        "delta_r2_ci_low": dci[0],
        "delta_r2_ci_high": dci[1],
        "f_stat": result.f_stat,
        "f_p_value": result.f_p_value,
        "df_num": result.df_num,
        "df_denom": result.df_denom,
        "beta": result.beta,
        "beta_se": result.beta_se,
        "beta_p": result.beta_p,
        "beta_ci_low": ci[0],
        "beta_ci_high": ci[1],
        "lofo_refits": len(result.lofo),
        "lofo_passed": lofo_pass,
        "label": result.label,
    }


def proxy_report(
    scores: Path, columns: dict[str, Any], top_k: int, n_resamples: int, seed: int
) -> tuple[pd.DataFrame, list[dict], list[dict]]:
    """(the score table, one flat row per proxy, one full record per proxy: ``ranking`` and
    ``validity``).

    ``columns`` names the CSV's columns: ``model``, ``family``, ``native``, ``params`` (> 0),
    ``proficiency``, ``controls`` (a list) and ``proxies`` (a list).

    Raises:
        InputError: the CSV lacks a column, or a value is not a number (file, line, column).
    """

    c = columns
    frame = read_scores_csv(
        scores, model=c["model"], family=c["family"],
        numeric=[c["native"], c["params"], c["proficiency"], *c["controls"], *c["proxies"]],
        positive=[c["params"]],
    )  # fmt: skip
    indexed = frame.set_index(c["model"])
    rows, records = [], []
    for name in c["proxies"]:
        ranking = ranking_agreement(
            indexed[c["native"]], indexed[name], k=top_k, n_resamples=n_resamples, seed=seed
        ).to_dict()
        result = proxy_validity(
            frame, name, native=c["native"], params=c["params"], proficiency=c["proficiency"],
            family=c["family"], controls=c["controls"], n_resamples=n_resamples, seed=seed,
        )  # fmt: skip
        rows.append(_row(result, ranking))
        records.append({"ranking": ranking, "validity": result.to_dict()})
    return frame, rows, records
