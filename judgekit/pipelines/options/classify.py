"""Options of the ``classify`` pipeline: the ``classify:`` section of a run config."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from judgekit.prompts import prompt_variant


class ClassifyOptions(BaseModel):
    """The ``classify:`` section of a run config.

    Attributes:
        items: JSONL file of items (relative to the config's folder, else to the current
            directory; or ``data:NAME/path``).
        id_field, text_field: the fields that hold an item's id and its text.
        labels: the label set (at least 2, distinct).
        task: the instruction shown to the judge (``$task`` in the prompt).
        prompt: template name, ``prompts/classify/<prompt>.txt``.
        rationale_max_chars: longest rationale accepted, in characters.
        samples: judgments per (item, judge) (deliberate repeats; not collapsed by the cache).
        few_shot: labelled examples shown before each item (item id of the items file -> its
            human label; :mod:`judgekit.pipelines.few_shot`), e.g. from ``calibrate tune``.
    """

    model_config = ConfigDict(extra="forbid")
    items: Path
    id_field: str = "id"
    text_field: str = "text"
    labels: list[str] = Field(min_length=2)
    task: str = "Classify the text into one of the labels."
    prompt: Annotated[str, AfterValidator(prompt_variant("classify/"))] = "default"
    rationale_max_chars: int = Field(300, ge=20, le=4000)
    samples: int = Field(1, ge=1, le=20)
    few_shot: dict[str, str] = Field(default_factory=dict)

    @field_validator("labels")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value) or any(not v.strip() for v in value):
            raise ValueError("labels must be distinct, non-empty strings")
        return value
