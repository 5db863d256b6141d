"""Judges' booleans: one strict rule for every schema; whitespace-padded "true"/"false" strings
are read and the normalisation recorded, anything ambiguous is still rejected (issue 12,
case 3)."""

from __future__ import annotations

import json

import pytest
from conftest import fault_spec as spec
from conftest import judge_task as task
from conftest import run_tasks as run
from pydantic import BaseModel

from judgekit.llm.answers import AnswerBool, lax_bool_fields, start_noting
from judgekit.llm.client import LLMClient
from judgekit.llm.structured import InvalidAnswer, output_format, parse_answer
from judgekit.pipelines import cultural_schemas, localisation_schemas
from judgekit.pipelines.classify import judgment_schema
from judgekit.pipelines.spilling_schemas import MeaningsAnswer, judge_schema, translation_schema
from judgekit.run_usage import usage_summary
from judgekit.runlog import RunLog


def test_padded_boolean_strings_are_read_and_noted() -> None:
    noted = start_noting()
    answer = '{"valid": [" true\\n", "False", true, "\\tfalse ", "TRUE"]}'
    assert parse_answer(answer, judge_schema(5), "stop").valid == [True, False, True, False, True]
    assert noted == [" true\n", "False", "\tfalse ", "TRUE"]  # the JSON booleans are not noted
    noted = start_noting()
    assert parse_answer('[" true", true, true, true, false]', judge_schema(5), "stop").valid[0]
    assert noted == [" true"]  # the paper's bare list form too


@pytest.mark.parametrize("value", ['"yes"', '"no"', "1", "0", '"1"', '"maybe"', "null",
                                   '"true."', '"t"', '"on"', '"tru e"'])  # fmt: skip
def test_ambiguous_booleans_are_still_rejected(value: str) -> None:
    with pytest.raises(InvalidAnswer, match="schema: valid.0: expected JSON true or false"):
        parse_answer(f'{{"valid": [{value}, true, true, true, true]}}', judge_schema(5), "stop")


def test_every_answer_schema_uses_the_one_rule_and_a_plain_bool_is_refused() -> None:
    errors = localisation_schemas.annotation_schema(localisation_schemas.load_rubric())
    rubric = cultural_schemas.load_rubric()
    schemas = [judge_schema(5), translation_schema(2), MeaningsAnswer, errors,
               judgment_schema(("a", "b"), 200), cultural_schemas.annotation_schema(rubric),
               cultural_schemas.bind_item(rubric, "text", strict=True)]  # fmt: skip
    assert not any(lax_bool_fields(s) for s in schemas)
    assert lax_bool_fields(errors) is False and "no_errors" in errors.model_fields
    noted = start_noting()
    parsed = parse_answer('{"no_errors": " True ", "errors": []}', errors, "stop")
    assert parsed.no_errors is True and noted == [" True "]  # the errors pipeline's field too

    class Plain(BaseModel):
        ok: bool  # pydantic's lax bool would read "yes" and 1 as true

    class Strict(BaseModel):
        ok: AnswerBool

    assert lax_bool_fields(Plain) and not lax_bool_fields(Strict)
    with pytest.raises(ValueError, match="plain bool field"):
        output_format(Plain, "json_schema")
    # the request's JSON Schema is unchanged, so cache keys of earlier runs still match
    assert Strict.model_json_schema()["properties"]["ok"] == {"title": "Ok", "type": "boolean"}


def test_a_judge_answering_padded_strings_is_scored_and_counted(server, tmp_path) -> None:
    padded = json.dumps({"valid": [" true\n", "false ", " TRUE", "false", "true"]})
    server.answer_fn = lambda request: padded if "pad" in request["messages"][-1]["content"] else (
        json.dumps({"valid": ["yes", "no", "yes", "no", "yes"]})
    )  # fmt: skip
    try:
        client = LLMClient(RunLog(tmp_path))
        ok, vague = run(client, task("p", "[[fault:ok]] pad", spec(server)),
                        task("v", "[[fault:ok]] vague", spec(server)))  # fmt: skip
    finally:
        server.answer_fn = None
    assert ok.status == "ok" and ok.parsed == {"valid": [True, False, True, False, True]}
    assert ok.normalised == 5 and ok.reasks == 0 and ok.raw == padded
    assert vague.status == "unscored" and vague.reasks == 1 and vague.normalised == 0
    assert "expected JSON true or false, got 'yes'" in vague.reason
    summary = usage_summary(client.records())
    assert summary["normalised"] == 1 and summary["status"]["ok"] == 1
