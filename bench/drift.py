"""Drift detection on real data (docs/drift.md): false alarms on null resamples, and detection.

* LLMBar (Zeng et al. 2024), 419 items (Natural, Adversarial): GPT-4 Vanilla as the baseline,
  ChatGPT Vanilla as "the new revision": flagged on Adversarial?
* False alarms: GPT-4 Vanilla and GPT-4 CoT answers, each item's pair assigned to before/after
  by a fair coin (exchangeable revisions), ``--draws`` seeds; any flag is false. Baseline in the
  same run: the raw-figure rule "accuracy dropped by more than 2 points in some language" (no
  test, no multiplicity control).
* WMT23 MQM, GEMBA-MQM on one system: a share of en-de's judge scores shuffled so Kendall tau
  with the experts drops by 0.10, zh-en unchanged; detection rate in en-de and false flags in
  zh-en over ``--shifts`` seeds.

Usage: ``python bench/drift.py [--draws 200] [--shifts 50]``. Measured on a loaded shared
machine; timings are not the point.
"""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from judgekit.drift import compare_answers  # noqa: E402
from judgekit.metrics.mteval import align_seg_scores, read_seg_scores  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "judge-vs-human"


def llmbar(after_model: str, prompting: str) -> pd.DataFrame:
    """GPT-4 Vanilla (before) and ``after_model``/``prompting`` (after) on LLMBar."""
    v = pd.read_csv(DATA / "llmbar" / "llm_judge_verdicts.tsv", sep="\t", dtype=str,
                    keep_default_na=False)  # fmt: skip

    def answers(model: str, prompt: str) -> pd.DataFrame:
        rows = v[(v["evaluator_model"] == model) & (v["prompting"] == prompt)]
        return rows.set_index(["subset", "item_index"])

    old, new = answers("GPT-4", "Vanilla"), answers(after_model, prompting)
    return pd.DataFrame({"group": [s.split("/")[0] for s, _ in old.index],
                         "human": old["gold_label"], "before": old["winner_original_order"],
                         "after": new["winner_original_order"].reindex(old.index)})  # fmt: skip


def wmt23() -> pd.DataFrame:
    parts = []
    src = DATA / "wmt23-gemba-mqm-vs-human-mqm"
    for lp in ("en-de", "zh-en"):
        joined = align_seg_scores(read_seg_scores(src / f"{lp}.GEMBA-MQM-src.seg.score.tsv"),
                                  read_seg_scores(src / f"{lp}.mqm.seg.score.tsv"))  # fmt: skip
        rows = joined[joined["system"] == "GPT4-5shot"].dropna(subset=["judge", "human"])
        parts.append(pd.DataFrame({"group": lp, "human": rows["human"].to_numpy(),
                                   "before": rows["judge"].to_numpy()}))  # fmt: skip
    return pd.concat(parts, ignore_index=True).assign(after=lambda d: d["before"])


def shifted(frame: pd.DataFrame, drop: float, seed: int) -> tuple[pd.DataFrame, float]:
    """en-de's judge scores with the smallest shuffled share giving a tau drop >= ``drop``."""
    from scipy.stats import kendalltau

    rng = np.random.default_rng(seed)
    ende = frame["group"] == "en-de"
    h, b = frame.loc[ende, "human"].to_numpy(), frame.loc[ende, "before"].to_numpy()
    base = kendalltau(h, b).statistic
    for share in np.arange(0.02, 1.0, 0.02):
        after = b.copy()
        idx = rng.choice(len(b), int(share * len(b)), replace=False)
        after[idx] = rng.permutation(after[idx])
        if base - kendalltau(h, after).statistic >= drop:
            break
    out = frame.copy()
    out.loc[ende, "after"] = after
    return out, float(base - kendalltau(h, after).statistic)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--shifts", type=int, default=50)
    args = parser.parse_args()
    gc.disable()  # multipletests(method="holm") calls gc.collect() each time; keep it cheap
    flagged = {c.group: c for c in compare_answers(llmbar("ChatGPT", "Vanilla"), "label")}
    adv = flagged["Adversarial"]
    print(f"drift LLMBar Adversarial, GPT-4 -> ChatGPT: flagged={adv.drifted} (target flagged; "
          f"accuracy {adv.before:.3f} -> {adv.after:.3f}, Holm p {adv.p_adjusted:.2g}, flip rate "
          f"{adv.flip_rate:.3f}, detectable drop {adv.detectable_drop:.3f})")  # fmt: skip
    frame = llmbar("GPT-4", "CoT")
    a, b = frame["before"].to_numpy(), frame["after"].to_numpy()
    alarms = raw = 0
    for seed in range(args.draws):
        swap = np.random.default_rng(seed).random(len(frame)) < 0.5
        null = frame.assign(before=np.where(swap, b, a), after=np.where(swap, a, b))
        checks = compare_answers(null, "label", n_boot=1)
        alarms += any(c.drifted for c in checks)
        raw += any(c.change < -0.02 for c in checks)
    print(f"drift false-alarm rate, LLMBar null resamples ({args.draws}): "
          f"{alarms / args.draws:.3f} (target <= 0.05; raw 2-point drop rule "
          f"{raw / args.draws:.3f})")  # fmt: skip
    base = wmt23()
    hits = false = 0
    drops = []
    for seed in range(args.shifts):
        data, drop = shifted(base, 0.10, seed)
        drops.append(drop)
        checks = {c.group: c for c in compare_answers(data, "score", n_boot=300, seed=seed)}
        hits += checks["en-de"].drifted
        false += checks["zh-en"].drifted
    print(f"drift detection, WMT23 MQM 0.10 tau drop in en-de ({args.shifts} shifts, mean drop "
          f"{np.mean(drops):.3f}): {hits / args.shifts:.3f} flagged in en-de (target: flagged), "
          f"{false / args.shifts:.3f} in zh-en (target 0)")  # fmt: skip


if __name__ == "__main__":
    main()
