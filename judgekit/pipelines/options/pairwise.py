"""Options of the ``pairwise`` pipeline: the ``pairwise:`` section of a run config."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from judgekit.prompts import prompt_variant


class PairwiseOptions(BaseModel):
    """The ``pairwise:`` section of a run config.

    Attributes:
        items: items file (.jsonl, .csv, .tsv or a .json array; relative to the current
            directory, else to the config, else to the repository).
        id_field, input_field, output_fields, label_field, subset_field: the item fields
            (LLMBar's names by default; an item without an id takes its 0-based position).
        subset: subset name of items without a subset field (None: unnamed).
        prompt: template name, ``prompts/pairwise/<prompt>.txt``.
        ties: whether ``"tie"`` is a valid verdict.
        inconsistent: how a position-inconsistent (item, judge) is resolved: ``tie``,
            ``exclude`` or ``first-order`` (the original order's verdict); always counted.
        rationale_max_chars: longest rationale accepted, in characters.
        published: a table of published verdicts (LLMBar's derived TSV) scored beside the run's
            judges on the run's items, matched on (subset, id).
        published_prompting: keep only these promptings of the published table (None: all).
        n_resamples: bootstrap resamples of the accuracy CIs.
        few_shot: labelled examples shown before each pair (item id -> the better output as
            a human judged it, ``"1"``, ``"2"`` or, with ``ties``, ``"tie"``;
            :mod:`judgekit.pipelines.few_shot`), e.g. from ``calibrate tune``.
    """

    model_config = ConfigDict(extra="forbid")
    items: Path
    id_field: str = "id"
    input_field: str = "input"
    output_fields: tuple[str, str] = ("output_1", "output_2")
    label_field: str = "label"
    subset_field: str = "subset"
    subset: str | None = None
    prompt: Annotated[str, AfterValidator(prompt_variant("pairwise/"))] = "vanilla"
    ties: bool = False
    inconsistent: Literal["tie", "exclude", "first-order"] = "tie"
    rationale_max_chars: int = Field(200, ge=20, le=4000)
    published: Path | None = None
    published_prompting: list[str] | None = None
    n_resamples: int = Field(1000, ge=100, le=100_000)
    few_shot: dict[str, str] = Field(default_factory=dict)
