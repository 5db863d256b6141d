"""Scoring a judge x prompt grid (its tables, figures and ``grid.json`` are written by
:mod:`judgekit.report.grid`).

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
from judgekit.data.digest import file_sha256
from judgekit.errors import InputError, JudgekitError
from judgekit.labels.majority import judge_labels, majority_vote
from judgekit.labels.overlap import LabelSetError, align_labels
from judgekit.labels.table import LabelTable, load_labels
from judgekit.metrics.classification import METRICS
from judgekit.metrics.concordance import kendalls_w, pairwise_agreement
from judgekit.signature import ModelSignature, Signature


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
        stats: per cell, records ``shared`` from an earlier cell and ``new`` (set by
            :func:`judgekit.calibration.grid.run_grid`; empty otherwise).
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
    stats: dict[str, dict[str, int]] = field(default_factory=dict)


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
    digest = file_sha256(path) if path.is_file() else None
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
                            n_resamples=0, seed=options.seed, common=True)  # fmt: skip
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
