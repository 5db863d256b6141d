"""`judgekit calibrate tune` end to end with the embedded model (issue 35): 20 CS/CA items of
Global-MMLU-Lite (10 CS, 10 CA, human majority labels), two prompt variants of the cultural audit
as the candidates, real generations by the embedded llama.cpp model. Part of the README suite
(about 140 s on a quiet 2-core machine: its ``cost`` marker makes it the first file a worker
takes); skipped only where llama-cpp-python or the model file is absent.

Where the time goes (40 calls): about 90 s is generation (``default`` prompt ~900 tokens in,
``brief`` ~470, 54-119 tokens out, 1.5-3.6 s a call, the first ~6 s with the model start); the
rest is the reports (the command runs in the test process: tests/cli_inproc.py). Each cell's
audit report would bootstrap its shares and its validation against the human votes
(``cultural.n_resamples``, 1000 by default: about 45 s of the two cells' reports on a quiet
machine); this test checks the tune, not those CIs, so it sets ``cultural.n_resamples=0`` (the
tune's own CIs keep ``n_boot: 100``).

What else keeps it short: both candidates share one embedded server (``run_cells`` holds it,
:func:`judgekit.llm.local.shared_servers`: one model load); each of the 40 answers is generated
once (no re-ask, a timeout long enough that a loaded machine never sends an item again while the
server still works on it); answers are grammar-constrained JSON (llama.cpp's ``json_object`` with
the schema, the embedded route's default), capped at 160 tokens (the longest full annotation seen
is 119: a lower cap would truncate answers, which are then unscored); the server computes on one
thread (``JUDGEKIT_LOCAL_THREADS=1``), since beside the suite's other pytest worker two llama.cpp
threads on two cores spend most of their time waiting for each other."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO, shared_path
from test_tune_cli import judgekit

from judgekit.data.items import load_items
from judgekit.errors import JudgekitError

LITE = ("benchmark-items", "global-mmlu-lite-en", "global_mmlu_lite_en_test.jsonl")
JUDGE = "{model: local/smollm2-135m, max_tokens: 160, max_reasks: 0, timeout: 900, max_retries: 2}"


def _require_embedded_model() -> None:
    """Skip (with the install hint) where llama-cpp-python or the GGUF model is absent."""
    pytest.importorskip("llama_cpp", reason="the embedded model needs the `local` extra")
    from judgekit.llm.local import check_installed

    try:
        check_installed("smollm2-135m")
    except JudgekitError as exc:
        pytest.skip(str(exc))


@pytest.mark.embedded
@pytest.mark.cost(140)  # seconds on a quiet 2-core machine: the file runs first in the suite
@pytest.mark.timeout(1200)  # 40 generations of the embedded model on a loaded 2-core machine
def test_embedded_judge_tuned_over_two_prompts_on_20_cs_ca_items(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lite = shared_path(*LITE)  # missing data fails under JUDGEKIT_REQUIRE_DATA=1, never skips
    _require_embedded_model()
    monkeypatch.setenv("JUDGEKIT_LOCAL_THREADS", "1")  # the embedded server reads it
    rows = [json.loads(line) for line in lite.read_text().splitlines()]
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
        f"set: ['cultural.items=[\"{items}\"]', 'cultural.n_resamples=0']\n"
        f"judges: [{JUDGE}]\n"
        "prompts: {key: cultural.prompt, values: [brief, default]}\n"
        "tune: {statistic: accuracy, mode: nested, folds: 4, n_boot: 100}\n"
    )
    out = tmp_path / "tune"
    proc = judgekit("calibrate", "tune", str(tmp_path / "tune.yaml"), "--out", str(out),
                    "--no-cache")  # fmt: skip
    cells = sorted(p.name for p in out.iterdir() if p.is_dir())
    assert cells == ["smollm2-135m__brief", "smollm2-135m__default"]
    servers = set()
    for cell in cells:  # real generations: every item asked once, tokens out, answers or reasons
        records = [json.loads(line) for line in (out / cell / "records.jsonl").open()]
        assert sorted(r["meta"]["id"] for r in records) == sorted(r["id"] for r in chosen)
        assert {r["route"] for r in records} == {"local/smollm2-135m"}
        assert all(r["tokens_out"] > 0 and r["raw"] for r in records)
        assert all(r["status"] == "ok" or r["reason"] for r in records)
        assert all(r["params"]["max_tokens"] == 160 and r["reasks"] == 0 for r in records)
        labels = {r["parsed"]["cs_label"] for r in records if r["status"] == "ok"}
        assert labels and labels <= {"CS", "CA"}
        servers |= {r["served_by"] for r in records}
    assert len(servers) == 1, servers  # one embedded server (one model load) for both prompts
    splits = json.loads((out / "splits.json").read_text())
    report = json.loads((out / "tune.json").read_text())
    assert splits["mode"] == "nested" and report["mode"] == "nested 4-fold"
    assert report["n_test"] == len(splits["test"]) >= 4 and report["looks"] == 1
    assert 0 <= report["test_figure"] <= 1 and "looks at the sealed test split: 1" in proc.stdout
    best = yaml.safe_load((out / "best.yaml").read_text())
    assert best["judge"]["model"] == "local/smollm2-135m"
    assert best["cultural"]["prompt"] == report["chosen"].split("__")[1]
