"""Small judgekit runs and items files for the review tests, made against the fault server on
127.0.0.1 (scripted answers): a spilling run, a CS/CA audit and an errors run, plus post-edit
pairs. Texts mix scripts on purpose: emoji (outside the BMP: two UTF-16 units), Hindi,
Arabic (right-to-left), Chinese, and an XSS payload that must show as text."""

from __future__ import annotations

import json
from pathlib import Path

from cli_inproc import run_main
from fault_process import FaultServerProcess
from fault_server import FaultServer

REPO = Path(__file__).resolve().parents[1]
XSS = '<img src=x onerror="window.__xss=1"></script><script>window.__xss=2</script>'


def jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def judgekit(*args: str) -> str:
    """``judgekit ARGS`` run in this process (tests/cli_inproc.py); asserts exit 0, its stdout."""
    proc = run_main(*args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def spilling_run(out: Path) -> Path:
    """2 words x 2 languages (de, hi), 1 sample: 4 judged items, 20 judged meanings."""
    with FaultServerProcess() as s:
        judgekit(
            "run", "configs/spilling.yaml", "--out", str(out), "--no-cache", "--limit", "0",
            "--set", "generator.model=hosted_vllm/stub",
            "--set", f"generator.api_base={s.base_url}",
            "--set", "judge.model=hosted_vllm/stub", "--set", f"judge.api_base={s.base_url}",
            "--set", "spilling.words=[head, line]", "--set", "spilling.languages=[de, hi]",
            "--set", "spilling.backcheck=false",
        )  # fmt: skip
    return out


CSCA_ITEMS = [
    {"id": "q1", "question": "Which amendment to the US Constitution protects free speech?",
     "choices": ["First", "Second", "Fifth", "Tenth"], "answer": "A", "subject": "us_law",
     "language": "en"},
    {"id": "q2", "question": "What is 2 + 2? " + XSS, "choices": ["3", "4", "5", "22"],
     "answer": "B", "subject": "elementary_mathematics", "language": "en"},
    {"id": "q3", "question": "ما هي عاصمة المغرب؟", "choices": ["الرباط", "فاس", "مراكش", "طنجة"],
     "answer": "A", "subject": "geography", "language": "ar"},
]  # fmt: skip
CSCA_JUDGE = {"q1": "CS", "q2": "CA", "q3": "CS"}


def csca_run(tmp: Path) -> tuple[Path, Path]:
    """A CS/CA audit of :data:`CSCA_ITEMS` whose judge answers :data:`CSCA_JUDGE`."""
    items = jsonl(tmp / "csca.jsonl", CSCA_ITEMS)

    def answer(body: dict) -> str:
        text = body["messages"][-1]["content"]
        it = next(i for i in CSCA_ITEMS if i["question"].split("?")[0] in text)
        cs = CSCA_JUDGE[it["id"]]
        return json.dumps({
            "evidence": [it["question"].split()[0]] if cs == "CS" else [], "rationale": "scripted",
            "time_sensitive": "no", "required_knowledge": "regional" if cs == "CS" else "none",
            "cs_label": cs, "subject_category": "Humanities" if cs == "CS" else "STEM",
        }, ensure_ascii=False)  # fmt: skip

    out = tmp / "audit"
    with FaultServer(answer_fn=answer) as srv:
        judgekit(
            "audit", str(items), "--config", "configs/audit.yaml", "--out", str(out), "--no-cache",
            "--set", "judge.model=hosted_vllm/stub", "--set", f"judge.api_base={srv.base_url}",
            "--set", "cultural.n_resamples=0",
        )  # fmt: skip
    return out, items


SEGMENTS = [
    {"id": "a", "source": "王伟在成都开了一家店。",
     "translation": "Wang Wei 😀 opened a shop in Chongqing.",
     "system": "s1", "doc": "d1", "seg_id": "1"},
    {"id": "b", "source": "Hello 😀 world, welcome!", "translation": "नमस्ते 😀 दुनिया!",
     "system": "s1", "doc": "d1", "seg_id": "2"},
    {"id": "c", "source": "他来了。", "translation": "He came. " + XSS, "system": "s2", "doc": "d1",
     "seg_id": "1"},
]  # fmt: skip
MQM_JUDGE = {  # translation -> the judge's scripted answer
    SEGMENTS[0]["translation"]: [{"quote": "Chongqing", "type": "NE", "severity": "major"}],
    SEGMENTS[1]["translation"]: [{"quote": "दुनिया", "type": "MIS", "severity": "minor"},
                                 {"quote": "welcome", "type": "OMI", "severity": "minor"}],
    SEGMENTS[2]["translation"]: [],
}  # fmt: skip


def errors_run(tmp: Path) -> Path:
    """An errors run over :data:`SEGMENTS` whose judge answers :data:`MQM_JUDGE`."""
    items = jsonl(tmp / "segments.jsonl", SEGMENTS)

    def answer(body: dict) -> str:
        text = body["messages"][0]["content"].rsplit("translation:\n", 1)[1].strip()
        errors = MQM_JUDGE[text]
        return json.dumps({"no_errors": not errors, "errors": errors}, ensure_ascii=False)

    config = tmp / "errors.yaml"
    with FaultServer(answer_fn=answer) as srv:
        config.write_text(
            f"pipeline: errors\nout: {tmp / 'errors'}\n"
            f"judge: {{model: hosted_vllm/stub, api_base: '{srv.base_url}', max_reasks: 0}}\n"
            f"errors:\n  items: {items}\n  source_lang: Chinese\n  target_lang: English\n",
            encoding="utf-8",
        )
        judgekit("run", str(config), "--no-cache")
    return tmp / "errors"


PAIRS = [  # original pair -> the LLM's localised pair
    {"id": "1", "source": "Dilokrit Pattavee ist Pilot.",
     "english": "Dilokrit Pattavee is a pilot.",
     "localised": ["Werner Mölders ist Pilot.", "Werner Mölders is a pilot."]},
    {"id": "2", "source": "वह 😀 लंदन गया।", "english": "He 😀 went to London.",
     "localised": ["वह 😀 दिल्ली गया।", "He 😀 went to Delhi."]},
]  # fmt: skip


def localise_run(tmp: Path) -> Path:
    """A localise run of :data:`PAIRS` to one locale whose generator answers the pairs'
    ``localised`` versions."""
    data = jsonl(
        tmp / "pairs.jsonl", [{k: p[k] for k in ("id", "source", "english")} for p in PAIRS]
    )

    def answer(body: dict) -> str:
        text = body["messages"][-1]["content"]
        pair = next(p for p in PAIRS if p["english"] in text)
        return json.dumps(dict(zip(("source", "target"), pair["localised"], strict=True)),
                          ensure_ascii=False)  # fmt: skip

    config = tmp / "localise.yaml"
    with FaultServer(answer_fn=answer) as srv:
        config.write_text(
            f"pipeline: localise\nout: {tmp / 'localise'}\n"
            f"generator: {{model: hosted_vllm/stub, api_base: '{srv.base_url}', max_reasks: 0}}\n"
            f"localise:\n  input: {data}\n  locales: [deu_Latn_Germany]\n",
            encoding="utf-8",
        )
        judgekit("run", str(config), "--no-cache")
    return tmp / "localise"


def mqm_page(tmp: Path):
    """Alice's page of an MQM campaign on item ``a`` of SEGMENTS, with hostile guidelines and a
    gold answer for ``b`` (the ``mqm_campaign`` fixture of the review tests)."""
    from judgekit.review.make import build_campaign, make_page

    items = jsonl(tmp / "segments.jsonl", SEGMENTS)
    gold = jsonl(tmp / "gold.jsonl", [{"item": "b", "expected": {"no_errors": True}}])
    guide = tmp / "guide.md"
    guide.write_text("# Rules\n\n<img src=x onerror=alert(1)> **bold**\n", encoding="utf-8")
    campaign = build_campaign(items, "mqm", guidelines=guide, items=["a"], gold=gold)
    return make_page(campaign, "alice", tmp / "c" / "alice.html")
