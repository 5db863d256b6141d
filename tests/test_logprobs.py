"""Label probabilities from log-probabilities (judgekit.llm.logprobs), against hand computations.

Each payload is written out token by token in the shape a server sends (OpenAI/vLLM chat,
vLLM byte fragments, llama-cpp-python, completions, llama.cpp native); the expected values are
computed here from the rule in the module doc, step by step.
"""

from __future__ import annotations

import json
import math
from typing import Literal

import pytest
from pydantic import BaseModel

from judgekit.llm.logprob_watch import LogprobWatch, cached_label_probs
from judgekit.llm.logprobs import (
    LogprobsMismatch,
    label_probs,
    label_target,
    token_steps,
    value_offset,
)
from judgekit.llm.preflight import logprobs_unsupported as unsupported
from judgekit.llm.preflight import preflight
from judgekit.llm.spec import ModelSpec
from judgekit.pipelines.classify import judgment_schema
from judgekit.pipelines.cultural_schemas import annotation_schema, load_rubric
from judgekit.pipelines.pairwise import verdict_schema
from judgekit.pipelines.spilling_schemas import MeaningsAnswer

e = math.exp


def chat_choice(tokens: list[tuple[str, float, list[tuple[str, float]]]]) -> dict:
    """An OpenAI chat choice whose content is the tokens joined, with their logprobs."""
    content = [
        {
            "token": t,
            "logprob": lp,
            "bytes": list(t.encode()),
            "top_logprobs": [
                {"token": a, "logprob": alp, "bytes": list(a.encode())} for a, alp in top
            ],
        }
        for t, lp, top in tokens
    ]
    text = "".join(t for t, _, _ in tokens)
    return {"index": 0, "message": {"role": "assistant", "content": text},
            "finish_reason": "stop", "logprobs": {"content": content, "refusal": None}}  # fmt: skip


HEAD = [('{"', -0.1, []), ("label", -0.1, []), ('":', -0.1, []), (' "', -0.1, [])]
TAIL = [('",', -0.1, []), (' "rationale": "ok"}', -0.1, [])]
SENTIMENT = ["positive", "negative", "neutral"]


def test_single_token_labels_renormalised_among_allowed_tokens() -> None:
    top = [("positive", -0.2), ("negative", -1.9), ("The", -2.0), ("neutral", -3.0), ("pos", -4.0)]
    choice = chat_choice([*HEAD, ("positive", -0.2, top), *TAIL])
    got = label_probs(choice, SENTIMENT, "label")
    assert got is not None and got.chosen == "positive" and got.position == 4
    # allowed at the label: positive, negative, neutral and "pos" (spells only positive);
    # "The" is not the start of a label
    z = e(-0.2) + e(-1.9) + e(-3.0) + e(-4.0)
    want = {"positive": (e(-0.2) + e(-4.0)) / z, "negative": e(-1.9) / z, "neutral": e(-3.0) / z}
    assert got.probs == pytest.approx(want, abs=1e-12)
    assert sum(got.probs.values()) == pytest.approx(1.0, abs=1e-12)
    assert got.bounds == {}


def test_multi_token_labels_follow_the_shared_prefix() -> None:
    labels = ["regional", "religious", "none"]
    first = [("re", -0.5), ("none", -1.2), ("r", -3.0), ("x", -0.9)]
    second = [("gional", -0.3), ("ligious", -1.0), ("d", -2.0)]
    choice = chat_choice([*HEAD, ("re", -0.5, first), ("gional", -0.3, second), *TAIL])
    got = label_probs(choice, labels, "label")
    assert got is not None and got.chosen == "regional"
    z0 = e(-0.5) + e(-1.2) + e(-3.0)  # "r" is allowed (the start of two labels): in Z
    z1 = e(-0.3) + e(-1.0)  # after "re": "gional" and "ligious"
    raw = {
        "regional": e(-0.5) / z0 * e(-0.3) / z1,
        "religious": e(-0.5) / z0 * e(-1.0) / z1,
        "none": e(-1.2) / z0,
    }
    total = sum(raw.values())  # "r" is shared by two labels: not given to either
    assert got.probs == pytest.approx({k: v / total for k, v in raw.items()}, abs=1e-12)
    assert got.mass == pytest.approx(total, abs=1e-12)


def test_a_label_absent_from_the_top_k_gets_zero_and_its_bound() -> None:
    top = [("CS", -0.3), ("The", -1.5)]  # CA not among the top-K
    choice = chat_choice([*HEAD, ("CS", -0.3, top), *TAIL])
    got = label_probs(choice, ["CS", "CA"], "label")
    assert got is not None and got.probs == {"CS": 1.0, "CA": 0.0}
    unseen = 1 - e(-0.3) - e(-1.5)  # what the top-K leaves unseen
    hi = unseen / (e(-0.3) + unseen)
    assert got.bounds == {"CA": pytest.approx(hi / (1.0 + hi), abs=1e-12)}


def test_vllm_byte_fragments_and_a_key_quoted_in_a_string() -> None:
    # "हाँ" (yes) is e0 a4 b9 e0 a4 be e0 a4 81; vLLM sends partial UTF-8 as bytes:\\x..
    rationale = json.dumps('says "label": "नहीं" here', ensure_ascii=False)
    yes = "हाँ".encode()
    pieces = [
        ('{"rationale": ' + rationale + ', "label": "', -0.1, []),
        ("bytes:\\xe0\\xa4", -0.4, [("bytes:\\xe0\\xa4", -0.4), ("\u0928", -1.6)]),
        ("bytes:\\xb9", -0.01, []),
        ("\u093e\u0901", -0.01, []),
        ('"}', -0.01, []),
    ]
    entries = [
        {"token": t, "logprob": lp, "bytes": None,
         "top_logprobs": [{"token": a, "logprob": alp, "bytes": None} for a, alp in top]}
        for t, lp, top in pieces
    ]  # fmt: skip
    content = '{"rationale": ' + rationale + ', "label": "हाँ"}'
    choice = {"message": {"content": content}, "logprobs": {"content": entries}}
    assert b"".join(s.text for s in token_steps(choice)) == content.encode()
    assert yes in content.encode()
    got = label_probs(choice, ["हाँ", "नहीं"], "label")
    # at the first fragment: e0 a4 starts both labels (shared, not told apart); "न" (e0 a4 a8)
    # spells only "नहीं"; after e0 a4 the next fragment b9 tells "हाँ" apart
    z0 = e(-0.4) + e(-1.6)
    assert got is not None and got.chosen == "हाँ"
    total = e(-0.4) / z0 + e(-1.6) / z0
    assert got.probs == pytest.approx({"हाँ": e(-0.4) / z0 / total, "नहीं": e(-1.6) / z0 / total})
    assert value_offset(content, "label")[1] == "हाँ"  # not the quoted "label" in the rationale


def test_llama_cpp_python_completion_and_native_shapes_read_alike() -> None:
    text = '{"label": "negative"}'
    tokens = ['{"', "label", '":', ' "', "negative", '"}']
    tops = [{}, {}, {}, {}, {"negative": -0.5, "positive": -1.0, "Sure": -2.0}, {}]
    logprobs = [-0.1, -0.1, -0.1, -0.1, -0.5, -0.1]
    offsets = [0, 2, 7, 9, 11, 19]
    completions = {"text": text, "message": {"content": text},
                   "logprobs": {"tokens": tokens, "token_logprobs": logprobs,
                                "top_logprobs": tops, "text_offset": offsets}}  # fmt: skip
    native = {"content": text, "completion_probabilities": [
        {"id": i, "token": t, "logprob": lp, "bytes": list(t.encode()),
         "top_logprobs": [{"token": a, "logprob": alp} for a, alp in top.items()]}
        for i, (t, lp, top) in enumerate(zip(tokens, logprobs, tops, strict=True))]}  # fmt: skip
    older = {"content": text, "completion_probabilities": [
        {"content": t, "probs": [{"tok_str": a, "prob": e(alp)} for a, alp in top.items()]
         or [{"tok_str": t, "prob": e(lp)}]}
        for t, lp, top in zip(tokens, logprobs, tops, strict=True)]}  # fmt: skip
    z = e(-0.5) + e(-1.0)
    want = {"positive": e(-1.0) / z, "negative": e(-0.5) / z, "neutral": 0.0}
    for choice in (completions, native, older):
        got = label_probs(choice, SENTIMENT, "label")
        assert got is not None and got.probs == pytest.approx(want, abs=1e-12)
        assert set(got.bounds) == {"neutral"}


def test_no_logprobs_is_none_and_unreadable_ones_raise() -> None:
    assert label_probs({"message": {"content": '{"label": "CS"}'}}, ["CS", "CA"], "label") is None
    openai_none = {"message": {"content": "{}"}, "logprobs": {"content": None, "refusal": None}}
    assert label_probs(openai_none, ["CS", "CA"], "label") is None
    choice = chat_choice([*HEAD, ("CS", -0.3, []), *TAIL])
    choice["message"]["content"] = '{"label": "CA", "rationale": "ok"}'  # not what the tokens say
    with pytest.raises(LogprobsMismatch, match="do not spell"):
        label_probs(choice, ["CS", "CA"], "label")
    with pytest.raises(LogprobsMismatch, match="no label"):
        label_probs(chat_choice([*HEAD, ("CS", -0.3, []), *TAIL]), ["A", "B"], "label")
    with pytest.raises(LogprobsMismatch, match="unknown shape"):
        token_steps({"logprobs": {"weird": 1}})


def test_label_field_of_each_judge_schema() -> None:
    assert label_target(judgment_schema(("a", "b"), 100)) == ("label", ("a", "b"))
    assert label_target(annotation_schema(load_rubric())) == ("cs_label", ("CS", "CA"))
    assert label_target(verdict_schema(True, 100)) == ("verdict", ("1", "2", "tie"))
    assert label_target(MeaningsAnswer) is None

    class Two(BaseModel):
        a: Literal["x", "y"]
        b: Literal["u", "v"]

    assert label_target(Two) is None  # two enum fields and no label_field: none is guessed


def test_watch_decides_on_the_first_answer_and_says_it_once() -> None:
    spec = ModelSpec(model="hosted_vllm/m", api_base="http://127.0.0.1:1/v1", logprobs=True)
    schema = judgment_schema(tuple(SENTIMENT), 100)
    watch, lines = LogprobWatch(spec), []
    plain = {"message": {"content": '{"label": "positive", "rationale": "ok"}'}}
    assert watch.read(plain, schema, None, lines.append) == {}
    with_probs = chat_choice([*HEAD, ("positive", -0.2, [("positive", -0.2)]), *TAIL])
    assert watch.read(with_probs, schema, None, lines.append) == {}  # hard labels from now on
    assert len(lines) == 1 and "first answer came without log-probabilities" in lines[0]
    assert spec.scoring() == "hard"
    spec2 = ModelSpec(model="hosted_vllm/m", api_base="http://127.0.0.1:1/v1", logprobs=True)
    watch2, lines2 = LogprobWatch(spec2), []
    fields = watch2.read(with_probs, schema, None, lines2.append)
    assert fields["label_probs"]["positive"] == 1.0 and spec2.scoring() == "label_probs@top10"
    assert watch2.read(plain, schema, None, lines2.append) == {}
    assert watch2.read(plain, schema, None, lines2.append) == {}
    assert len(lines2) == 1 and "after earlier ones had them" in lines2[0]


def test_cached_entries_keep_only_well_formed_probabilities() -> None:
    good = {"raw": "{}", "label_probs": {"a": 0.25, "b": 0.75}, "label_probs_bound": None}
    assert cached_label_probs(good) == {"label_probs": {"a": 0.25, "b": 0.75},
                                        "label_probs_bound": None}  # fmt: skip
    assert cached_label_probs({"label_probs": {"a": 0.5, "b": 0.2}}) == {}
    assert cached_label_probs({"label_probs": "x"}) == {}


def test_litellm_routes_without_logprobs_are_known_before_the_run() -> None:
    pytest.importorskip("litellm")
    claude = ModelSpec(model="anthropic/claude-3-5-haiku-20241022", logprobs=True)
    line = unsupported(claude, claude.model)
    assert line is not None and "takes no logprobs" in line
    gpt = ModelSpec(model="openai/gpt-4o-mini", logprobs=True, transport="litellm")
    assert unsupported(gpt, gpt.model) is None


def test_preflight_says_it_in_one_line_and_the_spec_scores_hard(monkeypatch) -> None:
    pytest.importorskip("litellm")

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")  # the key check passes; nothing is sent
    spec = ModelSpec(model="anthropic/claude-3-5-haiku-20241022", logprobs=True)
    lines: list[str] = []
    preflight({"judge": spec}, on_wait=lines.append)
    assert len(lines) == 1 and "takes no logprobs" in lines[0]
    assert spec.scoring() == "hard" and "logprobs" not in spec.params()


def test_characters_a_server_lost_between_two_tokens_are_put_back() -> None:
    # llama-cpp-python decodes "∞" (e2 88 9e), split over two tokens, as "" and ""
    tokens = ['{"evidence": ["', "", "", '"], "label": "', "CA", '"}']
    entries = [{"token": t, "logprob": -0.1, "bytes": None, "top_logprobs": []} for t in tokens]
    entries[4]["logprob"] = -0.2
    entries[4]["top_logprobs"] = [{"token": "CA", "logprob": -0.2, "bytes": None},
                                  {"token": "CS", "logprob": -1.7, "bytes": None}]  # fmt: skip
    content = '{"evidence": ["∞"], "label": "CA"}'
    got = label_probs({"message": {"content": content}, "logprobs": {"content": entries}},
                      ["CS", "CA"], "label")  # fmt: skip
    z = e(-0.2) + e(-1.7)
    assert got is not None and got.probs == pytest.approx({"CS": e(-1.7) / z, "CA": e(-0.2) / z})
    entries[0]["token"] = '{"evidence": ["x'  # a difference other than lost bytes
    with pytest.raises(LogprobsMismatch, match="do not spell"):
        label_probs({"message": {"content": content}, "logprobs": {"content": entries}},
                    ["CS", "CA"], "label")  # fmt: skip


def test_a_reasoning_parser_s_stream_the_answer_is_found_after_the_reasoning() -> None:
    """Issue 32.6(a): vLLM/sglang with a reasoning parser send ``content`` with the answer only
    and logprobs over every generated token, reasoning first (which may even draft the JSON):
    the label is read at the answer's tokens, not refused."""
    reasoning = [("Let", -0.3, []), (" me", -0.2, []), (" think", -0.1, []),
                 (': {"label": "negative"}?', -0.5, []), (" no.", -0.4, []),
                 ("</think>", -0.01, []), ("\n\n", -0.01, [])]  # fmt: skip
    top = [("positive", -0.2), ("negative", -1.9), ("neutral", -3.0)]
    answer = [*HEAD, ("positive", -0.2, top), *TAIL]
    choice = chat_choice([*reasoning, *answer])
    choice["message"] = {"role": "assistant", "content": "".join(t for t, _, _ in answer),
                         "reasoning_content": "Let me think ... no."}  # fmt: skip
    got = label_probs(choice, SENTIMENT, "label")
    z = e(-0.2) + e(-1.9) + e(-3.0)
    want = {"positive": e(-0.2) / z, "negative": e(-1.9) / z, "neutral": e(-3.0) / z}
    assert got is not None and got.chosen == "positive"
    assert got.probs == pytest.approx(want, abs=1e-12)
    choice["message"]["content"] = '{"label": "neutral", "rationale": "ok"}'  # not in the stream
    with pytest.raises(LogprobsMismatch, match="do not spell the answer"):
        label_probs(choice, SENTIMENT, "label")
