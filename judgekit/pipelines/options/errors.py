"""Options of the ``errors`` pipeline (MQM error typing): the ``errors:`` section of a run
config."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from judgekit.prompts import prompt_variant


class MQMSample(BaseModel):
    """Items drawn from a Google MQM TSV by
    :func:`judgekit.pipelines.error_typing.items_from_mqm` (see its arguments)."""

    model_config = ConfigDict(extra="forbid")
    tsv: Path
    systems: list[str] = Field(min_length=1)
    n_segments: int = Field(ge=1)
    seed: int = 0
    min_chars: int = 20
    max_chars: int = 200
    source_lang: str | None = None
    target_lang: str | None = None


class ErrorsOptions(BaseModel):
    """Options of the ``errors`` pipeline (the ``errors:`` config section).

    Attributes:
        items: JSONL/TSV of :class:`SegmentItem` rows; or
        mqm_sample: draw the items from a Google MQM TSV (exactly one of the two).
        rubric: rubric name under ``rubrics/`` or a YAML path.
        prompt: prompt variant (``prompts/localisation/errors.<prompt>.txt``).
        source_lang, target_lang: language names for items that do not give them.
        use_reference: show the item's reference to the judge (off = reference-free).
        human_mqm: a Google MQM TSV to calibrate against in the report (default: the
            ``mqm_sample`` file, if any).
        gemba_dir: WMT23 GEMBA-MQM vs human MQM folder, for the baseline reference figures.
    """

    model_config = ConfigDict(extra="forbid")
    items: Path | None = None
    mqm_sample: MQMSample | None = None
    rubric: str = "localisation_errors"
    prompt: Annotated[str, AfterValidator(prompt_variant("localisation/errors."))] = "default"
    source_lang: str = "the source language"
    target_lang: str = "the target language"
    use_reference: bool = True
    human_mqm: Path | None = None
    gemba_dir: Path | None = None

    @model_validator(mode="after")
    def _one_source(self) -> ErrorsOptions:
        if (self.items is None) == (self.mqm_sample is None):
            raise ValueError("give exactly one of 'items' and 'mqm_sample'")
        if self.human_mqm is None and self.mqm_sample is not None:
            self.human_mqm = self.mqm_sample.tsv
        return self
