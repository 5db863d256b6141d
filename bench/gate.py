"""The gate's error rates on real data (docs/gate.md): false fails at the bound and power to fail
a 1-point MQM regression, with 50 expert labels per language.

Population: WMT23 en-de (460 segments) and zh-en (1,177) of one system (GPT4-5shot), every
segment with GEMBA-MQM (the judge, GPT-4, reference-free) and expert MQM (negated: 0 = no
error). Each draw gives 50 random segments per language an expert label and hides the rest;
the gate has one check per language (Holm over the two) and decides with its defaults (PPI++,
the ``auto`` interval: the bootstrap-t at 50 labels, B = 2,000).

* **estimate rule** ``mean MQM >= b``: false fails with b = the full-expert mean (the truth on
  the passing side by 0); power with b = the full-expert mean + 1 (a 1-point regression).
* **difference rule** (candidate - baseline, paired on the same segments and the same 50
  labelled segments): the candidate is the baseline with a random set of segments replaced by
  another system's translations of them (their real expert and GEMBA scores), the set's size
  chosen so that the candidate is worse by 1.0 MQM point in each language. ``no-regression``
  (fail where the regression is significant): power; non-inferiority with the bound at the true
  difference: false fails.

Baselines measured in the same run, on the same draws: the raw-figure gate of promptfoo and
deepeval (the judge's own mean against the bound, no interval) and the humans-only interval gate
(the classical method, same interval rule).

Usage: ``python bench/gate.py [--draws 200]`` from the repository root; prints ``<name>:
<figure> (target ...)`` lines. Measured on a loaded shared machine, timings are not the point.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from judgekit.gate.figures import Loaded, facet_check  # noqa: E402
from judgekit.gate.spec import GateSpec, Rule  # noqa: E402
from judgekit.gate.verdicts import holm, overall  # noqa: E402
from judgekit.metrics.mteval import align_seg_scores, read_seg_scores  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "judge-vs-human" / "wmt23-gemba-mqm-vs-human-mqm"
SYSTEM, WORSE = "GPT4-5shot", {"en-de": "ONLINE-M", "zh-en": "ONLINE-M"}
LABELS = 50


def population(lp: str) -> pd.DataFrame:
    """Per segment position: ``human``, ``judge`` of the system, ``human_w``, ``judge_w`` of
    the worse system (segments with all four scores)."""
    joined = align_seg_scores(read_seg_scores(DATA / f"{lp}.GEMBA-MQM-src.seg.score.tsv"),
                              read_seg_scores(DATA / f"{lp}.mqm.seg.score.tsv"))  # fmt: skip
    own = joined[joined["system"] == SYSTEM].set_index("position")[["human", "judge"]]
    other = joined[joined["system"] == WORSE[lp]].set_index("position")[["human", "judge"]]
    return own.join(other, rsuffix="_w").dropna()


def regressed(pop: pd.DataFrame, drop: float, seed: int) -> tuple[pd.DataFrame, float]:
    """Per-segment differences candidate - baseline (human, judge) for a candidate that takes
    the worse system's translation on the first k segments of a seeded permutation, k chosen
    so that the true mean difference is closest to ``-drop``; and that true difference."""
    order = np.random.default_rng(seed).permutation(len(pop))
    gain = (pop["human_w"] - pop["human"]).to_numpy()[order]
    k = int(np.argmin(np.abs(np.cumsum(gain) / len(pop) + drop))) + 1
    chosen = np.zeros(len(pop), bool)
    chosen[order[:k]] = True
    diff = pd.DataFrame({"human": np.where(chosen, pop["human_w"] - pop["human"], 0.0),
                         "judge": np.where(chosen, pop["judge_w"] - pop["judge"], 0.0)},
                        index=pop.index)  # fmt: skip
    return diff, float(diff["human"].mean())


def study(pops: dict[str, pd.DataFrame], bounds: dict[str, dict[str, float]], kind: str,
          mode: str, draws: int, spec: GateSpec) -> dict[str, np.ndarray]:  # fmt: skip
    """Verdicts over ``draws`` seeded draws of 50 labels per language, for each named bound set
    (``bounds[name][lp]``) and for PPI++ and classical; plus the raw judge-only gate."""
    names = list(bounds)
    rules = [Rule(f"{name}/{method}", kind, "", "", 0.0, "at_least", target="mean",
                  method=method, mode=mode if name == "power" else "non-inferiority")
             for name in names for method in ("ppi++", "classical")]  # fmt: skip
    verdicts = {r.name: [] for r in rules} | {f"{n}/raw judge": [] for n in names}
    for draw in range(draws):
        rng = np.random.default_rng(1000 + draw)
        parts = {}
        for lp, pop in pops.items():
            part = pop[["judge"]].copy()
            picked = rng.choice(len(pop), size=LABELS, replace=False)
            part["human"] = np.nan
            part.iloc[picked, part.columns.get_loc("human")] = pop["human"].to_numpy()[picked]
            parts[lp] = part
        for name in names:
            for rule in (r for r in rules if r.name.startswith(name + "/")):
                checks = [facet_check(replace(rule, bound=bounds[name][lp]),
                                      Loaded(part, None, "mean", "mean", None), lp, part,
                                      spec)[0] for lp, part in parts.items()]  # fmt: skip
                verdicts[rule.name].append(overall(holm(checks, spec.alpha, "gate")))
            raw = all(pops[lp]["judge"].mean() >= bounds[name][lp] for lp in pops)
            verdicts[f"{name}/raw judge"].append("pass" if raw else "fail")
    return {k: np.array(v) for k, v in verdicts.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--draws", type=int, default=200)
    args = parser.parse_args()
    spec = GateSpec(rules=())
    pops = {lp: population(lp) for lp in ("en-de", "zh-en")}
    truth = {lp: float(p["human"].mean()) for lp, p in pops.items()}
    found = study({lp: p[["human", "judge"]] for lp, p in pops.items()},
                  {"null": truth, "power": {lp: t + 1.0 for lp, t in truth.items()}},
                  "estimate", "non-inferiority", args.draws, spec)  # fmt: skip
    diffs = {lp: regressed(p, 1.0, seed=7) for lp, p in pops.items()}
    true_diff = {lp: d for lp, (_, d) in diffs.items()}
    paired = study({lp: frame for lp, (frame, _) in diffs.items()},
                   {"null": true_diff, "power": {lp: 0.0 for lp in pops}},
                   "difference", "no-regression", args.draws, spec)  # fmt: skip

    def rate(values: np.ndarray, verdict: str = "fail") -> float:
        return float(np.mean(values == verdict))

    n = args.draws
    print(
        f"# {n} draws, {LABELS} expert labels per language, system {SYSTEM}; full-expert "
        f"means {truth}; paired regression (candidate - baseline) {true_diff}"
    )
    for label, res in (("estimate", found), ("difference", paired)):
        print(
            f"{label}: verdicts at the bound (ppi++) pass/fail/inconclusive = "
            f"{rate(res['null/ppi++'], 'pass'):.3f}/{rate(res['null/ppi++']):.3f}/"
            f"{rate(res['null/ppi++'], 'inconclusive'):.3f}; 1-point regression "
            f"{rate(res['power/ppi++'], 'pass'):.3f}/{rate(res['power/ppi++']):.3f}/"
            f"{rate(res['power/ppi++'], 'inconclusive'):.3f}"
        )
    print(
        f"gate false-fail, MQM estimate at the bound, {LABELS} labels/language: "
        f"{rate(found['null/ppi++']):.3f} (target <= 0.05; humans-only interval gate "
        f"{rate(found['null/classical']):.3f}, raw judge-only gate "
        f"{rate(found['null/raw judge']):.3f})"
    )
    print(
        f"gate false-fail, paired MQM difference at the bound: {rate(paired['null/ppi++']):.3f} "
        f"(target <= 0.05; humans-only {rate(paired['null/classical']):.3f}, raw judge-only "
        f"{rate(paired['null/raw judge']):.3f})"
    )
    print(
        f"gate power, 1-point MQM regression (estimate rule), {LABELS} labels/language: "
        f"{rate(found['power/ppi++']):.3f} (target >= 0.8; humans-only "
        f"{rate(found['power/classical']):.3f}, raw judge-only "
        f"{rate(found['power/raw judge']):.3f})"
    )
    print(
        f"gate power, 1-point MQM regression (paired difference, no-regression), {LABELS} "
        f"labels/language: {rate(paired['power/ppi++']):.3f} (target >= 0.8; humans-only "
        f"{rate(paired['power/classical']):.3f}, raw judge-only "
        f"{rate(paired['power/raw judge']):.3f})"
    )


if __name__ == "__main__":
    main()
