"""Structured output: request fields per strategy, answer validation, bounded re-asks."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, Field

from judgekit.llm.reply import from_completion
from judgekit.llm.structured import (
    InvalidAnswer,
    output_format,
    parse_answer,
    reask_messages,
    with_hint,
)


class Verdict(BaseModel):
    label: Literal["yes", "no"]
    note: str = Field(max_length=20)


@pytest.mark.parametrize(
    ("raw", "finish", "reason"),
    [
        (None, "stop", "empty"),
        ("   ", "stop", "empty"),
        ('{"label": "yes", "no', "length", "truncated"),
        ('{"label": "yes", "note": "fine"}', "length", "truncated"),
        ('{"label": "yes", "note": ', "stop", "malformed_json"),
        ("Sure! The answer is yes.", "stop", "malformed_json"),
        ('{"answer": "yes"}', "stop", "schema"),
        ('{"label": "maybe", "note": "x"}', "stop", "schema"),
        ('{"label": "yes", "note": "' + "x" * 30 + '"}', "stop", "schema"),
        ('{"label": "maybe", "note": "a\nb"}', "stop", "schema"),
        ('{"label": "yes", "note": "a\nb"', "stop", "malformed_json"),
    ],
)
def test_invalid_answers_get_a_reason_never_a_default(raw, finish, reason) -> None:
    with pytest.raises(InvalidAnswer) as err:
        parse_answer(raw, Verdict, finish)
    assert err.value.reason.startswith(reason + ":")
    assert err.value.raw == raw  # the raw answer is kept for the record


def test_valid_answers_plain_or_fenced() -> None:
    assert parse_answer('{"label": "no", "note": "ok"}', Verdict, "stop").label == "no"
    fenced = '```json\n{"label": "yes", "note": "ok"}\n```'
    assert parse_answer(fenced, Verdict, "stop").label == "yes"
    # a raw line break inside a string is read as the text it is, not rejected
    assert parse_answer('{"label": "no", "note": "a\nb"}', Verdict, "stop").note == "a\nb"


def test_one_strategy_per_backend_and_its_request_fields() -> None:
    js = output_format(Verdict, "json_schema").fields["response_format"]
    assert js["type"] == "json_schema" and js["json_schema"]["schema"]["required"]
    jo = output_format(Verdict, "json_object").fields["response_format"]
    assert jo == {"type": "json_object", "schema": Verdict.model_json_schema()}
    tools = output_format(Verdict, "tools").fields
    assert tools["tool_choice"]["function"]["name"] == "Verdict"
    prompt = output_format(Verdict, "prompt")
    assert prompt.fields == {} and "JSON schema" in prompt.hint
    msgs = with_hint([{"role": "user", "content": "judge"}], prompt)
    assert msgs[0]["content"].startswith("judge") and '"label"' in msgs[0]["content"]
    assert output_format(Verdict, "json_schema").digest == output_format(Verdict, "tools").digest
    with pytest.raises(ValueError):
        output_format(Verdict, "xml")


def test_reply_reads_content_tool_arguments_and_who_served() -> None:
    content = {
        "choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}],
        "model": "gpt-4o-mini-2024-07-18",
        "system_fingerprint": "fp_44709d6fcb",
    }
    reply = from_completion(content)
    assert (reply.text, reply.finish_reason) == ("{}", "stop")
    assert (reply.served_model, reply.system_fingerprint) == (
        "gpt-4o-mini-2024-07-18",
        "fp_44709d6fcb",
    )
    call = {"function": {"name": "Verdict", "arguments": '{"label": "no"}'}}
    tool = {
        "choices": [{"message": {"tool_calls": [call]}, "finish_reason": "tool_calls"}],
        "system_fingerprint": None,
        "model": 7,
    }
    reply = from_completion(tool)
    assert (reply.text, reply.finish_reason) == ('{"label": "no"}', "tool_calls")
    assert (reply.served_model, reply.system_fingerprint) == (None, None)
    broken = from_completion({"choices": [], "system_fingerprint": "fp_1"})
    assert broken.provider_error.message == "the response has no choices"


def test_reask_keeps_one_answer_and_one_correction_whatever_the_round() -> None:
    original = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "judge"}]
    huge = "x" * 100_000
    again = reask_messages(original, huge, "schema: label: field required", window=None,
                           max_tokens=100)  # fmt: skip
    assert again[:2] == original and len(again) == 4
    assert len(again[2]["content"]) == 1500  # the answer shown is cut
    assert "schema: label" in again[3]["content"]
    # a second re-ask starts again from the original messages: the context does not grow
    twice = reask_messages(original, huge, "schema: again", window=None, max_tokens=100)
    assert len(twice) == 4 and sum(len(m["content"]) for m in twice) < 2000


def test_reask_fits_the_context_window_or_is_skipped() -> None:
    original = [{"role": "user", "content": "y" * 3000}]  # about 1,000 tokens
    fitted = reask_messages(original, "z" * 5000, "schema: x", window=1400, max_tokens=200)
    assert fitted is not None and 0 < len(fitted[1]["content"]) < 1500
    assert reask_messages(original, "z" * 5000, "schema: x", window=1100, max_tokens=200) is None


def test_a_validator_that_raises_on_an_odd_answer_makes_it_invalid_not_a_crash() -> None:
    from pydantic import field_validator

    class Label(BaseModel):
        label: str

        @field_validator("label", mode="before")
        @classmethod
        def strip(cls, value):  # a validator that assumes a string
            return value.strip()

    with pytest.raises(InvalidAnswer, match="schema: a validator raised AttributeError"):
        parse_answer('{"label": 5}', Label, "stop")
    assert parse_answer('{"label": " pos "}', Label, "stop").label == "pos"


@pytest.mark.parametrize(
    "raw",
    [
        '{"label": "yes", "note": "fine"}\n\nI chose yes because the answer is right.',
        '```json\n{"label": "yes", "note": "fine"}\n```',
        'Here is my verdict:\n```\n{"label": "yes", "note": "fine"}\n```\nThanks!',
        'Verdict: {"label": "yes", "note": "fine"} (final)',
        '{"label": "yes",\n "note": "fi\tne"} and more',
    ],
)
def test_the_first_complete_json_value_is_the_answer_whatever_surrounds_it(raw: str) -> None:
    """Issue 32.7(b): prose after the object, a fence, a sentence before it are one class."""
    assert parse_answer(raw, Verdict, "stop").label == "yes"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ('{"label": "yes", "note": "he said "hi""}', "malformed_json"),  # unescaped quotes
        ('{"label": "yes", "note": "cut', "malformed_json"),  # no complete value
        ("I cannot decide.", "malformed_json"),
        # nested deeper than Python's JSON reader goes: unreadable, never a RecursionError
        ('{"label": ' + "[" * 5000 + "]" * 5000 + "}", "malformed_json"),
        ('Sure: {"label": ' + "[" * 3000 + "]" * 3000 + "} done", "malformed_json"),
        ('{"note": "a\nb", "x": ' + "[" * 5000 + "]" * 5000 + "}", "malformed_json"),
    ],
)
def test_no_complete_json_value_is_malformed_and_re_asked(raw: str, reason: str) -> None:
    with pytest.raises(InvalidAnswer) as caught:
        parse_answer(raw, Verdict, "stop")
    assert caught.value.reason.startswith(reason) and caught.value.raw == raw
