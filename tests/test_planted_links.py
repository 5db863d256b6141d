"""A link planted in a run directory is never written through: the lock, the run log, the written
reports and the cache database refuse a symbolic link (or a FIFO) where their file should be,
with one line naming it (exit 2 at the CLI), and the file the link points to is left as it was.

Real runs against a stub server on 127.0.0.1 (tests/fault_server.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_inproc import run_main
from fault_server import FaultServer
from test_logprobs_runs import answer, write_run

import judgekit
from judgekit.data.atomic import open_regular, refuse_link, write_text
from judgekit.errors import OutputError
from judgekit.llm.cache import ResponseCache

SECRET = "precious outside content\n"


def plant(run_dir: Path, name: str, tmp_path: Path) -> Path:
    """A file outside the run directory, and a link to it at ``run_dir/name``."""
    outside = tmp_path / f"outside-{name.strip('.')}.txt"
    outside.write_text(SECRET, encoding="utf-8")
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / name).symlink_to(outside)
    return outside


@pytest.mark.parametrize("name", [".lock", "records.jsonl", "items.jsonl", "summary.json"])
def test_a_run_refuses_a_link_planted_at_its_files(tmp_path: Path, name: str) -> None:
    out = tmp_path / "out"
    outside = plant(out, name, tmp_path)
    with FaultServer(answer_fn=answer) as srv:
        judge = f"  model: hosted_vllm/fault-model\n  api_base: {srv.base_url}"
        with pytest.raises(OutputError) as err:
            judgekit.run(write_run(tmp_path, judge), out=out)
    assert name in str(err.value) and "not a regular file" in str(err.value)
    assert outside.read_text(encoding="utf-8") == SECRET  # neither truncated nor overwritten
    assert (out / name).is_symlink()


def test_the_cli_says_it_in_one_line_and_exits_2(tmp_path: Path) -> None:
    out = tmp_path / "out"
    outside = plant(out, "records.jsonl", tmp_path)
    with FaultServer(answer_fn=answer) as srv:
        judge = f"  model: hosted_vllm/fault-model\n  api_base: {srv.base_url}"
        config = write_run(tmp_path, judge)
        done = run_main("run", str(config), "--out", str(out))
    assert done.returncode == 2, done.stderr
    said = (done.stdout + done.stderr).strip()
    assert "Traceback" not in said
    assert f"cannot write {out / 'records.jsonl'}: not a regular file" in said
    assert outside.read_text(encoding="utf-8") == SECRET


def test_a_fifo_at_the_run_log_is_refused_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "records.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(OutputError, match="not a regular file"):
        open_regular(fifo, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    with pytest.raises(OutputError, match="records.jsonl"):
        refuse_link(fifo)


def test_the_atomic_writer_replaces_no_link_and_follows_none_at_its_temporary(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text(SECRET, encoding="utf-8")
    (tmp_path / "report.md").symlink_to(outside)
    with pytest.raises(OutputError, match="report.md"):
        write_text(tmp_path / "report.md", "new")
    tmp = tmp_path / f".table.csv.{os.getpid()}.tmp"  # planted at the temporary's name
    tmp.symlink_to(outside)
    write_text(tmp_path / "table.csv", "a,b\n")
    assert (tmp_path / "table.csv").read_text() == "a,b\n"
    assert outside.read_text(encoding="utf-8") == SECRET
    assert not tmp.exists() and not tmp.is_symlink()


def test_the_cache_refuses_a_link_at_its_database(tmp_path: Path) -> None:
    outside = tmp_path / "outside.db"
    outside.write_bytes(b"not mine")
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "cache.db").symlink_to(outside)
    with pytest.raises(OutputError, match="cache.db"):
        ResponseCache(tmp_path / "cache")
    assert outside.read_bytes() == b"not mine"
