"""Outputs of ``judgekit contrast`` (Cultivar, paper 000): Delta = localised - original per
(model, locale) with Tables 2-4 and the Figure 6 heatmaps (§3.2), locale-specific word recall
(§3.2) and post-editing statistics (Table 1). Each ``write_*`` writes its CSV/JSON (and figures)
into a folder and returns what the console prints; each ``print_*`` prints it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from rich.console import Console
from rich.table import Table

import judgekit
from judgekit.data.atomic import write_frame
from judgekit.data.jsonfile import json_safe, write_json
from judgekit.data.testsets import Manifest
from judgekit.errors import JudgekitError
from judgekit.metrics import contrastive, word_recall
from judgekit.metrics.postedit import PostEditStats


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return json_safe(frame.to_dict(orient="records"))


def _fmt(value: Any, spec: str = ".2f") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return format(value, spec)


def _write_json(path: Path, payload: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, payload)


@dataclass
class DeltaReport:
    """Delta per (model, locale, metric) (``frame``, one row each, scores 0-100), mean
    pairwise Delta per model (Table 3), Delta per locale (Table 4), average scores, ranking
    agreement per metric (Table 2; Spearman r_s and Kendall tau_b, empty under 3 models),
    metric names in order and the sacrebleu signatures per metric."""

    frame: pd.DataFrame
    pairwise: pd.DataFrame
    per_locale: pd.DataFrame
    averages: pd.DataFrame
    ranking: dict[str, pd.DataFrame]
    names: list[str]
    signatures: dict[str, list[str]]
    figures: list[str]


def write_delta(
    hyps: dict[tuple[str, str], list[str]],
    manifest: Manifest,
    metrics: list[str],
    out: Path,
    *,
    tokenize: str | None = None,
    spm_model: Path | None = None,
    bootstrap: int = 0,
    about: dict[str, Any] | None = None,
) -> DeltaReport:
    """Score every (model, locale pair) and write ``delta.csv``, ``delta.json`` (with
    ``about``: the inputs named on the command line) and ``delta_<metric>.png`` into ``out``.

    Raises:
        JudgekitError: no model translated both sets of any locale pair.
        OutputError: a file cannot be written.
    """
    frame = contrastive.delta_frame(hyps, manifest, metrics, tokenize=tokenize, spm_model=spm_model)
    if frame.empty:
        raise JudgekitError("no model translated both sets of any locale pair")
    names = list(dict.fromkeys(frame["metric"]))
    ranking = {m: contrastive.ranking_by_locale(frame, m, n_resamples=bootstrap) for m in names}
    signatures = {
        m: sorted(set(frame.loc[frame.metric == m, "signature_localised"])) for m in names
    }
    out.mkdir(parents=True, exist_ok=True)
    write_frame(frame, out / "delta.csv", index=False)
    from judgekit.report.figures import delta_heatmap

    figures = [str(delta_heatmap(frame, m, out / f"delta_{m}.png")) for m in names]
    report = DeltaReport(frame, contrastive.mean_pairwise_delta(frame),
                         contrastive.locale_mean_delta(frame), contrastive.average_scores(frame),
                         ranking, names, signatures, figures)  # fmt: skip
    _write_json(
        out / "delta.json",
        {
            "judgekit": judgekit.__version__,
            **(about or {}),
            "signatures": signatures,
            "mean_pairwise_delta": _records(report.pairwise),
            "average_over_models": report.pairwise.groupby("metric")["delta"].mean().to_dict(),
            "locale_mean_delta": _records(report.per_locale),
            "average_scores": _records(report.averages),
            "ranking": {m: _records(r) for m, r in ranking.items()},
            "figures": figures,
            "rows": _records(frame),
        },
    )
    return report


def print_delta(report: DeltaReport, console: Console) -> None:
    """Tables 3, 4 and 2 of Cultivar, then the signatures."""
    names, avg = report.names, report.averages.set_index(["model", "metric"])
    wide = report.pairwise.pivot(index="model", columns="metric", values="delta")
    pairs = report.pairwise.groupby("model")["n_pairs"].max()
    table = Table(title="mean pairwise Delta per model (Cultivar Table 3)")
    table.add_column("model", overflow="fold")
    table.add_column("pairs", justify="right")
    for m in names:
        for head in (f"Delta {m}", f"orig {m}", f"loc {m}"):
            table.add_column(head, justify="right")
    for model_name in wide.sort_values(names[0], ascending=False).index:
        cells = []
        for m in names:
            o, lo = avg.loc[(model_name, m), "original"], avg.loc[(model_name, m), "localised"]
            cells += [f"{wide.loc[model_name, m]:+.2f}", _fmt(o), _fmt(lo)]
        table.add_row(model_name, str(pairs[model_name]), *cells)
    console.print(table)
    wide = report.per_locale.pivot(index="label", columns="metric", values="delta")
    table = Table(title="Delta per locale, averaged across models (Cultivar Table 4)")
    table.add_column("locale", overflow="fold")
    for m in names:
        table.add_column(f"Delta {m}", justify="right")
    for label in wide.sort_values(names[0], ascending=False).index:
        table.add_row(label, *(f"{wide.loc[label, m]:+.2f}" for m in names))
    console.print(table)
    _print_ranking(report, console)
    for m, sigs in report.signatures.items():
        for sig in sigs:
            console.print(f"{m}: {sig}", highlight=False)


def _print_ranking(report: DeltaReport, console: Console) -> None:
    names = report.names
    if all(r.empty for r in report.ranking.values()):
        console.print("ranking agreement: needs >= 3 models per locale")
        return
    table = Table(title="ranking agreement original vs localised (Cultivar Table 2)")
    table.add_column("locale", overflow="fold")
    for m in names:
        table.add_column(f"r_s {m}", justify="right")
        table.add_column(f"tau_b {m}", justify="right")
    indexed = {m: r.set_index("label") for m, r in report.ranking.items()}
    for label in indexed[names[0]].index:
        cells = []
        for m in names:
            row = indexed[m].loc[label] if label in indexed[m].index else None
            cells += [
                _fmt(None if row is None else row["spearman"]),
                _fmt(None if row is None else row["kendall_tau_b"]),
            ]
        table.add_row(label, *cells)
    console.print(table)


def write_recall(
    hyps: dict[tuple[str, str], list[str]],
    manifest: Manifest,
    out: Path,
    *,
    tokenize: str | None = None,
    lowercase: bool = False,
    about: dict[str, Any] | None = None,
) -> pd.DataFrame:
    """Locale-specific word recall (FP and FN rates in [0, 1], one row per model and locale):
    writes ``recall.csv``, ``recall_segments.csv`` and ``recall.json`` into ``out``.

    Raises:
        JudgekitError: no translation of a localised set found.
        OutputError: a file cannot be written.
    """
    summary, segments = word_recall.recall_frames(
        hyps, manifest, tokenize=tokenize, lowercase=lowercase
    )
    if summary.empty:
        raise JudgekitError("no translation of a localised set found")
    out.mkdir(parents=True, exist_ok=True)
    write_frame(summary, out / "recall.csv", index=False)
    write_frame(segments, out / "recall_segments.csv", index=False)
    means = summary.groupby("model")[["fp_rate", "fn_rate"]].mean()
    _write_json(
        out / "recall.json",
        {"judgekit": judgekit.__version__, **(about or {}), "rows": _records(summary),
         "mean_over_locales": _records(means.reset_index())},
    )  # fmt: skip
    return summary


def print_recall(summary: pd.DataFrame, console: Console) -> None:
    """One row per model and locale: FP, FN, their rates, and the signatures."""
    table = Table(title="locale-specific word recall (Cultivar Sec. 3.2; rates in [0, 1])")
    for column in ("model", "locale", "FP", "orig terms", "FP rate", "FN", "loc terms", "FN rate"):
        left = column in ("model", "locale")
        table.add_column(column, justify="left" if left else "right", overflow="fold")
    for r in summary.itertuples():
        table.add_row(
            r.model, r.label, str(r.n_fp), str(r.n_original_terms), _fmt(r.fp_rate, ".4f"),
            str(r.n_fn), str(r.n_localised_terms), _fmt(r.fn_rate, ".4f"),
        )  # fmt: skip
    console.print(table)
    for sig in dict.fromkeys(summary["signature"]):
        console.print(f"signature: {sig}", highlight=False)


def write_postedit(stats: PostEditStats, out: Path, files: dict[str, list[str]]) -> None:
    """``postedit.csv`` (one row per line: status, edited sides, per-side edits) and
    ``postedit.json`` (the summary, with the input ``files`` per side) into ``out``.

    Raises:
        OutputError: a file cannot be written.
    """
    rows = []
    for d in stats.detail:
        row: dict[str, Any] = {"line": d.index + 1, "status": d.status}
        row["edited_sides"] = "+".join(d.edited_sides)
        for name, e in d.sides.items():
            row |= {f"{name}_{k}": v for k, v in vars(e).items()}
        rows.append(row)
    out.mkdir(parents=True, exist_ok=True)
    write_frame(pd.DataFrame(rows), out / "postedit.csv", index=False)
    head = {"judgekit": judgekit.__version__, "files": files}
    _write_json(out / "postedit.json", head | stats.summary())


def print_postedit(stats: PostEditStats, console: Console) -> None:
    """Kept / reverted / edited segments (Cultivar Table 1) and the per-side edit counts."""
    table = Table(title=f"post-editing of {stats.n_segments} segments (Cultivar Table 1)")
    table.add_column("")
    table.add_column("segments", justify="right")
    for status in ("kept", "reverted", "edited"):
        table.add_row(status, str(stats.segments[status]))
    for combo, count in sorted(stats.edited_by_sides.items()):
        table.add_row(f"  edited: {combo}", str(count))
    console.print(table)
    table = Table(title="per side (edits = contiguous changed token spans)")
    for column in ("side", "kept", "edited", "reverted", "orig->final edits", "mean/segment",
                   "editor edits", "mean/revised"):  # fmt: skip
        table.add_column(column, justify="left" if column == "side" else "right", overflow="fold")
    for name, t in stats.sides.items():
        table.add_row(
            name, str(t["kept"]), str(t["edited"]), str(t["reverted"]),
            str(t["localisation_edits"]), _fmt(t["mean_localisation_edits"]),
            str(t["editor_edits"]), _fmt(t["mean_editor_edits_revised"]),
        )  # fmt: skip
    console.print(table)
    console.print(f"signature: {stats.signature}", highlight=False)
