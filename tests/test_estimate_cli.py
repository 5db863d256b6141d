"""The ``calibrate estimate`` and ``calibrate plan`` commands: the --json shape, the console
table, errors as one line with exit code 2, the item list of a plan, an errors run against a
Google MQM TSV."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_estimate import errors_run, judgekit, write_long

from judgekit.calibration.estimate.run import run_estimate


@pytest.fixture()
def labelled(tmp_path: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(5)
    langs = ["de"] * 150 + ["fr"] * 150
    truth = rng.random(300) < np.where(np.array(langs) == "de", 0.3, 0.6)
    noisy = np.where(rng.random(300) < 0.85, truth, ~truth)
    rows = [(f"x{k}", "judge", "CS" if v else "CA", langs[k]) for k, v in enumerate(noisy)]
    judge = tmp_path / "judge.csv"
    pd.DataFrame(rows, columns=["item", "rater", "label", "language"]).to_csv(judge, index=False)
    human = write_long(
        tmp_path / "human.csv",
        [(f"x{k}", "h1", "CS" if truth[k] else "CA") for k in range(0, 300, 3)],
    )
    return judge, human


def test_cli_estimate_json_shape(labelled: tuple[Path, Path], tmp_path: Path):
    judge, human = labelled
    result = judgekit("calibrate", "estimate", "--judge", str(judge), "--human", str(human),
                      "--target", "share:CS", "--by", "language", "--json",
                      "--out", str(tmp_path / "est"))  # fmt: skip
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert set(payload) == {"signature", "interval", "estimates", "labels", "predictor"}
    assert payload["predictor"] == {"used": "hard"}  # a labels file without p: columns
    assert payload["labels"]["common"] == ["CA", "CS"] and payload["labels"]["notes"] == []
    keys = {"facet", "method", "estimate", "ci_low", "ci_high", "n_labelled", "n_unlabelled",
            "effective_n", "interval", "se", "note"}  # fmt: skip
    assert all(set(e) == keys for e in payload["estimates"])
    # a share with 100 labels, 50 per language: the CLT interval (t only below 50)
    assert payload["interval"] == {"requested": "auto", "resamples": 2000, "seed": 0,
                                   "rank_resamples": None,
                                   "used": {"all": "clt", "de": "clt", "fr": "clt"}}  # fmt: skip
    assert [(e["facet"], e["method"]) for e in payload["estimates"][:4]] == [
        ("all", m) for m in ("classical", "judge_only", "ppi", "ppi++")
    ]
    assert {e["facet"] for e in payload["estimates"]} == {"all", "de", "fr"}
    sig = payload["signature"]
    again = run_estimate(str(judge), str(human), target="share:CS").signature
    assert sig["inputs"]["human"]["sha256"] == again["inputs"]["human"]["sha256"]
    assert (sig["target"], sig["by"], sig["alpha"]) == ("share:CS", "language", 0.05)
    assert (sig["interval"], sig["resamples"], sig["seed"]) == ("auto", 2000, 0)
    assert sig["parameters"]["interval"] == "auto"
    assert json.loads((tmp_path / "est" / "estimate.json").read_text()) == payload
    everything = payload["estimates"][0]
    assert (everything["n_labelled"], everything["n_unlabelled"]) == (100, 200)


def test_cli_estimate_table_and_errors(labelled: tuple[Path, Path], tmp_path: Path):
    judge, human = labelled
    result = judgekit("calibrate", "estimate", "--judge", str(judge), "--human", str(human),
                      "--target", "share:CS", "--by", "language", "--rank", "higher")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "biased, no CI" in result.stdout and "Ranking by PPI++" in result.stdout
    extra = write_long(tmp_path / "more.csv", [("x0", "h1", "CS"), ("zz", "h1", "CA")])
    bad = judgekit("calibrate", "estimate", "--judge", str(judge), "--human", str(extra),
                   "--target", "share:CS")  # fmt: skip
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "1 item(s) labelled by humans but not judged ('zz')" in bad.stderr
    no_target = judgekit("calibrate", "estimate", "--judge", str(judge), "--human", str(human))
    assert no_target.returncode == 2 and "--target" in no_target.stderr


def test_cli_plan_writes_the_item_list(labelled: tuple[Path, Path], tmp_path: Path):
    judge, _ = labelled
    out = tmp_path / "to_label.txt"
    result = judgekit("calibrate", "plan", "--judge", str(judge), "--kappa", "0.7",
                      "--width", "0.1", "--target", "share:CS", "--by", "language",
                      "--seed", "7", "--items-out", str(out), "--json")  # fmt: skip
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    lines = out.read_text().splitlines()
    assert lines == plan["items"] and len(lines) == sum(p["n_ppi"] for p in plan["plans"])
    assert {p["facet"] for p in plan["plans"]} == {"de", "fr"}
    assert all(p["n_ppi"] < p["n_classical"] for p in plan["plans"])
    assert {p["interval"] for p in plan["plans"]} == {"clt"}  # 50 or more labels of a share
    assert (plan["signature"]["interval"], plan["signature"]["resamples"]) == ("auto", 2000)
    both = judgekit("calibrate", "plan", "--judge", str(judge), "--width", "0.05",
                    "--target", "share:CS")  # fmt: skip
    assert both.returncode == 2 and "exactly one of --pilot" in both.stderr


def test_cli_errors_run_with_a_human_mqm_tsv(tmp_path: Path):
    """An errors run directory as --judge, Google MQM TSV rows for half its segments as --human."""
    run, tsv = errors_run(tmp_path)
    judged = [json.loads(line) for line in (run / "segments.jsonl").read_text().splitlines()]
    keep = {(s["system"], s["doc"], s["seg_id"]) for s in judged[:22:2]}
    lines = tsv.read_text(encoding="utf-8").splitlines(keepends=True)
    header = lines[0].rstrip("\n").split("\t")
    col = {name: header.index(name) for name in ("system", "doc", "seg_id")}

    def key(line: str) -> tuple[str, str, str]:
        f = line.rstrip("\n").split("\t")
        return f[col["system"]], f[col["doc"]], f[col["seg_id"]]

    human = tmp_path / "human.tsv"
    human.write_text(lines[0] + "".join(x for x in lines[1:] if key(x) in keep), encoding="utf-8")
    result = judgekit("calibrate", "estimate", "--judge", str(run), "--human", str(human),
                      "--by", "system", "--rank", "lower", "--json")  # fmt: skip
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["signature"]["target"] == "mean"  # the errors run's default
    overall = payload["estimates"][0]
    assert (overall["n_labelled"], overall["n_unlabelled"]) == (11, 12)
    assert [r["rank"] for r in payload["ranking"]] == [1, 2, 3]
    assert payload["ranking"][0]["estimate"] <= payload["ranking"][-1]["estimate"]  # lower first


def test_estimate_in_a_run_directory_is_shown_by_view(labelled: tuple[Path, Path], tmp_path: Path):
    from judgekit.view import build_report

    judge, human = labelled
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "records.jsonl").write_text("", encoding="utf-8")
    result = judgekit("calibrate", "estimate", "--judge", str(judge), "--human", str(human),
                      "--target", "share:CS", "--out", str(run_dir))  # fmt: skip
    assert result.returncode == 0, result.stderr
    payload = json.loads((run_dir / "estimate.json").read_text())
    note = (run_dir / "estimate.md").read_text()
    sha = payload["signature"]["inputs"]["human"]["sha256"]
    assert sha[:16] in note and "pipeline:calibrate-estimate" in note
    ppi = next(e for e in payload["estimates"] if e["method"] == "ppi++")
    row = f"| all | PPI++ | {ppi['estimate']:.4f} | [{ppi['ci_low']:.4f}, {ppi['ci_high']:.4f}] |"
    assert row in note
    page = build_report([run_dir], tmp_path / "report.html").path.read_text(encoding="utf-8")
    assert "estimate.md" in page and sha[:16] in page and f"{ppi['estimate']:.4f}" in page


def _four_items(tmp_path: Path, human_labels: dict[str, str]) -> tuple[Path, Path]:
    judge = write_long(
        tmp_path / "judge.csv", [(i, "j", "CS" if i in "ac" else "CA") for i in "abcd"]
    )
    human = write_long(tmp_path / "human.csv", [(i, "h", lab) for i, lab in human_labels.items()])
    return judge, human


def test_a_share_of_a_label_nobody_gave_is_an_error_not_a_certain_zero(tmp_path: Path):
    judge, human = _four_items(tmp_path, {"a": "CS", "b": "CA", "c": "CS"})
    for command in (["estimate", "--human", str(human)], ["plan", "--width", "0.1",
                                                          "--kappa", "0.5"]):  # fmt: skip
        result = judgekit("calibrate", *command, "--judge", str(judge), "--target", "share:cs")
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert "no judge or human label is 'cs'" in result.stderr, result.stderr


def test_a_zero_width_interval_is_flagged(tmp_path: Path):
    judge, human = _four_items(tmp_path, {"a": "CS", "b": "CS", "c": "CS"})  # humans all agree
    result = judgekit("calibrate", "estimate", "--judge", str(judge), "--human", str(human),
                      "--target", "share:CS")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "zero-width CI in all (classical, ppi++)" in result.stdout, result.stdout
    plan = judgekit("calibrate", "plan", "--judge", str(judge), "--pilot", str(human),
                    "--width", "0.1", "--target", "share:CS")  # fmt: skip
    assert plan.returncode == 0, plan.stderr
    assert "sigma 0 in all" in plan.stdout, plan.stdout


def test_the_item_list_is_never_written_over_an_input(tmp_path: Path):
    judge, _ = _four_items(tmp_path, {})
    before = judge.read_bytes()
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "labels.csv").write_bytes(before)
    for source, out in ((judge, judge), (run_dir, run_dir / "labels.csv")):
        result = judgekit("calibrate", "plan", "--judge", str(source), "--width", "0.3", "--kappa",
                          "0.5", "--target", "share:CS", "--items-out", str(out))  # fmt: skip
        assert result.returncode == 2 and "an input of this plan" in result.stderr, result.stderr
        assert out.read_bytes() == before


def test_a_rare_label_bootstrap_t_falls_back_to_the_t_interval_and_says_so(tmp_path: Path):
    """2 positives in 40 labels: more than alpha / 2 of the resamples hold none, so a
    bootstrap-t bound is infinite; the row gets the t interval, marked, with a note."""
    rng = np.random.default_rng(3)
    truth = np.zeros(400, bool)
    truth[rng.choice(400, 30, replace=False)] = True
    labelled = [k for k in range(400) if truth[k]][:2] + [k for k in range(400) if not truth[k]][
        :38
    ]
    label = {True: "CS", False: "CA"}
    judge = write_long(
        tmp_path / "judge.csv", [(f"x{k}", "j", label[v]) for k, v in enumerate(truth)]
    )
    human = write_long(tmp_path / "human.csv", [(f"x{k}", "h", label[truth[k]]) for k in labelled])
    result = judgekit("calibrate", "estimate", "--judge", str(judge), "--human", str(human),
                      "--target", "share:CS", "--interval", "bootstrap-t", "--json")  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = {e["method"]: e for e in json.loads(result.stdout)["estimates"]}
    for method in ("classical", "ppi++"):
        assert rows[method]["interval"] == "t", rows[method]
        assert rows[method]["note"].startswith("bootstrap-t bound undefined (")
        assert rows[method]["ci_low"] < rows[method]["estimate"] < rows[method]["ci_high"]
    shown = judgekit("calibrate", "estimate", "--judge", str(judge), "--human", str(human),
                     "--target", "share:CS", "--interval", "bootstrap-t")  # fmt: skip
    assert "* all, classical: bootstrap-t bound undefined" in shown.stdout, shown.stdout
    assert "t*" in shown.stdout  # the row's interval column is marked
