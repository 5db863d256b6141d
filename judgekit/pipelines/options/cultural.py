"""Options of the ``cultural`` pipeline (CS/CA audit): the ``cultural:`` section of a run
config."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from judgekit.prompts import prompt_variant


class CulturalOptions(BaseModel):
    """Options of the ``cultural`` pipeline (section ``cultural:`` of a run config).

    Attributes:
        items: item files (.jsonl/.csv/.tsv); ``judgekit audit ITEMS`` sets them.
        language: language code of items without a ``language`` field (None = such items are
            an error).
        human: per-annotator human labels (an item file with ``required_knowledge`` vote lists,
            or an item,rater,label file); None = the votes the items carry, if any.
        rubric: rubric name under ``rubrics/`` or a YAML path.
        prompt: prompt variant (``prompts/cultural/annotate.<prompt>.txt``).
        strict: re-ask answers that break the CS rule, quote evidence not in the item, or
            label an item CS without evidence (False: keep them and count them).
        samples: annotations per item and judge (self-consistency; needs temperature > 0).
        tie_policy: human and jury ties in the validation: exclude, error or own_class.
        split: the items to annotate: all, calibration or heldout.
        heldout_fraction: share of each stratum in the held-out split, in (0, 1).
        split_seed: seed of the split.
        n_resamples: bootstrap resamples for every CI (0 = no CIs).
        max_flagged: flagged (CS) items listed in summary.json (all are in flagged.csv).
        few_shot: labelled examples shown before each item (item key ``<benchmark>|<id>`` ->
            its human CS/CA label; :mod:`judgekit.pipelines.few_shot`), e.g. from
            ``calibrate tune``.
    """

    model_config = ConfigDict(extra="forbid")
    items: list[str] = Field(default_factory=list)
    language: str | None = None
    human: str | None = None
    rubric: str = "cultural_sensitivity"
    prompt: Annotated[str, AfterValidator(prompt_variant("cultural/annotate."))] = "default"
    strict: bool = True
    samples: int = Field(1, ge=1, le=20)
    tie_policy: Literal["exclude", "error", "own_class"] = "exclude"
    split: Literal["all", "calibration", "heldout"] = "all"
    heldout_fraction: float = Field(0.5, gt=0.0, lt=1.0)
    split_seed: int = 0
    n_resamples: int = Field(1000, ge=0)
    max_flagged: int = Field(50, ge=0)
    few_shot: dict[str, str] = Field(default_factory=dict)
