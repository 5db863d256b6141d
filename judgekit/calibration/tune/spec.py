"""TUNE.yaml: a grid file (:mod:`judgekit.calibration.grid.config`) plus a ``tune:`` block.

.. code-block:: yaml

    base: cs.yaml                     # run config (relative to this file)
    labels: humans.csv                # human labels, any LabelTable layout
    judges: [{model: hosted_vllm/a, api_base: http://127.0.0.1:8000/v1}, ...]
    prompts: {key: audit.judge_prompt, values: [default, strict]}
    tune:
      statistic: kappa     # accuracy | kappa | ac1 | tau_b | acc_eq: the choice on select
      baseline: a__default            # the candidate the gain is measured against
      fractions: [0.4, 0.3, 0.3]      # tune / select / test
      seed: 0
      by: language                    # stratify by this facet and the label (default: language)
      few_shot: {k: 4, draws: 2}      # each candidate again with 4 tune-split examples
      mode: auto                      # split | nested | auto (nested below 150 items)
      folds: 5                        # outer folds of the nested mode

Candidates are the grid's cells (judge x prompt variant), each an ordinary resumable run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from judgekit.calibration.grid.config import GridConfig, load_grid
from judgekit.calibration.tune.candidates import FewShot
from judgekit.calibration.tune.nested import DEFAULT_FOLDS
from judgekit.calibration.tune.splits import DEFAULT_FRACTIONS


class TuneOptions(BaseModel):
    """How candidates are chosen and reported (issue 35): the declared ``statistic``, the
    ``baseline`` cell name (``<judge>__<prompt>``; default: the first cell), the tune / select /
    test ``fractions`` (non-negative, sum 1), the split ``seed``, the bootstrap size and ``by``,
    the facet the split is stratified by with the label (default: ``language`` or ``lang`` where
    every item has one, else the label alone) and ``few_shot`` (:class:`judgekit.calibration.
    tune.candidates.FewShot`: more candidates with examples from the tune split), ``mode``
    (``split``, ``nested`` K-fold with ``folds``, or ``auto``: nested below
    :data:`judgekit.calibration.tune.nested.NESTED_BELOW` labelled items without few-shot)."""

    model_config = ConfigDict(extra="forbid")
    statistic: Literal["accuracy", "kappa", "ac1", "tau_b", "acc_eq"] = "accuracy"
    baseline: str | None = None
    fractions: tuple[float, float, float] = DEFAULT_FRACTIONS
    seed: int = 0
    n_boot: int = Field(1000, ge=10)
    by: str | None = None
    few_shot: FewShot | None = None
    mode: Literal["auto", "split", "nested"] = "auto"
    folds: int = Field(DEFAULT_FOLDS, ge=2, le=20)

    @field_validator("fractions")
    @classmethod
    def _fractions(cls, value: tuple[float, float, float]) -> tuple[float, float, float]:
        if min(value) < 0 or abs(sum(value) - 1) > 1e-9:
            raise ValueError("fractions must be three non-negative numbers summing to 1")
        return value


class TuneConfig(GridConfig):
    """A grid file with a ``tune:`` block (module docstring)."""

    tune: TuneOptions = Field(default_factory=TuneOptions)


def load_tune(
    path: Path | str, overrides: list[str] | None = None, labels: Path | None = None
) -> TuneConfig:
    """Read and validate a TUNE.yaml with the grid file loader.

    Raises:
        InputError: missing file, bad YAML, or an unknown, missing or ill-typed key (file,
            line and field named), as :func:`judgekit.calibration.grid.config.load_grid`.
    """
    config = load_grid(path, overrides, labels, model=TuneConfig)
    assert isinstance(config, TuneConfig)
    return config
