"""Real runs of all five pipelines for the viewer tests: ``judgekit run`` / ``judgekit audit``
through the CLI, against the fault-injection server on 127.0.0.1 with scripted answers (some
valid, some invalid so that every run has ok and unscored records)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from fault_server import FaultServer
from typer.testing import CliRunner

from judgekit.cli import _register, app

_register()
REPO = Path(__file__).resolve().parents[1]
XSS = "</script><img src=x onerror=alert(1)>"
LABELS = ["positive", "negative", "neutral"]
REVIEWS = [f"Review {i}: the room was {'clean' if i % 2 else 'noisy'}." for i in range(11)]


def cli(*args: str) -> str:
    """Run ``judgekit ARGS`` in this process; the output, or the exception it raised."""
    result = CliRunner().invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code == 0, result.output
    return result.output


def _stub(url: str, role: str, name: str = "stub") -> list[str]:
    return ["--set", f"{role}.model=hosted_vllm/{name}", "--set", f"{role}.api_base={url}",
            "--set", f"{role}.max_reasks=1", "--set", f"{role}.max_retries=1"]  # fmt: skip


def spilling_run(base: Path, judge: str = "stub", verdicts: list[bool] | None = None) -> Path:
    """3 words x 2 languages; the judge's answers about ``line`` in German are never valid
    (unscored). ``judge``: the judge model's name (the run goes to ``base/spilling-<judge>``);
    ``verdicts``: the judge's 5 booleans for every other item (default: the server's own)."""

    def answer(body: dict) -> str | None:
        text = body["messages"][0]["content"]
        if "Linie (German;" in text:  # the judge's view of the German entry for "line"
            return '{"valid": [true, fal'
        if verdicts is not None and re.search(r"\((German|French);", text):
            return json.dumps({"valid": verdicts})
        return None

    out = base / f"spilling-{judge}"
    with FaultServer(answer_fn=answer) as srv:
        said = cli("run", str(REPO / "configs" / "spilling.yaml"), "--out", str(out), "--no-cache",
            "--limit", "0", *_stub(srv.base_url, "generator"), *_stub(srv.base_url, "judge", judge),
            "--set", "spilling.words=[head, line, point]", "--set", "spilling.languages=[de, fr]",
            "--set", "spilling.backcheck=false")  # fmt: skip
    assert said.rstrip().endswith(f"look at the run: judgekit view {out}")
    return out


def _review_of(body: dict, items: list[dict]) -> dict:
    text = body["messages"][0]["content"]  # a re-ask appends a correction after it
    return next(it for it in items if it["text"] in text)


def classify_runs(base: Path) -> tuple[Path, Path, Path]:
    """Two judges over the same 12 items (one is the XSS item), and a human label table.

    judge-a labels item i with LABELS[i % 3], judge-b with LABELS[(i // 2) % 3]; both answer
    item 5 outside the label set (unscored after one re-ask)."""
    items = [{"id": f"r{i:02d}", "text": t} for i, t in enumerate(REVIEWS)]
    items.append({"id": f"x{XSS}", "text": f"A review quoting {XSS} verbatim."})
    path = base / "reviews.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")

    def answer(body: dict) -> str:
        index = items.index(_review_of(body, items))
        shift = index % 3 if body["model"].endswith("judge-a") else (index // 2) % 3
        label = "excellent" if index == 5 else LABELS[shift]
        return json.dumps({"label": label, "rationale": f"because {XSS} (item {index})"})

    outs = []
    with FaultServer(answer_fn=answer) as srv:
        for name in ("judge-a", "judge-b"):
            config = base / f"classify-{name}.yaml"
            config.write_text(
                f"pipeline: classify\njudge: {{model: hosted_vllm/{name}, name: {name}, "
                f"api_base: '{srv.base_url}', max_reasks: 1, max_retries: 1, timeout: 5}}\n"
                f"classify:\n  items: {path}\n  labels: {LABELS}\n  task: Sentiment.\n",
                encoding="utf-8",
            )
            out = base / f"classify-{name}"
            cli("run", str(config), "--out", str(out), "--no-cache")
            outs.append(out)
    humans = base / "humans.csv"
    rows = ["item,rater,label"]
    for i, it in enumerate(items):  # two humans: h1 agrees with judge-a, h2 with judge-b
        rows += [f"{it['id']},h1,{LABELS[i % 3]}", f"{it['id']},h2,{LABELS[(i // 2) % 3]}",
                 f"{it['id']},h3,{LABELS[i % 3]}"]  # fmt: skip
    humans.write_text("\n".join(r if XSS not in r else _quoted(r) for r in rows) + "\n", "utf-8")
    return outs[0], outs[1], humans


def _quoted(row: str) -> str:
    item, rater, label = row.rsplit(",", 2)
    return f'"{item}",{rater},{label}'


ERROR_ITEMS = [
    {"id": "a", "source": "王伟在成都开了一家店。",
     "translation": "Wang Wei opened a shop in Chongqing, Chongqing.", "system": "s1"},
    {"id": "b", "source": "他来了。", "translation": "He came.", "system": "s1"},
    {"id": "c", "source": "我很好。", "translation": "I am well.", "system": "s2"},
]  # fmt: skip
ERROR_ANSWERS = {
    "Wang Wei opened a shop in Chongqing, Chongqing.": {"no_errors": False, "errors": [
        {"quote": "Chongqing", "occurrence": 2, "type": "NE", "severity": "major"},
        {"quote": "Wang Wei", "type": "NE", "severity": "minor"},
        {"quote": "shop", "type": "MIS", "severity": "critical"}]},
    "He came.": {"no_errors": True, "errors": []},
    "I am well.": {"no_errors": False, "errors": [
        {"quote": "very well", "type": "MIS", "severity": "minor"}]},  # not in the translation
}  # fmt: skip


def errors_run(
    base: Path, rows: list[dict] | None = None, answers: dict | None = None, name: str = "errors"
) -> Path:
    """Three segments: one with three located spans, one clean, one unscored (bad quote);
    or ``rows`` judged with ``answers`` (translation -> the judge's answer)."""
    rows, answers = rows or ERROR_ITEMS, answers or ERROR_ANSWERS
    items = base / f"{name}-segments.jsonl"
    items.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in rows), "utf-8")

    def answer(body: dict) -> str:
        translation = body["messages"][0]["content"].rsplit("translation:\n", 1)[1].strip()
        return json.dumps(answers[translation], ensure_ascii=False)

    out = base / name
    with FaultServer(answer_fn=answer) as srv:
        config = base / f"{name}.yaml"
        config.write_text(
            f"pipeline: errors\nout: {out}\n"
            f"judge: {{model: hosted_vllm/stub, api_base: '{srv.base_url}', max_reasks: 1,"
            " max_retries: 1, timeout: 5}\n"
            f"errors:\n  items: {items}\n  source_lang: Chinese\n  target_lang: English\n",
            encoding="utf-8",
        )
        cli("run", str(config), "--no-cache")
    return out


def localise_run(base: Path) -> Path:
    """Two German-English pairs to one locale: one localised, one refused (too short)."""
    src = "Der 28-jährige Vidal war vor drei Spielzeiten von Sevilla zu Barça gekommen."
    eng = "28-year-old Vidal had joined Barça three seasons ago, from Sevilla."
    rows = [{"id": "p1", "source": src, "english": eng},
            {"id": "p2", "source": "Die Sitzung im Bundestag dauerte bis Mitternacht.",
             "english": "The session in the Bundestag lasted until midnight."}]  # fmt: skip
    data = base / "pairs.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")

    def answer(body: dict) -> str:
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if "Vidal" in user:
            pair = {"source": src, "target": eng}
            moved = {k: v.replace("Vidal", "Goretzka").replace("Sevilla", "Schalke")
                     for k, v in pair.items()}  # fmt: skip
            return json.dumps(moved, ensure_ascii=False)
        return json.dumps({"source": "Kurz.", "target": "Short."})

    out = base / "localise"
    with FaultServer(answer_fn=answer) as srv:
        config = base / "localise.yaml"
        config.write_text(
            f"pipeline: localise\nout: {out}\n"
            f"generator: {{model: hosted_vllm/stub, api_base: '{srv.base_url}', max_reasks: 1,"
            " max_retries: 1, timeout: 5}\n"
            f"localise:\n  input: {data}\n  locales: [deu_Latn_Germany]\n",
            encoding="utf-8",
        )
        cli("run", str(config), "--no-cache")
    return out


def cultural_run(base: Path) -> Path:
    """Four benchmark items audited for CS/CA; the judge never answers item q4 validly."""
    questions = [
        "What is the capital of the state of Bavaria?",
        "What is 7 times 8?",
        "Which party won the 2019 Danish general election?",
        "What is water made of?",
    ]
    items = [{"id": f"q{i + 1}", "subject": "misc", "subject_category": "Other", "question": q,
              "choices": ["A1", "B1", "C1", "D1"], "answer": "A"}
             for i, q in enumerate(questions)]  # fmt: skip
    path = base / "bench.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")

    def answer(body: dict) -> str:
        text = body["messages"][0]["content"]
        if questions[3] in text:
            return "I think it is CA."
        cs = bool(re.search(r"Bavaria|Danish", text))
        answer = {"evidence": [], "rationale": "scripted", "time_sensitive": "no",
                  "required_knowledge": "regional" if cs else "none",
                  "cs_label": "CS" if cs else "CA", "subject_category": "STEM"}  # fmt: skip
        return json.dumps(answer)

    out = base / "cultural"
    with FaultServer(answer_fn=answer) as srv:
        cli("audit", str(path), "--config", str(REPO / "configs" / "audit.yaml"), "--out", str(out),
            "--no-cache", *_stub(srv.base_url, "judge"), "--set", "cultural.strict=false",
            "--set", "cultural.n_resamples=20")  # fmt: skip
    return out


PAIR_ITEMS = REPO / "prompts" / "pairwise" / "llmbar" / "natural-sample.jsonl"


def pairwise_verdict(index: int, gold: str, swapped: bool) -> str:
    """The stub judge's verdict on item ``index`` (as shown): every 4th item "1" whatever the
    order (position bias: inconsistent, resolved as a tie), item 6 the wrong output in both
    orders (consistent, wrong), every other item the gold output in both orders."""
    if index % 4 == 0:
        return "1"
    better = gold if index != 6 else {"1": "2", "2": "1"}[gold]
    return {"1": "2", "2": "1"}[better] if swapped else better


def pairwise_run(base: Path, judge: str = "stub-model") -> Path:
    """The shipped ``configs/pairwise.yaml`` (20 LLMBar Natural items, both orders, beside the
    published judges) with a stub judge answering :func:`pairwise_verdict`."""
    items = [json.loads(line) for line in PAIR_ITEMS.read_text("utf-8").splitlines()]

    def answer(body: dict) -> str:
        text = next(m["content"] for m in body["messages"] if m["role"] == "user")
        k = next(k for k, it in enumerate(items) if it["input"] in text)
        shown_a = text.split("# Output (a):\n", 1)[1].split("\n\n# Output (b):", 1)[0]
        swapped = shown_a != items[k]["output_1"]
        verdict = pairwise_verdict(k, str(items[k]["label"]), swapped)
        return json.dumps({"verdict": verdict, "rationale": f"output {verdict} is better"})

    out = base / f"pairwise-{judge}"
    with FaultServer(answer_fn=answer) as srv:
        cli("run", str(REPO / "configs" / "pairwise.yaml"), "--out", str(out), "--no-cache",
            *_stub(srv.base_url, "judge", judge))  # fmt: skip
    return out


def pairwise_humans(base: Path) -> Path:
    """Three humans on the 20 pairwise items: h1 and h2 give the gold output; h3 the other one
    on items 1-4 (a 2-1 majority for gold everywhere)."""
    items = [json.loads(line) for line in PAIR_ITEMS.read_text("utf-8").splitlines()]
    rows = ["item,rater,label"]
    for k, it in enumerate(items):
        gold = str(it["label"])
        other = {"1": "2", "2": "1"}[gold]
        rows += [f"{it['id']},h1,{gold}", f"{it['id']},h2,{gold}",
                 f"{it['id']},h3,{other if 1 <= k <= 4 else gold}"]  # fmt: skip
    path = base / "pairwise-humans.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


HOSTILE = "<img src=x onerror=alert(1)>"  # a label name
# item -> (the judge's label, its probability, the human label): confidences inside bins
CONFIDENT = {"c0": ("good", 0.85, "good"), "c1": ("good", 0.85, HOSTILE),
             "c2": (HOSTILE, 0.65, HOSTILE), "c3": ("good", 0.55, "good"),
             "c4": (HOSTILE, 0.75, "good")}  # fmt: skip


def _label_logprobs(content: str, label: str, p: float, other: str) -> dict:
    """A chat ``logprobs`` object: the answer's text before the label, the label, the rest as
    three tokens; at the label, ``label`` at log(p) and ``other`` at log(1 - p)."""
    head = content[: content.index('"label": "') + len('"label": "')]
    tail = content[len(head) + len(label) :]

    def tok(text: str, lp: float, top: list | None = None) -> dict:
        return {"token": text, "logprob": lp, "bytes": list(text.encode()),
                "top_logprobs": top or []}  # fmt: skip

    alternatives = [tok(label, math.log(p)), tok(other, math.log(1 - p))]
    return {"content": [tok(head, -0.01), tok(label, math.log(p), alternatives), tok(tail, -0.01)]}


def confidence_run(base: Path) -> tuple[Path, Path]:
    """A classify run with ``judge.logprobs: true`` over the items of ``CONFIDENT`` (labels
    ``good`` and ``HOSTILE``), its label probabilities as ``CONFIDENT`` says, and a human label
    table (two humans who agree: the majority is ``CONFIDENT``'s human label)."""
    labels = ["good", HOSTILE]
    items = [{"id": k, "text": f"Review {k}."} for k in CONFIDENT]
    path = base / "confident.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")

    def item_of(body: dict) -> str:
        return _review_of(body, items)["id"]

    def answer(body: dict) -> str:
        return json.dumps({"label": CONFIDENT[item_of(body)][0], "rationale": "short"})

    def logprobs(body: dict, content: str) -> dict:
        label, p, _ = CONFIDENT[item_of(body)]
        return _label_logprobs(content, label, p, next(x for x in labels if x != label))

    out, config = base / "classify-confident", base / "classify-confident.yaml"
    with FaultServer(answer_fn=answer, logprobs_fn=logprobs) as srv:
        config.write_text(
            f"pipeline: classify\njudge: {{model: hosted_vllm/judge-p, name: judge-p, "
            f"api_base: '{srv.base_url}', max_reasks: 1, max_retries: 1, timeout: 5, "
            f"logprobs: true}}\nclassify:\n  items: {path}\n  labels: {json.dumps(labels)}\n"
            f"  task: Sentiment.\n",
            encoding="utf-8",
        )
        cli("run", str(config), "--out", str(out), "--no-cache")
    humans = base / "confident-humans.csv"
    rows = ["item,rater,label"]
    rows += [f"{k},{h},{v[2]}" for k, v in CONFIDENT.items() for h in ("h1", "h2")]
    humans.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return out, humans
