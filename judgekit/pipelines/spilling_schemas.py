"""Output schemas of the language-spilling stages (paper 002, §3.2-3.3 and appendix A).

* ``MeaningsAnswer``: exactly 5 distinct meanings, 3 usage examples each. The paper's prompt asks
  for ``{meaning: [examples], ...}``; that form is accepted and normalised to the list form that
  servers can enforce with constrained decoding.
* ``judge_schema(n)``: exactly ``n`` booleans, one per meaning, in order (true = attested in the
  dictionary). The paper's judge answers a bare JSON list; that form is accepted too.
* ``translation_schema(n)``: exactly ``n`` English renderings of rejected meanings (back-check).
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, create_model, model_validator

from judgekit.llm.answers import AnswerBool

N_MEANINGS = 5
N_EXAMPLES = 3

NonEmpty = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class Meaning(BaseModel):
    """One generated meaning with exactly 3 usage examples."""

    model_config = ConfigDict(extra="forbid")
    meaning: NonEmpty
    examples: list[NonEmpty] = Field(min_length=N_EXAMPLES, max_length=N_EXAMPLES)


class MeaningsAnswer(BaseModel):
    """Exactly 5 meanings whose texts are pairwise distinct (case- and space-insensitive)."""

    model_config = ConfigDict(extra="forbid")
    meanings: list[Meaning] = Field(min_length=N_MEANINGS, max_length=N_MEANINGS)

    @model_validator(mode="before")
    @classmethod
    def _paper_form(cls, data: Any) -> Any:
        # {"meaning text": ["ex1", "ex2", "ex3"], ...} -> {"meanings": [{...}, ...]}
        paper_form = isinstance(data, dict) and data and "meanings" not in data
        if paper_form and all(isinstance(v, list) for v in data.values()):
            return {"meanings": [{"meaning": k, "examples": v} for k, v in data.items()]}
        return data

    @model_validator(mode="after")
    def _distinct(self) -> MeaningsAnswer:
        seen: set[str] = set()
        for m in self.meanings:
            norm = " ".join(m.meaning.casefold().split())
            if norm in seen:
                raise ValueError(f"meanings are not distinct: '{m.meaning}' is repeated")
            seen.add(norm)
        return self

    def as_query(self) -> dict[str, list[str]]:
        """The paper's ``{meaning: [examples]}`` form, as shown to the judge."""
        return {m.meaning: list(m.examples) for m in self.meanings}


class _Bare(BaseModel):
    @model_validator(mode="before")
    @classmethod
    def _bare_list(cls, data: Any) -> Any:
        if isinstance(data, list):
            return {cls._field: data}  # type: ignore[attr-defined]
        return data


@cache
def judge_schema(n: int = N_MEANINGS) -> type[BaseModel]:
    """Schema ``{"valid": [bool] * n}`` (a bare JSON list of n booleans is accepted too; each
    boolean read by :data:`judgekit.llm.answers.AnswerBool`)."""
    model = create_model(
        f"Judgment{n}",
        __base__=_Bare,
        valid=(list[AnswerBool], Field(min_length=n, max_length=n)),
    )
    model._field = "valid"  # type: ignore[attr-defined]
    return model


@cache
def translation_schema(n: int) -> type[BaseModel]:
    """Schema ``{"translations": [str] * n}`` for the English back-check."""
    model = create_model(
        f"Translations{n}",
        __base__=_Bare,
        translations=(list[NonEmpty], Field(min_length=n, max_length=n)),
    )
    model._field = "translations"  # type: ignore[attr-defined]
    return model
