"""Few-shot candidates of `judgekit calibrate tune` beyond classify (issue 35): the cultural audit
(CS/CA, ``cultural.few_shot``) and pairwise preference (LLMBar-style, ``pairwise.few_shot``),
each against a real OpenAI-compatible stub server on 127.0.0.1. The leakage check of
tests/test_tune_few_shot.py, per pipeline: every request the judges received showed examples of
tune items only, never a select or test item; the examples are in each few-shot run's task keys
and signature, and best.yaml names them by item id."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
import yaml
from fault_server import FaultServer
from test_tune_cli import judgekit

from judgekit.config import load_config
from judgekit.errors import InputError
from judgekit.pipelines import get_pipeline
from judgekit.pipelines.few_shot import with_examples

N = 36
CULTURAL_ID = re.compile(r"Question (q\d\d):")
PAIR_ID = re.compile(r"Task (p\d\d):")


def _coin(*parts: str) -> int:
    return int(hashlib.sha256("|".join(parts).encode()).hexdigest(), 16) % 2


def _cultural_world(tmp_path: Path) -> tuple[str, dict[str, str]]:
    """36 multiple-choice items (benchmark ``items``), human CS/CA labels by item key; the base
    run config's text."""
    rows, human = [], {}
    for i in range(N):
        item = f"q{i:02d}"
        rows.append({"id": item, "question": f"Question {item}: which festival is held in May?",
                     "choices": ["one", "two", "three", "four"], "answer": "A",
                     "subject": "culture", "subject_category": "Humanities",
                     "language": "en"})  # fmt: skip
        human[f"items|{item}"] = ("CS", "CA")[_coin(item)]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    base = ("pipeline: cultural\ncache: {enabled: false}\n"
            f"cultural: {{items: ['{tmp_path / 'items.jsonl'}'], language: en, strict: false,"
            " n_resamples: 20}\n")  # fmt: skip
    return base, human


def _pairwise_world(tmp_path: Path) -> tuple[str, dict[str, str]]:
    """36 LLMBar-style pairs, the human-preferred output by item id; the base config's text."""
    rows, human = [], {}
    for i in range(N):
        item = f"p{i:02d}"
        human[item] = ("1", "2")[_coin(item)]
        rows.append({"id": item, "input": f"Task {item}: write a greeting.",
                     "output_1": f"first answer to {item}", "output_2": f"second answer to {item}",
                     "label": int(human[item])})  # fmt: skip
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    base = ("pipeline: pairwise\ncache: {enabled: false}\n"
            f"pairwise: {{items: '{tmp_path / 'items.jsonl'}', n_resamples: 100}}\n")  # fmt: skip
    return base, human


def _cultural_answer(label: str, user: str) -> str:
    question = re.search(r"Question q\d\d: [^\n]*", user).group(0)
    return json.dumps({"evidence": [question.split()[0]] if label == "CS" else [],
                       "rationale": "stub", "time_sensitive": "no",
                       "required_knowledge": "regional" if label == "CS" else "none",
                       "cs_label": label, "subject_category": "Humanities"})  # fmt: skip


def _pairwise_answer(label: str, user: str) -> str:
    item = PAIR_ID.search(user).group(1)
    swapped = user.index(f"second answer to {item}") < user.index(f"first answer to {item}")
    verdict = {"1": "2", "2": "1"}[label] if swapped else label  # as shown
    return json.dumps({"verdict": verdict, "rationale": "stub"})


WORLDS = {
    "cultural": (_cultural_world, CULTURAL_ID, "items|", _cultural_answer, ("CS", "CA")),
    "pairwise": (_pairwise_world, PAIR_ID, "", _pairwise_answer, ("1", "2")),
}


def _signature_examples(summary: dict) -> dict:
    signature = summary["signature"]
    return signature.get("parameters", {}).get("few_shot") or signature["options"]["few_shot"]


@pytest.mark.parametrize("pipeline", sorted(WORLDS))
def test_few_shot_examples_only_from_tune_in_every_pipeline(tmp_path: Path, pipeline: str) -> None:
    world, pattern, prefix, reply, labels = WORLDS[pipeline]
    base, human = world(tmp_path)
    seen: list[tuple[str, frozenset[str]]] = []  # (judged item, the example items it was shown)

    def answer(body: dict) -> str:
        user = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
        system = "\n".join(m["content"] for m in body["messages"] if m["role"] == "system")
        item = prefix + pattern.search(user).group(1)
        shown = frozenset(prefix + i for i in pattern.findall(system))
        seen.append((item, shown))
        # with examples the stub answers the human label; without, a label by hash (~50%)
        label = human[item] if shown else labels[_coin(body["model"], user)]
        return reply(label, user)

    rows = ["item,rater,label,language"]
    rows += [f"{i},ann1,{lab},{('de', 'fr')[k % 2]}" for k, (i, lab) in enumerate(human.items())]
    (tmp_path / "humans.csv").write_text("\n".join(rows) + "\n")
    prompt_key, prompts = (("cultural.prompt", "[brief, default]") if pipeline == "cultural"
                           else ("pairwise.prompt", "[vanilla, checklist]"))  # fmt: skip
    with FaultServer(answer_fn=answer) as server:
        url = server.base_url
        (tmp_path / "base.yaml").write_text(
            base + f"judge: {{model: hosted_vllm/stub-a, api_base: {url}}}\n"
        )
        (tmp_path / "tune.yaml").write_text(  # one judge x two prompts, each with examples
            f"base: base.yaml\nlabels: humans.csv\n"
            f"judges: [{{model: hosted_vllm/stub-a, api_base: {url}}}]\n"
            f"prompts: {{key: {prompt_key}, values: {prompts}}}\n"
            "tune: {seed: 1, n_boot: 100, few_shot: {k: 3, draws: 1}}\n"
        )
        out = tmp_path / "tune"
        proc = judgekit("calibrate", "tune", str(tmp_path / "tune.yaml"), "--out", str(out))
        splits = json.loads((out / "splits.json").read_text())
        tune, held = set(splits["tune"]), set(splits["select"]) | set(splits["test"])
        assert len(tune | held) == N and not tune & held

        # every request of a few-shot run showed 3 tune items, never a select or test item
        shown_sets = {shown for _, shown in seen if shown}
        assert len(shown_sets) == 1  # one draw: the same examples in every few-shot request
        shown = next(iter(shown_sets))
        assert len(shown) == 3 and shown <= tune and not shown & held
        ranking = json.loads((out / "ranking.json").read_text())["select"]
        names = [name for name, _ in ranking]
        assert len(names) == 4 and sum("__k3d0" in n for n in names) == 2
        for name in (n for n in names if "__k3d0" in n):
            summary = json.loads((out / name / "summary.json").read_text())
            examples = _signature_examples(summary)
            assert set(examples) == shown and all(examples[i] == human[i] for i in examples)
            plain = name.removesuffix("__k3d0")  # the same judge and prompt without examples
            keys = {json.loads(line)["key"] for line in (out / name / "records.jsonl").open()}
            plain_keys = {
                json.loads(line)["key"] for line in (out / plain / "records.jsonl").open()
            }
            assert keys and not keys & plain_keys  # the examples are in the task fingerprint
        # the few-shot stub answers the human label: a few-shot candidate wins on select
        assert "__k3d0" in names[0] and ranking[0][1] == 1.0
        best = yaml.safe_load((out / "best.yaml").read_text())
        assert set(best[pipeline]["few_shot"]) == shown
        assert "looks at the sealed test split: 1" in proc.stdout
        judgekit("run", str(out / "best.yaml"), "--out", str(tmp_path / "again"), "--limit", "2")


@pytest.mark.parametrize(
    ("pipeline", "examples", "said"),
    [
        ("cultural", '{"items|zz": CS}', "is not an item"),
        ("cultural", '{"items|q01": maybe}', "not in ['CS', 'CA']"),
        ("pairwise", '{"zz": "1"}', "is not an item"),
        ("pairwise", '{"p01": tie}', "not in ['1', '2']"),
    ],
)
def test_a_bad_few_shot_example_is_refused_located_at_its_key(
    tmp_path: Path, pipeline: str, examples: str, said: str
) -> None:
    base, _ = WORLDS[pipeline][0](tmp_path)
    (tmp_path / "run.yaml").write_text(
        base + "judge: {model: hosted_vllm/x, api_base: 'http://127.0.0.1:9/v1'}\n"
    )
    config = load_config(tmp_path / "run.yaml", [f"{pipeline}.few_shot={examples}"])
    runner, _ = get_pipeline(pipeline)
    with pytest.raises(InputError, match=re.escape(said)) as caught:
        runner(config, None)  # the constructor checks every input before any call
    assert f"{pipeline}.few_shot" in str(caught.value)
    if pipeline == "pairwise" and said == "is not an item":  # the command: exit 2, no traceback
        proc = judgekit("run", str(tmp_path / "run.yaml"), "--out", str(tmp_path / "o"),
                        "--set", f"{pipeline}.few_shot={examples}", code=2)  # fmt: skip
        message = proc.stdout + proc.stderr
        assert f"{pipeline}.few_shot" in message and said in message
        assert "Traceback" not in message


def test_examples_go_just_before_the_user_part() -> None:
    shots = {"role": "system", "content": "EXAMPLES"}
    user = {"role": "user", "content": "judge this"}
    assert with_examples([user], {}) == [user]
    assert with_examples([user], shots) == [shots, user]
    merged = with_examples([{"role": "system", "content": "RULES"}, user], shots)
    assert merged == [{"role": "system", "content": "RULES\n\nEXAMPLES"}, user]
