"""The CS/CA rubric as data, the judge prompt rendered from it, and the judge's answer schema.

Paper 001 (annotation pipeline), after Global-MMLU (Singh et al. 2024, Sec. 3): per item the
judge gives the required knowledge (``none``, ``cultural``, ``regional``, ``dialect``), whether
the answer is time-sensitive, an explicit CS/CA label, the subject category, evidence quoted from
the item and a short rationale.

* :func:`load_rubric` reads ``rubrics/<name>.yaml`` (or a YAML path) into a :class:`Rubric`.
* :func:`annotate_prompt` fills ``prompts/cultural/annotate.<variant>.txt`` with the rubric, so
  the prompt's hash covers the rubric: editing a definition changes every cache key.
* :func:`annotation_schema` builds the pydantic answer model from the rubric's values;
  :func:`bind_item` attaches one item's text, so that (``strict``) the answer must follow the CS
  rule and quote its evidence from the item, or be re-asked.
"""

from __future__ import annotations

import unicodedata
from functools import cache
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    create_model,
    model_validator,
)

from judgekit.data.rubrics import read_rubric
from judgekit.prompts import Prompt, fill_placeholders, load_prompt

MAX_EVIDENCE = 3
MAX_QUOTE_CHARS = 100
MAX_RATIONALE_CHARS = 200

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class KnowledgeExample(BaseModel):
    """An example question and the evidence quotes a judge should give (each in the question)."""

    model_config = ConfigDict(extra="forbid")
    question: Text
    evidence: list[Text] = Field(default_factory=list)

    @model_validator(mode="after")
    def _quotes_in_question(self) -> KnowledgeExample:
        for quote in self.evidence:
            if normalise(quote) not in normalise(self.question):
                raise ValueError(f"example quote {quote!r} is not in its question")
        return self


class KnowledgeValue(BaseModel):
    """One required-knowledge value: ``cs`` is the CS/CA label it implies."""

    model_config = ConfigDict(extra="forbid")
    id: Text
    cs: Literal["CS", "CA"]
    definition: Text
    span_label: str | None = None
    example: KnowledgeExample


class TimeValue(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: Text
    definition: Text
    example: Text


class CSValue(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: Literal["CS", "CA"]
    definition: Text


class CSLabels(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rule: Text
    values: list[CSValue] = Field(min_length=2, max_length=2)


class Category(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: Text
    definition: Text
    subjects: list[str] = Field(default_factory=list)


class Rubric(BaseModel):
    """The CS/CA schema (see the header of ``rubrics/cultural_sensitivity.yaml``).

    ``hash`` is the first 12 hex digits of the SHA-256 of the YAML text (set by the loader).
    """

    model_config = ConfigDict(extra="forbid")
    id: Text
    version: int
    source: Text
    required_knowledge: list[KnowledgeValue] = Field(min_length=2)
    time_sensitive: list[TimeValue] = Field(min_length=2)
    cs_labels: CSLabels
    subject_categories: list[Category] = Field(min_length=1)
    hash: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> Rubric:
        for name, ids in (
            ("required_knowledge", self.knowledge_ids()),
            ("time_sensitive", self.time_ids()),
            ("subject_categories", self.category_ids()),
        ):
            if len(set(ids)) != len(ids):
                raise ValueError(f"{name}: ids are repeated: {ids}")
        if {v.cs for v in self.required_knowledge} != {"CS", "CA"}:
            raise ValueError("required_knowledge must map some value to CS and some to CA")
        return self

    def knowledge_ids(self) -> list[str]:
        return [v.id for v in self.required_knowledge]

    def time_ids(self) -> list[str]:
        return [v.id for v in self.time_sensitive]

    def category_ids(self) -> list[str]:
        return [c.id for c in self.subject_categories]

    def vocabulary(self) -> dict[str, list[str]]:
        """question -> the values this rubric allows (``cs_label``, ``required_knowledge``,
        ``time_sensitive``): the declared label sets of the judge-vs-human label check
        (:mod:`judgekit.labels.overlap`)."""
        return {
            "cs_label": [v.id for v in self.cs_labels.values],
            "required_knowledge": self.knowledge_ids(),
            "time_sensitive": self.time_ids(),
        }

    def cs_of(self, knowledge: str) -> str:
        """The CS/CA label a required-knowledge value implies (the rubric's rule).

        Raises:
            KeyError: not a value of the rubric.
        """
        for value in self.required_knowledge:
            if value.id == knowledge:
                return value.cs
        raise KeyError(f"no required-knowledge value '{knowledge}' in rubric {self.id}")


@cache
def load_rubric(name: str = "cultural_sensitivity") -> Rubric:
    """Load ``rubrics/<name>.yaml`` (or a path ending in .yaml/.yml).

    Raises:
        InputError: file missing, not YAML, or not a valid rubric (naming the field).
    """
    return read_rubric(name, Rubric)


def _quoted(quotes: list[str]) -> str:
    return "[" + ", ".join(f'"{q}"' for q in quotes) + "]"


def render_rubric(rubric: Rubric) -> dict[str, str]:
    """The rubric as prompt blocks, one per placeholder a template may use.

    Keys: ``knowledge`` (values with definitions and examples), ``knowledge_brief`` (without
    examples), ``time_sensitive`` / ``time_sensitive_brief``, ``cs_rule`` (the rule and the
    two labels), ``categories`` (with typical subjects) / ``categories_brief`` (ids only).
    """
    knowledge, brief = [], []
    for v in rubric.required_knowledge:
        brief.append(f"- {v.id} (-> {v.cs}): {v.definition}")
        ex = v.example
        knowledge.append(
            f"- {v.id} (-> {v.cs}): {v.definition}\n"
            f'  Example: "{ex.question}" -> evidence {_quoted(ex.evidence)}'
        )
    time_full = [f'- {t.id}: {t.definition} Example: "{t.example}"' for t in rubric.time_sensitive]
    time_brief = [f"- {t.id}: {t.definition}" for t in rubric.time_sensitive]
    cs = [rubric.cs_labels.rule] + [f"- {v.id}: {v.definition}" for v in rubric.cs_labels.values]
    categories = []
    for c in rubric.subject_categories:
        typical = f" (e.g. {', '.join(c.subjects)})" if c.subjects else ""
        categories.append(f"- {c.id}: {c.definition}{typical}")
    return {
        "knowledge": "\n".join(knowledge),
        "knowledge_brief": "\n".join(brief),
        "time_sensitive": "\n".join(time_full),
        "time_sensitive_brief": "\n".join(time_brief),
        "cs_rule": "\n".join(cs),
        "categories": "\n".join(categories),
        "categories_brief": ", ".join(rubric.category_ids()),
    }


def annotate_prompt(variant: str, rubric: Rubric) -> Prompt:
    """``prompts/cultural/annotate.<variant>.txt`` with the rubric filled in.

    The returned Prompt's text holds the rubric, so its hash changes with it; the per-item
    placeholders (``$language``, ``$question``...) are left for :meth:`Prompt.render`. A
    literal ``$`` in the rubric is escaped for that second rendering.

    Raises:
        JudgekitError: no such prompt variant.
    """
    template = load_prompt(f"cultural/annotate.{variant}")
    return fill_placeholders(template, render_rubric(rubric))


def normalise(text: str) -> str:
    """Text as compared when locating a quote: NFKC, typographic quotes and dashes made plain,
    whitespace collapsed, case folded."""
    text = unicodedata.normalize("NFKC", text)
    text = text.translate(str.maketrans("‘’‚‛“”„‟–—", "''''\"\"\"\"--"))
    return " ".join(text.split()).casefold()


def quote_found(quote: str, item_text: str) -> bool:
    """True when ``quote`` occurs in ``item_text`` (after :func:`normalise`)."""
    return bool(quote.strip()) and normalise(quote) in normalise(item_text)


class _Annotation(BaseModel):
    """Base of the answer schema. ``rubric``, ``item_text`` and ``strict`` are bound per item
    (:func:`bind_item`); with ``strict`` an answer that breaks the CS rule, quotes evidence
    that is not in the item, or labels an item CS without evidence is invalid (re-asked)."""

    model_config = ConfigDict(extra="forbid")
    rubric: ClassVar[Rubric | None] = None
    item_text: ClassVar[str | None] = None
    strict: ClassVar[bool] = False
    label_field: ClassVar[str] = "cs_label"  # read by judgekit.llm.logprobs

    @model_validator(mode="after")
    def _follows_rubric(self) -> _Annotation:
        if not self.strict or self.rubric is None:
            return self
        data: dict[str, Any] = self.__dict__
        implied = self.rubric.cs_of(data["required_knowledge"])
        if data["cs_label"] != implied:
            raise ValueError(
                f"cs_label must be {implied} when required_knowledge is "
                f"'{data['required_knowledge']}' ({self.rubric.cs_labels.rule})"
            )
        if self.item_text is not None:
            for quote in data["evidence"]:
                if not quote_found(quote, self.item_text):
                    raise ValueError(f"evidence {quote!r} is not in the item; copy it exactly")
        if data["cs_label"] == "CS" and not data["evidence"]:
            raise ValueError("a CS item needs at least one evidence quote from the item")
        return self


_SCHEMAS: dict[tuple[tuple[str, ...], ...], type[BaseModel]] = {}


def annotation_schema(rubric: Rubric) -> type[BaseModel]:
    """``{"evidence": [str] (<= 3), "rationale": str, "required_knowledge": <id>,
    "time_sensitive": <id>, "cs_label": "CS"|"CA", "subject_category": <id>}``, the values
    restricted to the rubric's ids (as JSON-schema enums, which constrained decoding enforces);
    quotes at most 100 characters, the rationale at most 200."""
    quote = Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_QUOTE_CHARS)
    ]
    rationale = Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_RATIONALE_CHARS)
    ]
    key = (tuple(rubric.knowledge_ids()), tuple(rubric.time_ids()), tuple(rubric.category_ids()))
    if key in _SCHEMAS:
        return _SCHEMAS[key]
    _SCHEMAS[key] = create_model(
        "CulturalAnnotation",
        __base__=_Annotation,
        evidence=(list[quote], Field(max_length=MAX_EVIDENCE)),
        rationale=(rationale, ...),
        required_knowledge=(Literal[tuple(rubric.knowledge_ids())], ...),  # type: ignore[valid-type]
        time_sensitive=(Literal[tuple(rubric.time_ids())], ...),  # type: ignore[valid-type]
        cs_label=(Literal["CS", "CA"], ...),
        subject_category=(Literal[tuple(rubric.category_ids())], ...),  # type: ignore[valid-type]
    )
    return _SCHEMAS[key]


def bind_item(rubric: Rubric, item_text: str | None, *, strict: bool) -> type[BaseModel]:
    """The answer schema for one item: same JSON schema (and cache key), with the rubric and
    the item's text attached for the ``strict`` checks."""
    base = annotation_schema(rubric)
    namespace = {"rubric": rubric, "item_text": item_text, "strict": strict}
    return type("CulturalAnnotation", (base,), namespace)
