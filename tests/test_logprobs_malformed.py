"""Malformed log-probabilities never stop a run: the reader (judgekit.llm.logprobs) turns every
shape or value it cannot use into one kind of mismatch, and the record stays ``ok`` with its
hard label, no ``label_probs``, counted in ``usage.label_probs``.

Hand-picked payloads (the ones servers were seen to send: vLLM's -9999.0 under guided
decoding, -Infinity, a logprob above 709, a string, ``logprobs`` as a list), a fuzz test of
random payload shapes and values, and a real run against a server on 127.0.0.1 that sends them,
then resumes.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from fault_server import FaultServer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_logprobs_runs import LABELS, answer, logprobs_of, records, write_run

import judgekit
from judgekit.llm.logprobs import LabelProbs, LogprobsMismatch, label_probs

FUZZ_EXAMPLES = 1200


def good_choice() -> dict:
    """A well-formed vLLM-style chat choice whose answer is ``negative``."""
    body = {"messages": [{"content": "awful noise"}], "top_logprobs": 5}
    content = answer(body)
    lp = logprobs_of(body, content, fragments=True)
    return {"message": {"content": content}, "logprobs": lp}


def label_entry(choice: dict) -> dict:
    return next(e for e in choice["logprobs"]["content"] if e["token"] == "negative")


def corrupt_label(value: Any) -> dict:
    choice = good_choice()
    label_entry(choice)["logprob"] = value
    return choice


def corrupt_alternative(value: Any) -> dict:
    choice = good_choice()
    label_entry(choice)["top_logprobs"][0]["logprob"] = value
    return choice


def test_a_good_payload_is_read() -> None:
    found = label_probs(good_choice(), LABELS, "label")
    assert found is not None and found.chosen == "negative"
    assert sum(found.probs.values()) == pytest.approx(1.0)


MALFORMED = {
    "vllm-9999-at-label": lambda: corrupt_label(-9999.0),
    "minus-inf-at-label": lambda: corrupt_label(-math.inf),
    "above-709": lambda: corrupt_alternative(710.0),
    "plus-inf": lambda: corrupt_alternative(math.inf),
    "nan-at-label": lambda: corrupt_label(math.nan),
    "nan-alternative": lambda: corrupt_alternative(math.nan),
    "string-logprob": lambda: corrupt_label("-0.5"),
    "none-alternative-list": lambda: {**good_choice(), "logprobs": [{"token": "x"}]},
    "logprobs-as-list": lambda: {
        **good_choice(),
        "logprobs": good_choice()["logprobs"]["content"],
    },
    "nul-tokens": lambda: {
        **good_choice(),
        "logprobs": {"content": [{"token": "\x00", "logprob": -0.1, "top_logprobs": []}] * 9},
    },
    "wrong-tokens": lambda: {
        **good_choice(),
        "logprobs": {"content": [{"token": "nope", "logprob": -0.1, "top_logprobs": []}]},
    },
    "tokens-shape-with-strings": lambda: {
        **good_choice(),
        "logprobs": {"tokens": ["{"], "token_logprobs": ["x"], "top_logprobs": [{"{": "y"}]},
    },
    "prob-above-one": lambda: {
        "content": answer({"messages": [{"content": "x"}]}),
        "completion_probabilities": [{"content": "{", "probs": [{"tok_str": "{", "prob": 7}]}],
    },
    "choice-is-a-list": lambda: [good_choice()],
}


@pytest.mark.parametrize("make", MALFORMED.values(), ids=MALFORMED.keys())
def test_every_unusable_payload_is_a_mismatch(make) -> None:
    with pytest.raises(LogprobsMismatch):
        label_probs(make(), LABELS, "label")


NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([-9999.0, 709.5, 710.0, 1e308, -1e-300, 0.0, 1e-5]),
    st.integers(min_value=-(10**20), max_value=10**20),
)
SCALARS = st.one_of(
    st.none(), st.booleans(), NUMBERS, st.text(max_size=6), st.sampled_from(["\x00", "bytes:\\x"])
)
JSONISH = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.sampled_from(["token", "logprob", "bytes", "top_logprobs", "content", "prob"]),
            inner,
            max_size=4,
        ),
    ),
    max_leaves=12,
)
PATHS = st.sampled_from(
    [("content", "logprob"), ("content", "token"), ("content", "bytes"), ("content", "top")]
)


@st.composite
def payloads(draw) -> Any:
    """A good choice with one to three of its values replaced by random ones, or a whole
    random ``logprobs`` / choice."""
    kind = draw(st.sampled_from(["mutate", "logprobs", "choice", "native"]))
    choice = good_choice()
    if kind == "logprobs":
        choice["logprobs"] = draw(JSONISH)
    elif kind == "choice":
        return draw(JSONISH)
    elif kind == "native":
        choice["completion_probabilities"] = draw(st.lists(JSONISH, min_size=1, max_size=3))
    else:
        entries = choice["logprobs"]["content"]
        for _ in range(draw(st.integers(1, 3))):
            entry = entries[draw(st.integers(0, len(entries) - 1))]
            _, key = draw(PATHS)
            top = entry.get("top_logprobs")
            if key == "top" and isinstance(top, list) and top and isinstance(top[0], dict):
                alt = top[0]
                alt[draw(st.sampled_from(["logprob", "token", "bytes"]))] = draw(JSONISH)
            else:
                entry[key if key != "top" else "top_logprobs"] = draw(JSONISH)
    return choice


SEEN: list[int] = []


@settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(payloads())
def test_fuzz_the_reader_only_ever_answers_or_says_mismatch(choice: Any) -> None:
    SEEN.append(1)
    before = copy.deepcopy(choice)
    try:
        found = label_probs(choice, LABELS, "label")
    except LogprobsMismatch:
        return
    assert choice == before or json.dumps(choice, default=str) == json.dumps(before, default=str)
    if found is None:
        return
    assert isinstance(found, LabelProbs)
    assert set(found.probs) == set(LABELS)
    assert all(math.isfinite(p) and 0.0 <= p <= 1.0 for p in found.probs.values())
    assert sum(found.probs.values()) == pytest.approx(1.0)
    assert all(math.isfinite(b) and 0.0 <= b <= 1.0 for b in found.bounds.values())


def test_the_fuzz_test_ran_its_examples() -> None:
    if not SEEN:
        pytest.skip("run with the fuzz test to count its examples")
    assert len(SEEN) >= FUZZ_EXAMPLES


BAD = {  # item text -> what the server sends at its label token
    "awful": lambda body, content: _at_label(body, content, -9999.0),
    "fine": lambda body, content: logprobs_of(body, content, fragments=True)["content"],
    "great": lambda body, content: _at_label(body, content, "-Infinity"),
}


def _at_label(body: dict, content: str, value: Any) -> dict:
    lp = logprobs_of(body, content, fragments=True)
    label = json.loads(content)["label"]
    next(e for e in lp["content"] if e["token"] == label)["logprob"] = value
    return lp


def malformed_fn(body: dict, content: str) -> Any:
    text = body["messages"][-1]["content"]
    bad = next((fn for word, fn in BAD.items() if word in text), None)
    return bad(body, content) if bad else logprobs_of(body, content, fragments=True)


def test_a_run_with_malformed_logprobs_finishes_counts_them_and_resumes(tmp_path: Path) -> None:
    with FaultServer(answer_fn=answer, logprobs_fn=malformed_fn) as srv:
        judge = (f"  model: hosted_vllm/fault-model\n  api_base: {srv.base_url}\n"
                 "  logprobs: true\n  max_concurrency: 1")  # fmt: skip
        config = write_run(tmp_path, judge)
        warnings: list[str] = []
        first = judgekit.run(config, out=tmp_path / "out", limit=2, on_warning=warnings.append)
        assert first.summary_data["usage"]["label_probs"] == {"ok": 2, "with": 1, "without": 1}
        result = judgekit.run(config, out=tmp_path / "out", on_warning=warnings.append)
    rows = records(tmp_path / "out")
    assert [r["key"].split("|")[2] for r in rows] == ["r0", "r1", "r2", "r3"]  # resumed: none twice
    assert [r["status"] for r in rows] == ["ok"] * 4
    assert [r["parsed"]["label"] for r in rows] == ["positive", "negative", "neutral", "positive"]
    with_probs = [r["key"].split("|")[2] for r in rows if r["label_probs"] is not None]
    assert with_probs == ["r0"]  # a lovely stay: the one well-formed payload
    assert result.summary_data["usage"]["label_probs"] == {"ok": 4, "with": 1, "without": 3}
    said = [w for w in warnings if "not read at the label" in w]
    assert len(said) == 2 and all("fault-model" in w for w in said)  # once per run
