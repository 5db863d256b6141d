"""Run a TUNE.yaml: candidates as ordinary resumable grid cells, split, choose, report, best.yaml.

Each candidate (judge x prompt variant) is one cell run by
:func:`judgekit.calibration.grid.run_cells` into ``OUT/<judge>__<prompt>/`` (cached, resumable).
The items every candidate labelled and the humans labelled (a majority, ties excluded) are split
once (:func:`judgekit.calibration.tune.splits.split_items`, stratified by language or ``by``
and human label, :mod:`judgekit.calibration.tune.strata`), the choice
is made on select (:func:`judgekit.calibration.tune.choose.choose`) and the chosen judge is reported
on the sealed test split only (:func:`judgekit.calibration.tune.report.report_on_test`); reading the
test labels counts a look in ``OUT/looks.json``. Below 150 labelled items (``mode: auto``) or
with ``mode: nested`` the choice is cross-validated instead (:mod:`judgekit.calibration.tune.
nested`): every item is held out once and splits.json's test split is every item.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from judgekit.calibration.grid import run_cells
from judgekit.calibration.grid.config import Cell, field_line, out_dir, plan_cells
from judgekit.calibration.grid.report import cell_labels
from judgekit.calibration.tune.candidates import few_shot_cells
from judgekit.calibration.tune.choose import Ranking, choose
from judgekit.calibration.tune.nested import NESTED_BELOW, fold_items, nested_cv
from judgekit.calibration.tune.report import TestReport, report_on_test
from judgekit.calibration.tune.spec import TuneConfig
from judgekit.calibration.tune.splits import Splits, allocate, record_look, split_items
from judgekit.calibration.tune.strata import facet_report, facet_values, strata
from judgekit.config import load_config
from judgekit.data.atomic import write_text
from judgekit.data.jsonfile import write_json
from judgekit.errors import InputError, JudgekitError
from judgekit.labels.majority import majority_vote
from judgekit.labels.table import load_labels
from judgekit.llm.local import shared_servers
from judgekit.pipelines import few_shot_pipelines, get_few_shot

BEST_FILE = "best.yaml"


@dataclass(frozen=True)
class TuneResult:
    """A finished tune: the split, the ranking on select, the test report, where it was written."""

    splits: Splits
    ranking: Ranking
    report: TestReport
    best: Path
    directory: Path


FIRST_IDS = 5  # item ids named in a left-out note


def _ids(items: list) -> str:
    more = f", ... ({len(items) - FIRST_IDS} more)" if len(items) > FIRST_IDS else ""
    return ", ".join(str(i) for i in items[:FIRST_IDS]) + more


def left_out(humans: pd.Series, labels: dict[str, pd.Series]) -> dict[str, dict[str, object]]:
    """The human-labelled items a tune leaves out, as ``calibrate judge`` and ``compare`` count
    them: ``ties`` (the human majority ties: no reference) and ``not_labelled`` (a human label,
    no tie, but not labelled by every candidate: not in the run, or unjudged by a candidate),
    each ``{"n": count, "items": sorted ids, "note": the line said}``; empty entries omitted."""
    ties = sorted(humans.index[humans == "<tie>"])
    kept = humans.index[humans != "<tie>"]
    missing = sorted({i for s in labels.values() for i in kept.difference(s.index)})
    out: dict[str, dict[str, object]] = {}
    if ties:
        note = f"{len(ties)} human ties (left out; items {_ids(ties)})"
        out["ties"] = {"n": len(ties), "items": ties, "note": note}
    if missing:
        note = (f"{len(missing)} human-labelled items not labelled by every candidate (left out "
                f"for every candidate; items {_ids(missing)})")  # fmt: skip
        out["not_labelled"] = {"n": len(missing), "items": missing, "note": note}
    return out


def _common_items(cells: list[Cell], humans: pd.Series) -> tuple[dict, pd.Series, dict]:
    """Candidate labels (cell name -> item -> label) restricted to the items every candidate
    and the human majority (ties dropped) label; the human majority on those items; what was
    left out (:func:`left_out`)."""
    labels = {cell.name: cell_labels(cell) for cell in cells}
    items = humans[humans != "<tie>"].index
    for series in labels.values():
        items = items.intersection(series.index)
    if len(items) < 3:
        raise JudgekitError(f"only {len(items)} items have a human label and every candidate's")
    ordered = sorted(items)
    outputs = {name: series.loc[ordered].to_dict() for name, series in labels.items()}
    return outputs, humans.loc[ordered], left_out(humans, labels)


def _few_shot(config: TuneConfig, cells, splits, gold, pipeline, no_cache, outputs) -> list[Cell]:
    """Run the few-shot candidates (examples from tune only) and add their labels of the
    select and test items to ``outputs``; returns their cells. Raises JudgekitError when one
    leaves a select or test item unlabelled."""
    options = config.tune.few_shot
    if options is None:
        return []
    try:
        key = get_few_shot(pipeline).key  # checked by _plan
        shots = few_shot_cells(config.base, cells, splits, gold.to_dict(), options, key)
    except ValueError as exc:
        raise InputError(config.path, str(exc), field="tune.few_shot.k") from None
    run_cells(config, shots, pipeline, no_cache=no_cache)
    for cell in shots:
        labels = cell_labels(cell)
        missing = [i for i in (*splits.select, *splits.test) if i not in labels.index]
        if missing:
            raise JudgekitError(f"cell {cell.name}: no label for {len(missing)} select/test "
                                f"items (first {missing[0]})")  # fmt: skip
        outputs[cell.name] = labels.loc[list(gold.index.intersection(labels.index))].to_dict()
    return shots


def _absolute_paths(node: object, folder: Path) -> object:
    """``node`` with each relative path string that names a file or folder beside the base
    config made absolute, so best.yaml (written in OUT) finds what the base config found."""
    if isinstance(node, dict):
        return {k: _absolute_paths(v, folder) for k, v in node.items()}
    if isinstance(node, list):
        return [_absolute_paths(v, folder) for v in node]
    if isinstance(node, str) and node and not node.startswith("data:") and "\n" not in node:
        candidate = Path(node)
        if not candidate.is_absolute() and (folder / candidate).exists():
            return str((folder / candidate).resolve())
    return node


def best_config(config: TuneConfig, cell: Cell) -> dict[str, object]:
    """The chosen candidate as a run config: the base config with the cell's overrides applied
    (model, prompt, few-shot examples, parameters), relative paths of the base config made
    absolute, as a mapping ``judgekit run`` and ``calibrate estimate`` read."""
    run_config = load_config(config.base, list(cell.overrides))
    data = run_config.model_dump(mode="json", exclude_defaults=True)
    return _absolute_paths(data, Path(config.base).parent)  # type: ignore[return-value]


def write_best(config: TuneConfig, cell: Cell, splits: Splits, path: Path) -> None:
    """Write ``best.yaml``: the chosen run config plus a ``tuned:`` comment block naming the
    candidate and the sealed test hash (so later commands can refuse test labels)."""
    header = (
        f"# judgekit calibrate tune: chosen candidate {cell.name}\n"
        f"# tuned_test_hash: {splits.test_hash}\n"
        f"# split seed {splits.seed}: tune {len(splits.tune)}, select {len(splits.select)},"
        f" test {len(splits.test)}\n"
    )
    body = yaml.safe_dump(best_config(config, cell), sort_keys=False, allow_unicode=True)
    write_text(path, header + body)


def _plan(config: TuneConfig, directory: Path) -> tuple[list[Cell], str, str]:
    """(cells, baseline cell name, pipeline), every check made before anything runs."""
    options = config.tune
    cells = plan_cells(config, directory)
    names = [cell.name for cell in cells]
    baseline = options.baseline or names[0]
    if baseline not in names:
        raise InputError(
            config.path, f"baseline '{baseline}' is not a candidate ({names})", field="tune"
        )
    pipeline = load_config(config.base, list(cells[0].overrides)).pipeline
    if options.few_shot is not None and get_few_shot(pipeline) is None:
        raise InputError(config.path, "few-shot candidates need a pipeline that takes "
                         f"examples ({', '.join(few_shot_pipelines())}), not {pipeline}",
                         field="tune.few_shot")  # fmt: skip
    if options.few_shot is not None and options.mode == "nested":
        raise InputError(config.path, "few-shot candidates need a tune split: mode split or "
                         "auto", field="tune.mode")  # fmt: skip
    return cells, baseline, pipeline


def _look(directory: Path, splits: Splits) -> int:
    """Count the report's look; a recorded look at another test split is an InputError."""
    try:
        return record_look(directory, splits.test_hash, "calibrate tune")
    except ValueError as exc:
        raise InputError(directory / "looks.json", f"{exc}: the labels were split anew after "
                         "a look; use a new --out", field="test_hash") from None  # fmt: skip


def is_nested(mode: str, n_items: int, few_shot: bool) -> bool:
    """Whether a tune runs nested cross-validation: ``nested``, or ``auto`` below
    :data:`NESTED_BELOW` labelled items when no few-shot candidates need a tune split."""
    return mode == "nested" or (mode == "auto" and n_items < NESTED_BELOW and not few_shot)


MIN_HELD_OUT = 2  # items in select and in test (split mode), and in each fold (nested mode)


def check_size(config: TuneConfig, n_items: int) -> None:
    """Refuse a tune whose ``n_items`` labelled items cannot fill its splits: fewer than
    :data:`MIN_HELD_OUT` items in select or test by ``tune.fractions`` (split mode), or in each of
    ``tune.folds`` folds (nested mode). Raises InputError naming the TUNE file and the field."""
    options = config.tune
    if is_nested(options.mode, n_items, options.few_shot is not None):
        if n_items < MIN_HELD_OUT * options.folds:
            raise InputError(config.path, f"{n_items} items carry a human label (ties left out) "
                             f"and every candidate's: {options.folds} folds need at least "
                             f"{MIN_HELD_OUT * options.folds}; label more items or set fewer "
                             "folds", field="tune.folds")  # fmt: skip
        return
    _, select, test = allocate(n_items, options.fractions)
    if min(select, test) < MIN_HELD_OUT:
        raise InputError(config.path, f"{n_items} items carry a human label (ties left out) and "
                         f"every candidate's: the fractions {list(options.fractions)} leave "
                         f"{select} for select and {test} for test, each needs at least "
                         f"{MIN_HELD_OUT}; label more items or use mode nested",
                         field="tune.fractions")  # fmt: skip


NUMERIC_STATISTICS = ("tau_b", "acc_eq")  # over scores: every human label must be a number


def check_classes(config: TuneConfig, gold: pd.Series) -> None:
    """Refuse a statistic the human labels cannot carry: tau_b or acc_eq (over scores) where a
    human label is not a number (true/false, a class name), and kappa or tau_b (chance-corrected,
    rank) over human labels of one class, where it is undefined or 0 for every candidate. Raises
    InputError naming the TUNE file, the line and ``tune.statistic``, before any call."""
    stat, line = config.tune.statistic, field_line(config.path, "tune.statistic")
    if stat in NUMERIC_STATISTICS:
        numbers = pd.to_numeric(gold.astype(str), errors="coerce")
        bad = gold[numbers.isna()]
        if len(bad):
            raise InputError(config.path, f"{stat} compares scores, but {len(bad)} of "
                             f"{len(gold)} human labels are not numbers (item {bad.index[0]}: "
                             f"'{bad.iloc[0]}'); use accuracy, kappa or ac1 for classes",
                             line=line, field="tune.statistic")  # fmt: skip
    classes = set(gold.astype(str))
    if stat in ("kappa", "tau_b") and len(classes) == 1:
        raise InputError(config.path, f"every human label is '{classes.pop()}': "
                         f"{stat} cannot tell the candidates apart on one "
                         "class; label items of other classes, or use accuracy",
                         line=line, field="tune.statistic")  # fmt: skip


def check_outputs(config: TuneConfig, outputs: dict[str, dict]) -> None:
    """After the candidates ran: refuse tau_b or acc_eq where a candidate's label is not a
    number (a judge of classes), as :func:`check_classes` does for the human labels."""
    if config.tune.statistic not in NUMERIC_STATISTICS:
        return
    for name, out in outputs.items():
        bad = [(i, v) for i, v in out.items() if pd.isna(pd.to_numeric(str(v), errors="coerce"))]
        if bad:
            raise InputError(config.path, f"{config.tune.statistic} compares scores, but "
                             f"candidate {name} gave {len(bad)} labels that are not numbers "
                             f"(item {bad[0][0]}: '{bad[0][1]}'); use accuracy, kappa or ac1",
                             line=field_line(config.path, "tune.statistic"),
                             field="tune.statistic")  # fmt: skip


def _split(config: TuneConfig, items: list, item_strata: list, by: str | None) -> Splits:
    """The tune / select / test split; an InputError where per-stratum rounding leaves select or
    test under :data:`MIN_HELD_OUT` items (strata too small for the fractions)."""
    splits = split_items(items, item_strata, config.tune.seed, config.tune.fractions)
    if min(len(splits.select), len(splits.test)) < MIN_HELD_OUT:
        strata_of = f"label and {by}" if by else "label"
        raise InputError(config.path, f"the split stratified by {strata_of} leaves "
                         f"{len(splits.select)} items for select and {len(splits.test)} for "
                         "test (strata too small for the fractions); label more items or use "
                         "mode nested", field="tune.fractions")  # fmt: skip
    return splits


def _split_doc(splits: Splits, by: str | None, folds: tuple = ()) -> dict[str, object]:
    doc = {"seed": splits.seed, "by": by, "mode": "nested" if folds else "split",
           "test_hash": splits.test_hash, "tune": list(splits.tune),
           "select": list(splits.select), "test": list(splits.test)}  # fmt: skip
    if folds:
        doc["folds"] = [list(f) for f in folds]
    return doc


def run_tune(config: TuneConfig, *, out: Path | None = None, no_cache: bool = False) -> TuneResult:
    """Run every candidate, split the labelled items, choose on select, report on test (or, in
    the nested mode, :func:`judgekit.calibration.tune.nested.nested_cv` over K folds).

    Writes ``OUT/splits.json``, ``OUT/ranking.json``, ``OUT/best.yaml`` and counts one look in
    ``OUT/looks.json`` (the report on test). Raises InputError for a bad labels file, a cell
    config that does not validate, an unknown ``tune.baseline``, few-shot candidates for a
    pipeline that declares no few-shot option or in the nested mode, or too few labelled items
    for the splits (:func:`check_size`, checked before any call and again on the items every
    candidate labelled); JudgekitError when a cell fails or fewer than 3 items are labelled by
    everyone.
    """
    with shared_servers():  # the candidates and few-shot cells share one embedded server
        return _run_tune(config, out, no_cache)


def _run_tune(config: TuneConfig, out: Path | None, no_cache: bool) -> TuneResult:
    options = config.tune
    humans = majority_vote(load_labels(config.labels, format=config.options.labels_format))
    directory = out_dir(config, out)
    cells, baseline, pipeline = _plan(config, directory)
    check_size(config, int((humans != "<tie>").sum()))  # before any call
    check_classes(config, humans[humans != "<tie>"])
    run_cells(config, cells, pipeline, no_cache=no_cache)
    outputs, gold, dropped = _common_items(cells, humans)
    check_outputs(config, outputs)
    items, human = list(gold.index), gold.to_dict()
    check_size(config, len(items))
    by, facet = facet_values([config.labels, *(c.directory for c in cells)], items, options.by)
    item_strata = strata(items, gold, facet)
    folds: tuple = ()
    if is_nested(options.mode, len(items), options.few_shot is not None):
        folds = fold_items(items, item_strata, options.folds, options.seed)
        splits = Splits((), (), tuple(items), options.seed)
        looks = _look(directory, splits)
        result = nested_cv(outputs, human, folds, options.statistic, baseline, looks,
                           options.n_boot, options.seed)  # fmt: skip
        ranking, report, held = result.ranking, result.report, result.held_out
    else:
        splits = _split(config, items, item_strata, by)
        cells += _few_shot(config, cells, splits, gold, pipeline, no_cache, outputs)
        ranking = choose(outputs, human, splits.select, options.statistic)
        looks = _look(directory, splits)
        report = report_on_test(outputs, human, splits.test, ranking, baseline, looks,
                                options.n_boot, options.seed)  # fmt: skip
        held = outputs[ranking.chosen]
    report = dataclasses.replace(report, notes=tuple(d["note"] for d in dropped.values()))
    if by is not None:
        per = facet_report(held, gold, splits.test, facet, ranking.statistic,
                           options.n_boot, options.seed)  # fmt: skip
        report = dataclasses.replace(report, by=by, facets=per)
    chosen = next(cell for cell in cells if cell.name == ranking.chosen)
    best = directory / BEST_FILE
    write_best(config, chosen, splits, best)
    split_doc = {**_split_doc(splits, by, folds), "left_out": dropped}
    write_json(directory / "splits.json", split_doc)
    rank_doc = {"statistic": ranking.statistic, "on": "all items" if folds else "select",
                "select": [list(f) for f in ranking.figures]}  # fmt: skip
    write_json(directory / "ranking.json", rank_doc)
    return TuneResult(splits, ranking, report, best, directory)
