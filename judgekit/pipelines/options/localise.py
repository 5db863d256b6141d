"""Options of the ``localise`` pipeline: the ``localise:`` section of a run config."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from judgekit.prompts import prompt_variant


class LocaliseOptions(BaseModel):
    """Options of the ``localise`` pipeline (the ``localise:`` config section).

    Attributes:
        input: JSONL/TSV of ``id, source, english`` (or use ``source_file`` + ``english_file``).
        source_file, english_file: line-aligned text files (UTF-8, one segment a line).
        locales: target locale ids, e.g. ``[deu_Latn_Germany]``; each pair is localised to each.
        source_name: name of the source language in the prompt (default: from the locale).
        target_name: name of the target language (the paper's pairs are X-English).
        location: location in the prompt (default: from the locale id), for every locale.
        prompt: prompt id under ``prompts/`` (default: the paper's Figure 4).
        max_length_ratio: length bound r per side (module docstring); 0 disables.
        check_sentences: require each side to keep its original's sentence count.
    """

    model_config = ConfigDict(extra="forbid")
    input: Path | None = None
    source_file: Path | None = None
    english_file: Path | None = None
    locales: list[str] = Field(min_length=1)
    source_name: str | None = None
    target_name: str = "English"
    location: str | None = None
    prompt: Annotated[str, AfterValidator(prompt_variant(""))] = "localisation/localise"
    max_length_ratio: float = Field(2.0, ge=0)
    check_sentences: bool = True

    @model_validator(mode="after")
    def _one_input(self) -> LocaliseOptions:
        aligned = self.source_file is not None and self.english_file is not None
        if (self.input is None) == (not aligned) or (self.source_file is None) != (
            self.english_file is None
        ):
            raise ValueError("give either 'input' or both 'source_file' and 'english_file'")
        return self
