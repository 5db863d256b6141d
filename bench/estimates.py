"""Coverage and width of the PPI estimates on real, fully human-labelled data (docs/estimates.md).

For each population, every item has a human label and a judge label. Each draw labels ``n``
random items by humans and hides the rest; the classical, PPI and PPI++ 95% CIs are checked
against the full-human mean. ``judgekit.calibration.estimate_coverage`` does the draws (all
draws of a setting at once, through ``ppi_py``).

* GEMBA-MQM (GPT-4 judge, reference-free) vs expert MQM, WMT23 en-de (13 systems x 460 scored
  segments) and zh-en (16 x 1,177): the system's mean MQM (negated scale, 0 = no error).
* LLMBar (419 pairs, 12 judge/prompting combinations): the share of pairs whose gold better
  output is output 1; the judge's value of a pair is the mean over its two presentation orders
  (1, 0.5 or 0).
* A chance-level judge: the human labels of the same population permuted at random (seeded),
  so the judge has the human marginal and no information about any item.

Usage: ``python bench/estimates.py [--draws 1000] [--json out.json]`` from the repository root;
prints the markdown tables of docs/estimates.md and ends with one ``estimates:`` summary line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from judgekit.calibration.estimate_coverage import coverage_study  # noqa: E402
from judgekit.metrics.mteval import align_seg_scores, read_seg_scores  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "judge-vs-human"
SIZES = (50, 100, 200)


def gemba_populations(pair: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """system -> (human MQM, GEMBA-MQM) over the segments both scored."""
    folder = DATA / "wmt23-gemba-mqm-vs-human-mqm"
    joined = align_seg_scores(
        read_seg_scores(folder / f"{pair}.GEMBA-MQM-src.seg.score.tsv"),
        read_seg_scores(folder / f"{pair}.mqm.seg.score.tsv"),
    ).dropna(subset=["judge", "human"])
    return {
        system: (g["human"].to_numpy(), g["judge"].to_numpy())
        for system, g in joined.groupby("system", sort=True)
    }


def llmbar_populations() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """judge/prompting -> (gold is output 1, the judge's mean verdict for output 1)."""
    verdicts = pd.read_csv(DATA / "llmbar" / "llm_judge_verdicts.tsv", sep="\t", dtype=str)
    out = {}
    for (model, prompting), g in verdicts.groupby(["evaluator_model", "prompting"], sort=True):
        votes = g[["winner_original_order", "winner_swapped_order"]].replace("None", np.nan)
        judged = votes.notna().any(axis=1)
        one = (votes == "1").astype(float).where(votes.notna())
        out[f"{model}/{prompting}"] = (
            (g.loc[judged, "gold_label"] == "1").to_numpy(float),
            one[judged].mean(axis=1).to_numpy(),
        )
    return out


def chance_judge(human: np.ndarray, seed: int) -> np.ndarray:
    """The human labels permuted at random: the human marginal, no information per item."""
    return np.random.default_rng(seed).permutation(human)


def study(populations: dict, draws: int, seed: int = 0) -> pd.DataFrame:
    """One row per (population, n, method): coverage and mean width."""
    rows = []
    for name, (human, judge) in populations.items():
        for n in SIZES:
            if n >= len(human):
                continue
            for method, c in coverage_study(human, judge, n, draws=draws, seed=seed).items():
                rows.append({"population": name, "n": n, "method": method,
                             "coverage": c.coverage, "width": c.mean_width,
                             "n_items": c.n_items})  # fmt: skip
    return pd.DataFrame(rows)


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per n and method: mean and min coverage over populations, mean width, and PPI++ width
    relative to the classical width (mean over populations of the ratio)."""
    wide = frame.pivot_table(index=["population", "n"], columns="method", values="width")
    ratio = (wide["ppi++"] / wide["classical"]).groupby("n").mean()
    ratio_max = (wide["ppi++"] / wide["classical"]).groupby("n").max()
    out = frame.groupby(["n", "method"]).agg(
        coverage_mean=("coverage", "mean"), coverage_min=("coverage", "min"),
        width=("width", "mean"),
    ).reset_index()  # fmt: skip
    out["ratio"] = out["n"].map(ratio)
    out["ratio_max"] = out["n"].map(ratio_max)
    return out


def markdown(title: str, table: pd.DataFrame) -> str:
    lines = [f"**{title}**", "",
             "| n | method | coverage (mean over populations) | min | mean CI width |",
             "|---|---|---|---|---|"]  # fmt: skip
    for r in table.itertuples(index=False):
        lines.append(f"| {r.n} | {r.method} | {r.coverage_mean:.3f} | {r.coverage_min:.3f} | "
                     f"{r.width:.3f} |")  # fmt: skip
    ratios = table.drop_duplicates("n")
    pairs = "; ".join(f"n = {r.n}: {r.ratio:.3f}, {r.ratio_max:.3f}" for r in ratios.itertuples())
    lines += ["", f"PPI++ width / classical width (mean, max over populations): {pairs}"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    start = time.perf_counter()
    settings = {
        "GEMBA-MQM en-de (13 systems)": gemba_populations("en-de"),
        "GEMBA-MQM zh-en (16 systems)": gemba_populations("zh-en"),
        "LLMBar (12 judges)": llmbar_populations(),
    }
    chance = {}
    for title, pops in list(settings.items()):
        key = title.split(" (")[0] + ", chance-level judge"
        chance[key] = {k: (h, chance_judge(h, seed=1)) for k, (h, _) in pops.items()}
    settings.update(chance)
    settings["LLMBar GPT-4/Vanilla"] = {
        "GPT-4/Vanilla": settings["LLMBar (12 judges)"]["GPT-4/Vanilla"]
    }
    results = {}
    for title, pops in settings.items():
        frame = study(pops, args.draws)
        results[title] = frame
        print(markdown(f"{title}, {args.draws} draws", summary(frame)) + "\n", flush=True)
    if args.json:
        records = {k: v.to_dict(orient="records") for k, v in results.items()}
        args.json.write_text(json.dumps(records, indent=1) + "\n")
    worst = min(float(f[f["method"] != "ppi"]["coverage"].min()) for f in results.values())
    took = time.perf_counter() - start
    print(
        f"estimates: {len(settings)} settings x {len(SIZES)} sizes x {args.draws} draws in "
        f"{took:.0f} s; lowest classical/PPI++ coverage {worst:.3f}"
    )


if __name__ == "__main__":
    main()
