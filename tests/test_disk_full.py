"""A full disk: the run log keeps what it cannot write and stops calling; report files are never
left cut.

The disk is the ENOSPC-injecting writer of ``full_disk.py`` (a budget of free bytes; writes past
it are cut short, then refused). ``test_disk_full_tmpfs.py`` runs the same cases on a real 3 MB
tmpfs where the machine lets the tests mount one (as root).
"""

from __future__ import annotations

import csv
import errno
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import matplotlib
import pandas as pd
import pytest
from fault_server import FaultServer
from full_disk import ENTRY, FullDisk

import judgekit
import judgekit.runlog
from judgekit.data.atomic import open_output, save_figure, write_frame, write_text
from judgekit.data.jsonfile import write_json
from judgekit.errors import OutputError
from judgekit.llm.client import LLMClient
from judgekit.runlog import Record, RunLog

matplotlib.use("Agg")
REPO = Path(__file__).resolve().parents[1]
NO_SPACE = os.strerror(errno.ENOSPC)  # "No space left on device"
CONCURRENCY = 8


# -- the output writer ------------------------------------------------------------------------
def _figure(points: int):  # a figure whose PNG grows with its points
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot(range(points), [i * i for i in range(points)])
    return fig


WRITERS = {
    "labels.csv": lambda p, n: write_frame(pd.DataFrame({"item": range(n)}), p, index=False),
    "human_mqm.tsv": lambda p, n: write_frame(pd.DataFrame({"a": range(n)}), p, sep="\t"),
    "summary.json": lambda p, n: write_json(p, {"items": list(range(n))}),
    "validation.md": lambda p, n: write_text(p, "| a |\n" * n),
    "figure.png": lambda p, n: save_figure(_figure(n), p, dpi=60),
    "gold.csv": lambda p, n: _csv_rows(p, n),
}


def _csv_rows(path: Path, n: int) -> None:
    with open_output(path, newline="") as handle:
        csv.writer(handle).writerows([i, "gold", "ne"] for i in range(n))


@pytest.mark.parametrize("name", list(WRITERS))
def test_a_file_written_on_a_full_disk_keeps_the_old_one_and_the_error_names_it(
    tmp_path: Path, name: str
) -> None:
    path = tmp_path / name
    WRITERS[name](path, 50)
    old = path.read_bytes()
    with FullDisk(len(old) // 2, names={name}) as disk, pytest.raises(OutputError) as err:
        WRITERS[name](path, 5000)  # a bigger file: it does not fit
    assert disk.failures == 1
    assert str(err.value) == f"cannot write {path}: {NO_SPACE}"
    assert isinstance(err.value, OSError) and err.value.errno == errno.ENOSPC
    assert err.value.filename == str(path)  # the file meant, not its temporary
    assert path.read_bytes() == old  # the old file, whole: never a cut one
    assert sorted(os.listdir(tmp_path)) == [name]  # no temporary left behind
    WRITERS[name](path, 5000)  # space back: the new file
    assert len(path.read_bytes()) > len(old)


def test_an_error_of_the_writing_code_is_not_taken_for_the_file(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("old", encoding="utf-8")
    with pytest.raises(FileNotFoundError) as err, open_output(path) as handle:
        handle.write("new")
        (tmp_path / "missing.txt").read_text()  # another file's error: raised as it is
    assert err.value.filename == str(tmp_path / "missing.txt")
    assert path.read_text(encoding="utf-8") == "old" and os.listdir(tmp_path) == ["out.txt"]


# -- the run log --------------------------------------------------------------------------------
def _record(i: int) -> Record:
    return Record(key=f"k{i}", stage="judge", role="judge", route="r", model="m",
                  prompt_id="p", prompt_hash="h", status="ok", parsed={"i": i})  # fmt: skip


def _line(i: int) -> bytes:
    return _record(i).model_dump_json().encode() + b"\n"


def test_a_record_write_cut_short_is_undone_kept_in_memory_and_written_once_space_is_back(
    tmp_path: Path,
) -> None:
    warnings: list[str] = []
    log = RunLog(tmp_path)
    log.on_warning = warnings.append
    size = len(_line(0))
    with FullDisk(2 * size + size // 2, names={"records.jsonl"}) as disk:
        for i in range(5):  # outside an event loop each append is written at once
            log.append(_record(i))
        # 0 and 1 fitted; 2 was cut short (half a line on disk), undone; 2..4 wait in memory
        assert log.error is not None and log.error.errno == errno.ENOSPC
        assert log.path.read_bytes() == _line(0) + _line(1)  # complete lines only
        assert log.get("k3") == _record(3)  # read from memory
        assert [r.key for r in log.iter_records()] == [f"k{i}" for i in range(5)]
        assert warnings == [
            f"cannot write {log.path}: {NO_SPACE}. No new call is sent; the records not "
            "written are kept in memory and written again for up to 60 s (free space to let "
            "the run go on)"
        ]
        disk.free(10 * size)
        assert log.flush() is True and log.error is None
    assert warnings[1] == f"{log.path} is written again; the run goes on"
    log.close()
    assert log.path.read_bytes() == b"".join(_line(i) for i in range(5))  # each once, in order
    assert RunLog(tmp_path).resumed == 5


def test_closing_a_run_log_that_cannot_be_written_names_the_file(tmp_path: Path) -> None:
    log = RunLog(tmp_path)
    log.append(_record(0))
    with FullDisk(0, names={"records.jsonl"}):
        log.append(_record(1))
        with pytest.raises(OutputError) as err:
            log.close()
    assert str(err.value).startswith(f"cannot write {log.path}: {NO_SPACE}; no call was sent")
    assert "the 1 records not written run again on resume" in str(err.value)
    assert log.path.read_bytes() == _line(0)
    log.close()  # closed: nothing more to say


# -- a run ----------------------------------------------------------------------------------------
def write_run(tmp_path: Path, base_url: str, n: int) -> Path:
    items = tmp_path / "items.jsonl"
    items.write_text(
        "".join(json.dumps({"id": f"it{i:04d}", "text": f"Item {i}: fine."}) + "\n"
                for i in range(n)), encoding="utf-8",
    )  # fmt: skip
    config = tmp_path / "run.yaml"
    config.write_text(
        f"""pipeline: classify
cache: {{enabled: false}}
judge:
  model: hosted_vllm/fault-model
  api_base: {base_url}
  timeout: 30
  max_concurrency: {CONCURRENCY}
classify:
  items: {items}
  labels: [positive, negative, neutral]
""",
        encoding="utf-8",
    )
    return config


def keys_once(out: Path) -> list[str]:
    """The keys of records.jsonl, checking every line is a whole record."""
    data = (out / "records.jsonl").read_bytes()
    assert data.endswith(b"\n")
    return [json.loads(line)["key"] for line in data.splitlines()]


@pytest.fixture
def sends(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Every request the client sends, as whether its run log had a failed write then."""
    sent: list[bool] = []
    count = LLMClient._count_attempt

    def counted(self: LLMClient) -> None:
        sent.append(self.runlog.error is not None)
        count(self)

    monkeypatch.setattr(LLMClient, "_count_attempt", counted)
    return sent


def test_a_run_on_a_disk_that_stays_full_stops_calling_and_resumes_with_no_duplicate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sends: list[bool]
) -> None:
    monkeypatch.setattr(judgekit.runlog, "WRITE_RETRY_S", 0.5)
    with FaultServer() as srv:
        config, out = write_run(tmp_path, srv.base_url, 300), tmp_path / "out"
        with FullDisk(20_000, names={"records.jsonl"}), pytest.raises(OutputError) as err:
            judgekit.run(config, out=out)
        message = str(err.value)
        assert message.startswith(f"cannot write {out / 'records.jsonl'}: {NO_SPACE}; ")
        kept = keys_once(out)
        assert 0 < len(kept) < 300 and len(set(kept)) == len(kept)
        # no request after the failed write; the answers lost when the run stopped are those
        # of the batch that failed and those in flight then (at most one slot each)
        assert sends.count(True) == 0 and len(sends) <= len(kept) + 2 * CONCURRENCY
        sent_before = srv.total_requests
        result = judgekit.run(config, out=out)  # space back: the resume completes the rest
    keys = keys_once(out)
    assert len(keys) == 300 and len(set(keys)) == 300 and keys[: len(kept)] == kept
    assert srv.total_requests - sent_before == 300 - len(kept)  # the rest, each once
    assert result.summary_data["items"]["judged"] == 300


def test_space_coming_back_mid_run_lets_the_run_finish_with_every_record_once(
    tmp_path: Path, sends: list[bool]
) -> None:
    with FaultServer() as srv:
        config, out = write_run(tmp_path, srv.base_url, 300), tmp_path / "out"
        disk = FullDisk(20_000, names={"records.jsonl"})
        seen: list[tuple[str, int]] = []

        def on_warning(message: str) -> None:
            seen.append((message.split(":")[0], len(sends)))
            if message.startswith("cannot write"):  # the user frees space a moment later
                threading.Timer(0.5, lambda: seen.append(("freed", len(sends))) or
                                disk.free(10**9)).start()  # fmt: skip

        with disk:
            result = judgekit.run(config, out=out, on_warning=on_warning)
    path = out / "records.jsonl"
    assert [s[0] for s in seen] == [
        f"cannot write {path}",
        "freed",
        f"{path} is written again; the run goes on",
    ]
    assert seen[1][1] == seen[0][1] and sends.count(True) == 0  # none while the disk was full
    keys = keys_once(out)
    assert len(keys) == 300 and len(set(keys)) == 300
    assert srv.total_requests == 300  # every answer paid for is kept
    assert result.summary_data["items"]["judged"] == 300


def test_a_report_on_a_full_disk_keeps_the_previous_labels_and_names_the_file(
    tmp_path: Path,
) -> None:
    with FaultServer() as srv:
        config, out = write_run(tmp_path, srv.base_url, 400), tmp_path / "out"
        judgekit.run(config, out=out)
        labels, summary = (out / "labels.csv").read_bytes(), (out / "summary.json").read_bytes()
        (out / "summary.json").unlink()  # a rerun writes the report again
        with FullDisk(len(labels) // 2, names={"labels.csv"}), pytest.raises(OutputError) as e:
            judgekit.run(config, out=out)  # everything recorded: only the report is written
    assert str(e.value) == f"cannot write {out / 'labels.csv'}: {NO_SPACE}"
    assert (out / "labels.csv").read_bytes() == labels  # never cut at row 344
    assert not (out / "summary.json").exists() and len(summary) > 0
    assert not [p for p in os.listdir(out) if p.endswith(".tmp")]


def run_cli(config: Path, out: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", ENTRY, "run", str(config), "--out", str(out)],
        cwd=REPO, env={**os.environ, "COLUMNS": "200", **env}, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip


def test_the_command_ends_with_one_line_naming_the_file_and_exits_non_zero(
    tmp_path: Path,
) -> None:
    with FaultServer() as srv:
        config, out = write_run(tmp_path, srv.base_url, 300), tmp_path / "out"
        disk = {"JUDGEKIT_TEST_DISK_BYTES": "20000", "JUDGEKIT_TEST_RETRY_S": "0.5"}
        done = run_cli(config, out, disk)
        text = done.stdout + done.stderr
        assert done.returncode == 2, text
        assert "Traceback" not in text and "Exception in callback" not in text, text
        errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and errors[0].startswith(
            f"error: cannot write {out / 'records.jsonl'}: {NO_SPACE}; no call was sent"
        ), text
        kept = keys_once(out)
        assert srv.total_requests <= len(kept) + 2 * CONCURRENCY
        again = run_cli(config, out, {"JUDGEKIT_TEST_RETRY_S": "0.5"})
        assert again.returncode == 0, again.stdout + again.stderr
    keys = keys_once(out)
    assert len(keys) == 300 and len(set(keys)) == 300
    assert srv.total_requests <= 300 + 2 * CONCURRENCY  # lost: at most the batch and in flight
