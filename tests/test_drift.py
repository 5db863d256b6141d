"""judgekit drift: per-language change in a judge's agreement with humans on a frozen anchor set.

Known answers on small synthetic inputs (McNemar's exact p, Clopper-Pearson, Connor's sample
size), LLMBar (GPT-4 -> ChatGPT flagged on Adversarial; identical answers and 200 seeded null
resamples not flagged) and WMT23 MQM (a synthetic 0.10 Kendall-tau drop in one language of two
flagged in that language only), and the CLI end to end (freeze, compare, exit codes, bad input).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_inproc import Ran, run_main
from conftest import shared_path

from judgekit.drift import compare_answers, compare_signatures, detectable_drop
from judgekit.drift.anchors import anchor_frame, freeze_anchors, load_anchors
from judgekit.errors import InputError


def test_mcnemar_flip_rate_and_identical_answers_known_answers():
    from scipy.stats import beta, binomtest

    # 30 items, human "a"; before right on all; after wrong on 8 of them (8 discordant, 0 back)
    frame = pd.DataFrame({"human": ["a"] * 30, "before": ["a"] * 30,
                          "after": ["b"] * 8 + ["a"] * 22})  # fmt: skip
    (check,) = compare_answers(frame, "label", n_boot=200)
    assert check.group == "all" and check.n == 30
    assert check.before == 1.0 and check.after == pytest.approx(22 / 30)
    assert check.p_value == pytest.approx(binomtest(0, 8, 0.5).pvalue)  # exact McNemar
    assert check.drifted and check.n_flipped == 8
    assert check.flip_low == pytest.approx(beta.ppf(0.025, 8, 23))
    assert check.flip_high == pytest.approx(beta.ppf(0.975, 9, 22))
    same = compare_answers(frame.assign(after=frame["before"]), "label", n_boot=200)[0]
    assert same.p_value == 1.0 and not same.drifted and same.flip_rate == 0.0
    assert same.change == 0.0 and same.flip_low == 0.0


def test_holm_across_languages():
    from statsmodels.stats.multitest import multipletests

    rows = []
    for lang, wrong in (("de", 9), ("fr", 2), ("ja", 7)):
        rows += [{"group": lang, "human": 1, "before": 1, "after": 0 if i < wrong else 1}
                 for i in range(40)]  # fmt: skip
    checks = compare_answers(pd.DataFrame(rows), "label", n_boot=100)
    raw = [c.p_value for c in checks]
    assert [c.group for c in checks] == ["de", "fr", "ja"]
    assert [c.p_adjusted for c in checks] == pytest.approx(
        list(multipletests(raw, method="holm")[1])
    )
    assert [c.drifted for c in checks] == [True, False, True]


def test_detectable_drop_solves_connor_sample_size():
    from scipy.stats import norm

    d = detectable_drop("label", 200, 0.8)
    psi, za, zb = 2 * 0.8 * 0.2, norm.ppf(0.975), norm.ppf(0.8)
    n = (za * np.sqrt(psi) + zb * np.sqrt(psi - d * d)) ** 2 / (d * d)
    assert n == pytest.approx(200, rel=1e-6)
    assert detectable_drop("label", 800, 0.8) < d  # more anchors, smaller drops
    assert detectable_drop("score", 100, 0.5, se_before=0.05) == pytest.approx(
        (za + zb) * 0.05 * np.sqrt(2)
    )
    assert detectable_drop("label", 1, 0.8) is None


def test_signature_changes():
    old = {"models": [{"route": "openai/gpt-4", "revision": "0613"}], "system_fingerprint": "fp_1"}
    new = {"models": [{"route": "openai/gpt-4", "revision": "1106"}], "system_fingerprint": "fp_2"}
    changes = compare_signatures(old, new)
    assert len(changes) == 2 and changes[1] == "system_fingerprint: 'fp_1' -> 'fp_2'"
    assert compare_signatures(old, old) == [] and compare_signatures(old, {}) == []


def llmbar_frame(after_model: str, prompting: str = "Vanilla") -> pd.DataFrame:
    """LLMBar items (group = Natural / Adversarial), gold label, GPT-4's verdict before and
    ``after_model``'s after (original order; a missing verdict counts as wrong)."""
    path = shared_path("judge-vs-human", "llmbar", "llm_judge_verdicts.tsv")
    v = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)

    def answers(model: str, prompt: str) -> pd.DataFrame:
        rows = v[(v["evaluator_model"] == model) & (v["prompting"] == prompt)]
        return rows.set_index(["subset", "item_index"])

    old, new = answers("GPT-4", "Vanilla"), answers(after_model, prompting)
    return pd.DataFrame({"group": [s.split("/")[0] for s, _ in old.index],
                         "human": old["gold_label"], "before": old["winner_original_order"],
                         "after": new["winner_original_order"].reindex(old.index)})  # fmt: skip


def test_llmbar_gpt4_to_chatgpt_flagged_on_adversarial():
    checks = {c.group: c for c in compare_answers(llmbar_frame("ChatGPT"), "label", n_boot=300)}
    adv = checks["Adversarial"]
    assert adv.n == 319 and adv.drifted and adv.change < -0.3
    assert adv.ci_high < 0 and adv.detectable_drop < abs(adv.change)
    same = compare_answers(llmbar_frame("GPT-4"), "label", n_boot=100)
    assert not any(c.drifted for c in same) and all(c.flip_rate == 0 for c in same)


def test_llmbar_null_resamples_false_alarm_at_most_5_percent(monkeypatch: pytest.MonkeyPatch):
    """Null: GPT-4 Vanilla and GPT-4 CoT answers, each item's two answers assigned to before /
    after by a fair coin (200 seeds): the revisions are exchangeable, so any flag is false."""
    import gc

    # multipletests(method="holm") calls gc.collect() on every call: 200 calls cost ~30 s here
    monkeypatch.setattr(gc, "collect", lambda *args: 0)
    frame = llmbar_frame("GPT-4", "CoT")
    a, b = frame["before"].to_numpy(), frame["after"].to_numpy()
    alarms = 0
    for seed in range(200):
        swap = np.random.default_rng(seed).random(len(frame)) < 0.5
        null = frame.assign(before=np.where(swap, b, a), after=np.where(swap, a, b))
        alarms += any(c.drifted for c in compare_answers(null, "label", n_boot=1))
    assert alarms / 200 <= 0.05


def test_wmt23_mqm_drop_in_one_language_flagged_there_only():
    """GEMBA-MQM on WMT23 (one system); in en-de a share of the judge's scores is shuffled so
    that its Kendall tau with the expert MQM drops by about 0.10; zh-en unchanged."""
    from scipy.stats import kendalltau

    from judgekit.metrics.mteval import align_seg_scores, read_seg_scores

    src = shared_path("judge-vs-human", "wmt23-gemba-mqm-vs-human-mqm")
    parts = []
    for lp in ("en-de", "zh-en"):
        joined = align_seg_scores(read_seg_scores(src / f"{lp}.GEMBA-MQM-src.seg.score.tsv"),
                                  read_seg_scores(src / f"{lp}.mqm.seg.score.tsv"))  # fmt: skip
        rows = joined[joined["system"] == "GPT4-5shot"].dropna(subset=["judge", "human"])
        parts.append(pd.DataFrame({"group": lp, "human": rows["human"].to_numpy(),
                                   "before": rows["judge"].to_numpy(),
                                   "after": rows["judge"].to_numpy()}))  # fmt: skip
    ende = parts[0]
    base = kendalltau(ende["human"], ende["before"]).statistic
    rng = np.random.default_rng(3)
    for share in np.arange(0.05, 1.0, 0.05):
        after = ende["before"].to_numpy().copy()
        idx = rng.choice(len(after), int(share * len(after)), replace=False)
        after[idx] = rng.permutation(after[idx])
        if base - kendalltau(ende["human"], after).statistic >= 0.10:
            break
    parts[0] = ende.assign(after=after)
    checks = {c.group: c for c in compare_answers(pd.concat(parts), "score", n_boot=300)}
    assert checks["en-de"].change == pytest.approx(-0.10, abs=0.02)
    assert checks["en-de"].drifted and not checks["zh-en"].drifted
    assert checks["zh-en"].change == 0.0 and checks["en-de"].metric == "kendall tau"


def write_csv(path: Path, rows: list[dict]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def drift_cli(*args: str) -> Ran:
    """``judgekit drift ARGS`` in this process (tests/cli_inproc.py): no new interpreter."""
    return run_main("drift", *args, env={"COLUMNS": "200"})


def test_cli_freeze_compare_exit_codes_and_bad_input(tmp_path: Path):
    frame = llmbar_frame("ChatGPT")
    items = [f"{g}-{i}" for i, g in enumerate(frame["group"])]
    anchors = write_csv(tmp_path / "anchors.csv", [
        {"item": i, "language": g, "human": h}
        for i, g, h in zip(items, frame["group"], frame["human"], strict=True)])  # fmt: skip
    before, after = (
        write_csv(
            tmp_path / f"{name}.csv",
            [{"item": i, "answer": a} for i, a in zip(items, frame[col], strict=True)],
        )  # fmt: skip
        for name, col in (("gpt4", "before"), ("chatgpt", "after"))
    )
    unfrozen = drift_cli("compare", str(anchors), "--before", str(before), "--after", str(after))
    assert unfrozen.returncode == 2 and "not frozen" in unfrozen.stderr
    assert drift_cli("freeze", str(anchors)).returncode == 0
    assert load_anchors(anchors)[1] == freeze_anchors(anchors)
    done = drift_cli("compare", str(anchors), "--before", str(before), "--after", str(after),
                     "--json", "--n-boot", "200")  # fmt: skip
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    assert "Adversarial" in doc["drifted_groups"] and doc["family"] == "Holm over 2 group(s)"
    same = drift_cli("compare", str(anchors), "--before", str(before), "--after", str(before))
    assert same.returncode == 0 and "no drift" in same.stdout
    with anchors.open("a", encoding="utf-8") as out:
        out.write("extra,Natural,1\n")
    changed = drift_cli("compare", str(anchors), "--before", str(before), "--after", str(after))
    assert changed.returncode == 2 and "changed since it was frozen" in changed.stderr
    assert "Traceback" not in changed.stderr


def test_bad_answers_file_names_line_and_field(tmp_path: Path):
    from judgekit.drift.anchors import load_answers

    bad = write_csv(tmp_path / "answers.csv", [{"item": "a", "answer": "1"},
                                               {"item": "a", "answer": "2"}])  # fmt: skip
    with pytest.raises(InputError) as err:
        load_answers(bad)
    assert err.value.line == 3 and err.value.field == "item" and "repeats line 2" in str(err.value)
    with pytest.raises(InputError, match="kind"):
        compare_answers(pd.DataFrame({"human": [1], "before": [1], "after": [1]}), "ordinal")
    header_only = tmp_path / "anchors.csv"
    header_only.write_text("item,human\n", encoding="utf-8")
    done = drift_cli("freeze", str(header_only))
    assert done.returncode == 2 and "anchors.csv:1: field 'item': no anchor rows" in done.stderr
    assert not (tmp_path / "anchors.csv.sha256").exists()


def test_anchor_frame_aligns_items_and_missing_answers():
    anchors = pd.DataFrame({"item": ["x", "y", "z"], "human": ["1", "2", "1"]})
    frame = anchor_frame(anchors, pd.Series({"x": "1", "y": "2", "z": "1"}),
                         pd.Series({"x": "2", "y": "2"}), "label")  # fmt: skip
    assert list(frame["group"]) == ["all"] * 3 and pd.isna(frame.loc["z", "after"])
    (check,) = compare_answers(frame, "label", n_boot=50)
    assert check.n == 2 and check.n_flipped == 1


def test_drift_run_end_to_end_stub_judge_changes_mid_way(tmp_path: Path):
    """A classify judge on the fault server: a baseline run, a rerun with the same answers (not
    flagged, every anchor sent again: cache bypassed), a rerun whose answers change from the
    11th request on (flagged)."""
    from bench_answers import correct_content
    from fault_server import FaultServer

    from judgekit.drift.run import drift_run
    from judgekit.engine import run

    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"a{i:02d}", "text": f"Review {i}: fine."}) + "\n"
                             for i in range(40)), encoding="utf-8")  # fmt: skip
    with FaultServer(default_latency=0.0) as srv:
        srv.system_fingerprint = "fp_0613"
        config = tmp_path / "judge.yaml"
        config.write_text(f"""pipeline: classify
cache: {{dir: {tmp_path / "cache"}}}
judge: {{model: hosted_vllm/fault-model, api_base: {srv.base_url}, timeout: 5, max_retries: 1}}
classify: {{items: {items}, labels: [positive, negative, neutral], task: Sentiment.}}
""", encoding="utf-8")  # fmt: skip
        base = run(config, out=tmp_path / "baseline").out_dir
        summary = json.loads((base / "summary.json").read_text(encoding="utf-8"))
        served = summary["usage"]["served"]["judge|fault-model"]
        assert served == {
            "served_model": {"fault-model": 40},
            "system_fingerprint": {"fp_0613": 40},
        }
        labels = load_answers_dir(base)
        anchors = write_csv(tmp_path / "anchors.csv", [{"item": k, "human": v}
                                                       for k, v in labels.items()])  # fmt: skip
        freeze_anchors(anchors)
        sent = srv.total_requests
        same = drift_run(anchors, config, base, tmp_path / "same", n_boot=100)
        assert srv.total_requests - sent == 40  # the cache was bypassed
        assert not same["drifted"] and same["groups"][0]["flip_rate"] == 0.0
        assert same["signature_changes"] == []
        seen = []

        def changed(request: dict) -> str | None:
            seen.append(1)
            return None if len(seen) <= 10 else correct_content(request, seed=len(seen) + 7)

        srv.answer_fn = changed
        srv.system_fingerprint = "fp_1106"  # the provider's backend changed under the same name
        doc = drift_run(anchors, config, base, tmp_path / "changed", n_boot=100)
    assert doc["drifted"] and doc["groups"][0]["after"] < 0.8
    assert doc["signature_changes"] == ["system_fingerprint: ['fp_0613'] -> ['fp_1106']"]
    assert (tmp_path / "changed" / "answers.csv").is_file()
    assert doc["judge_models"][0]["route"] == "hosted_vllm/fault-model"
    # drift status: the baseline run and a gate that read its labels are stale, others not
    results = tmp_path / "results"
    results.mkdir()
    gate_sig = {"pipeline": "gate", "data": {str(base / "labels.csv"): "0" * 64}}
    (results / "gate.json").write_text(json.dumps({"signature": gate_sig}), encoding="utf-8")
    other = {"pipeline": "gate", "data": {str(items): "0" * 64}}
    (results / "other.json").write_text(json.dumps({"signature": other}), encoding="utf-8")
    done = drift_cli("status", str(tmp_path / "changed" / "drift.json"), str(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    stale = {Path(r["path"]).relative_to(tmp_path).as_posix(): r for r in json.loads(done.stdout)}
    assert set(stale) == {"baseline/summary.json", "results/gate.json"}
    reason = stale["results/gate.json"]["reason"]
    assert reason.startswith("reads ") and "judged by " in reason and "fault-model" in reason
    assert "names the judge" in stale["baseline/summary.json"]["reason"]
    check_view_marks_stale(tmp_path, base, tmp_path / "changed" / "drift.json")
    assert drift_cli("status", str(anchors), str(tmp_path)).returncode == 2


def load_answers_dir(run_dir: Path) -> dict[str, str]:
    from judgekit.drift.anchors import load_answers

    return {str(k): str(v) for k, v in load_answers(run_dir).items()}


def check_view_marks_stale(tmp_path: Path, run_dir: Path, drift: Path) -> None:
    """``judgekit view --drift``: the drifted judge's run card says first that it is stale
    (read in headless Chromium)."""
    from browser import chrome
    from selenium.webdriver.support.ui import WebDriverWait

    from judgekit.view import build_report

    page = build_report([run_dir], tmp_path / "view.html", drift=drift).path
    with chrome() as driver:
        driver.get(page.as_uri())
        WebDriverWait(driver, 30).until(
            lambda d: d.execute_script("return document.documentElement.dataset.ready") == "1"
        )
        first = driver.find_element("css selector", '#tab-summary .card[data-run="0"] ul.warn li')
        assert first.text == (f"stale: this run names the judge fault-model=hosted_vllm/"
                              f"fault-model, which drifted ({drift})")  # fmt: skip


def test_score_cells_that_are_no_finite_number_are_refused_and_missing_ones_counted(
    tmp_path: Path,
):
    from judgekit.drift.run import drift_compare

    anchors = write_csv(tmp_path / "anchors.csv",
                        [{"item": f"a{i}", "human": i % 5} for i in range(20)])  # fmt: skip
    freeze_anchors(anchors)
    answers = [{"item": f"a{i}", "answer": i % 5} for i in range(20)]
    before = write_csv(tmp_path / "before.csv", answers)
    for bad in ("1" + "0" * 400, "1e999", "inf", "high"):
        after = write_csv(tmp_path / "after.csv",
                          [*answers[:3], {"item": "a3", "answer": bad}, *answers[4:]])  # fmt: skip
        with pytest.raises(InputError) as err:
            drift_compare(anchors, before, after, kind="score", n_boot=50)
        assert err.value.line == 5 and err.value.field == "answer", bad
    after = write_csv(tmp_path / "after.csv",
                      [*answers[:3], {"item": "a3", "answer": "nan"}, *answers[4:]])  # fmt: skip
    doc = drift_compare(anchors, before, after, kind="score", n_boot=50)
    assert doc["anchors"] == 20 and doc["anchors_incomplete"] == 1 and doc["groups"][0]["n"] == 19
    shown = drift_cli("compare", str(anchors), "--before", str(before), "--after", str(after),
                      "--kind", "score", "--n-boot", "50")  # fmt: skip
    assert shown.returncode == 0 and "1 of 20 anchors left out" in shown.stdout
    assert drift_compare(anchors, before, after, kind="label", n_boot=50)["anchors"] == 20
