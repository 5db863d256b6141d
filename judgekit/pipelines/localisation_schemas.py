"""Typed inputs and outputs of the localisation pipelines (Cultivar, arXiv 2608.09766).

* Inputs: :class:`SourcePair` (``localise``: id, source, english) and :class:`SegmentItem`
  (``errors``: a segment to judge), read from JSONL/TSV by :func:`read_records` with errors that
  name the file, line and field.
* ``localise`` answer: :class:`LocalisedPair`, checked against its input pair (set in
  :data:`PAIR_CHECKS`; the checks are listed in :mod:`judgekit.pipelines.localise`).
* ``errors`` typology: :class:`Rubric` from ``rubrics/<name>.yaml`` (:func:`load_rubric`), and
  the judge's answer ``{"no_errors": bool, "errors": [{"quote", "occurrence"?, "type",
  "severity"}]}`` (:func:`annotation_schema`); with the segment's texts in
  :data:`SEGMENT_TEXTS`, every quote is located (:func:`locate`) at validation time, so an
  invalid answer triggers the llm layer's bounded re-ask, then the segment is unscored.

The per-call values travel in context variables rather than per-call schema classes: one class
per schema keeps the llm layer's per-schema caches small (a class costs ~15 KB and ~4 ms) and the
cache keys identical across items. A context variable is private to its asyncio task.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    create_model,
    model_validator,
)

from judgekit.data import resolve_path
from judgekit.data.digest import file_sha256
from judgekit.data.rubrics import read_rubric
from judgekit.data.tables import read_table
from judgekit.errors import InputError
from judgekit.llm.answers import AnswerBool

_SENTENCE_END = re.compile(r"[.!?]+[\"'”’»)\]]*(?=\s|$)|[。！？]+[」』”’）]*|[।॥]+")


def read_records(path: str | Path, model: type[BaseModel]) -> list[Any]:
    """Read a JSONL file (one object a line) or a TSV file (header first; ``"`` is text) into
    ``model`` rows (:func:`judgekit.data.tables.read_table`).

    Raises:
        InputError: missing file, bad JSON, a row that does not validate (names file, 1-based
            line and field), or a repeated ``id``.
    """
    path = resolve_path(path)
    if not path.is_file():
        raise InputError(path, "file not found")
    table = read_table(path, what="input files", default="jsonl", tsv_quotes=False)
    rows = table.rows
    if table.format != "jsonl":  # an empty cell is a field left out
        rows = [(n, {k: v for k, v in row.items() if v != ""}) for n, row in rows]
    out, seen = [], set()
    for number, data in rows:
        try:
            item = model.model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or None
            raise InputError(path, err["msg"], line=number, field=field) from None
        if item.id in seen:
            raise InputError(path, f"id '{item.id}' is repeated", line=number, field="id")
        seen.add(item.id)
        out.append(item)
    return out


def sha256_file(path: Path) -> str | None:
    """First 16 hex digits of the file's SHA-256, or None if it does not exist."""
    return file_sha256(path, 16) if path.is_file() else None


class SourcePair(BaseModel):
    """One input pair: ``id``, the ``source`` sentence(s) and their ``english`` translation."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)
    id: str = Field(min_length=1)
    source: str = Field(min_length=1)
    english: str = Field(min_length=1)


class SegmentItem(BaseModel):
    """One segment to judge. ``system``/``doc``/``seg_id`` identify it in MQM data; language
    names (``Chinese``) and ``locale`` (``zho_Hans_China``) are shown to the judge."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)
    id: str = Field(min_length=1)
    source: str = Field(min_length=1)
    translation: str = Field(min_length=1)
    reference: str | None = None
    locale: str | None = None
    system: str = "system"
    doc: str = ""
    seg_id: str = ""
    source_lang: str | None = None
    target_lang: str | None = None


def count_sentences(text: str) -> int:
    """Sentences in ``text`` (>= 1 for non-empty text): runs of ``. ! ?`` followed by a space or
    the end (closing quotes and brackets allowed in between), runs of ``。！？`` or ``। ॥``,
    plus one for a trailing fragment without such a mark. "Dr." counts as an end."""
    text = text.strip()
    if not text:
        return 0
    ends = list(_SENTENCE_END.finditer(text))
    return len(ends) + (0 if ends and ends[-1].end() == len(text) else 1)


@dataclass(frozen=True)
class PairChecks:
    """What a localised pair is checked against: the ``original`` sides (``source``,
    ``target``), the language ``names`` of the sides, the length bound ``max_ratio`` (0 = off)
    and whether sentence counts must match."""

    original: dict[str, str]
    names: dict[str, str]
    max_ratio: float = 2.0
    check_sentences: bool = True


PAIR_CHECKS: ContextVar[PairChecks | None] = ContextVar("pair_checks", default=None)


class LocalisedPair(BaseModel):
    """The answer: the localised ``source`` and ``target`` (English) sentences. Non-empty
    always; checked against the pair in :data:`PAIR_CHECKS` when one is set (see
    :func:`checking`)."""

    model_config = ConfigDict(extra="forbid")
    source: str = Field(description="the localised source-language sentence(s)")
    target: str = Field(description="the localised English sentence(s), parallel to source")

    @model_validator(mode="after")
    def _checks(self) -> LocalisedPair:
        checks = PAIR_CHECKS.get()
        names = checks.names if checks else {}
        for side in ("source", "target"):
            name, other = names.get(side, ""), names.get(_other(side), "")
            value = _strip_label(getattr(self, side), name)
            if not value:
                raise ValueError(f"{side} is empty")
            if other and re.search(rf"(^|\n)\s*{re.escape(other)}\s*:", value):
                raise ValueError(f"{side} also holds the {other} sentence; give each side alone")
            if value != getattr(self, side):
                setattr(self, side, value)
            original = checks.original.get(side) if checks else None
            if not original:
                continue
            n_new, n_old = count_sentences(value), count_sentences(original)
            if checks.check_sentences and n_new != n_old:  # type: ignore[union-attr]
                raise ValueError(f"{side} has {n_new} sentences, the original has {n_old}")
            ratio, r = len(value) / len(original), checks.max_ratio  # type: ignore[union-attr]
            if r and not 1 / r <= ratio <= r:
                raise ValueError(f"{side} is {ratio:.2f} times the original length (max {r:g})")
        return self


def _other(side: str) -> str:
    return "target" if side == "source" else "source"


def _strip_label(text: str, name: str) -> str:
    text = text.strip()
    if name and text.lower().startswith(name.lower() + ":"):
        text = text[len(name) + 1 :].strip()
    return text


@contextmanager
def checking(var: ContextVar[Any], value: Any) -> Iterator[None]:
    """Set ``var`` to ``value`` for the ``with`` block (per asyncio task: each task has its
    own copy of the context, so concurrent calls never see each other's texts)."""
    token = var.set(value)
    try:
        yield
    finally:
        var.reset(token)


SEVERITIES = ("minor", "major", "critical")
NonEmpty = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class TypeExample(BaseModel):
    """An example error: ``quote`` must occur in ``translation`` (or ``source``)."""

    model_config = ConfigDict(extra="forbid")
    source: str
    translation: str
    quote: str


class ErrorType(BaseModel):
    """One error type of the rubric (see the header of the YAML file for the fields)."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=r"^[A-Z]{2,4}$")
    name: str
    group: Literal["locale-specific", "general"]
    definition: str
    mqm_category: str
    quote_from: Literal["translation", "source"] = "translation"
    example: TypeExample

    @model_validator(mode="after")
    def _example_quote(self) -> ErrorType:
        if self.example.quote not in getattr(self.example, self.quote_from):
            raise ValueError(f"type {self.id}: example quote is not in its {self.quote_from}")
        return self


class SeverityLevel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: Literal["minor", "major", "critical"]
    definition: str


class Rubric(BaseModel):
    """The error typology: types (unique ids) and severity definitions; ``hash`` is the first
    12 hex digits of the SHA-256 of the YAML text."""

    model_config = ConfigDict(extra="forbid")
    id: str
    version: int
    source: str
    severities: list[SeverityLevel]
    types: list[ErrorType] = Field(min_length=1)
    hash: str = ""

    @model_validator(mode="after")
    def _unique(self) -> Rubric:
        ids = [t.id for t in self.types]
        if len(set(ids)) != len(ids):
            raise ValueError(f"type ids are repeated: {ids}")
        return self

    def get_type(self, type_id: str) -> ErrorType:
        """The type with this id.

        Raises:
            KeyError: no such type.
        """
        for t in self.types:
            if t.id == type_id:
                return t
        raise KeyError(f"no error type '{type_id}' in rubric {self.id}")

    def ids(self, group: str | None = None) -> list[str]:
        return [t.id for t in self.types if group is None or t.group == group]


@cache
def load_rubric(name: str = "localisation_errors") -> Rubric:
    """Load ``rubrics/<name>.yaml`` (or a path to a YAML file).

    Raises:
        InputError: file missing, not YAML, or not a valid rubric (naming the field).
    """
    return read_rubric(name, Rubric)


class QuoteError(ValueError):
    """A quote that cannot be located unambiguously in its text."""


def occurrences(text: str, quote: str) -> list[int]:
    """Start offsets of every (possibly overlapping) occurrence of ``quote`` in ``text``."""
    starts, pos = [], text.find(quote)
    while pos != -1 and quote:
        starts.append(pos)
        pos = text.find(quote, pos + 1)
    return starts


def locate(
    text: str, quote: str, occurrence: int | None = None, side: str = "translation"
) -> tuple[int, int]:
    """Character offsets ``(start, end)`` of ``quote`` in ``text`` (end exclusive), so that
    ``text[start:end] == quote``.

    Args:
        occurrence: which occurrence (1-based) when the quote occurs several times.

    Raises:
        QuoteError: the quote is absent, occurs several times and ``occurrence`` is None, or
            ``occurrence`` is out of range.
    """
    starts = occurrences(text, quote)
    if not starts:
        raise QuoteError(f"quote {quote!r} is not in the {side}; copy it exactly")
    if occurrence is None:
        if len(starts) > 1:
            raise QuoteError(
                f"quote {quote!r} occurs {len(starts)} times in the {side}; "
                f"give occurrence 1..{len(starts)} or a longer quote"
            )
        occurrence = 1
    if not 1 <= occurrence <= len(starts):
        raise QuoteError(f"quote {quote!r} occurs {len(starts)} times, not {occurrence}")
    start = starts[occurrence - 1]
    return start, start + len(quote)


def _consistency(schema: dict[str, Any]) -> None:
    """Add to the JSON schema what the validator checks: ``anyOf`` {no_errors: true, errors:
    []} | {no_errors: false, errors: [>= 1]}, so constrained decoders (llama.cpp, vLLM) cannot
    emit an inconsistent answer; ``properties`` stay for servers that ignore ``anyOf``."""
    props = schema.get("properties", {})
    if "errors" not in props:
        return
    branches = []
    for flag, bound in ((True, {"maxItems": 0}), (False, {"minItems": 1})):
        errors = {**props["errors"], **bound}
        branches.append({"type": "object", "additionalProperties": False,
                         "properties": {"no_errors": {"const": flag}, "errors": errors},
                         "required": ["no_errors", "errors"]})  # fmt: skip
    schema["anyOf"] = branches


SEGMENT_TEXTS: ContextVar[dict[str, str] | None] = ContextVar("segment_texts", default=None)


class _Annotation(BaseModel):
    """Base of the judge's answer schema. Quotes are located in the texts of
    :data:`SEGMENT_TEXTS` (``{"source": ..., "translation": ...}``) when set (see
    :func:`checking`); ``sides`` maps each type id to the text it is quoted from."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_consistency)
    sides: ClassVar[dict[str, str]] = {}

    @model_validator(mode="after")
    def _consistent(self) -> _Annotation:
        errors = self.errors  # type: ignore[attr-defined]
        if self.no_errors and errors:  # type: ignore[attr-defined]
            raise ValueError("no_errors is true but errors are listed; make them agree")
        if not self.no_errors and not errors:  # type: ignore[attr-defined]
            raise ValueError("no_errors is false but no error is listed; list them or say true")
        texts = SEGMENT_TEXTS.get()
        for err in errors if texts else []:
            side = self.sides.get(err.type, "translation")
            locate(texts[side], err.quote, err.occurrence, side)  # type: ignore[index]
        return self


_SCHEMAS: dict[str, type[BaseModel]] = {}


def annotation_schema(rubric: Rubric) -> type[BaseModel]:
    """``{"no_errors": bool, "errors": [{"quote", "occurrence", "type", "severity"}]}`` with
    ``type`` restricted to the rubric's ids (one class per rubric text); quotes are located
    while :data:`SEGMENT_TEXTS` is set."""
    if rubric.hash in _SCHEMAS:
        return _SCHEMAS[rubric.hash]
    error = create_model(
        "JudgedError",
        __config__=ConfigDict(extra="forbid"),
        quote=(NonEmpty, Field(description="the erroneous words, copied exactly")),
        occurrence=(int | None, Field(None, ge=1, description="1-based, if the quote repeats")),
        type=(Literal[tuple(rubric.ids())], ...),  # type: ignore[valid-type]
        severity=(Literal[SEVERITIES], ...),  # type: ignore[valid-type]
    )
    schema = create_model(
        "ErrorAnnotation",
        __base__=_Annotation,
        no_errors=(AnswerBool, ...),
        errors=(list[error], ...),  # type: ignore[valid-type]
    )
    schema.sides = {t.id: t.quote_from for t in rubric.types}
    _SCHEMAS[rubric.hash] = schema
    return schema
