"""Options of the ``spilling`` pipeline (paper 002): the ``spilling:`` section of a run config."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from judgekit.prompts import prompt_variant

SPILLING_LANGUAGES = ["ru", "fr", "zh", "ja", "it", "de", "pt", "es", "hi"]


class SpillingOptions(BaseModel):
    """Options of the language-spilling pipeline (paper 002, §3).

    Attributes:
        languages: ISO 639-1 codes of the target languages.
        words: English source words to use (None = ``dictionaries/words.txt``, in order).
        meanings_prompt: prompt family for generation (``spilling/meanings.<lang>``).
        translations: ``table`` (``dictionaries/translations.tsv``, each row with its source) or
            ``model`` (the ``translator`` role translates the words with the paper's prompt,
            appendix A.2, as a first stage; saved to ``translations.model.tsv``).
        judge_prompt: judge prompt variant (``prompts/spilling/judge.<name>.txt``).
        backcheck: run the English back-check on rejected meanings (paper §5).
        samples: generations per (word, language, model).
    """

    model_config = ConfigDict(extra="forbid")
    languages: list[str] = Field(default_factory=lambda: list(SPILLING_LANGUAGES))
    words: list[str] | None = None
    translations: Literal["table", "model"] = "table"
    judge_prompt: Annotated[str, AfterValidator(prompt_variant("spilling/judge."))] = "default"
    backcheck: bool = True
    samples: int = Field(1, ge=1, le=20)

    @field_validator("languages", "words")
    @classmethod
    def _unique_non_empty(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return value
        if not value:
            raise ValueError("must not be empty (leave it out to use the default)")
        repeated = sorted({v for v in value if value.count(v) > 1})
        if repeated:
            raise ValueError(f"repeated entries {repeated}")
        return value
