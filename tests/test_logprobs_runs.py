"""``judge.logprobs: true`` in real classify runs against a stub server on 127.0.0.1: a vLLM-style
payload (byte-fragment tokens, over the aiohttp path), an OpenAI-style payload (through litellm),
a provider that gives none (one line, hard labels, counted), and the embedded model.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from conftest import shared_path
from fault_server import FaultServer

import judgekit
from judgekit.signature import Signature

LITE = ("benchmark-items", "global-mmlu-lite-en", "global_mmlu_lite_en_test.jsonl")
AUDIT = Path(__file__).resolve().parents[1] / "configs" / "audit.yaml"

LABELS = ["positive", "negative", "neutral"]
LOGPROB = {"positive": -0.6, "negative": -2.0, "neutral": -2.8}  # with "The" -1.6: 0.95
KEY_ENV = "JUDGEKIT_TEST_LOGPROBS_KEY"


def answer(body: dict) -> str:
    """Label by the item's words; the rationale (Devanagari) comes before the label, so the
    label's byte offset depends on reading byte-fragment tokens right."""
    text = body["messages"][-1]["content"]
    label = "negative" if "awful" in text else "neutral" if "fine" in text else "positive"
    return json.dumps({"rationale": "ठीक है", "label": label}, ensure_ascii=False)


def tokens_of(content: str, *, fragments: bool) -> list[str]:
    """ASCII runs as tokens; each other character as vLLM's byte fragments (or whole)."""
    out: list[str] = []
    for ch in content:
        if ch.isascii():
            if out and out[-1].isascii() and not out[-1].startswith("bytes:") and ch not in '"':
                out[-1] += ch
            else:
                out.append(ch)
        elif fragments:
            raw = ch.encode()
            out += ["bytes:" + "".join(f"\\x{b:02x}" for b in part) for part in (raw[:2], raw[2:])]
        else:
            out.append(ch)
    return out


def logprobs_of(
    body: dict,
    content: str,
    *,
    fragments: bool,
    field: str = "label",
    logprob: dict[str, float] = LOGPROB,
) -> dict:
    """A chat ``logprobs`` object for ``content``: every label among the alternatives at the
    token of ``field``'s value, with ``logprob`` and ``"The"`` at -1.6 (cut to the request's
    ``top_logprobs``)."""
    label = json.loads(content[content.find("{", content.find("</think>") + 1) :])[field]
    head = content[: content.rindex(f'"{field}": "') + len(f'"{field}": "')]
    tail = content[len(head) + len(label) :]
    tokens = [*tokens_of(head, fragments=fragments), label, *tokens_of(tail, fragments=False)]
    top = sorted([*logprob.items(), ("The", -1.6)], key=lambda t: -t[1])
    entries = []
    for i, token in enumerate(tokens):
        if i == len(tokens_of(head, fragments=fragments)):  # the label's token
            entry = {"token": token, "logprob": logprob[label], "bytes": list(token.encode()),
                     "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(t.encode())}
                                      for t, lp in top[: body["top_logprobs"]]]}  # fmt: skip
        elif token.startswith("bytes:"):  # vLLM: not whole UTF-8
            entry = {"token": token, "logprob": -0.01, "bytes": None, "top_logprobs": []}
        else:
            entry = {"token": token, "logprob": -0.01, "bytes": list(token.encode()),
                     "top_logprobs": []}  # fmt: skip
        entries.append(entry)
    return {"content": entries}


def write_run(tmp_path: Path, judge: str) -> Path:
    items = tmp_path / "items.jsonl"
    texts = ["a lovely stay", "awful noise", "fine, nothing more", "great staff"]
    items.write_text(
        "".join(json.dumps({"id": f"r{i}", "text": t}) + "\n" for i, t in enumerate(texts)),
        encoding="utf-8",
    )
    config = tmp_path / "run.yaml"
    config.write_text(
        f"pipeline: classify\ncache: {{enabled: false}}\njudge:\n{judge}\n"
        f"classify:\n  items: {items}\n  labels: {LABELS}\n  task: Sentiment.\n",
        encoding="utf-8",
    )
    return config


def expected(label_set: list[str]) -> dict[str, float]:
    z = sum(math.exp(LOGPROB[lab]) for lab in label_set)
    return {lab: math.exp(LOGPROB[lab]) / z for lab in label_set}


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("fragments", [True, False], ids=["vllm-bytes", "whole-tokens"])
def test_vllm_style_payload_gives_label_probs(tmp_path: Path, fragments: bool) -> None:
    sent: list[dict] = []

    def fn(body: dict, content: str) -> dict:
        sent.append(body)
        return logprobs_of(body, content, fragments=fragments)

    with FaultServer(answer_fn=answer, logprobs_fn=fn) as srv:
        judge = f"  model: hosted_vllm/fault-model\n  api_base: {srv.base_url}\n  logprobs: true"
        warnings: list[str] = []
        result = judgekit.run(write_run(tmp_path, judge), out=tmp_path / "out",
                              on_warning=warnings.append)  # fmt: skip
    assert len(sent) == 4
    assert all(b["logprobs"] is True and b["top_logprobs"] == 10 for b in sent)
    rows = records(tmp_path / "out")
    assert [r["status"] for r in rows] == ["ok"] * 4
    for row in rows:
        assert row["label_probs"] == pytest.approx(expected(LABELS), abs=1e-9)
        assert row["label_probs_bound"] is None
    summary = result.summary_data
    assert summary["usage"]["label_probs"] == {"ok": 4, "with": 4, "without": 0}
    assert summary["signature"]["models"][0]["scoring"] == "label_probs@top10"
    assert "|scoring:label_probs@top10|" in Signature(**summary["signature"]).format()
    assert warnings == []


def test_a_think_block_before_the_answer_keeps_the_label_position(tmp_path: Path) -> None:
    def thinking(body: dict) -> str:  # a reasoning model served without a reasoning parser
        return '<think>the label is {"label": "negative"}?</think>\n' + answer(body)

    def fn(body: dict, content: str) -> dict:
        return logprobs_of(body, content, fragments=True)

    with FaultServer(answer_fn=thinking, logprobs_fn=fn) as srv:
        judge = f"  model: hosted_vllm/fault-model\n  api_base: {srv.base_url}\n  logprobs: true"
        warnings: list[str] = []
        judgekit.run(write_run(tmp_path, judge), out=tmp_path / "out", on_warning=warnings.append)
    rows = records(tmp_path / "out")
    assert [r["status"] for r in rows] == ["ok"] * 4
    assert all(r["reasoning"] and r["label_probs"] for r in rows)
    for row in rows:
        assert row["label_probs"] == pytest.approx(expected(LABELS), abs=1e-9)
    assert warnings == []


def test_top_k_that_leaves_a_label_out_gives_its_bound(tmp_path: Path) -> None:
    def fn(body: dict, content: str) -> dict:
        return logprobs_of(body, content, fragments=True)

    with FaultServer(answer_fn=answer, logprobs_fn=fn) as srv:
        judge = (f"  model: hosted_vllm/fault-model\n  api_base: {srv.base_url}\n"
                 "  logprobs: true\n  top_logprobs: 3")  # fmt: skip
        judgekit.run(write_run(tmp_path, judge), out=tmp_path / "out")
    # top-3: positive (-0.6), The (-1.6), negative (-2.0): neutral is not shown
    two = expected(["positive", "negative"])
    for row in records(tmp_path / "out"):
        if row["parsed"]["label"] == "neutral":  # generated, so its own logprob is known
            continue
        assert row["label_probs"] == pytest.approx({**two, "neutral": 0.0}, abs=1e-9)
        seen = math.exp(-0.6) + math.exp(-1.6) + math.exp(-2.0)
        z = math.exp(-0.6) + math.exp(-2.0)
        hi = (1 - seen) / (z + 1 - seen)
        assert row["label_probs_bound"] == {"neutral": pytest.approx(hi / (1 + hi), abs=1e-9)}


def test_openai_style_payload_through_litellm(tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("litellm")
    monkeypatch.setenv(KEY_ENV, "sk-test")

    def fn(body: dict, content: str) -> dict:
        return logprobs_of(body, content, fragments=False)

    with FaultServer(answer_fn=answer, logprobs_fn=fn) as srv:
        judge = (f"  model: openai/gpt-4o-mini\n  api_base: {srv.base_url}\n"
                 f"  api_key_env: {KEY_ENV}\n  transport: litellm\n  logprobs: true")  # fmt: skip
        result = judgekit.run(write_run(tmp_path, judge), out=tmp_path / "out")
    rows = records(tmp_path / "out")
    assert [r["status"] for r in rows] == ["ok"] * 4
    for row in rows:
        assert row["label_probs"] == pytest.approx(expected(LABELS), abs=1e-9)
    assert result.summary_data["usage"]["label_probs"]["with"] == 4


def test_a_provider_without_logprobs_is_said_once_and_scored_hard(tmp_path: Path) -> None:
    with FaultServer(answer_fn=answer) as srv:
        judge = (f"  model: hosted_vllm/fault-model\n  api_base: {srv.base_url}\n"
                 "  logprobs: true\n  max_concurrency: 1")  # fmt: skip
        warnings: list[str] = []
        result = judgekit.run(write_run(tmp_path, judge), out=tmp_path / "out",
                              on_warning=warnings.append)  # fmt: skip
    rows = records(tmp_path / "out")
    assert [r["status"] for r in rows] == ["ok"] * 4  # the run goes on, with hard labels
    assert all(r["label_probs"] is None for r in rows)
    said = [w for w in warnings if "log-probabilities" in w]
    assert len(said) == 1 and "first answer came without log-probabilities" in said[0]
    summary = result.summary_data
    assert summary["usage"]["label_probs"] == {"ok": 4, "with": 0, "without": 4}
    assert summary["signature"]["models"][0]["scoring"] == "hard"


def test_cs_ca_audit_reads_the_cs_label_among_four_enum_fields(tmp_path: Path) -> None:
    items = [json.loads(line) for line in shared_path(*LITE).read_text().splitlines()][:4]
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in items), encoding="utf-8")
    cs_logprob = {"CS": -0.4, "CA": -1.9}

    def answer_fn(body: dict) -> str:
        return json.dumps(
            {"evidence": [], "rationale": "ठीक", "time_sensitive": "no",
             "required_knowledge": "none", "cs_label": "CA", "subject_category": "STEM"},
            ensure_ascii=False,
        )  # fmt: skip

    def fn(body: dict, content: str) -> dict:
        return logprobs_of(body, content, fragments=True, field="cs_label", logprob=cs_logprob)

    with FaultServer(answer_fn=answer_fn, logprobs_fn=fn) as srv:
        overrides = ["judge.model=hosted_vllm/stub", f"judge.api_base={srv.base_url}",
                     "judge.logprobs=true", f"cultural.items=[{path}]", "cache.enabled=false",
                     "cultural.n_resamples=20"]  # fmt: skip
        result = judgekit.run(AUDIT, overrides, out=tmp_path / "out")
    z = math.exp(-0.4) + math.exp(-1.9)
    for row in records(tmp_path / "out"):
        assert row["label_probs"] == pytest.approx(
            {"CS": math.exp(-0.4) / z, "CA": math.exp(-1.9) / z}, abs=1e-9
        )
    assert result.summary_data["usage"]["label_probs"] == {"ok": 4, "with": 4, "without": 0}


@pytest.mark.embedded
def test_embedded_model_gives_label_probs_for_every_ok_record(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp", reason="the embedded model needs the `local` extra")
    config = write_run(tmp_path, "  model: local/smollm2-135m\n  logprobs: true")
    result = judgekit.run(config, out=tmp_path / "out", limit=2)
    ok = [r for r in records(tmp_path / "out") if r["status"] == "ok"]
    assert ok, "the embedded model gave no valid answer"
    for row in ok:
        probs = row["label_probs"]
        assert probs is not None and set(probs) == set(LABELS)
        assert sum(probs.values()) == pytest.approx(1.0, abs=1e-9)
        assert probs[row["parsed"]["label"]] > 0  # the chosen label has its path's probability
    assert result.summary_data["usage"]["label_probs"]["with"] == len(ok)


def test_a_cached_answer_keeps_its_label_probs(tmp_path: Path) -> None:
    def fn(body: dict, content: str) -> dict:
        return logprobs_of(body, content, fragments=False)

    with FaultServer(answer_fn=answer, logprobs_fn=fn) as srv:
        judge = f"  model: hosted_vllm/fault-model\n  api_base: {srv.base_url}\n  logprobs: true"
        config = write_run(tmp_path, judge)
        text = config.read_text().replace("{enabled: false}", f"{{dir: {tmp_path / 'cache'}}}")
        config.write_text(text, encoding="utf-8")
        judgekit.run(config, out=tmp_path / "first")
        again = judgekit.run(config, out=tmp_path / "second")
        assert srv.total_requests == 4  # the second run was answered by the cache
    first, second = records(tmp_path / "first"), records(tmp_path / "second")
    assert all(r["cache_hit"] for r in second)
    assert [r["label_probs"] for r in second] == [r["label_probs"] for r in first]
    assert again.summary_data["usage"]["label_probs"]["with"] == 4
