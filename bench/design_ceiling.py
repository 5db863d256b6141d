"""Ceiling of the active design's label saving on real data (issue 37; docs/designs.md).

The variance of the inverse-probability-weighted PPI++ mean is smallest with
``pi_i ∝ sqrt(E[e_i^2 | x_i])`` (Zrnic & Candès 2024, Sec. 3), ``e`` the centred PPI++ residual
``Y - lam f``. Fitted on *all* human labels (4 quantile bins of the feature x; not attainable in
practice), it saves at most ``1 - mean(sqrt(m(x)))^2 / mean(e^2)`` of the uniform design's
labels (no floor, no cap). Features: the judge's own value (WMT23 GEMBA-MQM score; LLMBar
verdict averaged over both orders) and, for LLMBar, the other judges' disagreement: the spread
``sqrt(c (1 - c))`` of the other evaluator models' mean verdict ``c`` on the item, and how far
this judge's verdict lies from it, ``|f - c|``. The baseline is the uniform design (saving 0).

Usage: ``python bench/design_ceiling.py``; prints ``<name>: <figure> (target ...)`` lines.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from estimates import DATA, gemba_populations  # noqa: E402


def ceiling(y: np.ndarray, f: np.ndarray, x: np.ndarray, bins: int = 4) -> float:
    """Largest saving of the active design whose rule is fitted on all of ``y`` (share)."""
    var = float(np.var(f))
    lam = 0.0 if var == 0 else float(np.clip(np.cov(y, f, bias=True)[0, 1] / var, 0, 1))
    e2 = (y - lam * f - np.mean(y - lam * f)) ** 2
    edges = np.unique(np.quantile(x, np.linspace(0, 1, bins + 1)[1:-1]))
    b = np.digitize(x, edges)
    m = np.bincount(b, weights=e2) / np.maximum(np.bincount(b), 1)
    return float(1 - np.mean(np.sqrt(m[b])) ** 2 / e2.mean()) if e2.mean() > 0 else 0.0


def llmbar_features() -> dict[str, dict[str, float]]:
    """judge/prompting -> feature -> ceiling on LLMBar."""
    v = pd.read_csv(DATA / "llmbar" / "llm_judge_verdicts.tsv", sep="\t", dtype=str)
    votes = v[["winner_original_order", "winner_swapped_order"]].replace("None", np.nan)
    v["one"] = (votes == "1").astype(float).where(votes.notna()).mean(axis=1)
    v["judge"] = v["evaluator_model"] + "/" + v["prompting"]
    v["item"] = v["subset"] + ":" + v["item_index"]
    wide = v.pivot_table(index="item", columns="judge", values="one")
    out = {}
    for judge, g in v[v["one"].notna()].groupby("judge"):
        y, f = (g["gold_label"] == "1").to_numpy(float), g["one"].to_numpy()
        model = judge.split("/")[0]
        rest = wide[[c for c in wide.columns if c.split("/")[0] != model]].loc[g["item"]]
        c = rest.mean(axis=1).fillna(0.5).to_numpy()
        out[judge] = {
            "own": ceiling(y, f, f),
            "others' spread": ceiling(y, f, np.sqrt(c * (1 - c))),
            "|f - others|": ceiling(y, f, np.abs(f - c)),
        }
    return out


def main() -> None:
    """Print the median ceiling per set and feature (uniform design: 0 by definition)."""
    for pair in ("en-de", "zh-en"):
        found = [ceiling(y, f, f) for y, f in gemba_populations(pair).values()]
        print(f"design ceiling wmt23-{pair} score: median {np.median(found):.1%}, max "
              f"{max(found):.1%} over {len(found)} systems (target >= 25% on 2 of 3 sets; "
              "uniform 0%)")  # fmt: skip
    table = pd.DataFrame(llmbar_features()).T
    for feature in table.columns:
        print(f"design ceiling llmbar {feature}: median {table[feature].median():.1%}, max "
              f"{table[feature].max():.1%} ({table[feature].idxmax()}) over {len(table)} judges "
              "(target >= 25% on 2 of 3 sets; uniform 0%)")  # fmt: skip


if __name__ == "__main__":
    main()
