"""Honest judge tuning on LLMBar recorded verdicts (docs/calibration.md, issue 35).

Candidates: LLMBar's 12 judge x prompt combinations (6 models x Vanilla/CoT, recorded verdicts in
../shared/data/judge-vs-human/llmbar/llm_judge_verdicts.tsv, original order; "None" counts as
wrong). Over ``--resplits`` seeded 40/30/30 splits stratified by subset and gold label, choose on
select by accuracy, report on test against the named baseline ChatGPT Vanilla:

* ``tune_coverage``: share of resplits whose paired-bootstrap 95% test-gain interval covers the
  chosen judge's gain over the baseline measured on all items (target >= 0.93);
* ``tune_optimism``: mean of (test figure - all-items figure) of the chosen judge (target <= 0.02);
  the naive figure in the same run is the select figure minus the all-items figure.

WMT23 en-de (GEMBA-MQM, BLEU, chrF) is not in this bench yet. Usage:
``python bench/tune.py [--resplits 200] [--boot 400]``. Measured on a loaded shared machine.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from judgekit.calibration.tune import choose, report_on_test, split_items  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "judge-vs-human" / "llmbar" / "llm_judge_verdicts.tsv"
BASELINE = "ChatGPT|Vanilla"


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


def run(resplits: int, boot: int) -> tuple[float, float, float]:
    """(coverage, mean test optimism, mean naive select optimism) over ``resplits`` seeds."""
    cands, gold, strata = load()
    ids = sorted(gold)
    all_ranking = choose(cands, gold, ids, "accuracy")
    overall = dict(all_ranking.figures)
    covered, opt_test, opt_select = 0, 0.0, 0.0
    for seed in range(resplits):
        s = split_items(ids, [strata[i] for i in ids], seed=seed)
        ranking = choose(cands, gold, s.select, "accuracy")
        rep = report_on_test(cands, gold, s.test, ranking, BASELINE, n_boot=boot, seed=seed)
        true_gain = overall[rep.chosen] - overall[BASELINE]
        covered += rep.gain_ci[0] <= true_gain <= rep.gain_ci[1]
        opt_test += rep.test_figure - overall[rep.chosen]
        opt_select += dict(ranking.figures)[rep.chosen] - overall[rep.chosen]
    return covered / resplits, opt_test / resplits, opt_select / resplits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resplits", type=int, default=200)
    parser.add_argument("--boot", type=int, default=400)
    args = parser.parse_args()
    if not DATA.exists():
        sys.exit(f"missing {DATA}")
    cov, opt, naive = run(args.resplits, args.boot)
    print(f"tune_coverage: {cov:.3f} over {args.resplits} resplits (target >= 0.93)")
    print(f"tune_optimism: {opt:+.4f} (target <= 0.02; naive select-split optimism {naive:+.4f})")


if __name__ == "__main__":
    main()
