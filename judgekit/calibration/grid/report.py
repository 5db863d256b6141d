"""Scoring a judge x prompt grid and writing its tables, figures and ``grid.json``.

Per cell, the cell's ``labels.csv`` (one rater: the judge) is scored against the human
majority with :func:`judgekit.calibration.judge.judge_vs_humans` (accuracy, macro-F1, Cohen's kappa,
seeded percentile bootstrap CIs over items; items without a human label are ignored and
counted, human ties follow the tie policy). Among the cells: pairwise percent agreement and
Cohen's kappa on the items both judged (:mod:`judgekit.metrics.concordance`), and, where cells
report one score per model under test (spilling: ``spilling_by_model.csv``), Kendall's W of
the model rankings the cells induce, over all cells and over the judges of each prompt
(paper 002 reports W = 0.9176 for 4 judges ranking 16 models). The cells are ranked in the rank
clusters of ``calibrate compare`` (:func:`cell_clusters`: paired permutation tests on the items
every cell judged; ``<metric>_rank`` columns, 1 = the best cluster).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.calibration.grid.config import (
    Cell,
    GridConfig,
    GridOptions,
    ModelScores,
    model_scores_spec,
)
from judgekit.calibration.judge import judge_vs_humans
from judgekit.data.atomic import write_frame
from judgekit.data.jsonfile import write_json
from judgekit.errors import InputError, JudgekitError
from judgekit.labels.majority import judge_labels, majority_vote
from judgekit.labels.overlap import LabelSetError, align_labels
from judgekit.labels.table import LabelTable, load_labels
from judgekit.metrics.classification import METRICS
from judgekit.metrics.concordance import agreement_matrix, kendalls_w, pairwise_agreement
from judgekit.report.figures import heatmap
from judgekit.signature import ModelSignature, Signature

METRIC_RANGE = {"accuracy": (0.0, 1.0), "macro_f1": (0.0, 1.0), "kappa": (-1.0, 1.0)}


@dataclass
class GridResult:
    """A scored grid.

    Attributes:
        rows: one row per cell: judge, prompt, cell, n_judged, n_compared (items with a judge
            label and a human majority after the tie policy), n_ties, n_without_human (judge
            items no human labelled: ignored), n_human_only (human items the judge did not
            label), and accuracy, macro_f1 ([0, 1]) and kappa ([-1, 1]) with ``_low`` and
            ``_high`` CI columns (NaN without CIs), a note when a cell could not be scored,
            and ``label_note``: what the label check said (case folded, labels seen on one
            side only; :mod:`judgekit.labels.overlap`).
        verdicts: items x cells labels (text; None where a cell has no label).
        pairs: pairwise agreement between cells (None with fewer than 2 cells).
        model_scores: cells x models scores (None where cells report none).
        kendall: {"all_cells": KendallW dict, "by_prompt": {prompt: KendallW dict}}; a
            ``{"note": ...}`` replaces a W that cannot be computed.
        signature: everything that changes the numbers (inputs with sha256, options).
    """

    grid: GridConfig
    cells: list[Cell]
    rows: pd.DataFrame
    verdicts: pd.DataFrame
    pairs: pd.DataFrame | None
    model_scores: pd.DataFrame | None
    kendall: dict[str, Any]
    signature: dict[str, Any]
    notes: list[str] = field(default_factory=list)


def cell_labels(cell: Cell) -> pd.Series:
    """The judge's labels of one cell (item -> label, text); empty when nothing was judged.

    Raises:
        InputError: labels.csv holds another rater than the cell's judge.
    """
    table = load_labels(cell.directory)
    if table.n_raters == 0:
        return pd.Series(dtype=object)
    if cell.judge not in table.raters:
        raise InputError(table.source, f"no rater '{cell.judge}' (raters: {table.raters})")
    return judge_labels(table, cell.judge)


def score_cell(
    cell: Cell, verdicts: pd.Series, humans: LabelTable, options: GridOptions
) -> dict[str, Any]:
    """One grid row: the cell's judge against the human majority (see :class:`GridResult`).

    The label sets are checked first (:mod:`judgekit.labels.overlap`): case differences
    alone are folded, labels seen on one side only are a warning (kept in ``label_note``).

    Raises:
        LabelSetError: the judge and the humans share no label (e.g. "CS" vs "cultural").
    """
    if cell.judge in humans.raters:
        humans = humans.drop([cell.judge])
    name = f"judge '{cell.judge}' (cell {cell.name})"
    verdicts, humans, overlap = align_labels(verdicts, humans, judge_name=name)
    reference = majority_vote(humans)
    row: dict[str, Any] = {"judge": cell.judge, "prompt": cell.prompt, "cell": cell.name}
    row["n_judged"] = len(verdicts)
    row["n_without_human"] = int((~verdicts.index.isin(reference.index)).sum())
    row["label_note"] = "; ".join(overlap.notes)
    try:
        report = judge_vs_humans(
            verdicts,
            humans,
            tie_policy=options.tie_policy,
            ci=options.n_resamples > 0,
            n_resamples=options.n_resamples,
            confidence=options.confidence,
            seed=options.seed,
            judge_name=name,
        )
    except LabelSetError:
        raise
    except JudgekitError as exc:
        unjudged = int((~reference.index.isin(verdicts.index)).sum())
        row.update(n_compared=0, n_ties=0, n_human_only=unjudged, note=str(exc))
        for metric in METRICS:
            row.update({metric: float("nan"), f"{metric}_low": None, f"{metric}_high": None})
        return row
    row.update(n_compared=report.n_items, n_ties=report.n_ties, n_human_only=report.n_unjudged)
    for metric in METRICS:
        estimate = getattr(report, metric)
        low, high = estimate.ci if estimate.ci else (None, None)
        row.update({metric: estimate.value, f"{metric}_low": low, f"{metric}_high": high})
    row["note"] = ""
    return row


def read_model_scores(cells: list[Cell], spec: ModelScores) -> pd.DataFrame | None:
    """Cells x models table of ``spec.score`` from each cell's ``spec.file``; cells without
    the file (nothing judged) are left out; None when fewer than 2 cells have one.

    Raises:
        InputError: the file lacks the model or score column, or repeats a model.
    """
    rows = {}
    for cell in cells:
        path = cell.directory / spec.file
        if not path.is_file():
            continue
        frame = pd.read_csv(path)
        for column in (spec.model, spec.score):
            if column not in frame.columns:
                raise InputError(path, f"missing column '{column}'", field=column)
        if frame[spec.model].duplicated().any():
            raise InputError(path, "a model appears twice", field=spec.model)
        rows[cell.name] = frame.set_index(spec.model)[spec.score].astype(float)
    return pd.DataFrame(rows).T if len(rows) >= 2 else None


def concordance(scores: pd.DataFrame, higher_is_better: bool) -> dict[str, Any]:
    """Kendall's W of the rows of ``scores`` (judges x models) as a dict, or {"note": why}."""
    try:
        return kendalls_w(scores, higher_is_better=higher_is_better).to_dict()
    except JudgekitError as exc:
        return {"note": str(exc)}


def _file(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    if path.is_dir():
        path = path / "labels.csv"
    digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    return {"path": str(path), "sha256": digest}


def grid_signature(grid: GridConfig, spec: ModelScores | None) -> dict[str, Any]:
    """Version, inputs (grid file, base config, labels) with sha256, judges, prompts, options
    (a :class:`~judgekit.signature.Signature`; the grid's own keys kept at the top level)."""
    extra = {
        "command": "calibrate grid",
        "grid": _file(grid.path),
        "base": _file(grid.base),
        "labels": _file(grid.labels),
        "generations": str(grid.generations) if grid.generations else None,
        "judges": [{"route": s.model, "name": s.label, **s.params()} for s in grid.judges],
        "prompts": {"key": grid.prompts.key, "values": list(grid.prompts.values)},
        "set": list(grid.set),
        "options": grid.options.model_dump(),
        "model_scores": spec.model_dump() if spec else None,
    }
    files = [extra[k] for k in ("grid", "base", "labels")]
    return Signature(
        pipeline="calibrate grid",
        models=[ModelSignature.of(s, "judge") for s in grid.judges],
        parameters={"prompts": extra["prompts"], "set": extra["set"], "options": extra["options"]},
        data={f["path"]: f["sha256"] for f in files if f is not None},
        **{k: v for k, v in extra.items() if k != "prompts"},  # (in parameters)
    ).as_dict()


def cell_clusters(
    labels: dict[str, pd.Series], humans: LabelTable, options: GridOptions
) -> tuple[dict[str, dict[str, int | None]], str]:
    """The cluster rank of every cell for each metric (metric -> cell -> rank), compared as
    ``calibrate compare`` compares label judges (:mod:`judgekit.calibration.compare.labels`),
    with a note on what was compared; empty with fewer than 2 judged cells."""
    from judgekit.calibration.compare.labels import label_facet
    from judgekit.calibration.compare.results import build_family

    judged = {name: series for name, series in labels.items() if len(series)}
    if len(judged) < 2:
        return {}, ""
    try:
        facet = label_facet(judged, humans, facet="all", tie_policy=options.tie_policy,
                            n_resamples=0, seed=options.seed)  # fmt: skip
    except JudgekitError as exc:
        return {}, f"no rank clusters: {exc}"
    ranks = {}
    for family in facet.families:
        if family.statistic in METRICS:
            rows, _ = build_family(family, "all", alpha=0.05, correction="none",
                                   confidence=options.confidence)  # fmt: skip
            ranks[family.statistic] = {r.judge: r.rank for r in rows}
    note = (f"rank clusters: paired permutation tests on the {facet.n_items} items every cell "
            "judged, alpha 0.05, no multiplicity correction (as calibrate compare)")  # fmt: skip
    return ranks, note


def analyse_grid(
    grid: GridConfig, cells: list[Cell], humans: LabelTable, pipeline: str
) -> GridResult:
    """Score every cell against the humans, and the cells against each other."""
    labels = {cell.name: cell_labels(cell) for cell in cells}
    rows = pd.DataFrame([score_cell(c, labels[c.name], humans, grid.options) for c in cells])
    judges = [r for r in humans.raters if r in {c.judge for c in cells}]
    ranks, rank_note = cell_clusters(labels, humans.drop(judges), grid.options)
    for metric in METRICS:
        rows[f"{metric}_rank"] = [ranks.get(metric, {}).get(c.name) for c in cells]
    verdicts = pd.DataFrame(labels).astype(object)
    verdicts = verdicts.where(verdicts.notna(), None)
    notes = [f"{r.cell}: {r.note}" for r in rows.itertuples() if r.note]
    notes += [rank_note] if rank_note else []
    pairs = pairwise_agreement(verdicts) if len(cells) >= 2 else None
    spec = model_scores_spec(grid, pipeline)
    scores = read_model_scores(cells, spec) if spec else None
    kendall: dict[str, Any] = {}
    if scores is not None and spec is not None:
        kendall["all_cells"] = concordance(scores, spec.higher_is_better)
        scored = [c for c in cells if c.name in scores.index]
        if len(scored) < len(cells):
            notes.append(f"Kendall's W over the {len(scored)} cells with a {spec.file}")
        prompts = list(dict.fromkeys(c.prompt for c in scored))
        by_prompt = {p: [c.name for c in scored if c.prompt == p] for p in prompts}
        kendall["by_prompt"] = {
            p: concordance(scores.loc[names], spec.higher_is_better)
            for p, names in by_prompt.items()
            if len(names) >= 2
        }
    elif spec is not None:
        notes.append(f"no Kendall's W: fewer than 2 cells have a {spec.file}")
    return GridResult(
        grid, cells, rows, verdicts, pairs, scores, kendall, grid_signature(grid, spec), notes
    )


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
