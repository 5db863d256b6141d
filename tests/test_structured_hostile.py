"""Hostile answers to :func:`judgekit.llm.structured.parse_answer`: nothing but
:class:`InvalidAnswer` escapes it, and ``off_schema`` (the "does not follow the JSON schema"
warning's test) stays right where Python's JSON reader or jsonschema cannot follow pydantic:
an integer of more digits than Python converts, brackets nested past the recursion limit,
NaN (no JSON: no server following a schema sends it), a pattern in Rust's regex syntax that
Python's ``re`` cannot compile, and a pattern Python's backtracking ``re`` takes exponential
time on (pydantic's Rust engine answers at once)."""

from __future__ import annotations

import time
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from judgekit.llm.structured import InvalidAnswer, parse_answer


class Scored(BaseModel):
    kind: Literal["x", "y"]
    score: float = Field(ge=0, le=1)
    anything: Any = None


class Letters(BaseModel):
    word: str = Field(pattern=r"^\p{L}+$")  # Rust regex: a Unicode class Python's re lacks


class Nested(BaseModel):
    word: str = Field(pattern=r"^(a+)+$")  # nested quantifiers: exponential for Python's re


def _refused(raw: str, schema: type[BaseModel]) -> InvalidAnswer:
    with pytest.raises(InvalidAnswer) as caught:
        parse_answer(raw, schema, "stop")
    return caught.value


@pytest.mark.parametrize(
    "raw",
    [
        '{"kind": "x", "score": ' + "9" * 5000 + "}",  # a looping model's digits
        "Answer: " + "[" * 5000 + "]" * 5000,
        "[" * 5000,
        '{"kind": "x", "score": 0.5, "anything": ' + "[" * 5000 + "]" * 5000 + "}",
        '{"kind": "x", "note": "a\tb", "score": ' + "9" * 5000 + "}",  # the lax re-read
    ],
    ids=["long_int", "deep_after_prose", "deep_unclosed", "deep_inside", "long_int_tab"],
)
def test_only_invalid_answer_escapes(raw: str) -> None:
    refused = _refused(raw, Scored)
    assert refused.reason.startswith(("malformed_json", "schema")), refused.reason
    assert refused.off_schema


def test_nan_is_off_the_json_schema() -> None:
    refused = _refused('{"kind": "x", "score": NaN}', Scored)
    assert refused.reason.startswith("schema") and refused.off_schema


def test_a_rust_pattern_python_cannot_compile() -> None:
    refused = _refused('{"word": "1"}', Letters)
    assert "pattern" in refused.reason and refused.off_schema
    assert parse_answer('{"word": "été"}', Letters, "stop").word == "été"


@pytest.mark.timeout(20)  # before: hours (2^40 backtracking steps)
def test_a_pattern_python_backtracks_on_is_checked_at_once() -> None:
    start = time.perf_counter()
    refused = _refused('{"word": "' + "a" * 40 + 'b"}', Nested)
    assert refused.off_schema and time.perf_counter() - start < 2.0


class LookAhead(BaseModel):
    model_config = {"regex_engine": "python-re"}
    word: str = Field(pattern=r"^(?!no)\w+$")  # a look-ahead: Python's re only


def test_a_python_re_pattern_is_read_as_the_model_reads_it() -> None:
    assert _refused('{"word": "nothing"}', LookAhead).off_schema
    assert parse_answer('{"word": "yes"}', LookAhead, "stop").word == "yes"
