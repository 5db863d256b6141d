"""Honest judge tuning on recorded judges: LLMBar and WMT23 en-de (docs/calibration.md, issue 35).

LLMBar: candidates are its 12 judge x prompt combinations (6 models x Vanilla/CoT, recorded
verdicts in ../shared/data/judge-vs-human/llmbar/llm_judge_verdicts.tsv, original order; "None"
counts as wrong), stratified by subset and gold label, chosen by accuracy, baseline ChatGPT
Vanilla. WMT23 en-de: candidates GEMBA-MQM (reference-free GPT-4 judge), segment BLEU and chrF
against reference A (../shared/data/judge-vs-human/wmt23-gemba-mqm-vs-human-mqm/joined_4systems
...tsv: the 4 systems whose texts are in ../shared/data/mt/wmt23, segments with an expert MQM
score), stratified by system and whether MQM found an error, chosen by Kendall's tau-b against
expert MQM, baseline BLEU. For each, over ``--resplits`` seeded 40/30/30 splits:

* ``tune_coverage_*``: share of resplits whose paired-bootstrap 95% test-gain interval covers the
  chosen judge's gain over the baseline measured on all items (target >= 0.93);
* ``tune_optimism_*``: mean of (test figure - all-items figure) of the chosen judge (target <=
  0.02); the baseline in the same run is the naive select figure minus the all-items figure.

Usage: ``python bench/tune.py [--resplits 200] [--boot 400] [--only llmbar|wmt23]``. Measured on
a loaded shared machine.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from judgekit.calibration.tune import choose, report_on_test, split_items  # noqa: E402

SHARED = REPO.parent / "shared" / "data" / "judge-vs-human"
DATA = SHARED / "llmbar" / "llm_judge_verdicts.tsv"
WMT23 = SHARED / "wmt23-gemba-mqm-vs-human-mqm" / "joined_4systems.human_vs_gemba_vs_bleu_chrf.tsv"
BASELINE = "ChatGPT|Vanilla"
WMT_CANDIDATES = {"GEMBA-MQM": "gemba_mqm_src", "BLEU": "bleu_refA_seg", "chrF": "chrf_refA_seg"}
SETUPS = {"llmbar": ("accuracy", BASELINE), "wmt23": ("tau_b", "BLEU")}


def load(path: Path = DATA) -> tuple[dict[str, dict[str, str]], dict[str, str], dict[str, str]]:
    """Candidates (name -> item -> verdict), gold (item -> label), strata (item -> subset|label)."""
    df = pd.read_csv(path, sep="\t", dtype=str)
    df["item"] = df["subset"] + "#" + df["item_index"]
    df["cand"] = df["evaluator_model"] + "|" + df["prompting"]
    gold = dict(zip(df["item"], df["gold_label"], strict=True))
    cands = {
        c: dict(zip(g["item"], g["winner_original_order"], strict=True))
        for c, g in df.groupby("cand")
    }
    strata = {i: f"{i.split('#')[0]}|{gold[i]}" for i in gold}
    return cands, gold, strata


def load_wmt23(path: Path = WMT23) -> tuple[dict, dict[str, float], dict[str, str]]:
    """en-de segments with every score: candidates (name -> segment -> score), expert MQM
    (segment -> score, negated: 0 = no error) and strata (system | MQM found an error)."""
    df = pd.read_csv(path, sep="\t", na_values=["None"])
    cols = ["human_mqm", *WMT_CANDIDATES.values()]
    df = df[df["pair"] == "en-de"].dropna(subset=cols)
    df["item"] = df["system"] + "#" + df["line_index_0based"].astype(str)
    gold = dict(zip(df["item"], df["human_mqm"].astype(float), strict=True))
    cands = {name: dict(zip(df["item"], df[col].astype(float), strict=True))
             for name, col in WMT_CANDIDATES.items()}  # fmt: skip
    strata = {i: f"{i.split('#')[0]}|{gold[i] < 0}" for i in gold}
    return cands, gold, strata


def run(resplits: int, boot: int, dataset: str = "llmbar") -> tuple[float, float, float]:
    """(coverage, mean test optimism, mean naive select optimism) over ``resplits`` seeds."""
    cands, gold, strata = load() if dataset == "llmbar" else load_wmt23()
    stat, baseline = SETUPS[dataset]
    ids = sorted(gold)
    overall = dict(choose(cands, gold, ids, stat).figures)
    covered, opt_test, opt_select = 0, 0.0, 0.0
    for seed in range(resplits):
        s = split_items(ids, [strata[i] for i in ids], seed=seed)
        ranking = choose(cands, gold, s.select, stat)
        rep = report_on_test(cands, gold, s.test, ranking, baseline, n_boot=boot, seed=seed,
                             n_perm=99)  # fmt: skip
        true_gain = overall[rep.chosen] - overall[baseline]
        covered += rep.gain_ci[0] <= true_gain <= rep.gain_ci[1]
        opt_test += rep.test_figure - overall[rep.chosen]
        opt_select += dict(ranking.figures)[rep.chosen] - overall[rep.chosen]
    return covered / resplits, opt_test / resplits, opt_select / resplits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resplits", type=int, default=200)
    parser.add_argument("--boot", type=int, default=400)
    parser.add_argument("--only", choices=sorted(SETUPS))
    args = parser.parse_args()
    for name, path in (("llmbar", DATA), ("wmt23", WMT23)):
        if args.only not in (None, name):
            continue
        if not path.exists():
            sys.exit(f"missing {path}")
        cov, opt, naive = run(args.resplits, args.boot, name)
        stat = SETUPS[name][0]
        print(f"tune_coverage_{name}: {cov:.3f} over {args.resplits} resplits, {stat} "
              "(target >= 0.93)")  # fmt: skip
        print(f"tune_optimism_{name}: {opt:+.4f} (target <= 0.02; naive select-split optimism "
              f"{naive:+.4f})")  # fmt: skip


if __name__ == "__main__":
    main()
