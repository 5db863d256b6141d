"""Few-shot candidates of `judgekit calibrate tune` (issue 35) against a real OpenAI-compatible
stub server on 127.0.0.1: examples come from the tune split only (checked on every request the
judges received), the few-shot cells are ordinary candidates, and best.yaml carries the chosen
examples by item id."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import yaml
from browser import chrome
from fault_server import FaultServer
from test_tune_cli import judgekit
from test_view import css, fmt, open_report

N = 36


def _world(tmp_path: Path) -> tuple[dict[str, str], dict[str, str]]:
    texts = {f"r{i:02d}": f"Review number {i}: the stay was {'good' if i % 3 else 'bad'}."
             for i in range(N)}  # fmt: skip
    human = {i: ("positive" if int(hashlib.sha256(i.encode()).hexdigest(), 16) % 2 else
                 "negative") for i in texts}  # fmt: skip
    lines = [json.dumps({"id": i, "text": t}) for i, t in texts.items()]
    (tmp_path / "items.jsonl").write_text("\n".join(lines) + "\n")
    rows = ["item,rater,label,language"]
    rows += [f"{i},ann1,{human[i]},{'cs' if k % 2 else 'ca'}" for k, i in enumerate(texts)]
    (tmp_path / "humans.csv").write_text("\n".join(rows) + "\n")
    return texts, human


def test_few_shot_examples_only_from_tune_and_best_yaml_names_them(tmp_path: Path) -> None:
    texts, human = _world(tmp_path)
    by_text = {t: i for i, t in texts.items()}
    seen: list[tuple[str, str | None]] = []  # (judged item, system message or None)

    def answer(body: dict) -> str:
        system = next((m["content"] for m in body["messages"] if m["role"] == "system"), None)
        user = body["messages"][-1]["content"]
        item = next(by_text[t] for t in re.findall(r'"""\n(.*?)\n"""', user, re.S))
        seen.append((item, system))
        # with examples the stub answers the human label; without, a label by hash (~50%)
        digest = int(hashlib.sha256(f"{body['model']}|{user}".encode()).hexdigest(), 16)
        label = human[item] if system else ("positive", "negative")[digest % 2]
        return json.dumps({"label": label, "rationale": "stub"})

    with FaultServer(answer_fn=answer) as server:
        url = server.base_url
        (tmp_path / "base.yaml").write_text(
            f"pipeline: classify\ncache: {{enabled: false}}\n"
            f"judge: {{model: hosted_vllm/stub-a, api_base: {url}}}\n"
            "classify: {items: items.jsonl, labels: [positive, negative]}\n"
        )
        judges = "\n".join(f"  - {{model: hosted_vllm/stub-{j}, api_base: {url}}}" for j in "ab")
        (tmp_path / "tune.yaml").write_text(
            f"base: base.yaml\nlabels: humans.csv\njudges:\n{judges}\n"
            "prompts: {key: classify.prompt, values: [default, strict]}\n"
            "tune: {seed: 1, n_boot: 100, few_shot: {k: 3, draws: 2}}\n"
        )
        out = tmp_path / "tune"
        proc = judgekit("calibrate", "tune", str(tmp_path / "tune.yaml"), "--out", str(out))
        splits = json.loads((out / "splits.json").read_text())
        tune, held = set(splits["tune"]), set(splits["select"]) | set(splits["test"])
        assert splits["by"] == "language" and len(tune | held) == N

        # every few-shot request showed examples of tune items only, never a select/test item
        shown = set()
        for _item, system in seen:
            if system:
                shown |= {by_text[t] for t in re.findall(r'"""\n(.*?)\n"""', system, re.S)}
        assert shown and shown <= tune and not shown & held
        ranking = json.loads((out / "ranking.json").read_text())["select"]
        names = [name for name, _ in ranking]
        assert len(names) == 4 + 4 * 2 and "stub-a__default__k3d1" in names
        for name in names:
            if "__k3d" in name:
                params = json.loads((out / name / "summary.json").read_text())["signature"]
                examples = params["parameters"]["few_shot"]
                assert len(examples) == 3 and set(examples) <= tune
                assert all(examples[i] == human[i] for i in examples)
        # the few-shot stub answers the human label: a few-shot candidate wins on select
        assert "__k3d" in names[0] and ranking[0][1] == 1.0
        best = yaml.safe_load((out / "best.yaml").read_text())
        assert set(best["classify"]["few_shot"]) <= tune
        report = json.loads((out / "tune.json").read_text())
        assert report["chosen"] == names[0] and report["test_figure"] == 1.0
        assert "looks at the sealed test split: 1" in proc.stdout
        judgekit("run", str(out / "best.yaml"), "--out", str(tmp_path / "again"), "--limit", "2")

    # judgekit view TUNE_OUT: the chosen run's card carries the tune's report, read from tune.json
    page = tmp_path / "tune.html"
    judgekit("view", str(out), "-o", str(page), "--n-resamples", "0")
    with chrome() as driver:
        open_report(driver, page)
        block = css(driver, """[data-block='["tune"]']""")
        assert f"{report['chosen']} (this run)" in block.text
        low, high = report["test_ci"]
        cell = css(block, """[data-path='["tune","test_figure"]']""")
        assert cell.text == f"{fmt(report['test_figure'])} [{fmt(low)}, {fmt(high)}]"
        assert css(block, """[data-path='["tune","looks"]']""").text == "1"
        ranking_block = css(driver, """[data-block='["ranking"]']""")
        assert len(ranking_block.find_elements("css selector", "tbody tr")) == len(names)
        assert css(driver, "figure img[alt='tune.png']").get_attribute("src").startswith("data:")


def test_few_shot_needs_a_pipeline_that_takes_examples(tmp_path: Path) -> None:
    from test_grid import base_config

    (tmp_path / "base.yaml").write_text(base_config("http://127.0.0.1:9/v1"))
    (tmp_path / "humans.csv").write_text("item,rater,label\nx,a,true\n")
    (tmp_path / "tune.yaml").write_text(
        "base: base.yaml\nlabels: humans.csv\n"
        "judges: [{model: hosted_vllm/a, api_base: 'http://127.0.0.1:9/v1'}]\n"
        "prompts: {key: spilling.judge_prompt, values: [default]}\n"
        "tune: {few_shot: {k: 2}}\n"
    )
    proc = judgekit("calibrate", "tune", str(tmp_path / "tune.yaml"), code=2)
    message = proc.stdout + proc.stderr
    assert "tune.few_shot" in message and "Traceback" not in message
    assert "(classify, cultural, pairwise), not spilling" in message


def test_few_shot_message_and_its_checks() -> None:
    from judgekit.pipelines.few_shot import example_problem, few_shot_message

    texts = {"a": "good <b>stay</b>", "b": "bad"}
    assert few_shot_message({}, texts) == {}
    message = few_shot_message({"b": "negative", "a": "positive"}, texts)
    assert message["role"] == "system"
    assert message["content"].index('"""\nbad\n"""\nLabel: negative') < message["content"].index(
        '"""\ngood <b>stay</b>\n"""\nLabel: positive'
    )
    assert example_problem({"a": "positive"}, texts, ["positive", "negative"]) is None
    assert "not an item" in example_problem({"z": "positive"}, texts, ["positive"])
    assert "not in" in example_problem({"a": "meh"}, texts, ["positive", "negative"])
