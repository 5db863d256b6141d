"""Judge x prompt grids: every listed judge with every listed prompt, scored against humans.

Paper 002 (Badanin et al., concept spilling, judge ablation) runs 4 judges x 11 judge prompts
on a labelled set and reports the human agreement of each cell (best about 0.77), the pairwise
agreement between judges (84.59-92.61%) and Kendall's W of the model rankings each judge
induces (W = 0.9176). :func:`run_grid` does the same for any grid file
(:mod:`judgekit.calibration.grid.config`).

Each cell is one ordinary run (``judgekit run``, called in this process) into
``OUT/<judge>__<prompt>/``, so cells resume like runs: rerunning a finished grid makes zero
model calls. Records of the pipeline's shared stages (spilling: ``generate``) are copied from
the first cell, or from ``generations:`` (the run whose outputs the humans labelled), into every
other cell before it runs, so all judges judge the same outputs and nothing is generated twice.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from judgekit.calibration.grid.config import (
    PIPELINE_DEFAULTS,
    Cell,
    GridConfig,
    out_dir,
    plan_cells,
)
from judgekit.calibration.grid.report import GridResult, analyse_grid
from judgekit.config import load_config
from judgekit.errors import InputError, JudgekitError
from judgekit.labels.table import load_labels
from judgekit.llm.local import shared_servers
from judgekit.record_file import read_record_lines
from judgekit.runlog import Record, RunLog

if TYPE_CHECKING:
    from judgekit.results import RunResult


def read_records(run_dir: Path) -> list[Record]:
    """The current records of a run directory's ``records.jsonl``, read by the one reader of
    that file (:func:`judgekit.record_file.read_record_lines`: the last complete line of a key
    wins and takes its position, a cut last line is dropped).

    Raises:
        InputError: the directory has no records.jsonl, or a complete line is not a record
            (names the file, the line and the field).
    """
    path = run_dir / "records.jsonl"
    if not path.is_file():
        raise InputError(run_dir, "not a run directory: no records.jsonl in it")
    return [Record.model_validate(row) for row in read_record_lines(path).records]


def share_records(source: Path, cell_dir: Path, stages: list[str]) -> int:
    """Append the ``stages`` records of run ``source`` that ``cell_dir`` lacks; return how many.

    The run then resumes them instead of calling the model: every cell sees the same outputs.
    """
    if source.resolve() == cell_dir.resolve() or not stages:
        return 0
    shared = [r for r in read_records(source) if r.stage in stages]
    log = RunLog(cell_dir)
    try:
        missing = [r for r in shared if log.get(r.key) is None]
        for record in missing:
            log.append(record)
    finally:
        log.close()
    return len(missing)


def count_records(run_dir: Path) -> int:
    """Complete lines in ``run_dir/records.jsonl`` (0 without one)."""
    path = run_dir / "records.jsonl"
    return path.read_bytes().count(b"\n") if path.is_file() else 0


def kept_records(directory: Path) -> dict[str, int]:
    """Cell name -> complete records in ``directory/<cell>/records.jsonl``, for every cell run
    directory that has one (sorted): what an interrupted grid or tune keeps for its resume."""
    if not Path(directory).is_dir():
        return {}
    cells = sorted(p.parent for p in Path(directory).glob("*/records.jsonl"))
    return {cell.name: count_records(cell) for cell in cells}


def run_cells(
    grid: GridConfig,
    cells: list[Cell],
    pipeline: str,
    *,
    no_cache: bool = False,
    on_cell: Callable[[str, dict[str, int], RunResult], None] | None = None,
) -> dict[str, dict[str, int]]:
    """Run every cell as ``judgekit run BASE --set ... --out CELL`` does, through
    :func:`judgekit.run` (in this process); ``on_cell(name, stats, result)`` is called as
    each cell ends (the command line prints one line per cell).

    Every cell's embedded model (``local/...``) is served by one server started for the first
    cell that needs it (:func:`judgekit.llm.local.shared_servers`).

    Returns:
        Per cell name: ``shared`` (records copied in from the shared stages) and ``new``
        (records this run added: model calls or cache hits; 0 for a finished cell).
    """
    defaults = PIPELINE_DEFAULTS.get(pipeline, {})
    stages = grid.shared_stages if grid.shared_stages is not None else defaults.get("shared_stages")
    source = grid.generations
    stats = {}
    with shared_servers():  # one embedded model load for every cell, not one per cell
        for cell in cells:
            source = _run_cell(grid, cell, source, stages, no_cache, stats, on_cell)
    return stats


def _run_cell(grid, cell, source, stages, no_cache, stats, on_cell) -> Path | None:
    """Run one cell of :func:`run_cells` into ``stats``; the shared stages' source after it."""
    from judgekit.engine import run

    shared = share_records(source, cell.directory, stages or []) if source else 0
    before = count_records(cell.directory)
    result = run(grid.base, list(cell.overrides), out=cell.directory, no_cache=no_cache)
    if result.all_failed:
        raise JudgekitError(f"cell {cell.name}: no task of its run got an answer")
    stats[cell.name] = {"shared": shared, "new": count_records(cell.directory) - before}
    if on_cell is not None:
        on_cell(cell.name, stats[cell.name], result)
    return source or cell.directory


def run_grid(
    grid: GridConfig,
    *,
    out: Path | None = None,
    no_cache: bool = False,
    on_cell: Callable[[str, dict[str, int], RunResult], None] | None = None,
) -> GridResult:
    """Run every cell of ``grid`` (resuming finished ones) and score them.

    Human labels are read and every cell's run config validated before any model is called.
    The cells run in ``OUT``; :func:`judgekit.report.grid.write_grid` writes grid.csv,
    grid.json, heatmap.png, pairwise_agreement.csv, agreement_matrix.csv, kappa_matrix.csv,
    model_scores.csv there (``result.stats`` holds the records shared and new per cell).

    Raises:
        InputError: bad labels file or cell config (before anything runs).
        JudgekitError: a cell's run fails as ``judgekit run`` would.
    """
    options = grid.options
    humans = load_labels(grid.labels, format=options.labels_format)
    directory = out_dir(grid, out)
    cells = plan_cells(grid, directory)
    pipeline = load_config(grid.base, list(cells[0].overrides)).pipeline
    stats = run_cells(grid, cells, pipeline, no_cache=no_cache, on_cell=on_cell)
    result = analyse_grid(grid, cells, humans, pipeline)
    result.stats = stats
    return result
