"""`judgekit calibrate tune` end to end with the embedded model (issue 35): 20 CS/CA items of
Global-MMLU-Lite (10 CS, 10 CA, human majority labels), two prompt variants of the cultural audit
as the candidates, real generations by the embedded llama.cpp model. Slow: opt-in like the other
embedded tests (``JUDGEKIT_EMBEDDED=1 pytest -m embedded``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO, shared_path
from test_tune_cli import judgekit

from judgekit.data.items import load_items

LITE = ("benchmark-items", "global-mmlu-lite-en", "global_mmlu_lite_en_test.jsonl")


@pytest.mark.embedded
@pytest.mark.timeout(1800)  # 40 generations and re-asks of the embedded model on a CPU
@pytest.mark.skipif(
    not os.environ.get("JUDGEKIT_EMBEDDED"),
    reason="slow (starts the embedded model): JUDGEKIT_EMBEDDED=1 pytest -m embedded",
)
def test_embedded_judge_tuned_over_two_prompts_on_20_cs_ca_items(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp", reason="the embedded model needs the `local` extra")
    rows = [json.loads(line) for line in shared_path(*LITE).read_text().splitlines()]
    chosen = [r for r in rows if r["cs_label"] == "CS"][:10]
    chosen += [r for r in rows if r["cs_label"] == "CA"][:10]
    items = tmp_path / "lite20.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in chosen), encoding="utf-8")
    keys = {it.id: it.key for it in load_items(items, language="en").items}
    humans = pd.DataFrame({"item": [keys[r["id"]] for r in chosen], "rater": "humans",
                           "label": [r["cs_label"] for r in chosen]})  # fmt: skip
    humans.to_csv(tmp_path / "humans.csv", index=False)
    (tmp_path / "tune.yaml").write_text(
        f"base: {REPO / 'configs' / 'audit.yaml'}\nlabels: humans.csv\n"
        f"set: ['cultural.items=[\"{items}\"]']\n"
        "judges: [{model: local/smollm2-135m, max_tokens: 256, max_reasks: 1}]\n"
        "prompts: {key: cultural.prompt, values: [brief, default]}\n"
        "tune: {statistic: accuracy, mode: nested, folds: 4, n_boot: 100}\n"
    )
    out = tmp_path / "tune"
    proc = judgekit("calibrate", "tune", str(tmp_path / "tune.yaml"), "--out", str(out),
                    "--no-cache", timeout=1500)  # fmt: skip
    cells = sorted(p.name for p in out.iterdir() if p.is_dir())
    assert cells == ["smollm2-135m__brief", "smollm2-135m__default"]
    for cell in cells:  # real generations: every item asked, tokens out, answers or reasons
        records = [json.loads(line) for line in (out / cell / "records.jsonl").open()]
        assert {r["route"] for r in records} == {"local/smollm2-135m"}
        assert any(r["tokens_out"] > 0 for r in records)
        assert all(r["status"] == "ok" or r["reason"] for r in records)
    splits = json.loads((out / "splits.json").read_text())
    report = json.loads((out / "tune.json").read_text())
    assert splits["mode"] == "nested" and report["mode"] == "nested 4-fold"
    assert report["n_test"] == len(splits["test"]) >= 4 and report["looks"] == 1
    assert 0 <= report["test_figure"] <= 1 and "looks at the sealed test split: 1" in proc.stdout
    best = yaml.safe_load((out / "best.yaml").read_text())
    assert best["judge"]["model"] == "local/smollm2-135m"
    assert best["cultural"]["prompt"] == report["chosen"].split("__")[1]
