"""The command line: every command group is registered; errors are one line, exit code 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def judgekit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "judgekit", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_help_lists_every_command_group() -> None:
    out = judgekit("--help").stdout
    for command in ("run", "audit", "calibrate", "score", "mqm", "contrast", "localise",
                    "dictionaries", "cache"):  # fmt: skip
        assert command in out, command


def test_localise_dry_run_sends_nothing(tmp_path: Path) -> None:
    result = judgekit("localise", "--dry-run", "--out", str(tmp_path / "loc"))
    assert result.returncode == 0, result.stdout + result.stderr
    text = " ".join(result.stdout.split())
    assert "dry run: 3 tasks" in text and "3 calls to send" in text and "Nothing was sent" in text
    assert (
        not (tmp_path / "loc" / "records.jsonl").exists()
        or not (tmp_path / "loc" / "records.jsonl").read_text()
    )


def test_bad_input_is_one_line_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"pipeline: spilling\njudge: {model: local/x}\nlimt: 2\n")
    result = judgekit("run", str(bad))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert f"{bad}:3" in result.stderr and "limt" in result.stderr


def test_user_text_in_tables_is_printed_as_it_is() -> None:
    from rich.table import Table

    from judgekit.cli.output import plain_console

    console = plain_console()
    table = Table()
    table.add_column("word")
    table.add_row("[bold]head[/bold] :smile: [ai]")
    with console.capture() as captured:
        console.print(table)
    assert "[bold]head[/bold] :smile: [ai]" in captured.get()


def test_spilling_dry_run_counts_the_generations_and_says_what_may_follow(tmp_path: Path) -> None:
    result = judgekit("run", "configs/spilling.yaml", "--dry-run", "--no-cache",
                      "--out", str(tmp_path / "sp"))  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    text = " ".join(result.stdout.split())
    assert "dry run: 36 tasks: 0 already recorded" in text and "36 calls to send" in text
    assert "at most 1 judge call per valid generation" in text
    assert (
        not (tmp_path / "sp" / "records.jsonl").exists()
        or not (tmp_path / "sp" / "records.jsonl").read_text()
    )
