"""Grid files: which judges, which prompt variants, which human labels (``judgekit calibrate
grid``); the cells they make, each validated as a run config before anything runs.

.. code-block:: yaml

    base: spilling.yaml               # run config (relative to this file)
    labels: humans.csv                # human labels, any LabelTable layout (relative too)
    judges:                           # ModelSpec mappings, as under `judge:` in a run config
      - {model: hosted_vllm/Qwen/Qwen3-8B, api_base: http://localhost:8000/v1}
      - {model: openai/gpt-4o-mini, api_key_env: OPENAI_API_KEY}
    prompts: {key: spilling.judge_prompt, values: [default, strict]}
    set: ["spilling.words=[head, line]"]      # --set overrides for every cell (optional)
    generations: runs/spilling-labelled       # run whose outputs the humans labelled (optional)
    options: {tie_policy: exclude, metric: accuracy, n_resamples: 1000, seed: 0}

Running is :mod:`judgekit.calibration.grid`; scoring and outputs
:mod:`judgekit.calibration.grid.report`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from judgekit.config import explain_error, line_of, load_config
from judgekit.data.yamltext import load_yaml, yaml_input_error
from judgekit.errors import InputError
from judgekit.labels.majority import TiePolicy
from judgekit.labels.table import LabelFormat
from judgekit.llm.spec import ModelSpec

Metric = Literal["accuracy", "macro_f1", "kappa"]


class PromptAxis(BaseModel):
    """The prompt variants: ``values`` are set, one per cell, at the dotted run-config ``key``."""

    model_config = ConfigDict(extra="forbid")
    key: str = Field(min_length=1)
    values: list[str | int | float | bool] = Field(min_length=1)


class ModelScores(BaseModel):
    """Where a cell reports one score per model under test (for Kendall's W).

    Attributes:
        file: CSV in the cell directory. model, score: its columns.
        higher_is_better: False for error rates such as the spilling rate.
    """

    model_config = ConfigDict(extra="forbid")
    file: str
    model: str = "model"
    score: str
    higher_is_better: bool = True


class GridOptions(BaseModel):
    """Scoring options: tie policy for human majority ties, the metric of the heatmap, the
    bootstrap (``n_resamples`` = 0: no CIs), and the layout of the human labels file."""

    model_config = ConfigDict(extra="forbid")
    tie_policy: TiePolicy = "exclude"
    metric: Metric = "accuracy"
    n_resamples: int = Field(1000, ge=0)
    seed: int = 0
    confidence: float = Field(0.95, gt=0, lt=1)
    labels_format: LabelFormat = "auto"


class GridConfig(BaseModel):
    """A judge x prompt grid (module docstring). Relative ``base``, ``labels`` and
    ``generations`` paths are read from the grid file's folder; ``out`` (default
    ``runs/grid-<grid file stem>``) from the working directory, like a run config's."""

    model_config = ConfigDict(extra="forbid")
    base: Path
    labels: Path
    judges: list[ModelSpec] = Field(min_length=1)
    prompts: PromptAxis
    set: list[str] = Field(default_factory=list)
    generations: Path | None = None
    shared_stages: list[str] | None = None
    model_scores: ModelScores | None = None
    options: GridOptions = Field(default_factory=GridOptions)
    out: Path | None = None
    _path: Path | None = PrivateAttr(None)

    @property
    def path(self) -> Path | None:
        """The grid file this was read from (None when built in Python)."""
        return self._path


# What a pipeline shares across cells and where it reports per-model scores.
PIPELINE_DEFAULTS: dict[str, dict[str, Any]] = {
    "spilling": {
        "shared_stages": ["generate"],
        "model_scores": ModelScores(
            file="spilling_by_model.csv", score="spilling_rate_common", higher_is_better=False
        ),
    },
}


def load_grid(
    path: Path | str,
    overrides: list[str] | None = None,
    labels: Path | None = None,
    model: type[GridConfig] | None = None,
) -> GridConfig:
    """Read and validate a grid file; ``overrides`` are appended to its ``set`` list and
    ``labels`` (from the command line, relative to the working directory) replaces its labels.
    ``model`` is the GridConfig subclass to validate with (a tune file: ``TuneConfig``).

    Raises:
        InputError: a missing file, bad YAML, an unknown, missing or ill-typed key (with line),
            or a ``set`` entry that touches what the grid varies (``judge``, the prompt key).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file not found")
    text = path.read_text(encoding="utf-8")
    try:
        data, root = load_yaml(text) or {}, yaml.compose(text)
    except yaml.YAMLError as exc:
        raise yaml_input_error(path, exc) from None
    if not isinstance(data, dict):
        raise InputError(path, "expected a mapping of keys at the top level", line=1)
    try:
        grid = (model or GridConfig).model_validate(data)
    except ValidationError as exc:
        key, message = explain_error(exc.errors()[0])
        line = line_of(root, tuple(key.split("."))) if key else None
        raise InputError(path, message, line=line, field=key or None) from None
    folder = path.parent
    update: dict[str, Any] = {
        "base": folder / grid.base,
        "labels": labels if labels is not None else folder / grid.labels,
        "set": [*grid.set, *(overrides or [])],
    }
    if grid.generations is not None:
        update["generations"] = folder / grid.generations
    grid = grid.model_copy(update=update)
    grid._path = path
    for assignment in grid.set:
        key = assignment.split("=", 1)[0].strip()
        if key == "judge" or key == grid.prompts.key:
            raise InputError(
                path, f"'{key}' is set by the grid in every cell; remove it", field="set"
            )
    return grid


def field_line(path: Path | None, key: str) -> int | None:
    """1-based line of the dotted ``key`` (``tune.statistic``, ``prompts.values.1``) in the YAML
    file ``path``; None where the file, the key or its line cannot be read."""
    if path is None:
        return None
    try:
        root = yaml.compose(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    return line_of(root, tuple(key.split(".")))


def slug(text: str) -> str:
    """A directory-safe name: runs of other characters than [A-Za-z0-9._-] become '-'."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "x"


@dataclass(frozen=True)
class Cell:
    """One (judge, prompt) run.

    Attributes:
        judge: the judge's label (its ``name`` or model id): the rater in its labels.csv.
        prompt: the prompt variant (text of the value).
        directory: the run directory, ``OUT/<judge>__<prompt>``.
        overrides: the ``--set`` assignments of this run, the grid's own last.
    """

    judge: str
    prompt: str
    directory: Path
    overrides: tuple[str, ...]

    @property
    def name(self) -> str:
        """``<judge>__<prompt>``, the directory name and the cell's column in tables."""
        return self.directory.name


def out_dir(grid: GridConfig, out: Path | None = None) -> Path:
    """The grid's output directory: ``out``, the grid's ``out`` or ``runs/grid-<stem>``."""
    if out is not None:
        return out
    if grid.out is not None:
        return grid.out
    return Path("runs") / f"grid-{grid.path.stem if grid.path else 'judge-prompt'}"


def plan_cells(grid: GridConfig, out: Path) -> list[Cell]:
    """Every (judge, prompt) cell, judges in the outer loop, each config validated up front.

    Raises:
        InputError: two judges (or prompt values) with the same directory name, or a cell
            whose run config does not validate (so nothing runs before every cell is valid); a
            prompt key or value the run config refuses is located in the grid file, line and
            ``prompts.key`` or ``prompts.values[i]``.
    """
    judges = [(spec, slug(spec.label)) for spec in grid.judges]
    values = [(v, slug(str(v))) for v in grid.prompts.values]
    for what, names in (("judges", [j for _, j in judges]), ("prompts", [v for _, v in values])):
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            hint = "give each judge a distinct 'name'" if what == "judges" else "distinct values"
            raise InputError(grid.path, f"two {what} named '{repeated[0]}': {hint}", field=what)
    cells = []
    for spec, judge_slug in judges:
        judge = json.dumps(spec.model_dump(mode="json", exclude_defaults=True))
        for value, value_slug in values:
            overrides = (
                f"judge={judge}",
                *grid.set,
                f"{grid.prompts.key}={json.dumps(value)}",
            )
            cell = Cell(spec.label, str(value), out / f"{judge_slug}__{value_slug}", overrides)
            try:
                config = load_config(grid.base, list(overrides))
            except InputError as exc:
                raise _prompt_error(grid, exc, values.index((value, value_slug))) from None
            config.single_judge()
            cells.append(cell)
    return cells


def _prompt_error(grid: GridConfig, exc: InputError, index: int) -> InputError:
    """``exc`` (a cell's run config refused) located in the grid file where the grid's prompt
    axis caused it: ``prompts.key`` for a key the run config does not have, ``prompts.values[i]``
    for a value it refuses (a prompt that does not exist); ``exc`` itself otherwise."""
    if exc.path is not None or exc.field != grid.prompts.key:
        return exc
    unknown = exc.message.endswith("unknown key")
    field, key = ("prompts.key", "prompts.key") if unknown else (
        f"prompts.values[{index}]", f"prompts.values.{index}")  # fmt: skip
    message = exc.message.split(": ", 1)[-1] if exc.message.startswith("--set ") else exc.message
    message = message.removeprefix("Value error, ")
    return InputError(grid.path, f"{grid.prompts.key}: {message}",
                      line=field_line(grid.path, key), field=field)  # fmt: skip


def model_scores_spec(grid: GridConfig, pipeline: str) -> ModelScores | None:
    """The grid's ``model_scores``, else the pipeline's default (None: no Kendall's W)."""
    return grid.model_scores or PIPELINE_DEFAULTS.get(pipeline, {}).get("model_scores")
