"""`judgekit calibrate tune TUNE.yaml` end to end against a real OpenAI-compatible stub server on
127.0.0.1 (tests/fault_server.py): candidates run as grid cells, choice on select, report on the
sealed test split, best.yaml that `judgekit run` takes; bad tune files exit 2 naming file, line
and field."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from cli_inproc import Ran, run_main
from fault_server import FaultServer
from test_grid import answer, base_config

from judgekit.calibration.tune import choose, statistic, test_hash
from judgekit.errors import InputError
from judgekit.view.tune import tune_blocks

REPO = Path(__file__).resolve().parents[1]


def judgekit(*args: str, code: int = 0) -> Ran:
    proc = run_main(*args)
    assert proc.returncode == code, proc.stdout + proc.stderr
    return proc


def tune_file(url: str, extra: str = "") -> str:
    judges = "\n".join(f"  - {{model: hosted_vllm/stub-{j}, api_base: {url}}}" for j in "ab")
    return (
        "base: base.yaml\nlabels: humans.csv\ngenerations: labelled\n"
        f"judges:\n{judges}\n"
        "prompts: {key: spilling.judge_prompt, values: [default, strict]}\n"
        "tune: {statistic: accuracy, baseline: stub-b__strict, seed: 3, n_boot: 200,"
        " mode: split}\n" + extra
    )


def label_and_tune(tmp_path: Path, url: str) -> tuple[list, Path, Ran]:
    """Label the items with the stub's judge, make humans of them (every 4th item flipped, one
    rater) and run `calibrate tune`: (humans' rows, the tune folder, the tune process)."""
    (tmp_path / "base.yaml").write_text(base_config(url))
    judgekit("run", str(tmp_path / "base.yaml"), "--out", str(tmp_path / "labelled"))
    labelled = pd.read_csv(tmp_path / "labelled" / "labels.csv", dtype=str)
    flip = {"true": "false", "false": "true"}
    humans = [
        (item, "ann1", flip[label] if k % 4 == 0 else label)
        for k, (item, label) in enumerate(zip(labelled["item"], labelled["label"], strict=True))
    ]
    pd.DataFrame(humans, columns=["item", "rater", "label"]).to_csv(
        tmp_path / "humans.csv", index=False
    )
    (tmp_path / "tune.yaml").write_text(tune_file(url))
    out = tmp_path / "tune"
    proc = judgekit("calibrate", "tune", str(tmp_path / "tune.yaml"), "--out", str(out))
    return humans, out, proc


def check_splits(out: Path, proc: Ran) -> dict:
    """Disjoint tune/select/test splits of the 60 items, stratified by language and label."""
    splits = json.loads((out / "splits.json").read_text())
    tune, select, test = (set(splits[k]) for k in ("tune", "select", "test"))
    assert not (tune & select or tune & test or select & test)
    assert len(tune | select | test) == 60
    assert splits["test_hash"] == test_hash(splits["test"])
    # stratified by language (the spilling runs' lang) and label: each keeps its share
    assert splits["by"] == "lang"
    facets = json.loads((out / "tune.json").read_text())["facets"]
    assert set(facets["values"]) == {"de", "fr"} and facets["df"] == 1
    assert sum(v["n"] for v in facets["values"].values()) == len(test)
    assert "per lang on test: Cochran's Q=" in proc.stdout
    return splits


def check_choice(out: Path, humans: list, splits: dict) -> tuple[dict, Any]:
    """The ranking on select and the test figure, recomputed by hand from the cells' labels:
    (each cell's labels, the expected choice)."""
    gold = {i: lab for i, _, lab in humans}
    cells = {}
    for cell in ("stub-a__default", "stub-a__strict", "stub-b__default", "stub-b__strict"):
        frame = pd.read_csv(out / cell / "labels.csv", dtype=str)
        cells[cell] = frame.set_index("item")["label"].to_dict()
    expected = choose(cells, gold, sorted(splits["select"]), "accuracy")
    ranking = json.loads((out / "ranking.json").read_text())
    assert [name for name, _ in ranking["select"]] == [n for n, _ in expected.figures]
    report = json.loads((out / "tune.json").read_text())
    assert report["chosen"] == expected.chosen
    test_ids = sorted(splits["test"])
    figure = statistic("accuracy", [cells[expected.chosen][i] for i in test_ids],
                       [gold[i] for i in test_ids])  # fmt: skip
    assert report["test_figure"] == pytest.approx(figure)
    assert report["optimism"] == pytest.approx(dict(expected.figures)[expected.chosen] - figure)
    assert report["n_test"] == len(test_ids) and report["looks"] == 1
    assert report["test_ci"][0] <= figure <= report["test_ci"][1]
    assert (out / "tune.png").read_bytes()[:4] == b"\x89PNG"
    assert (out / "tune.png").stat().st_size > 5000
    return cells, expected


def check_best_runs(tmp_path: Path, out: Path, chosen: str, splits: dict) -> None:
    """best.yaml is a run config: `judgekit run` takes it and judges with the chosen cell."""
    best = yaml.safe_load((out / "best.yaml").read_text())
    chosen_judge = chosen.split("__")[0]
    assert best["judge"]["model"] == f"hosted_vllm/{chosen_judge}"
    assert f"tuned_test_hash: {splits['test_hash']}" in (out / "best.yaml").read_text()
    judgekit("run", str(out / "best.yaml"), "--out", str(tmp_path / "again"), "--limit", "2")


def check_estimate_looks(tmp_path: Path, out: Path, chosen: str) -> None:
    """calibrate estimate refuses the tuned judge's test labels unless told; then a look."""
    estimate = ["calibrate", "estimate", "--judge", str(out / chosen),
                "--human", str(tmp_path / "humans.csv"), "--tuned", str(out)]  # fmt: skip
    proc = judgekit(*estimate, code=2)
    assert "sealed test items" in proc.stdout + proc.stderr
    assert json.loads((out / "looks.json").read_text())["looks"] == 1
    proc = judgekit(*estimate, "--allow-test-labels", "--target", "share:maybe", code=2)
    assert json.loads((out / "looks.json").read_text())["looks"] == 1  # no figure, no look
    proc = judgekit(*estimate, "--allow-test-labels")
    assert json.loads((out / "looks.json").read_text())["looks"] == 2
    assert "looks at the sealed test split: 2" in proc.stderr


def check_nested(tmp_path: Path, out: Path, server: FaultServer, cells: dict, calls: int) -> None:
    """Nested mode on the same (copied, finished) cells: every item held out once, no calls."""
    nested = tmp_path / "nested"
    nested.mkdir()
    for cell in cells:
        shutil.copytree(out / cell, nested / cell)
    text = tune_file(server.base_url).replace("mode: split", "mode: nested, folds: 4")
    (tmp_path / "nested.yaml").write_text(text)
    proc = judgekit("calibrate", "tune", str(tmp_path / "nested.yaml"), "--out", str(nested))
    assert server.total_requests == calls
    doc = json.loads((nested / "splits.json").read_text())
    assert doc["mode"] == "nested" and len(doc["folds"]) == 4 and len(doc["test"]) == 60
    assert sorted(i for f in doc["folds"] for i in f) == sorted(doc["test"])
    report = json.loads((nested / "tune.json").read_text())
    assert report["mode"] == "nested 4-fold" and report["n_test"] == 60
    assert "nested 4-fold" in proc.stdout and "gain of the procedure over" in proc.stdout
    choices = report["fold_choices"]
    assert len(choices) == 4 and set(choices) <= set(cells)
    said = " ".join(proc.stdout.split()).split("chosen without each fold: ")[1]
    for choice in set(choices):
        assert f"{choice} ({choices.count(choice)} of 4)" in said.split(" optimism")[0]


def check_left_out(tmp_path: Path, humans: list, server: FaultServer, calls: int) -> None:
    """Labels left out are said with counts and ids (console, tune.json, splits.json): a second
    rater disagreeing on 3 items (ties) and 2 labelled items that are not in the run."""
    flip = {"true": "false", "false": "true"}
    nested = tmp_path / "nested"
    tied = [item for item, _, _ in humans[:3]]
    extra = [(item, "ann2", flip[label]) for item, _, label in humans[:3]]
    ghosts = [("ghost-1", "ann1", "true"), ("ghost-2", "ann1", "false")]
    pd.DataFrame(humans + extra + ghosts, columns=["item", "rater", "label"]).to_csv(
        tmp_path / "humans2.csv", index=False
    )
    left = tmp_path / "left"
    shutil.copytree(nested, left)
    (left / "looks.json").unlink()
    proc = judgekit("calibrate", "tune", str(tmp_path / "nested.yaml"), "--out", str(left),
                    "--labels", str(tmp_path / "humans2.csv"))  # fmt: skip
    assert server.total_requests == calls
    ties_note = f"3 human ties (left out; items {', '.join(sorted(tied))})"
    ghost_note = ("2 human-labelled items not labelled by every candidate (left out for "
                  "every candidate; items ghost-1, ghost-2)")  # fmt: skip
    assert f"note: {ties_note}" in proc.stdout and f"note: {ghost_note}" in proc.stdout
    report = json.loads((left / "tune.json").read_text())
    assert report["notes"] == [ties_note, ghost_note]
    # the view card of the tune says them too, each on its own row
    (card, *_), _ = tune_blocks(left / report["chosen"])
    said = [(row[1], row[2]) for row in card["items"] if row[0] == "left out"]
    assert said == [(ties_note, ["tune", "notes", 0]), (ghost_note, ["tune", "notes", 1])]
    folds = [row for row in card["items"] if row[0].startswith("chosen without fold")]
    assert folds == [[f"chosen without fold {k + 1}", c, ["tune", "fold_choices", k]]
                     for k, c in enumerate(report["fold_choices"])]  # fmt: skip
    for key, bad in [(k, v) for k in ("notes", "fold_choices") for v in (5, "a", [1, None])]:
        (left / "tune.json").write_text(json.dumps({**report, key: bad}))  # edited by hand
        with pytest.raises(InputError, match=f"field '{key}'"):
            tune_blocks(left / report["chosen"])
    (left / "tune.json").write_text(json.dumps({k: v for k, v in report.items() if k != "looks"}))
    with pytest.raises(InputError, match="field 'looks'"):
        tune_blocks(left / report["chosen"])
    doc = json.loads((left / "splits.json").read_text())
    ties = doc["left_out"]["ties"]
    assert ties["n"] == 3 and ties["items"] == sorted(tied)
    assert doc["left_out"]["not_labelled"]["items"] == ["ghost-1", "ghost-2"]
    assert len(doc["test"]) == 57 and not set(doc["test"]) & {*tied, "ghost-1", "ghost-2"}


def test_tune_chooses_on_select_reports_on_test_and_writes_a_runnable_best(
    tmp_path: Path,
) -> None:
    with FaultServer(answer_fn=answer) as server:
        humans, out, proc = label_and_tune(tmp_path, server.base_url)
        assert "looks at the sealed test split: 1" in proc.stdout
        splits = check_splits(out, proc)
        cells, expected = check_choice(out, humans, splits)
        check_best_runs(tmp_path, out, expected.chosen, splits)
        check_estimate_looks(tmp_path, out, expected.chosen)

        # rerun: every candidate resumes (no model calls), one more look counted
        calls = server.total_requests
        proc = judgekit("calibrate", "tune", str(tmp_path / "tune.yaml"), "--out", str(out))
        assert server.total_requests == calls
        assert "looks at the sealed test split: 3" in proc.stdout
        check_nested(tmp_path, out, server, cells, calls)
        check_left_out(tmp_path, humans, server, calls)


def test_guard_refuses_test_items_counts_a_look_when_allowed(tmp_path: Path) -> None:
    from judgekit.calibration.tune import read_looks
    from judgekit.calibration.tune.guard import check_human_sample, count_look
    from judgekit.errors import InputError

    doc = {"test_hash": test_hash(["t1", "t2"]), "test": ["t1", "t2"], "tune": [], "select": []}
    (tmp_path / "splits.json").write_text(json.dumps(doc))
    assert check_human_sample(tmp_path, ["a", "b"], False) == 0
    with pytest.raises(InputError, match="1 of the human labels"):
        check_human_sample(tmp_path, ["a", "t2"], False)
    assert check_human_sample(tmp_path, ["t1", "t2"], True) == 2
    assert read_looks(tmp_path) == 0  # counted by the command once its figures exist
    assert count_look(tmp_path, "x") == 1 and read_looks(tmp_path) == 1


@pytest.mark.parametrize(
    ("extra", "field", "line"),
    [
        ("tune: {statistic: f1}\n", "tune.statistic", 8),
        ("tune: {fractions: [0.5, 0.5, 0.5]}\n", "tune.fractions", 8),
        ("bogus: 1\n", "bogus", 8),
        ("tune: {fractions: [.nan, 0.5, 0.5]}\n", "tune.fractions[0]", 8),
        ("tune: {n_boot: .inf}\n", "tune.n_boot", 8),
    ],
)
def test_bad_tune_files_exit_2_naming_file_line_and_field(
    tmp_path: Path, extra: str, field: str, line: int
) -> None:
    (tmp_path / "base.yaml").write_text(base_config("http://127.0.0.1:9/v1"))
    text = tune_file("http://127.0.0.1:9/v1").replace(
        "tune: {statistic: accuracy, baseline: stub-b__strict, seed: 3, n_boot: 200,"
        " mode: split}\n",
        "",
    )
    (tmp_path / "tune.yaml").write_text(text + extra)
    proc = judgekit("calibrate", "tune", str(tmp_path / "tune.yaml"), code=2)
    message = proc.stdout + proc.stderr
    assert "tune.yaml" in message and field in message and f"tune.yaml:{line}:" in message
    assert "Traceback" not in message


def test_missing_tune_file_and_unknown_baseline_exit_2(tmp_path: Path) -> None:
    proc = judgekit("calibrate", "tune", str(tmp_path / "nope.yaml"), code=2)
    assert "nope.yaml" in proc.stdout + proc.stderr
    (tmp_path / "base.yaml").write_text(base_config("http://127.0.0.1:9/v1"))
    (tmp_path / "humans.csv").write_text("item,rater,label\nx,a,true\n")
    text = tune_file("http://127.0.0.1:9/v1").replace("stub-b__strict", "stub-c__strict")
    (tmp_path / "tune.yaml").write_text(text)
    proc = judgekit("calibrate", "tune", str(tmp_path / "tune.yaml"), code=2)
    message = proc.stdout + proc.stderr
    assert "stub-c__strict" in message and "Traceback" not in message


@pytest.mark.parametrize(
    ("mode", "field", "said"),
    [("split", "tune.fractions", "leave 1 for select and 1 for test"),
     ("nested", "tune.folds", "5 folds need at least 10")],
)  # fmt: skip
def test_too_few_labels_for_the_splits_exit_2_before_any_call(
    tmp_path: Path, mode: str, field: str, said: str
) -> None:
    (tmp_path / "base.yaml").write_text(base_config("http://127.0.0.1:9/v1"))  # nothing listens
    rows = "".join(f"i{k},ann1,{'true' if k % 2 else 'false'}\n" for k in range(4))
    (tmp_path / "humans.csv").write_text("item,rater,label\n" + rows)
    text = tune_file("http://127.0.0.1:9/v1").replace("mode: split", f"mode: {mode}")
    (tmp_path / "tune.yaml").write_text(text)
    proc = judgekit("calibrate", "tune", str(tmp_path / "tune.yaml"), "--out", str(tmp_path / "o"),
                    code=2)  # fmt: skip
    message = proc.stdout + proc.stderr
    assert f"tune.yaml: field '{field}'" in message and said in message, message
    assert "4 items carry a human label" in message and "Traceback" not in message
    assert not list((tmp_path / "o").glob("*/records.jsonl"))  # no candidate ran


def test_kappa_over_one_class_of_human_labels_exits_2_before_any_call(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text(base_config("http://127.0.0.1:9/v1"))  # nothing listens
    rows = "".join(f"i{k},ann1,true\n" for k in range(60))
    (tmp_path / "humans.csv").write_text("item,rater,label\n" + rows)
    text = tune_file("http://127.0.0.1:9/v1").replace("statistic: accuracy", "statistic: kappa")
    (tmp_path / "tune.yaml").write_text(text)
    proc = judgekit("calibrate", "tune", str(tmp_path / "tune.yaml"), "--out", str(tmp_path / "o"),
                    code=2)  # fmt: skip
    message = proc.stdout + proc.stderr
    assert "field 'tune.statistic'" in message and "every human label is 'true'" in message
    assert not list((tmp_path / "o").glob("*/records.jsonl")) and "Traceback" not in message


@pytest.mark.parametrize("stat", ["tau_b", "acc_eq"])
def test_a_score_statistic_over_class_labels_exits_2_before_any_call(
    tmp_path: Path, stat: str
) -> None:
    (tmp_path / "base.yaml").write_text(base_config("http://127.0.0.1:9/v1"))  # nothing listens
    rows = "".join(f"i{k},ann1,{'true' if k % 2 else 'false'}\n" for k in range(60))
    (tmp_path / "humans.csv").write_text("item,rater,label\n" + rows)
    text = tune_file("http://127.0.0.1:9/v1").replace("statistic: accuracy", f"statistic: {stat}")
    (tmp_path / "tune.yaml").write_text(text)
    proc = judgekit("calibrate", "tune", str(tmp_path / "tune.yaml"), "--out", str(tmp_path / "o"),
                    code=2)  # fmt: skip
    message = proc.stdout + proc.stderr
    assert "tune.yaml:8: field 'tune.statistic'" in message, message
    assert f"{stat} compares scores, but 60 of 60 human labels are not numbers" in message
    assert not list((tmp_path / "o").glob("*/records.jsonl")) and "Traceback" not in message


@pytest.mark.parametrize(
    ("prompts", "field", "said"),
    [("{key: spilling.nosuch, values: [default, strict]}", "prompts.key", "unknown key"),
     ("{key: spilling.judge_prompt, values: [default, nosuch]}", "prompts.values[1]",
      "no prompt 'nosuch' (prompts/spilling/judge.<name>.txt); known: default, strict")],
)  # fmt: skip
def test_a_bad_prompt_key_or_value_is_located_in_the_tune_file_before_any_call(
    tmp_path: Path, prompts: str, field: str, said: str
) -> None:
    (tmp_path / "base.yaml").write_text(base_config("http://127.0.0.1:9/v1"))  # nothing listens
    rows = "".join(f"i{k},ann1,{'true' if k % 2 else 'false'}\n" for k in range(60))
    (tmp_path / "humans.csv").write_text("item,rater,label\n" + rows)
    text = tune_file("http://127.0.0.1:9/v1").replace(
        "{key: spilling.judge_prompt, values: [default, strict]}", prompts
    )
    (tmp_path / "tune.yaml").write_text(text)
    proc = judgekit("calibrate", "tune", str(tmp_path / "tune.yaml"), "--out", str(tmp_path / "o"),
                    code=2)  # fmt: skip
    message = proc.stdout + proc.stderr
    assert f"tune.yaml:7: field '{field}'" in message and said in message, message
    assert "<command line>" not in message and "baseline" not in message
    assert not list((tmp_path / "o").glob("*/records.jsonl")) and "Traceback" not in message


def ctrl_c_reaches() -> None:
    """In the child: SIGINT at its default, as for a command in a terminal. A test process
    started in the background (``pytest ... &`` in a script) has SIGINT ignored, which its
    children inherit; Ctrl-C could not reach such a command (SIGTERM does, see test_faults_e2e)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_during_tune_says_the_records_kept_per_cell_and_exits_130(tmp_path: Path) -> None:
    with FaultServer(answer_fn=answer) as server:
        (tmp_path / "base.yaml").write_text(base_config(server.base_url))
        rows = "".join(f"i{k},ann1,{'true' if k % 2 else 'false'}\n" for k in range(60))
        (tmp_path / "humans.csv").write_text("item,rater,label\n" + rows)
        text = tune_file(server.base_url).replace("generations: labelled\n", "")
        (tmp_path / "tune.yaml").write_text(text)
        server.set_phase(40, "hold")  # the run cannot end before the signal, however loaded
        out = tmp_path / "o"
        proc = subprocess.Popen(
            [sys.executable, "-m", "judgekit", "calibrate", "tune", str(tmp_path / "tune.yaml"),
             "--out", str(out)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            preexec_fn=ctrl_c_reaches,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while server.held < 1 and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert server.held >= 1, "the tune never reached the held requests"
            proc.send_signal(signal.SIGINT)
            said = proc.communicate(timeout=60)[0].decode("utf-8", "replace")
        finally:
            if proc.poll() is None:
                proc.kill()
    kept = {p.parent.name: p.read_bytes().count(b"\n") for p in out.glob("*/records.jsonl")}
    assert proc.returncode == 130 and "Traceback" not in said, said[-3000:]
    cells = ", ".join(f"{name} {n}" for name, n in sorted(kept.items()))
    assert (
        f"interrupted: {sum(kept.values())} records kept in {out} ({cells}); run the same "
        "command again to resume" in said.replace("\n", "")
    ), said[-3000:]
    assert sum(kept.values()) > 0


def test_ac1_and_acc_eq_statistics_match_their_definitions() -> None:
    human = ["a", "a", "b", "a", "b", "b", "a", "a"]
    judge = ["a", "b", "b", "a", "b", "a", "a", "a"]
    # Gwet's AC1 by hand: p_a, p_e = sum_k pi_k (1 - pi_k) / (q - 1), pi_k over both raters
    p_a = sum(h == j for h, j in zip(human, judge, strict=True)) / len(human)
    pi = {k: (human.count(k) + judge.count(k)) / (2 * len(human)) for k in "ab"}
    p_e = sum(p * (1 - p) for p in pi.values())
    assert statistic("ac1", judge, human) == pytest.approx((p_a - p_e) / (1 - p_e))
    # acc_eq: share of item pairs both tie or both order alike
    h, j = [1.0, 2.0, 2.0, 3.0], [0.5, 0.7, 0.7, 0.6]
    pairs = [(a, b) for a in range(4) for b in range(a + 1, 4)]
    agree = [
        (h[a] == h[b] and j[a] == j[b])
        or (h[a] != h[b] and j[a] != j[b] and (h[a] < h[b]) == (j[a] < j[b]))
        for a, b in pairs
    ]
    assert statistic("acc_eq", j, h) == pytest.approx(sum(agree) / len(pairs))


def test_a_score_statistic_refuses_a_candidate_of_classes(tmp_path: Path) -> None:
    from judgekit.calibration.tune.run import check_outputs
    from judgekit.calibration.tune.spec import load_tune
    from judgekit.errors import InputError

    (tmp_path / "base.yaml").write_text(base_config("http://127.0.0.1:9/v1"))
    text = tune_file("http://127.0.0.1:9/v1").replace("statistic: accuracy", "statistic: tau_b")
    (tmp_path / "tune.yaml").write_text(text)
    config = load_tune(tmp_path / "tune.yaml")
    check_outputs(config, {"a": {"i1": "1", "i2": "0.5"}})  # scores pass
    with pytest.raises(InputError, match="candidate b gave 1 labels that are not numbers") as e:
        check_outputs(config, {"a": {"i1": "1"}, "b": {"i1": "2", "i2": "true"}})
    assert (e.value.line, e.value.field) == (8, "tune.statistic")
