"""Calibration of an error-typing run on human MQM annotations (Cultivar §5; DESIGN 3.3).

:func:`calibrate_errors` compares a finished run with human MQM annotations (Google TSV): span
P/R/F1 (character level, severity partial credit; ``judgekit.metrics.spans``) and category
agreement on overlapping spans (judge types mapped to MQM categories by the rubric), over the
translation side only (omissions quoted from the source are left out, as are human source-side
spans); segment-level Kendall tau-b and acc_eq between judge and human MQM, with a length
baseline (longer translation = worse) and a constant-judge acc_eq; item-grouped tau-b; and
system-level pairwise accuracy (Kocmi et al. 2021: share of system pairs ordered alike, judge
ties wrong). The GEMBA-MQM figures on WMT23 are given as a reference on their own data (the TED
segments are not in WMT23; the overlap is checked where the WMT23 sources are at hand). Command:
``judgekit calibrate errors RUN_DIR MQM_TSV [--gemba-dir DIR]``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgekit.data import jsonl_objects, resolve_path, text_lines
from judgekit.data.atomic import write_frame, write_text
from judgekit.data.jsonfile import write_json
from judgekit.data.vocabulary import canonical_id, nfc
from judgekit.errors import JudgekitError
from judgekit.metrics.common_items import segment_key, system_coverage
from judgekit.metrics.correlation import correlate, correlate_grouped, pair_counts
from judgekit.metrics.mqm import read_mqm_tsv, segment_mqm, target_spans
from judgekit.metrics.mteval import align_seg_scores, read_seg_scores
from judgekit.metrics.spans import Span, category_agreement, span_scores
from judgekit.pipelines.localisation_schemas import Rubric, load_rubric, sha256_file
from judgekit.signature import Signature


def _corr(c: Any) -> dict[str, Any]:
    d = c.to_dict()
    return {k: d[k] for k in ("method", "value", "n", "n_dropped", "ci", "grouping", "n_groups")}


def _no_nan(obj: Any) -> Any:
    """``obj`` with every NaN float replaced by None (an undefined statistic), so the JSON is
    strict."""
    if isinstance(obj, float):
        return None if np.isnan(obj) else obj
    if isinstance(obj, dict):
        return {k: _no_nan(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_no_nan(v) for v in obj]
    return obj


def gemba_reference(gemba_dir: Path, n_sample: int, seed: int = 0) -> list[dict[str, Any]]:
    """GEMBA-MQM vs human MQM, segment level, on WMT23 (per language pair present in
    ``gemba_dir``): tau-b over all scored segments, and the 5/50/95th percentiles of tau-b over
    1000 random samples of ``n_sample`` segments (the spread expected at this run's size)."""
    out = []
    for lp in ("en-de", "zh-en"):
        gemba = gemba_dir / f"{lp}.GEMBA-MQM-src.seg.score.tsv"
        human = gemba_dir / f"{lp}.mqm.seg.score.tsv"
        if not (gemba.is_file() and human.is_file()):
            continue
        joined = align_seg_scores(read_seg_scores(gemba), read_seg_scores(human))
        joined = joined.dropna(subset=["judge", "human"])
        full = correlate(joined["judge"], joined["human"], "kendall_tau_b")
        rng = np.random.default_rng(seed)
        x, y = joined["judge"].to_numpy(), joined["human"].to_numpy()
        taus = []
        for _ in range(1000):
            idx = rng.choice(len(x), size=min(n_sample, len(x)), replace=False)
            taus.append(correlate(x[idx], y[idx], "kendall_tau_b").value)
        taus = np.array(taus)[~np.isnan(taus)]
        out.append({"pair": lp, "kendall_tau_b": full.value, "n": full.n,
                    "sample_size": n_sample,
                    "sample_tau_b_p5_p50_p95": [float(np.percentile(taus, q)) for q in (5, 50, 95)],
                    "files": [gemba.name, human.name]})  # fmt: skip
    return out


def _wmt_overlap(gemba_dir: Path, sources: list[str]) -> dict[str, Any]:
    """How many of ``sources`` occur among the WMT23 source sentences next to the GEMBA data
    (``<data>/mt/wmt23/<pair>.src.txt``), or ``checked: False`` where those files are absent."""
    folder = gemba_dir.parent.parent / "mt" / "wmt23"
    files = sorted(folder.glob("*.src.txt")) if folder.is_dir() else []
    if not files:
        return {"checked": False}
    wmt = {line.strip() for f in files for line in text_lines(f)}
    hits = sum(s.strip() in wmt for s in set(sources))
    return {"checked": True, "files": [f.name for f in files], "overlapping_sources": hits}


def _match(run_dir: Path, mqm_tsv: str | Path) -> list[tuple[dict[str, Any], float, list]]:
    """``(segment, human MQM, human spans)`` of every segment of the run found in the TSV, by
    (system, doc, seg_id), the segment id standing for a missing seg_id.

    Raises:
        JudgekitError: none found, or a translation differs from the TSV's target.
    """
    segments = [row for _, row in jsonl_objects(run_dir / "segments.jsonl")]  # "\n" only
    by_seg: dict[tuple, list] = defaultdict(list)
    for row in read_mqm_tsv(mqm_tsv):  # ids compared as NFC text (judgekit.data.vocabulary)
        by_seg[tuple(canonical_id(x) for x in row.segment)].append(row)
    matched = []
    for s in segments:
        seg_id = s.get("seg_id") or s["id"]  # as review import writes a segment without one
        rows = by_seg.get(tuple(canonical_id(x) for x in (s["system"], s.get("doc"), seg_id)))
        if rows is None:
            continue
        if rows[0].target != s["translation"]:
            same = nfc(rows[0].target) == nfc(s["translation"])
            why = (" (the same text in another Unicode normal form, NFC vs NFD: span offsets "
                   "would not align; normalise both files to NFC)") if same else ""  # fmt: skip
            raise JudgekitError(f"segment {s['id']}: translation differs from {mqm_tsv}{why}")
        matched.append((s, segment_mqm(rows)[0].score, list(target_spans(rows).values())))
    if not matched:
        raise JudgekitError(f"no segment of {run_dir} is in {mqm_tsv}")
    return matched


def _segment_level(matched: list, scored: list, n_resamples: int, seed: int) -> dict[str, Any]:
    """Segment-level agreement of judge and human MQM: Kendall's tau-b (bootstrap CI), acc_eq,
    the length baseline, a constant judge's acc_eq and the item-grouped tau-b."""
    judge = [s["mqm"] if s["status"] == "scored" else None for s, _h, _g in matched]
    human = [h for _s, h, _g in matched]
    length = [len(s["translation"]) if s["status"] == "scored" else None for s, _h, _g in matched]
    groups = [f"{s['doc']}|{s['seg_id']}" for s, _h, _g in matched]
    seg = {
        "kendall_tau_b": _corr(correlate(judge, human, n_resamples=n_resamples, seed=seed)),
        "acc_eq": _corr(correlate(judge, human, "acc_eq")),
        "length_baseline_tau_b": _corr(correlate(length, human)),
    }
    h_scored = np.array([h for _s, h, _g in scored], dtype=float)
    seg["constant_judge_acc_eq"] = pair_counts(np.zeros_like(h_scored), h_scored).acc_eq
    try:
        seg["item_grouped_tau_b"] = _corr(correlate_grouped(judge, human, groups))
    except JudgekitError as exc:  # no group with two varying scored items
        seg["item_grouped_tau_b"] = {"value": None, "note": str(exc)}
    return seg


def _system_level(matched: list, scored: list) -> dict[str, Any]:
    """Mean judge and human MQM per system and the pairwise accuracy of the system ranking,
    on the segments scored for every system (:mod:`judgekit.metrics.common_items`)."""
    cov = system_coverage(s for s, _h, _g in matched)
    common = [(s, h) for s, h, _g in scored if segment_key(s) in cov.common]
    systems = sorted({s["system"] for s, _h in common})
    sys_j = [np.mean([s["mqm"] for s, _h in common if s["system"] == x]) for x in systems]
    sys_h = [np.mean([h for s, h in common if s["system"] == x]) for x in systems]
    pc = pair_counts(np.array(sys_j), np.array(sys_h)) if len(systems) > 1 else None
    return {
        "n_common_segments": cov.n_common,
        "incomplete": [str(g) for g in cov.incomplete_groups()],
        "n_systems": len(systems),
        "scores": [
            {"system": x, "judge_mqm": float(j), "human_mqm": float(h)}
            for x, j, h in zip(systems, sys_j, sys_h, strict=True)
        ],  # fmt: skip
        "pairwise_accuracy": pc.concordant / pc.n_pairs if pc and pc.n_pairs else None,
        "n_pairs": pc.n_pairs if pc else 0,
    }


def _span_pairs(scored: list) -> tuple[list[list[Span]], list]:
    """(judge spans, human rating) pairs: one comparison per human rating of each scored
    segment (TED: one rater per segment), translation-side judge spans only."""
    pred, gold_all = [], []
    for s, _h, gold in scored:
        spans = [Span(e["start"], e["end"], e["severity"], e["mqm_category"])
                 for e in s["errors"] if e["side"] == "translation"]  # fmt: skip
        for rating in gold:
            pred.append(spans)
            gold_all.append(rating)
    return pred, gold_all


def _gemba(gdir: Path, matched: list, scored: list, seed: int) -> dict[str, Any]:
    """GEMBA-MQM's WMT23 figures as a reference on their own data, with the overlap check."""
    return {"note": "reference on its own data (WMT23 generalMT); the TED segments are "
            "not WMT23 segments, so no same-segment comparison is possible",
            "overlap": _wmt_overlap(gdir, [s["source"] for s, _h, _g in matched]),
            "pairs": gemba_reference(gdir, len(scored), seed)}  # fmt: skip


def calibrate_errors(
    run_dir: str | Path,
    mqm_tsv: str | Path,
    *,
    rubric: Rubric | None = None,
    gemba_dir: str | Path | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Calibrate a finished ``errors`` run (its ``segments.jsonl``) against human MQM.

    Segments are matched on (system, doc, seg_id); unscored segments count as missing judge
    scores (dropped from correlations and counted), never as zero errors. Writes
    ``calibration.json``, ``calibration.csv`` and ``calibration.md`` into ``run_dir``.

    Returns:
        the calibration as a dict; ``headline`` holds the main figures.

    Raises:
        JudgekitError: no segment of the run is in the TSV, or a segment's translation differs
            from the TSV's target (the run was not built from this file).
    """
    run_dir = Path(run_dir)
    rubric = rubric or load_rubric()
    matched = _match(run_dir, mqm_tsv)
    scored = [(s, h, g) for s, h, g in matched if s["status"] == "scored"]
    pred, gold_all = _span_pairs(scored)
    spans = span_scores(pred, gold_all)
    cats = {d: category_agreement(pred, gold_all, depth=d) for d in (None, 1)}
    seg = _segment_level(matched, scored, n_resamples, seed)
    system = _system_level(matched, scored)
    gemba = None if gemba_dir is None else _gemba(resolve_path(gemba_dir), matched, scored, seed)
    status = Counter(s["status"] for s, _h, _g in matched)
    headline = {
        "segments": len(matched), "scored": status.get("scored", 0),
        "span_precision": spans.precision, "span_recall": spans.recall, "span_f1": spans.f1,
        "category_agreement": cats[None].agreement, "category_pairs": cats[None].n_pairs,
        "segment_kendall_tau_b": seg["kendall_tau_b"]["value"],
        "segment_acc_eq": seg["acc_eq"]["value"],
        "system_pairwise_accuracy": system["pairwise_accuracy"],
    }  # fmt: skip
    signature = Signature(
        pipeline="calibrate errors",
        parameters={"n_resamples": n_resamples, "human_weights": "Google WMT"},
        data={str(mqm_tsv): sha256_file(Path(mqm_tsv)), "rubric": rubric.hash},
        seed=seed,
    )
    result = _no_nan(
        {
            "signature": signature.as_dict(),
            "headline": headline,
            "inputs": {
                "run_dir": str(run_dir),
                "mqm_tsv": str(mqm_tsv),
                "mqm_tsv_sha256": sha256_file(Path(mqm_tsv)),
                "rubric_sha256": rubric.hash,
                "human_weights": "Google WMT (judgekit.metrics.mqm defaults)",
            },  # fmt: skip
            "coverage": dict(status),
            "spans": {
                "precision": spans.precision,
                "recall": spans.recall,
                "f1": spans.f1,
                "tp_chars": spans.total.tp,
                "pred_chars": spans.total.n_pred,
                "gold_chars": spans.total.n_gold,
                "comparisons": len(pred),
            },  # fmt: skip
            "categories": {
                "full": {"agreement": cats[None].agreement, "pairs": cats[None].n_pairs},
                "top_level": {"agreement": cats[1].agreement, "pairs": cats[1].n_pairs},
            },
            "segment": seg,
            "system": system,
            "gemba_reference": gemba,
        }
    )
    write_json(run_dir / "calibration.json", result)
    _write_tables(run_dir, result)
    return result


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "n/a"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def _rows(cal: dict[str, Any]) -> list[tuple[str, Any, Any, Any, str]]:
    """(metric, value, CI, n, note) rows of the calibration tables."""
    seg, sp, cat, sy = cal["segment"], cal["spans"], cal["categories"], cal["system"]
    tau, acc, ln = seg["kendall_tau_b"], seg["acc_eq"], seg["length_baseline_tau_b"]
    grouped, k, full, top = (
        seg["item_grouped_tau_b"],
        sp["comparisons"],
        cat["full"],
        cat["top_level"],
    )  # noqa: E501
    rows = [
        ("span_precision", sp["precision"], None, k, "chars, severity partial credit"),
        ("span_recall", sp["recall"], None, k, ""),
        ("span_f1", sp["f1"], None, k, ""),
        ("category_agreement", full["agreement"], None, full["pairs"], "overlapping spans"),
        ("category_agreement_top_level", top["agreement"], None, top["pairs"], ""),
        ("segment_kendall_tau_b", tau["value"], tau["ci"], tau["n"], f"{tau['n_dropped']} dropped"),
        ("segment_acc_eq", acc["value"], None, acc["n"], ""),
        ("baseline_length_tau_b", ln["value"], None, ln["n"], "longer = worse"),
        ("baseline_constant_acc_eq", seg["constant_judge_acc_eq"], None, tau["n"], "human ties"),
        ("item_grouped_tau_b", grouped.get("value"), None, grouped.get("n_groups"), "per source"),
        ("system_pairwise_accuracy", sy["pairwise_accuracy"], None, sy["n_pairs"], f"{sy['n_systems']} systems"),  # noqa: E501
    ]  # fmt: skip
    for g in (cal.get("gemba_reference") or {}).get("pairs", []):
        p5, p50, p95 = g["sample_tau_b_p5_p50_p95"]
        note = f"WMT23, own data; at n={g['sample_size']}: median {p50:.3f} (5-95%: {p5:.3f}..{p95:.3f})"  # noqa: E501
        rows.append((f"gemba_mqm_{g['pair']}_tau_b", g["kendall_tau_b"], None, g["n"], note))
    return rows


def _write_tables(run_dir: Path, cal: dict[str, Any]) -> None:
    rows = _rows(cal)
    frame = pd.DataFrame(
        [{"metric": m, "value": v, "ci_low": c[0] if c else None, "ci_high": c[1] if c else None,
          "n": n, "note": note} for m, v, c, n, note in rows]
    )  # fmt: skip
    write_frame(frame, run_dir / "calibration.csv", index=False)
    lines = ["| metric | value | 95% CI | n | note |", "|---|---|---|---|---|"]
    for m, v, c, n, note in rows:
        cis = f"{_fmt(c[0])}..{_fmt(c[1])}" if c else ""
        lines.append(f"| {m} | {_fmt(v)} | {cis} | {_fmt(n)} | {note} |")
    cov = cal["coverage"]
    lines += ["", f"Segments: {sum(cov.values())} matched in the MQM file; status {cov}.",
              "Unscored segments are missing judge scores, never zero errors."]  # fmt: skip
    gem = cal.get("gemba_reference")
    if gem:
        lines.append(f"GEMBA-MQM: {gem['note']}; overlap check: {gem['overlap']}.")
    write_text(run_dir / "calibration.md", "\n".join(lines) + "\n")
