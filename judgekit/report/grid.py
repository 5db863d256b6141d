"""The outputs of ``judgekit calibrate grid`` (:mod:`judgekit.calibration.grid`): grid.csv,
grid.json, the heatmaps, the agreement tables and the console table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.calibration.grid.report import GridResult
from judgekit.data.atomic import write_frame
from judgekit.data.jsonfile import write_json
from judgekit.metrics.classification import METRICS
from judgekit.metrics.concordance import agreement_matrix
from judgekit.report.figures import heatmap

METRIC_RANGE = {"accuracy": (0.0, 1.0), "macro_f1": (0.0, 1.0), "kappa": (-1.0, 1.0)}


def metric_table(result: GridResult) -> pd.DataFrame:
    """Judges x prompts table of the main metric (``options.metric``), in grid order."""
    rows = result.rows
    judges = list(dict.fromkeys(rows["judge"]))
    prompts = list(dict.fromkeys(rows["prompt"]))
    table = rows.pivot(index="judge", columns="prompt", values=result.grid.options.metric)
    return table.loc[judges, prompts].astype(float)


def write_grid(result: GridResult, out: Path, stats: dict[str, dict[str, int]]) -> None:
    """Write grid.csv, grid.json, heatmap.png and, with 2+ cells, pairwise_agreement.csv,
    agreement_matrix.csv/.png (percent agreement) and kappa_matrix.csv, and model_scores.csv
    where cells report per-model scores, into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    rows = result.rows.copy()
    rows["records_shared"] = [stats.get(c, {}).get("shared", 0) for c in rows["cell"]]
    rows["records_new"] = [stats.get(c, {}).get("new", 0) for c in rows["cell"]]
    write_frame(rows, out / "grid.csv", index=False)
    metric = result.grid.options.metric
    vmin, vmax = METRIC_RANGE[metric]
    heatmap(
        metric_table(result), out / "heatmap.png", title=f"Human agreement ({metric})",
        colorbar=f"{metric} vs human majority", vmin=vmin, vmax=vmax,
    )  # fmt: skip
    directories = {cell.name: cell.directory for cell in result.cells}
    payload: dict[str, Any] = {"signature": result.signature, "cells": []}
    for row in rows.to_dict(orient="records"):
        summary = _summary(directories[row["cell"]])
        payload["cells"].append({**row, "run_signature": summary.get("signature")})
    if result.pairs is not None:
        write_frame(result.pairs, out / "pairwise_agreement.csv", index=False)
        percent = agreement_matrix(result.pairs, "percent_agreement")
        kappa = agreement_matrix(result.pairs, "cohen_kappa")
        write_frame(percent, out / "agreement_matrix.csv")
        write_frame(kappa, out / "kappa_matrix.csv")
        short = {c.name: f"{c.judge}\n{c.prompt}" for c in result.cells}  # fits under a column
        heatmap(
            percent.rename(index=short, columns=short), out / "agreement_matrix.png",
            title="Pairwise agreement between cells", colorbar="percent agreement",
            vmin=0.0, vmax=1.0,
        )  # fmt: skip
        payload["pairwise"] = result.pairs.to_dict(orient="records")
    if result.model_scores is not None:
        write_frame(result.model_scores.rename_axis("cell"), out / "model_scores.csv")
        payload["model_scores"] = result.model_scores.to_dict(orient="index")
    payload["kendalls_w"] = result.kendall
    payload["notes"] = result.notes
    write_json(out / "grid.json", payload)


def _summary(directory: Path) -> dict[str, Any]:
    path = directory / "summary.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _estimate(row: dict[str, Any], metric: str) -> str:
    value, low, high = row[metric], row[f"{metric}_low"], row[f"{metric}_high"]
    if value is None or pd.isna(value):
        return "-"
    ci = f" [{low:.3f}, {high:.3f}]" if low is not None and not pd.isna(low) else ""
    rank = row.get(f"{metric}_rank")
    return f"{value:.3f}{ci}" + (f" #{int(rank)}" if rank is not None and not pd.isna(rank) else "")


def print_grid(result: GridResult, out: Path, console: Any) -> None:
    """Print the grid table (metrics with CIs per cell), Kendall's W and notes (rich console)."""
    from rich.table import Table

    options = result.grid.options
    view = Table(title=f"Judge x prompt: agreement with the human majority (ties: "
                 f"{options.tie_policy})")  # fmt: skip
    for column in ("judge", "prompt", "n", "accuracy", "macro-F1", "Cohen's kappa"):
        view.add_column(column, justify="left" if column in ("judge", "prompt") else "right")
    for row in result.rows.to_dict(orient="records"):
        view.add_row(
            str(row["judge"]), str(row["prompt"]), str(row["n_compared"]),
            *(_estimate(row, m) for m in METRICS),
        )  # fmt: skip
    console.print(view)
    for scope, w in [("all cells", result.kendall.get("all_cells"))] + [
        (f"judges with prompt {p}", w) for p, w in result.kendall.get("by_prompt", {}).items()
    ]:
        if w is None:
            continue
        text = w["note"] if "note" in w else (
            f"W = {w['w']:.4f} ({w['n_judges']} rankings of {w['n_models']} models, "
            f"chi2 = {w['chi2']:.2f}, p = {w['p_value']:.3g})"
        )  # fmt: skip
        console.print(f"Kendall's W, {scope}: {text}")
    for note in result.notes:
        console.print(f"note: {note}")
    console.print(f"wrote grid.csv, grid.json, heatmap.png and agreement tables to {out}")
