"""Coverage and width of the estimates' intervals on real, fully human-labelled data
(docs/estimates.md).

For each population, every item has a human label and a judge label. Each draw labels ``n``
random items by humans and hides the rest; the classical, PPI and PPI++ 95% CIs, each with
every interval (``clt``, ``t``, ``bootstrap-t`` and the default ``auto``), are checked against
the full-human mean. ``judgekit.calibration.estimate.coverage`` does the draws (all draws of a
setting at once, the intervals ``calibrate estimate`` gives with its default B and seed).

* GEMBA-MQM (GPT-4 judge, reference-free) vs expert MQM, WMT23 en-de (13 systems x 460 scored
  segments) and zh-en (16 x 1,177): the system's mean MQM (negated scale, 0 = no error).
* LLMBar (419 pairs, 12 judge/prompting combinations): the share of pairs whose gold better
  output is output 1 (a share: ``auto`` is ``t`` below 50 labels); the judge's value of a pair
  is the mean over its two presentation orders (1, 0.5 or 0).
* A chance-level judge: the human labels of the same population permuted at random (seeded),
  so the judge has the human marginal and no information about any item.

Also: the baseline, main's CLT intervals (``ppi_py.ppi_mean_ci`` per draw, as before issue 25)
at n = 50; the simultaneous coverage of ``--rank`` (13 en-de systems, n = 50, Bonferroni, the
bootstrap-t with B x K resamples); the time of one bootstrap-t estimate.

Usage: ``python bench/estimates.py [--draws 1000] [--rank-draws 200] [--json out.json]`` from
the repository root; prints the markdown tables of docs/estimates.md and ``<name>: <figure>
(target ...)`` lines.
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

from judgekit.calibration.estimate import IntervalRule, estimate_mean  # noqa: E402
from judgekit.calibration.estimate import intervals as iv  # noqa: E402
from judgekit.calibration.estimate.coverage import STUDY_INTERVALS, coverage_study  # noqa: E402
from judgekit.calibration.estimate.rank import rank_resamples  # noqa: E402
from judgekit.metrics.mteval import align_seg_scores, read_seg_scores  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "judge-vs-human"
SIZES = (30, 50, 100, 200)


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


def study(populations: dict, draws: int, kind: str, seed: int = 0) -> pd.DataFrame:
    """One row per (population, n, method, interval): coverage, mean width, fallbacks."""
    rows = []
    for name, (human, judge) in populations.items():
        for n in SIZES:
            if n >= len(human):
                continue
            found = coverage_study(human, judge, n, draws=draws, seed=seed, kind=kind)
            for key, c in found.items():
                if "/" in key:
                    rows.append({"population": name, "n": n, "method": c.method,
                                 "interval": c.interval, "coverage": c.coverage,
                                 "width": c.mean_width, "fallbacks": c.fallbacks})  # fmt: skip
    return pd.DataFrame(rows)


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per n, interval and method: mean and min coverage over populations, mean width, and the
    width relative to the classical CLT width (mean over populations of the ratio)."""
    base = frame[(frame["method"] == "classical") & (frame["interval"] == "clt")]
    base = base.set_index(["population", "n"])["width"]
    frame = frame.assign(ratio=frame["width"].to_numpy()
                         / base.reindex(pd.MultiIndex.from_frame(frame[["population", "n"]]))
                         .to_numpy())  # fmt: skip
    return frame.groupby(["n", "interval", "method"], sort=False).agg(
        coverage=("coverage", "mean"), worst=("coverage", "min"), width=("width", "mean"),
        ratio=("ratio", "mean"), fallbacks=("fallbacks", "sum"),
    ).reset_index()  # fmt: skip


def markdown(title: str, table: pd.DataFrame) -> str:
    """Coverage mean (worst) and width per n and interval, for the three methods."""
    lines = [f"**{title}**", "",
             "| n | interval | classical | PPI | PPI++ | width classical | width PPI++ "
             "| PPI++ / classical CLT |", "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for (n, interval), g in table.groupby(["n", "interval"], sort=False):
        by = g.set_index("method")
        cells = [f"{by.loc[m, 'coverage']:.3f} ({by.loc[m, 'worst']:.3f})"
                 for m in ("classical", "ppi", "ppi++")]  # fmt: skip
        name = f"**{interval}**" if interval == "auto" else interval
        lines.append(f"| {n} | {name} | " + " | ".join(cells) + f" | "
                     f"{by.loc['classical', 'width']:.3f} | {by.loc['ppi++', 'width']:.3f} | "
                     f"{by.loc['ppi++', 'ratio']:.3f} |")  # fmt: skip
    return "\n".join(lines)


def baseline_main(populations: dict, n: int, draws: int) -> float:
    """Mean PPI++ coverage of main's CLT interval, ``ppi_py.ppi_mean_ci`` on every draw as
    before issue 25 (draws seeded as ``coverage_study`` seeds them)."""
    from ppi_py import ppi_mean_ci

    covered = []
    for human, judge in populations.values():
        order = np.argsort(np.random.default_rng(0).random((draws, len(human))), axis=1)
        truth = human.mean()
        hits = 0
        for row in order:
            lab, unl = row[:n], row[n:]
            low, high = ppi_mean_ci(human[lab], judge[lab], judge[unl], alpha=0.05)
            hits += bool(low[0] <= truth <= high[0])
        covered.append(hits / draws)
    return float(np.mean(covered))


def rank_coverage(populations: dict, n: int, draws: int) -> dict[str, float]:
    """Simultaneous coverage of the K PPI++ intervals of ``--rank`` (each at alpha / K):
    the share of draws in which every system's interval holds its full-human mean."""
    k = len(populations)
    out = {}
    for interval in ("clt", "auto"):
        joint = np.ones(draws, bool)
        for s, (human, judge) in enumerate(populations.values()):
            found = coverage_study(human, judge, n, draws=draws, seed=100 + s, alpha=0.05 / k,
                                   intervals=(interval,), methods=("ppi++",),
                                   resamples=rank_resamples(iv.RESAMPLES, k))  # fmt: skip
            joint &= found["ppi++"].covered
        out[interval] = float(joint.mean())
    return out


def estimate_ms(human: np.ndarray, judge: np.ndarray, n: int = 50, runs: int = 20) -> float:
    """Median time of one estimate_mean with the bootstrap-t (B = 2,000), in ms."""
    rule = IntervalRule("bootstrap-t")
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        estimate_mean(human[:n], judge[:n], judge[n:], rule=rule)
        times.append(time.perf_counter() - start)
    return 1000 * float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--rank-draws", type=int, default=200)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    start = time.perf_counter()
    ende, zhen, llmbar = (
        gemba_populations("en-de"),
        gemba_populations("zh-en"),
        llmbar_populations(),
    )
    base = {
        p: baseline_main(pops, 50, args.draws) for p, pops in (("en-de", ende), ("zh-en", zhen))
    }
    settings = {"GEMBA-MQM en-de (13 systems)": (ende, "mean"),
                "GEMBA-MQM zh-en (16 systems)": (zhen, "mean"),
                "LLMBar (12 judges)": (llmbar, "share")}  # fmt: skip
    for title, (pops, kind) in list(settings.items()):
        chance = {k: (h, chance_judge(h, seed=1)) for k, (h, _) in pops.items()}
        settings[title.split(" (")[0] + ", chance-level judge"] = (chance, kind)
    results, tables = {}, {}
    for title, (pops, kind) in settings.items():
        frame = study(pops, args.draws, kind)
        results[title], tables[title] = frame, summary(frame)
        print(markdown(f"{title}, {args.draws} draws", tables[title]) + "\n", flush=True)
    ranked = rank_coverage(ende, 50, args.rank_draws)
    if args.json:
        records = {k: v.to_dict(orient="records") for k, v in results.items()}
        args.json.write_text(json.dumps({"studies": records, "baseline_main": base,
                                         "rank": ranked}, indent=1) + "\n")  # fmt: skip
    for pair in ("en-de", "zh-en"):
        table = tables[f"GEMBA-MQM {pair} ({13 if pair == 'en-de' else 16} systems)"]
        for n in (30, 50):
            row = table[(table["n"] == n) & (table["interval"] == "auto")].set_index("method")
            clt = table[(table["n"] == n) & (table["interval"] == "clt")].set_index("method")
            print(f"estimates {pair} n={n} PPI++ auto: {row.loc['ppi++', 'coverage']:.3f} "
                  f"(worst {row.loc['ppi++', 'worst']:.3f}), humans only "
                  f"{row.loc['classical', 'coverage']:.3f} ({row.loc['classical', 'worst']:.3f}); "
                  f"CLT PPI++ {clt.loc['ppi++', 'coverage']:.3f} "
                  "(target >= 0.93, worst >= 0.90)")  # fmt: skip
        print(
            f"estimates baseline {pair} n=50 PPI++ CLT, main's ppi_py.ppi_mean_ci: "
            f"{base[pair]:.3f} (issue 25: 0.908 en-de, 0.916 zh-en)"
        )
    lowest = min(
        float(t[(t["interval"] == "auto") & (t["method"] != "ppi")]["coverage"].min())
        for title, t in tables.items() if "MQM" not in title or "chance" in title
    )  # fmt: skip
    print(
        f"estimates LLMBar and chance-level judges, auto: lowest mean coverage {lowest:.3f} "
        "(target >= 0.93)"
    )
    print(
        f"estimates rank: simultaneous coverage of 13 en-de systems at n = 50, "
        f"{args.rank_draws} draws: Bonferroni CLT {ranked['clt']:.3f}, Bonferroni bootstrap-t "
        f"(B = {rank_resamples(iv.RESAMPLES, len(ende))}) {ranked['auto']:.3f} (target >= 0.95)"
    )
    human, judge = ende["ONLINE-W"]
    print(
        f"estimates bootstrap-t time: {estimate_ms(human, judge):.0f} ms per estimate, n = 50, "
        f"N = {len(human) - 50}, B = {iv.RESAMPLES} (target: tens of ms)"
    )
    print(
        f"estimates: {len(settings)} settings x {len(SIZES)} sizes x {len(STUDY_INTERVALS)} "
        f"intervals x {args.draws} draws in {time.perf_counter() - start:.0f} s"
    )


if __name__ == "__main__":
    main()
