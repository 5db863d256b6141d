"""Hostile input files at the boundaries that read them: one located error (file, line,
field, exit 2), never a traceback and never a figure computed from a value that is not one."""

from __future__ import annotations

import json
import math

import pytest
from cli_inproc import Ran, run_main
from typer.testing import CliRunner

from judgekit.cli import app
from judgekit.errors import InputError
from judgekit.metrics.mteval import read_seg_scores, score_cell

runner = CliRunner()


def cli(*args: str) -> Ran:
    """judgekit as ``python -m judgekit`` runs it, in this process (tests/cli_inproc.py): its
    exit code and the one line an error prints; an unexpected exception fails the test."""
    return run_main(*args)


def assert_located(done: Ran, *parts: str) -> None:
    text = done.stdout + done.stderr
    assert done.returncode == 2, text
    assert "Traceback" not in text
    for part in parts:
        assert part in text, text


def _score_table(path, cells: dict[tuple[int, int], str]) -> None:
    rows = ["system,segment,score"]
    for system in range(4):
        for segment in range(6):
            value = cells.get((system, segment), f"{system + 0.1 * segment:.2f}")
            rows.append(f"s{system},{segment},{value}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


@pytest.mark.parametrize("bad", ["inf", "-Infinity", "1e999"])
def test_compare_refuses_an_infinite_score_in_a_score_table(tmp_path, bad):
    human, judge = tmp_path / "human.csv", tmp_path / "judge.csv"
    _score_table(human, {})
    _score_table(judge, {(0, 0): bad})
    args = ["calibrate", "compare", "--human", str(human), "--judge", f"J={judge}"]
    done = cli(*args, "--n-resamples", "0", "--permutations", "0")
    assert_located(done, "judge.csv:2", "'score'", "not finite")


@pytest.mark.parametrize("marker", ["NA", "N/A", "null", "None", "nan", ""])
def test_compare_reads_every_missing_marker_as_missing(tmp_path, marker):
    human, judge = tmp_path / "human.csv", tmp_path / "judge.csv"
    _score_table(human, {})
    _score_table(judge, {(0, 0): marker})
    args = ["calibrate", "compare", "--human", str(human), "--judge", f"J={judge}", "--json"]
    result = runner.invoke(app, [*args, "--n-resamples", "0", "--permutations", "0"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["rows"]
    tau = next(r for r in rows if r["statistic"] == "tau_b")
    assert tau["value"] == pytest.approx(1.0)  # the other 23 cells agree exactly


def test_score_cell_is_one_rule_for_text_and_json_values():
    assert score_cell("1.5", "f", 1) == 1.5 and score_cell(2, "f", 1) == 2.0
    assert math.isnan(score_cell(None, "f", 1)) and math.isnan(score_cell(" N/A ", "f", 1))
    for bad in (True, [1], {"a": 1}, "inf", float("inf"), "high"):
        with pytest.raises(InputError) as caught:
            score_cell(bad, "scores.jsonl", 7)
        assert "scores.jsonl:7" in str(caught.value)


def test_jsonl_score_table_with_a_boolean_score_is_refused(tmp_path):
    human, judge = tmp_path / "human.csv", tmp_path / "judge.jsonl"
    _score_table(human, {})
    lines = [
        {"system": f"s{s}", "segment": g, "score": True if (s, g) == (1, 2) else s + g}
        for s in range(4)
        for g in range(6)
    ]
    judge.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    args = ["calibrate", "compare", "--human", str(human), "--judge", f"J={judge}"]
    done = cli(*args, "--n-resamples", "0", "--permutations", "0")
    assert_located(done, "judge.jsonl:9", "True")


def test_mt_metrics_eval_file_takes_the_same_missing_markers(tmp_path):
    path = tmp_path / "en-de.j.seg.score.tsv"
    path.write_text("a\t1\na\tN/A\na\tnull\nb\tNone\n", encoding="utf-8")
    frame = read_seg_scores(path)
    assert frame["score"].isna().tolist() == [False, True, True, True]


def test_docs_file_lines_end_at_newline_only_and_bad_bytes_are_located(tmp_path):
    from judgekit.calibration.compare.inputs import read_docs

    path = tmp_path / "en-de.docs"
    path.write_text("news\tdoc\u2028one\nsocial\tdoc2\n", encoding="utf-8")
    docs = read_docs(path)
    assert list(docs) == ["0", "1"] and docs["0"]["doc"] == "doc\u2028one"
    path.write_bytes(b"news\tdoc\nsocial\t\xff\n")
    with pytest.raises(InputError) as caught:
        read_docs(path)
    assert "en-de.docs:2" in str(caught.value)


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_a_json_or_yaml_label_file_is_named_as_such_not_read_as_csv(tmp_path, suffix):
    judge = tmp_path / "judge.csv"
    judge.write_text("item,rater,label\n1,j,pos\n2,j,neg\n", encoding="utf-8")
    human = tmp_path / f"human{suffix}"
    rows = [{"item": 1, "rater": "a", "label": "pos"}, {"item": 2, "rater": "a", "label": "neg"}]
    human.write_text(json.dumps(rows), encoding="utf-8")  # JSON is YAML too
    done = cli("calibrate", "judge", "--judge", str(judge), "--human", str(human))
    assert_located(done, f"human{suffix}", ".jsonl, .csv or .tsv", "one object a line")
