"""The gate's error rates on real data (docs/gate.md): false fails at the bound and power to fail
a 1-point MQM regression, with 50 expert labels per language.

Population: WMT23 en-de (460 segments) and zh-en (1,177) of one system (GPT4-5shot), every
segment with GEMBA-MQM (the judge, GPT-4, reference-free) and expert MQM (negated: 0 = no
error). Each draw gives 50 random segments per language an expert label and hides the rest;
the gate has one check per language (Holm over the two) and decides with its defaults (PPI++
with the ``shrunk`` lam, the ``auto`` interval: the bootstrap-t at 50 labels, B = 2,000). The
verdicts of all draws come at once from :mod:`judgekit.gate.study` (equal to ``judgekit gate``
draw by draw), and each rate is printed with its Monte-Carlo standard error.

* **estimate rule** ``mean MQM >= b``: false fails with b = the full-expert mean (the truth on
  the passing side by 0); power with b = the full-expert mean + 1 (a 1-point regression).
* **difference rule** (candidate - baseline, paired on the same segments and the same 50
  labelled segments): the candidate is the baseline with a random set of segments replaced by
  another system's translations of them (their real expert and GEMBA scores), the set's size
  chosen so that the candidate is worse by 1.0 MQM point in each language. ``no-regression``
  (fail where the regression is significant): power; non-inferiority with the bound at the true
  difference: false fails.

Baselines measured in the same run, on the same draws: PPI++ with ``ppi_py``'s tuned lam (the
gate before the shrunk rule), the humans-only interval gate (the classical method, same interval
rule) and the raw-figure gate of promptfoo and deepeval (the judge's own mean against the bound,
no interval); the power differences are also given paired over the draws.

Usage: ``python bench/gate.py [--draws 1000]`` from the repository root; prints ``<name>:
<figure> (target ...)`` lines. Measured on a loaded shared machine, timings are not the point.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from judgekit.gate.spec import GateSpec  # noqa: E402
from judgekit.gate.study import check_pvalues, gate_verdicts  # noqa: E402
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


VARIANTS = {  # name: (method, lam rule)
    "ppi++": ("ppi++", "shrunk"),
    "ppi++ tuned": ("ppi++", "tuned"),
    "classical": ("classical", "shrunk"),
}


def draws_of(pops: dict[str, pd.DataFrame], draws: int) -> dict[str, np.ndarray]:
    """Per language, the labelled positions of each draw, shape (draws, LABELS): 50 segments
    per language from ``default_rng(1000 + draw)``, languages in order."""
    picks: dict[str, list[np.ndarray]] = {lp: [] for lp in pops}
    for draw in range(draws):
        rng = np.random.default_rng(1000 + draw)
        for lp, pop in pops.items():
            picks[lp].append(rng.choice(len(pop), size=LABELS, replace=False))
    return {lp: np.array(p) for lp, p in picks.items()}


def split_draws(pop: pd.DataFrame, picked: np.ndarray) -> tuple[np.ndarray, ...]:
    """(human, judge) of the labelled and judge of the unlabelled segments of every draw, each
    in the population's order (the order the gate reads them in: its resamples index it)."""
    human, judge = pop["human"].to_numpy(float), pop["judge"].to_numpy(float)
    picked = np.sort(picked, axis=1)
    rest = np.ones((len(picked), len(pop)), bool)
    np.put_along_axis(rest, picked, False, axis=1)
    unlabelled = np.broadcast_to(judge, rest.shape)[rest].reshape(len(picked), -1)
    return human[picked], judge[picked], unlabelled


def study(pops: dict[str, pd.DataFrame], bounds: dict[str, dict[str, float]], mode: str,
          picks: dict[str, np.ndarray], spec: GateSpec) -> dict[str, np.ndarray]:  # fmt: skip
    """The gate's verdict on every draw (one check per language, Holm over the two), for each
    named bound set (``bounds[name][lp]``) and variant (:data:`VARIANTS`); plus the raw
    judge-only gate. The ``power`` bound set is decided in ``mode``, the others as
    non-inferiority."""
    parts = {lp: split_draws(pop, picks[lp]) for lp, pop in pops.items()}
    verdicts = {}
    for name, bound in bounds.items():
        for label, (method, lam) in VARIANTS.items():
            ps = [check_pvalues(*parts[lp], bound[lp], method=method, alpha=spec.alpha,
                                interval=spec.interval, resamples=spec.resamples,
                                seed=spec.seed, lam_rule=lam) for lp in pops]  # fmt: skip
            verdicts[f"{name}/{label}"] = gate_verdicts(
                np.array([p for p, _ in ps]), np.array([f for _, f in ps]), spec.alpha,
                mode if name == "power" else "non-inferiority")  # fmt: skip
        raw = all(pops[lp]["judge"].mean() >= bound[lp] for lp in pops)
        verdicts[f"{name}/raw judge"] = np.full(len(picks[next(iter(pops))]),
                                                "pass" if raw else "fail")  # fmt: skip
    return verdicts


def rate(values: np.ndarray, verdict: str = "fail") -> str:
    """The share of draws with ``verdict`` and its Monte-Carlo standard error."""
    share = float(np.mean(values == verdict))
    return f"{share:.3f} (SE {np.sqrt(share * (1 - share) / len(values)):.3f})"


def paired_gap(a: np.ndarray, b: np.ndarray, verdict: str = "fail") -> str:
    """The difference of two gates' rates over the same draws and its paired SE (the SD of the
    per-draw difference of the indicators over sqrt(draws))."""
    d = (a == verdict).astype(float) - (b == verdict).astype(float)
    return f"{d.mean():+.3f} (SE {d.std(ddof=1) / np.sqrt(len(d)):.3f})"


def report(name: str, target: str, res: dict[str, np.ndarray], key: str) -> str:
    """One bench line: the PPI++ gate's rate, then the baselines of the same draws."""
    return (f"{name}: {rate(res[f'{key}/ppi++'])} ({target}; PPI++ with ppi_py's tuned lam "
            f"{rate(res[f'{key}/ppi++ tuned'])}, humans-only interval gate "
            f"{rate(res[f'{key}/classical'])}, raw judge-only gate "
            f"{rate(res[f'{key}/raw judge'])})")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--draws", type=int, default=1000)
    args = parser.parse_args()
    started = time.perf_counter()
    spec = GateSpec(rules=())
    pops = {lp: population(lp) for lp in ("en-de", "zh-en")}
    picks = draws_of(pops, args.draws)
    truth = {lp: float(p["human"].mean()) for lp, p in pops.items()}
    found = study({lp: p[["human", "judge"]] for lp, p in pops.items()},
                  {"null": truth, "power": {lp: t + 1.0 for lp, t in truth.items()}},
                  "non-inferiority", picks, spec)  # fmt: skip
    diffs = {lp: regressed(p, 1.0, seed=7) for lp, p in pops.items()}
    true_diff = {lp: d for lp, (_, d) in diffs.items()}
    paired = study({lp: frame for lp, (frame, _) in diffs.items()},
                   {"null": true_diff, "power": {lp: 0.0 for lp in pops}},
                   "no-regression", picks, spec)  # fmt: skip
    print(f"# {args.draws} draws, {LABELS} expert labels per language, system {SYSTEM}, "
          f"B = {spec.resamples}; full-expert means "
          f"{ {lp: round(t, 3) for lp, t in truth.items()} }; paired regression (candidate - "
          f"baseline) { {lp: round(d, 3) for lp, d in true_diff.items()} }")  # fmt: skip
    for label, res in (("estimate", found), ("difference", paired)):
        shares = "/".join(f"{np.mean(res[f'{k}/ppi++'] == v):.3f}" for k in ("null", "power")
                          for v in ("pass", "fail", "inconclusive"))  # fmt: skip
        print(f"# {label}: PPI++ verdicts pass/fail/inconclusive at the bound, then at a "
              f"1-point regression: {shares}")  # fmt: skip
    print(report(f"gate false-fail, MQM estimate at the bound, {LABELS} labels/language",
                 "target <= 0.05", found, "null"))  # fmt: skip
    print(report("gate false-fail, paired MQM difference at the bound", "target <= 0.05",
                 paired, "null"))  # fmt: skip
    print(report(f"gate power, 1-point MQM regression (estimate rule), {LABELS} labels/language",
                 "target >= 0.8", found, "power"))  # fmt: skip
    print(report(f"gate power, 1-point MQM regression (paired difference, no-regression), "
                 f"{LABELS} labels/language", "target >= 0.8", paired, "power"))  # fmt: skip
    for label, res in (("estimate", found), ("difference", paired)):
        print(f"# power, {label} rule, paired over the same draws: " + "; ".join(
            f"PPI++ - {other} {paired_gap(res['power/ppi++'], res[f'power/{other}'])}"
            for other in ("ppi++ tuned", "classical")))  # fmt: skip
    print(f"# {time.perf_counter() - started:.0f} s (measured on a loaded shared machine)")


if __name__ == "__main__":
    main()
