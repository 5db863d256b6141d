"""Real runs against the fault-injecting server: 2,000 judge tasks with faults of every kind.

``judgekit run`` (the classify pipeline) runs against ``FaultServerProcess``: as a subprocess where
the process is under test (kill -9, SIGTERM, two runs at once, output to a pipe, a resume after
a kill), in the test process otherwise.
Every task ends ``ok`` or ``unscored``/``error`` with a reason, the counts in summary.json equal
the records, no task is lost or duplicated; kill -9 in the middle and a resume give the same
results as an uninterrupted run, without calling again what was recorded; two runs sharing a
cache directory do not corrupt it; a planted API key appears in no file a run writes.

The interrupted runs (kill -9, SIGTERM in the foreground and in the background) meet a server
that holds every answer from its Nth request on until the test releases it (``then="hold"``),
so the interrupt always lands mid-run, however loaded the machine: the test waits until the
server holds a request, then signals. Those runs use a timeout no held request reaches (30 s)
and hangs that end as a slow 504 (``hang=0.3``), so holding changes no task's outcome; they are
compared with an uninterrupted run of the same config.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import shlex
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from bench_answers import message_hash
from cli_inproc import run_main
from fault_process import FaultServerProcess

from judgekit.config import load_config
from judgekit.llm.cache import ResponseCache
from judgekit.pipelines.classify import ClassifyRun

pytestmark = pytest.mark.timeout(180)

REPO = Path(__file__).resolve().parents[1]
N_ITEMS = 2000
LABELS = ["positive", "negative", "neutral"]
# 20% of the tasks carry a fault; each kind (transient and permanent) is mixed in.
FAULTS = {
    "429x2": "ok",
    "500x2": "ok",
    "503x1": "ok",
    "hangx1": "ok",
    "malformedx1": "ok",
    "latency=0.4": "ok",
    "429": "error",
    "500": "error",
    "hang": "error",
    "malformed": "unscored",
    "wrong_shape": "unscored",
    "truncated": "unscored",
}
KEY_ENV = "JUDGEKIT_E2E_API_KEY"
PLANTED = "sk-e2e-PLANTED-key-9f8e7d6c5b4a"
# `judgekit run` without the other command groups' imports (statsmodels, pandas...), so the
# subprocess starts in about a second; the command itself is the same.
RUN = "import sys; from judgekit.cli import app, cache, run; app(sys.argv[1:])"


def fault_of(index: int) -> str | None:
    """The fault directive of item ``index`` (every fifth item), or None."""
    return list(FAULTS)[(index // 5) % len(FAULTS)] if index % 5 == 0 else None


def write_items(
    path: Path, n: int = N_ITEMS, *, stateful: bool = True, hang: str | None = None
) -> None:
    """Items with faults; ``stateful=False`` keeps only quick faults whose answers do not depend
    on the server's attempt counters (no ``xN``, no hang), for runs that share one server;
    ``hang="hang=0.3"`` makes a hang a server error after 0.3 s instead of a client timeout."""
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fault = fault_of(i)
            if fault and not stateful and ("x" in fault or "hang" in fault):
                fault = None
            if fault and hang and fault.startswith("hang"):
                fault = hang + fault[len("hang") :]
            text = f"Item {i}: the service was fine, the food less so."
            text = f"[[fault:{fault}]] {text}" if fault else text
            fh.write(json.dumps({"id": f"it{i:04d}", "text": text}) + "\n")


def write_config(path: Path, port: int, items: Path, cache: Path, *, timeout: float = 1.0) -> Path:
    path.write_text(
        f"""pipeline: classify
cache: {{dir: {cache}}}
judge:
  model: hosted_vllm/fault-model
  api_base: http://127.0.0.1:{port}/v1
  api_key_env: {KEY_ENV}
  timeout: {timeout}
  max_concurrency: 128
  max_retries: 3
  retry_max_wait: 0.2
  max_reasks: 1
classify:
  items: {items}
  labels: {LABELS}
  task: Classify the sentiment of the review.
""",
        encoding="utf-8",
    )
    return path


ENV = {KEY_ENV: PLANTED, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
MAIN = "from judgekit.cli import main; main()"  # the installed command's entry point


def start_run(config: Path, out: Path, *extra: str, entry: str = RUN) -> subprocess.Popen[bytes]:
    env = {**os.environ, **ENV}
    cmd = [sys.executable, "-c", entry, "run", str(config), "--out", str(out), *extra]
    return subprocess.Popen(
        cmd,
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


LOGS: list[str] = []


def finish(proc: subprocess.Popen[bytes], timeout: float = 120) -> str:
    output, _ = proc.communicate(timeout=timeout)
    text = output.decode("utf-8", "replace")
    LOGS.append(text)
    assert proc.returncode == 0, text[-3000:]
    return text


def run_here(config: Path, out: Path, *extra: str) -> str:
    """``judgekit run`` in the test process (for runs whose process is not under test): its
    output (stdout and stderr, in that order), checked as :func:`finish` checks a process's."""
    ran = run_main("run", str(config), "--out", str(out), *extra, env=ENV)
    text = ran.stdout + ran.stderr
    LOGS.append(text)
    assert ran.returncode == 0, text[-3000:]
    return text


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]


def outcome(out: Path) -> dict[str, tuple]:
    """What must not depend on interruptions: status, answer and reason kind per task."""
    return {
        r["key"]: (
            r["status"],
            json.dumps(r["parsed"], sort_keys=True),
            (r["reason"] or "").split(":")[0],
        )
        for r in records(out)
    }


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    base = tmp_path_factory.mktemp("e2e")
    items = base / "items.jsonl"
    write_items(items)
    with FaultServerProcess(retry_after=0.05, hang_seconds=5, default_latency=0.005) as server:
        config = write_config(base / "run.yaml", server.port, items, base / "cache")
        yield {"base": base, "server": server, "config": config, "items": items}


@pytest.fixture(scope="module")
def reference(setup):
    """An uninterrupted run (no cache), against a fresh server."""
    setup["server"].restart()
    out = setup["base"] / "reference"
    log = finish(start_run(setup["config"], out, "--no-cache"))
    return {"out": out, "log": log}


def test_2000_tasks_with_faults_end_reasoned_and_counted(setup, reference) -> None:
    out = reference["out"]
    recs = records(out)
    keys = [r["key"] for r in recs]
    assert len(recs) == N_ITEMS and len(set(keys)) == N_ITEMS  # none lost, none duplicated
    expected = {f"it{i:04d}": FAULTS.get(fault_of(i) or "", "ok") for i in range(N_ITEMS)}
    got = {r["meta"]["item"]: r for r in recs}
    assert set(got) == set(expected)
    for item, rec in got.items():
        assert rec["status"] == expected[item], (item, rec["status"], rec["reason"])
        if rec["status"] == "ok":
            assert rec["parsed"]["label"] in LABELS and rec["reason"] is None
        else:
            assert rec["reason"] and rec["parsed"] is None  # a reason, never a default label
    why = {
        "429": "transient",
        "500": "transient",
        "hang": "transient",
        "malformed": "malformed_json",
        "wrong_shape": "schema",
        "truncated": "truncated",
    }
    for i in range(0, N_ITEMS, 5):
        rec = got[f"it{i:04d}"]
        if rec["status"] != "ok":
            assert rec["reason"].split(":")[0] == why[fault_of(i)], rec["reason"]
    summary = json.loads((out / "summary.json").read_text())
    status = Counter(r["status"] for r in recs)
    assert summary["usage"]["calls"] == len(recs)
    assert summary["usage"]["status"] == {k: status[k] for k in ("ok", "unscored", "error")}
    items = summary["items"]
    assert items["planned"] == N_ITEMS and items["judged"] == status["ok"]
    assert items["excluded"] == {
        "judgment_error": status["error"],
        "judgment_unscored": status["unscored"],
    }
    with open(out / "labels.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == status["ok"]
    assert [row["item"] for row in rows] == sorted(
        r["meta"]["item"] for r in recs if r["status"] == "ok"
    )
    assert all(row["label"] in LABELS for row in rows)
    # output to a pipe: progress comes as whole plain lines, the last one with the final counts
    progress = [line for line in reference["log"].splitlines() if line.startswith("classify: ")]
    assert progress[-1].startswith(f"classify: {N_ITEMS}/{N_ITEMS} (100%) requests ")
    assert (
        f"; ok {status['ok']} unscored {status['unscored']} error {status['error']}"
        in (progress[-1])
    )


@pytest.fixture(scope="module")
def held(setup):
    """The config of the interrupted runs (see the module doc) and its uninterrupted run."""
    base, server = setup["base"], setup["server"]
    items = base / "held-items.jsonl"
    write_items(items, hang="hang=0.3")
    config = write_config(base / "held.yaml", server.port, items, base / "cache", timeout=30)
    server.restart()
    out = base / "held-reference"
    run_here(config, out, "--no-cache")
    return {"config": config, "reference": out}


def start_held(server: FaultServerProcess, after: int, config: Path, out: Path, **kw):
    """A fresh server that holds every answer from its ``after+1``-th request on, and a run
    against it; returns once the server holds one (the run cannot finish before a release)."""
    server.restart()
    server.set_phase(after, "hold")
    proc = start_run(config, out, "--no-cache", **kw)
    server.wait_held(1)
    return proc


def recorded_keys(out: Path) -> set[str]:
    """The keys of the complete lines of records.jsonl (a kill may cut the last one)."""
    return {
        json.loads(line)["key"] for line in (out / "records.jsonl").read_bytes().split(b"\n")[:-1]
    }


def test_kill_9_twice_then_resume_gives_identical_results(setup, held) -> None:
    server, out, config = setup["server"], setup["base"] / "killed", held["config"]
    tasks = ClassifyRun(load_config(config), None).tasks()  # type: ignore[arg-type]
    first_messages = {task.key: message_hash(task.messages) for task in tasks}
    done: set[str] = set()
    for after in (300, 1200):  # early, then in the middle (a resumed run, killed)
        proc = start_held(server, after, config, out)  # fresh fault counters, as for the reference
        os.killpg(proc.pid, signal.SIGKILL)  # kill -9, mid-write if it happens to be writing
        proc.wait(10)
        recorded = recorded_keys(out)
        assert done < recorded and len(recorded) < N_ITEMS
        called = {r["message_hash"] for r in server.stats()["requests"]}
        assert not called & {first_messages[k] for k in done}  # recorded: never called again
        done = recorded
    server.restart()
    finish(start_run(config, out, "--no-cache"))
    called = {r["message_hash"] for r in server.stats()["requests"]}
    assert not called & {first_messages[k] for k in done}
    reference = held["reference"]
    assert outcome(out) == outcome(reference)
    assert (out / "labels.csv").read_text() == (reference / "labels.csv").read_text()
    ref_summary = json.loads((reference / "summary.json").read_text())
    summary = json.loads((out / "summary.json").read_text())
    assert summary["items"] == ref_summary["items"]
    assert summary["usage"]["status"] == ref_summary["usage"]["status"]


def test_sigterm_stops_cleanly_and_the_run_resumes(setup, held) -> None:
    server, out, config = setup["server"], setup["base"] / "terminated", held["config"]
    proc = start_held(server, 300, config, out, entry=MAIN)
    proc.send_signal(signal.SIGTERM)  # as a batch scheduler stops a job
    # the server still holds: only the signal can end the run
    text = proc.communicate(timeout=60)[0].decode("utf-8", "replace")
    kept = len(records(out))
    assert proc.returncode == 143 and "Traceback" not in text, text[-3000:]
    assert f"interrupted: {kept} records kept in {out}" in text and 0 < kept < N_ITEMS
    server.restart()
    finish(start_run(config, out, "--no-cache"))
    assert outcome(out) == outcome(held["reference"])


def test_sigterm_stops_a_run_started_in_the_background_by_a_script(setup, held, tmp_path) -> None:
    """``judgekit run ... &`` in a script starts with SIGINT ignored; SIGTERM stops it all the
    same (before, it was turned into that ignored SIGINT and the run sent every request)."""
    server, out, config = setup["server"], setup["base"] / "background", held["config"]
    server.restart()
    server.set_phase(300, "hold")
    log, pid_file = tmp_path / "run.log", tmp_path / "pid"
    command = shlex.join([sys.executable, "-c", MAIN, "run", str(config), "--out", str(out),
                          "--no-cache"])  # fmt: skip
    script = f'{command} > {log} 2>&1 &\necho $! > {pid_file}\nwait $!\necho "rc=$?"\n'
    shell = subprocess.Popen(["sh", "-c", script], cwd=REPO, env={**os.environ, **ENV},
                             stdout=subprocess.PIPE, start_new_session=True)  # fmt: skip
    try:
        server.wait_held(1)
        pid = int(pid_file.read_text())
        assert _sigint_ignored(pid)  # as the shell starts a background job
        os.kill(pid, signal.SIGTERM)
        status = shell.communicate(timeout=60)[0].decode().strip()
    finally:  # a run that ignored the signal is not left behind
        with contextlib.suppress(ProcessLookupError):
            os.killpg(shell.pid, signal.SIGKILL)
    text = log.read_text(encoding="utf-8", errors="replace")
    kept = len(records(out))
    assert status == "rc=143" and "Traceback" not in text, (status, text[-3000:])
    assert f"interrupted: {kept} records kept in {out}" in text and 0 < kept < N_ITEMS
    server.restart()
    finish(start_run(config, out, "--no-cache"))
    assert outcome(out) == outcome(held["reference"])


def _sigint_ignored(pid: int) -> bool:
    """Whether process ``pid`` ignores SIGINT (its SigIgn mask in /proc)."""
    status = Path(f"/proc/{pid}/status").read_text()
    mask = int(
        next(line for line in status.splitlines() if line.startswith("SigIgn:")).split()[1], 16
    )
    return bool(mask & (1 << (signal.SIGINT - 1)))


def test_concurrent_runs_share_a_cache_without_corrupting_it(setup, reference) -> None:
    base, server = setup["base"], setup["server"]
    items = base / "small.jsonl"
    write_items(items, 400, stateful=False)
    config = write_config(base / "small.yaml", server.port, items, base / "shared-cache")
    server.restart()
    runs = [start_run(config, base / f"shared-{i}") for i in range(2)]
    for proc in runs:
        finish(proc)
    assert outcome(base / "shared-0") == outcome(base / "shared-1")
    cache = ResponseCache(base / "shared-cache")
    try:
        assert cache.check() == []
        ok = sum(r["status"] == "ok" for r in records(base / "shared-0"))
        assert cache.stats()["entries"] == ok  # one entry per answer, whoever wrote it
    finally:
        cache.close()
    # a third run is answered from the cache alone: no call for an answer already cached
    before = len(server.stats()["requests"])
    run_here(config, base / "shared-2")
    ok_keys = {k for k, v in outcome(base / "shared-0").items() if v[0] == "ok"}
    third = records(base / "shared-2")
    assert {r["key"] for r in third if r["cache_hit"]} == ok_keys
    first = {
        t.key: message_hash(t.messages) for t in ClassifyRun(load_config(config), None).tasks()
    }
    called = {r["message_hash"] for r in server.stats()["requests"][before:]}
    assert not called & {first[k] for k in ok_keys}


def test_dry_run_counts_calls_and_sends_nothing(setup, reference) -> None:
    server = setup["server"]
    before = server.stats()["total_requests"]
    log = run_here(setup["config"], reference["out"], "--dry-run")
    assert f"{N_ITEMS} already recorded" in log and "0 calls to send" in log
    fresh = run_here(setup["config"], setup["base"] / "never", "--dry-run", "--no-cache")
    assert f"{N_ITEMS} calls to send" in fresh and "input tokens" in fresh
    assert server.stats()["total_requests"] == before
    assert not (setup["base"] / "never" / "summary.json").exists()


def test_planted_api_key_reaches_no_file_and_no_log(setup, reference) -> None:
    secret = PLANTED.encode()
    written = [p for p in setup["base"].rglob("*") if p.is_file()]
    assert any(p.name == "records.jsonl" for p in written)
    assert any("cache" in str(p) for p in written)
    for path in written:
        assert secret not in path.read_bytes(), path
    assert LOGS and not any(PLANTED in log for log in LOGS)


def test_bad_items_and_options_are_located(tmp_path: Path) -> None:
    from judgekit.errors import InputError
    from judgekit.pipelines.classify import ClassifyOptions, load_items

    path = tmp_path / "items.jsonl"
    cases = [
        ('{"id": 1, "text": "a"}\n{"id": 2, "text": "b"\n', 2, None, "invalid JSON"),
        ('{"id": 1, "text": "a"}\n\n{"id": 2}\n', 3, "text", "missing field"),
        ('{"id": 1, "text": "a"}\n{"id": 1, "text": "b"}\n', 2, "id", "already on line 1"),
        ('{"id": 1, "text": "  "}\n', 1, "text", "non-empty"),
        ('["not", "an", "object"]\n', 1, None, "JSON object"),
    ]
    for text, line, field, message in cases:
        path.write_text(text, encoding="utf-8")
        with pytest.raises(InputError) as err:
            load_items(path)
        assert err.value.line == line and err.value.field == field, str(err.value)
        assert message in str(err.value) and str(path) in str(err.value)
    path.write_text('{"id": 7, "text": "fine"}\n', encoding="utf-8")
    assert load_items(path)[0].id == "7"
    config = tmp_path / "run.yaml"
    config.write_text(
        "pipeline: classify\njudge: {model: local/x}\n"
        f"classify:\n  items: {path}\n  labels: [spam]\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError) as err:
        load_config(config).options("classify", ClassifyOptions)
    assert err.value.field == "classify.labels" and err.value.line == 5
