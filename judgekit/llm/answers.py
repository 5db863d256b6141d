"""Field types of judge answers: the one rule by which a judge's true/false is read.

Every boolean in every output schema is an :data:`AnswerBool` (``output_format`` refuses a
schema with a plain ``bool``, whose pydantic lax mode would read ``"yes"``, ``"on"``, ``"1"`` or
``1`` as true without a word). An :data:`AnswerBool` accepts:

* a JSON ``true`` / ``false``;
* a JSON string that, once surrounding whitespace is stripped and case folded, is exactly
  ``true`` or ``false`` (``" true\\n"``, ``"False"``): such an answer is unambiguous, so it is read,
  and the normalisation is noted (:func:`start_noting`; the record's ``normalised`` field
  counts the values, ``usage.normalised`` in ``summary.json`` the records).

Everything else is rejected (re-asked, then ``unscored``), because it is ambiguous for some
question a judge answers: ``"yes"``/``"no"`` (is ``"no_errors": "no"`` "no errors" or "no, there
are errors"?), ``1``/``0``/``"1"`` (a count or an index: ``"no_errors": 0`` reads as "zero
errors"), ``"t"``, ``"y"``, ``"on"``, ``"maybe"``, ``null``, and the JSON text of a boolean
with other characters in it (``"true."``).
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, StrictBool
from pydantic_core import PydanticCustomError

_NORMALISED: ContextVar[list[str] | None] = ContextVar("judgekit_normalised", default=None)
_SPELLINGS = {"true": True, "false": False}


def _answer_bool(value: Any) -> Any:
    """JSON booleans pass; a string spelling one after strip + casefold becomes it (noted);
    anything else is rejected with a message the re-ask shows the model."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = value.strip().casefold()
        if word in _SPELLINGS:
            log = _NORMALISED.get()
            if log is not None:
                log.append(value)
            return _SPELLINGS[word]
    raise PydanticCustomError(
        "answer_bool", "expected JSON true or false, got {got}", {"got": repr(value)[:40]}
    )


AnswerBool = Annotated[StrictBool, BeforeValidator(_answer_bool)]
"""A judge's boolean (module docstring); its JSON Schema is ``{"type": "boolean"}``."""


def start_noting() -> list[str]:
    """Start a fresh log of the raw strings :data:`AnswerBool` fields read as booleans, in
    this asyncio task (or thread) only, and return it; it collects until the next call."""
    log: list[str] = []
    _NORMALISED.set(log)
    return log


def lax_bool_fields(schema: type[BaseModel]) -> bool:
    """True when ``schema`` (nested models included) has a boolean that is not strict, i.e. a
    plain ``bool`` rather than :data:`AnswerBool` or ``StrictBool``."""

    def walk(node: Any) -> bool:
        if isinstance(node, dict):
            if node.get("type") == "bool" and not node.get("strict"):
                return True
            return any(walk(v) for v in node.values())
        if isinstance(node, (list, tuple)):
            return any(walk(v) for v in node)
        return False

    return walk(schema.__pydantic_core_schema__)
