"""Output schemas of the spilling stages reject what the paper excludes (paper 002, §3.2-3.4)."""

from __future__ import annotations

import pytest

from judgekit.llm.client import InvalidAnswer, parse_answer
from judgekit.pipelines.spilling_schemas import MeaningsAnswer, judge_schema, translation_schema


def meanings(n: int, *, examples: int = 3, dup: bool = False) -> dict:
    names = [f"sense {i}" for i in range(n)]
    if dup:
        names[-1] = " SENSE  0 "
    return {"meanings": [{"meaning": m, "examples": ["a", "b", "c"][:examples]} for m in names]}


def test_five_distinct_meanings_with_three_examples_validate() -> None:
    answer = MeaningsAnswer.model_validate(meanings(5))
    assert [m.meaning for m in answer.meanings] == [f"sense {i}" for i in range(5)]
    assert answer.as_query()["sense 2"] == ["a", "b", "c"]


@pytest.mark.parametrize("n", [4, 6])
def test_four_or_six_meanings_are_rejected(n: int) -> None:
    with pytest.raises(ValueError, match="at (least|most) 5"):
        MeaningsAnswer.model_validate(meanings(n))


def test_duplicate_meanings_are_rejected_case_and_space_insensitively() -> None:
    with pytest.raises(ValueError, match="not distinct"):
        MeaningsAnswer.model_validate(meanings(5, dup=True))


def test_two_examples_are_rejected() -> None:
    with pytest.raises(ValueError, match="at least 3"):
        MeaningsAnswer.model_validate(meanings(5, examples=2))


def test_paper_form_is_normalised() -> None:
    paper = {f"m{i}": ["x", "y", "z"] for i in range(5)}
    answer = MeaningsAnswer.model_validate(paper)
    assert answer.as_query() == paper


def test_judgment_needs_exactly_n_booleans() -> None:
    schema = judge_schema(5)
    assert schema.model_validate({"valid": [True, False, True, True, False]}).valid[1] is False
    assert schema.model_validate([True] * 5).valid == [True] * 5  # the paper's bare list
    with pytest.raises(ValueError):
        schema.model_validate([True] * 4)
    with pytest.raises(ValueError):
        schema.model_validate({"valid": ["maybe"] * 5})
    assert judge_schema(2).model_json_schema()["properties"]["valid"]["maxItems"] == 2


def test_translation_schema_counts() -> None:
    assert translation_schema(2).model_validate(["a", "b"]).translations == ["a", "b"]
    with pytest.raises(ValueError):
        translation_schema(2).model_validate({"translations": ["a", " "]})


def test_parse_answer_never_maps_failures_to_a_label() -> None:
    schema = judge_schema(5)
    with pytest.raises(InvalidAnswer, match="^malformed_json"):
        parse_answer('{"valid": [true, fal', schema, "stop")
    with pytest.raises(InvalidAnswer, match="^schema"):
        parse_answer('{"answer": "yes"}', schema, "stop")
    with pytest.raises(InvalidAnswer, match="^truncated"):
        parse_answer('{"valid": [true, true, true, true, true]}', schema, "length")
    with pytest.raises(InvalidAnswer, match="^empty"):
        parse_answer("  ", schema, "stop")
    fenced = '```json\n{"valid": [true, false, true, false, true]}\n```'
    assert parse_answer(fenced, schema, "stop").valid == [True, False, True, False, True]
