"""Few-shot candidates of a tune: each (judge, prompt) cell again with k labelled examples drawn
from the tune split only (issue 35, point 1).

The examples are drawn after the split (:func:`judgekit.calibration.tune.splits.
few_shot_examples`, seeded), so no example item can be in select or test; each draw is one more
ordinary resumable run, ``OUT/<judge>__<prompt>__k<k>d<draw>/``, whose config carries the
examples by item id with their human labels under the option the pipeline declares
(:class:`judgekit.pipelines.few_shot.FewShot`: ``classify.few_shot``, ``cultural.few_shot``,
``pairwise.few_shot``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from judgekit.calibration.grid.config import Cell
from judgekit.calibration.tune.splits import Splits, few_shot_examples
from judgekit.config import load_config


class FewShot(BaseModel):
    """``tune.few_shot``: ``k`` examples per candidate (1..50), ``draws`` seeded draws of them
    (each draw of each base cell is one candidate)."""

    model_config = ConfigDict(extra="forbid")
    k: int = Field(ge=1, le=50)
    draws: int = Field(1, ge=1, le=20)


def draw_examples(splits: Splits, gold: Mapping[str, object], k: int, draw: int) -> dict[str, str]:
    """Example item id -> its human label, ``k`` items of the tune split (draw ``draw``, seeded
    by the split seed). Raises ValueError when tune has fewer than ``k`` items."""
    ids = few_shot_examples(splits, k, seed=splits.seed * 1000 + draw)
    return {i: str(gold[i]) for i in ids}


def few_shot_cells(
    base: Path,
    cells: list[Cell],
    splits: Splits,
    gold: Mapping[str, object],
    options: FewShot,
    key: str,
) -> list[Cell]:
    """One cell per (draw, base cell): the base cell's overrides plus the examples at ``key``,
    the pipeline's declared few-shot option (``classify.few_shot``...).

    ``base`` is the tune file's base run config. Each cell's config is validated here, so
    nothing runs before all are valid. Raises InputError for a config that does not validate,
    ValueError when the tune split has fewer than ``k`` items.
    """
    out = []
    for draw in range(options.draws):
        examples = draw_examples(splits, gold, options.k, draw)
        for cell in cells:
            overrides = (*cell.overrides, f"{key}={json.dumps(examples)}")
            name = f"{cell.name}__k{options.k}d{draw}"
            new = replace(cell, directory=cell.directory.with_name(name), overrides=overrides)
            load_config(base, list(overrides))
            out.append(new)
    return out
