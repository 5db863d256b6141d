"""The command line: every command group is registered; errors are one line, exit code 2.

The entry point itself (``python -m judgekit``: its help, its exit code and one-line error, the
modules a fresh interpreter imports) runs as a real process; the other commands run in this
process (tests/cli_inproc.py), where no process boundary is under test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_inproc import run_main

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


def test_localise_dry_run_sends_nothing(tmp_path: Path, judgekit_data: Path) -> None:
    # configs/localise.yaml reads NTREX-128 by name (data:ntrex128/...)
    result = run_main("localise", "--dry-run", "--out", str(tmp_path / "loc"))
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


def test_a_bad_pipeline_option_fails_when_the_config_loads(tmp_path: Path) -> None:
    # the classify section is typed by the registry's options model: checked before any input
    # is read (the items file does not exist), one line naming file, line and key, exit 2
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(
        b"pipeline: classify\njudge: {model: local/x}\nclassify:\n  items: none.jsonl\n"
        b"  labels: [a, b]\n  samples: many\n"
    )
    result = run_main("run", str(bad), "--dry-run")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert f"{bad}:6" in result.stderr and "classify.samples" in result.stderr
    assert "none.jsonl" not in result.stderr


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
    result = run_main("run", "configs/spilling.yaml", "--dry-run", "--no-cache",
                      "--out", str(tmp_path / "sp"))  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    text = " ".join(result.stdout.split())
    assert "dry run: 36 tasks: 0 already recorded" in text and "36 calls to send" in text
    assert "at most 1 judge call per valid generation" in text
    assert (
        not (tmp_path / "sp" / "records.jsonl").exists()
        or not (tmp_path / "sp" / "records.jsonl").read_text()
    )


HEAVY = ("statsmodels", "scipy", "sklearn", "pandas", "matplotlib", "litellm", "instructor")


def _modules_after(*argv: str) -> set[str]:
    """Top-level packages imported by ``judgekit ARGV`` (run in a fresh interpreter)."""
    code = (
        "import sys\n"
        "from judgekit.cli import main\n"
        f"sys.argv = ['judgekit', *{list(argv)!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})), file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    return set(proc.stderr.strip().splitlines()[-1].split())


def test_help_imports_no_heavy_library() -> None:
    loaded = _modules_after("--help")
    assert "typer" in loaded  # the probe did run the command line
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_a_command_imports_only_what_it_uses() -> None:
    loaded = _modules_after("cache", "--help")
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_the_listed_help_of_each_command_is_its_own() -> None:
    from judgekit.cli.root import COMMANDS, load_command

    for name, (_module, listed) in COMMANDS.items():
        command = load_command(name)
        own = " ".join((command.help or "").split("\n\n")[0].split())
        assert listed == own, name


def test_run_prints_the_one_line_signature(tmp_path: Path) -> None:
    from fault_server import FaultServer

    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "a", "text": "Nice."}\n', encoding="utf-8")
    with FaultServer() as srv:
        result = run_main(
            "run", "configs/classify.yaml", "--out", str(tmp_path / "out"), "--no-cache",
            "--set", "judge.model=hosted_vllm/stub", "--set", f"judge.api_base={srv.base_url}",
            "--set", f"classify.items={items}",
        )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    line = next(x for x in result.stdout.splitlines() if x.startswith("signature: "))
    assert line.startswith("signature: judgekit:0.1.0|pipeline:classify|judge:stub=hosted_vllm/")
    assert "|prompt:classify/default@" in line and "|data:items.jsonl@" in line


def test_a_classify_run_on_a_local_server_imports_no_heavy_library(tmp_path: Path) -> None:
    from fault_server import FaultServer

    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "a", "text": "Nice."}\n', encoding="utf-8")
    with FaultServer() as srv:
        loaded = _modules_after(
            "run", "configs/classify.yaml", "--out", str(tmp_path / "out"), "--no-cache",
            "--set", "judge.model=hosted_vllm/stub", "--set", f"judge.api_base={srv.base_url}",
            "--set", f"classify.items={items}",
        )  # fmt: skip
    assert (tmp_path / "out" / "summary.json").is_file()  # the run did run
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["calibrate", "agreement", "{labels}", "--confidence", "2"], "--confidence"),
        (["calibrate", "agreement", "{labels}", "--confidence", "nan"], "--confidence"),
        (["calibrate", "agreement", "{labels}", "--n-resamples", "-1"], "--n-resamples"),
        (["calibrate", "compare", "{labels}", "{labels}", "--confidence", "1"], "--confidence"),
        (["calibrate", "plan", "--judge", "{labels}", "--kappa", "0.5", "--width", "nan"],
         "--width"),
        (["calibrate", "plan", "--judge", "{labels}", "--kappa", "0.5", "--width", "-1"],
         "--width"),
        (["calibrate", "estimate", "--judge", "{labels}", "--human", "{labels}", "--alpha",
          "inf"], "--alpha"),
        (["calibrate", "judge", "--judge", "{labels}", "--human", "{labels}", "--q", "0"], "--q"),
        (["drift", "compare", "--before", "{labels}", "--after", "{labels}", "--n-boot", "-1"],
         "--n-boot"),
    ],
)  # fmt: skip
def test_out_of_range_numeric_options_exit_2_naming_the_option(tmp_path: Path, args, option):
    from typer.testing import CliRunner

    from judgekit.cli import app, calibrate, drift  # noqa: F401  (registers the groups)

    labels = tmp_path / "l.csv"
    labels.write_text("item,rater,label\na,r1,1\na,r2,1\nb,r1,0\nb,r2,1\n")
    result = CliRunner().invoke(app, [a.format(labels=labels) for a in args])
    assert result.exit_code == 2 and not isinstance(result.exception, ArithmeticError)
    assert f"Invalid value for '{option}'" in result.output


def test_agreement_with_no_item_rated_twice_is_refused_saying_why(tmp_path: Path) -> None:
    # a run's labels.csv holds one judge: no item has 2 ratings, so nothing to agree on
    labels = tmp_path / "labels.csv"
    labels.write_text("item,rater,label\n" + "".join(f"i{i},judge,{i % 2}\n" for i in range(6)))
    result = run_main("calibrate", "agreement", str(labels), "--n-resamples", "0")
    assert result.returncode == 2 and result.stdout == "", result.stdout
    error = " ".join(result.stderr.split())
    assert error.startswith(f"error: {labels}: no item has 2 or more ratings (6 items, raters")
    assert error.endswith("one rater: a run's labels.csv holds its judge's labels only; compare "
                          "them with human labels by `judgekit calibrate judge --judge RUN_DIR "
                          "--human HUMAN_LABELS`")  # fmt: skip
    assert "Traceback" not in result.stderr
    # two raters on disjoint items (a wide file with gaps): the same refusal, its own reason
    labels.write_text("item,r1,r2\na,1,\nb,,0\n")
    result = run_main("calibrate", "agreement", str(labels), "--format", "wide")
    error = " ".join(result.stderr.split())
    assert result.returncode == 2 and "(2 items, raters 'r1', 'r2')" in error, error
    assert error.endswith("the raters labelled disjoint items")


def test_agreement_refusal_shows_hostile_rater_names_on_one_line(tmp_path: Path) -> None:
    # rater names from the file are shown clipped, escaped and as text: one line, no ANSI
    # sequence reaching the terminal, no rich markup read, no 100 000-character line
    labels = tmp_path / "labels.csv"
    hostile = "[bold]x[/]\x1b[31mred\nsecond"
    rows = [f'i0,"{hostile}",yes', "i1,[/],no", f"i2,{'r' * 100_000},yes"]
    labels.write_text("item,rater,label\n" + "\n".join(rows) + "\n")
    result = run_main("calibrate", "agreement", str(labels), "--n-resamples", "0")
    assert result.returncode == 2, result.stdout
    (line,) = result.stderr.splitlines()  # before: the name's line break split the error
    assert "\x1b" not in line and len(line) < 600, len(line)
    assert r"'[bold]x[/]\x1b[31mred\nsecond'" in line and "'[/]'" in line


def test_agreement_on_an_empty_labels_file_says_it_has_no_ratings(tmp_path: Path) -> None:
    labels = tmp_path / "labels.csv"
    labels.write_text("item,rater,label\n")
    result = run_main("calibrate", "agreement", str(labels), "--n-resamples", "0")
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: {labels}: no ratings in the file"), result.stderr
