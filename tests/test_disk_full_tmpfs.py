"""A full disk for real: ``judgekit run`` on a small tmpfs (``mount -t tmpfs -o size=...``).

Mounting needs root (or CAP_SYS_ADMIN); where the machine does not allow it these tests skip,
saying why, and ``test_disk_full.py`` covers the same cases with a writer that fails with
ENOSPC. Three cases: the disk stays full (the run stops, one line, resume completes it once
space is back), space comes back mid-run (the run goes on, nothing lost), and the report is
written on a full disk (the old labels.csv is kept, the error names it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fault_server import FaultServer
from full_disk import ENTRY
from test_disk_full import CONCURRENCY, NO_SPACE, keys_once, write_run

pytestmark = pytest.mark.timeout(300)
REPO = Path(__file__).resolve().parents[1]
N = 1000


def mount(point: Path, size: str) -> None:
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(point)],
                          capture_output=True, text=True)  # fmt: skip
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")


def resize(point: Path, size: str) -> None:
    subprocess.run(["mount", "-o", f"remount,size={size}", str(point)], check=True)


@pytest.fixture
def disk(tmp_path: Path):
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    point = tmp_path / "disk"
    point.mkdir()
    mount(point, "256k")
    yield point
    subprocess.run(["umount", "-l", str(point)], check=False)


def fill(point: Path, leave: int) -> Path:
    """A file taking all but ``leave`` bytes of the file system at ``point``."""
    stat = os.statvfs(point)
    filler = point / "filler"
    with open(filler, "wb") as fh:
        fh.write(b"\0" * max(0, stat.f_bavail * stat.f_frsize - leave))
    return filler


def command(config: Path, out: Path) -> list[str]:
    return [sys.executable, "-c", ENTRY, "run", str(config), "--out", str(out)]


def env(retry_s: float) -> dict[str, str]:  # no injected disk: the tmpfs fills up for real
    return {**os.environ, "COLUMNS": "200", "PYTHONUNBUFFERED": "1",
            "JUDGEKIT_TEST_RETRY_S": str(retry_s)}  # fmt: skip


def test_a_run_on_a_full_tmpfs_stops_with_one_line_and_resumes_once_space_is_back(
    disk: Path, tmp_path: Path
) -> None:
    with FaultServer() as srv:
        config, out = write_run(tmp_path, srv.base_url, N), disk / "out"
        done = subprocess.run(command(config, out), cwd=REPO, env=env(1.0), capture_output=True,
                              text=True, timeout=200)  # fmt: skip
        text = done.stdout + done.stderr
        assert done.returncode == 2 and "Traceback" not in text, text[-3000:]
        errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, text[-3000:]
        assert errors[0].startswith(f"error: cannot write {out / 'records.jsonl'}: {NO_SPACE}")
        kept = keys_once(out)  # only whole lines: none torn in the middle, none at the end
        assert 0 < len(kept) < N and len(set(kept)) == len(kept)
        assert srv.total_requests <= len(kept) + 2 * CONCURRENCY  # calls stopped at once
        resize(disk, "16m")  # space is back
        sent = srv.total_requests
        again = subprocess.run(command(config, out), cwd=REPO, env=env(1.0),
                               capture_output=True, text=True, timeout=200)  # fmt: skip
        assert again.returncode == 0, (again.stdout + again.stderr)[-3000:]
    keys = keys_once(out)
    assert len(keys) == N and len(set(keys)) == N and keys[: len(kept)] == kept
    assert srv.total_requests - sent == N - len(kept)


def test_space_freed_mid_run_on_a_tmpfs_lets_the_run_finish_with_nothing_lost(
    disk: Path, tmp_path: Path
) -> None:
    resize(disk, "16m")
    filler = fill(disk, 200_000)
    with FaultServer() as srv:
        config, out = write_run(tmp_path, srv.base_url, N), disk / "out"
        proc = subprocess.Popen(command(config, out), cwd=REPO, env=env(120),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)  # fmt: skip
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:  # the run says the disk is full; the user deletes a file
            lines.append(line)
            if line.startswith("warning: cannot write"):
                at_warning = srv.total_requests
                filler.unlink()
                break
        output = "".join(lines) + proc.communicate(timeout=200)[0]
    assert proc.returncode == 0, output[-3000:]
    assert f"warning: cannot write {out / 'records.jsonl'}: {NO_SPACE}." in output
    assert f"warning: {out / 'records.jsonl'} is written again; the run goes on" in output
    keys = keys_once(out)
    assert len(keys) == N and len(set(keys)) == N
    assert srv.total_requests == N and at_warning < N  # every answer paid for was kept
    summary = json.loads((out / "summary.json").read_text())
    assert summary["items"]["judged"] == N


def test_a_report_on_a_full_tmpfs_keeps_the_old_labels_and_names_the_file(
    disk: Path, tmp_path: Path
) -> None:
    resize(disk, "16m")
    with FaultServer() as srv:
        config, out = write_run(tmp_path, srv.base_url, N), disk / "out"
        first = subprocess.run(command(config, out), cwd=REPO, env=env(1.0),
                               capture_output=True, text=True, timeout=200)  # fmt: skip
        assert first.returncode == 0, first.stdout + first.stderr
        labels = (out / "labels.csv").read_bytes()
        fill(disk, 8_000)  # less than labels.csv's size is left
        again = subprocess.run(command(config, out), cwd=REPO, env=env(1.0),
                               capture_output=True, text=True, timeout=200)  # fmt: skip
    assert len(labels) > 8_000
    assert again.returncode == 2, again.stdout + again.stderr
    errors = [line for line in again.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: cannot write {out / 'labels.csv'}: {NO_SPACE}"], again.stderr
    assert (out / "labels.csv").read_bytes() == labels  # whole: the old file
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]
