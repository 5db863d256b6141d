"""`judgekit calibrate grid`: judges x prompts on a labelled set, end to end against a real
OpenAI-compatible stub server on 127.0.0.1, with human labels whose expected scores are known.

The stub answers each request with a schema instance seeded by (model, messages), so the two
stub judges, the two judge prompts and the three stub generators all answer differently
(``FaultServerProcess`` seeds by messages only: two judges would agree on every item, and
three generators would tie, leaving Kendall's W undefined).
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bench_answers import correct_content, message_hash
from cli_inproc import run_main
from fault_server import FaultServer
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from judgekit.calibration.grid.config import GridOptions, load_grid, plan_cells
from judgekit.calibration.grid.report import score_cell
from judgekit.errors import InputError
from judgekit.labels.table import LabelTable

REPO = Path(__file__).resolve().parents[1]
CELLS = ["stub-a__default", "stub-a__strict", "stub-b__default", "stub-b__strict"]


def judgekit(*args: str) -> str:
    proc = run_main(*args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def answer(body: dict) -> str:
    """A valid answer for the requested schema, seeded by the model and the messages."""
    key = f"{body.get('model')}|{message_hash(body.get('messages'))}"
    return correct_content(body, int(hashlib.sha256(key.encode()).hexdigest()[:12], 16))


def base_config(url: str) -> str:
    gens = "\n".join(f"  - {{model: hosted_vllm/gen-{m}, api_base: {url}}}" for m in "xyz")
    return (
        f"pipeline: spilling\ncache: {{enabled: false}}\ngenerator:\n{gens}\n"
        f"judge: {{model: hosted_vllm/stub-a, api_base: {url}}}\n"
        "spilling: {words: [head, line], languages: [de, fr], backcheck: false}\n"
    )


def grid_file(url: str) -> str:
    judges = "\n".join(f"  - {{model: hosted_vllm/stub-{j}, api_base: {url}}}" for j in "ab")
    return (
        "base: base.yaml\nlabels: humans.csv\ngenerations: labelled\n"
        f"judges:\n{judges}\n"
        "prompts: {key: spilling.judge_prompt, values: [default, strict]}\n"
        "options: {tie_policy: exclude, metric: accuracy, n_resamples: 200, seed: 0}\n"
    )


def write_humans(judge: pd.DataFrame, path: Path) -> dict[str, str]:
    """Three annotators built from the labelled run's 60 judgments; returns the majority.

    Items 0-3: no human label (ignored, counted). Item 4: a 1-1 tie (excluded). Items 5-10:
    annotators 1 and 2 flip the judge's label, annotator 3 keeps it (majority = flipped).
    Two extra items no judge saw. Expected accuracy of the same judge and prompt: 49/55.
    """
    flip = {"true": "false", "false": "true"}
    rows, majority = [], {}
    for k, (item, label) in enumerate(zip(judge["item"], judge["label"], strict=True)):
        if k < 4:
            continue
        if k == 4:
            rows += [(item, "ann1", label), (item, "ann3", flip[label])]
            continue
        human = flip[label] if k <= 10 else label
        rows += [(item, "ann1", human), (item, "ann2", human), (item, "ann3", label)]
        majority[item] = human
    rows += [("gen-x|de|nowhere|s0|m0", "ann1", "true"), ("gen-x|de|nowhere|s0|m1", "ann2", "true")]
    pd.DataFrame(rows, columns=["item", "rater", "label"]).to_csv(path, index=False)
    return majority


def generate_records(run: Path) -> dict[str, object]:
    lines = (run / "records.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    return {r["key"]: r["parsed"] for r in records if r["stage"] == "generate"}


def labels_of(run: Path) -> pd.Series:
    frame = pd.read_csv(run / "labels.csv", dtype=str)
    return frame.set_index("item")["label"]


def label_and_grid(tmp_path: Path, server: FaultServer) -> tuple[dict[str, str], Path]:
    """The run the humans labelled (3 generators x 2 words x 2 languages x 5 meanings), its
    humans (:func:`write_humans`) and the grid over it: (the humans' majority, the grid folder).
    """
    url = server.base_url
    (tmp_path / "base.yaml").write_text(base_config(url))
    judgekit("run", str(tmp_path / "base.yaml"), "--out", str(tmp_path / "labelled"))
    labelled = pd.read_csv(tmp_path / "labelled" / "labels.csv", dtype=str)
    assert len(labelled) == 60
    majority = write_humans(labelled, tmp_path / "humans.csv")
    (tmp_path / "grid.yaml").write_text(grid_file(url))
    before = server.total_requests
    out = tmp_path / "grid"
    judgekit("calibrate", "grid", str(tmp_path / "grid.yaml"), "--out", str(out))
    # The generations are shared from the labelled run: only 4 cells x 12 judge calls.
    assert server.total_requests - before == 48
    return majority, out


def check_scores(out: Path, grid: pd.DataFrame, majority: dict[str, str]) -> None:
    """The same judge and prompt as the labelled run scores the designed accuracy exactly; every
    cell scores its labels against the same majority, recomputed by hand."""
    a = grid.loc["stub-a__default"]
    assert a["n_compared"] == 55 and a["n_ties"] == 1
    assert a["n_without_human"] == 4 and a["n_human_only"] == 2
    assert a["accuracy"] == pytest.approx(49 / 55)
    assert a["accuracy_low"] < 49 / 55 < a["accuracy_high"]
    judged = labels_of(out / "stub-a__default")
    pairs = [(majority[i], judged[i]) for i in majority]
    assert a["kappa"] == pytest.approx(cohen_kappa_score(*zip(*pairs, strict=True)))
    for cell in CELLS:
        judged = labels_of(out / cell)
        expected = np.mean([judged[i] == majority[i] for i in majority])
        assert grid.loc[cell, "accuracy"] == pytest.approx(expected), cell
        assert grid.loc[cell, "n_compared"] == 55
    assert len(set(grid["accuracy"].round(9))) > 1  # judges and prompts really differ


def check_ranks(tmp_path: Path, out: Path, grid: pd.DataFrame) -> None:
    """Rank clusters: the same as calibrate compare gives for the cells' labels."""
    specs = [a for c in CELLS for a in ("--judge", f"{c}={out / c}")]
    doc = json.loads(judgekit("calibrate", "compare", "--human", str(tmp_path / "humans.csv"),
                              *specs, "--json", "--n-resamples", "0"))  # fmt: skip
    for metric in ("accuracy", "kappa"):
        ranks = {r["judge"]: r["rank"] for r in doc["rows"]
                 if r["statistic"] == metric and r["judge"] in CELLS}  # fmt: skip
        assert grid[f"{metric}_rank"].to_dict() == ranks
    assert grid["accuracy_rank"].min() == 1
    best = grid["accuracy"].idxmax()
    assert grid.loc[best, "accuracy_rank"] == 1


def check_agreement_and_w(tmp_path: Path, out: Path) -> None:
    """Pairwise agreement among cells on the 60 items all judged; Kendall's W of the 3
    generators' rankings by spilling rate = Friedman / (m (n - 1)); the signature."""
    matrix = pd.read_csv(out / "agreement_matrix.csv", index_col=0)
    x, y = labels_of(out / "stub-a__default"), labels_of(out / "stub-b__strict")
    assert matrix.loc["stub-a__default", "stub-b__strict"] == pytest.approx(np.mean(x == y))
    assert np.allclose(np.diag(matrix), 1.0)
    payload = json.loads((out / "grid.json").read_text())
    rates = pd.DataFrame(
        {c: pd.read_csv(out / c / "spilling_by_model.csv").set_index("model")["spilling_rate"]
         for c in CELLS}
    )  # fmt: skip
    friedman = stats.friedmanchisquare(*rates.to_numpy()).statistic
    assert payload["kendalls_w"]["all_cells"]["w"] == pytest.approx(friedman / (4 * 2))
    strict = rates[["stub-a__strict", "stub-b__strict"]]
    w_strict = stats.friedmanchisquare(*strict.to_numpy()).statistic / (2 * 2)
    assert payload["kendalls_w"]["by_prompt"]["strict"]["w"] == pytest.approx(w_strict)
    assert (out / "heatmap.png").stat().st_size > 1000
    assert (
        payload["signature"]["labels"]["sha256"]
        == hashlib.sha256((tmp_path / "humans.csv").read_bytes()).hexdigest()
    )


def test_grid_scores_every_judge_and_prompt_against_humans_and_resumes(tmp_path: Path) -> None:
    with FaultServer(answer_fn=answer) as server:
        majority, out = label_and_grid(tmp_path, server)
        grid = pd.read_csv(out / "grid.csv").set_index("cell")
        assert list(grid.index) == CELLS
        generations = generate_records(tmp_path / "labelled")
        for cell in CELLS:  # every cell judged exactly the labelled run's generations
            assert generate_records(out / cell) == generations
        check_scores(out, grid, majority)
        check_ranks(tmp_path, out, grid)
        check_agreement_and_w(tmp_path, out)
        first = (out / "grid.csv").read_text()

        # Rerun: every cell resumes, zero model calls, the same numbers.
        calls = server.total_requests
        judgekit("calibrate", "grid", str(tmp_path / "grid.yaml"), "--out", str(out))
        assert server.total_requests == calls
        again = pd.read_csv(out / "grid.csv")
        assert (again["records_new"] == 0).all() and (again["records_shared"] == 0).all()
        columns = ["records_new", "records_shared"]
        before_rerun = pd.read_csv(io.StringIO(first)).drop(columns=columns)
        assert again.drop(columns=columns).equals(before_rerun)


def test_grid_file_errors_name_the_file_line_and_key(tmp_path: Path) -> None:
    path = tmp_path / "grid.yaml"
    base = REPO / "configs" / "spilling.yaml"
    path.write_text(
        f"base: {base}\nlabels: h.csv\njudges:\n  - {{model: local/a}}\n"
        "prompts: {key: spilling.judge_prompt, values: [default]}\noptions: {ties: error}\n"
    )
    with pytest.raises(InputError, match=r"grid.yaml:6: field 'options.ties': unknown key"):
        load_grid(path)
    path.write_text(
        f"base: {base}\nlabels: h.csv\njudges:\n  - {{model: local/a}}\n"
        "prompts: {key: spilling.judge_prompt, values: [default]}\n"
        "set: ['spilling.judge_prompt=strict']\n"
    )
    with pytest.raises(InputError, match="'spilling.judge_prompt' is set by the grid"):
        load_grid(path)
    path.write_text(
        f"base: {base}\nlabels: h.csv\njudges:\n  - {{model: local/a}}\n"
        "  - {model: hosted_vllm/a, api_base: 'http://h/v1'}\n"
        "prompts: {key: spilling.judge_prompt, values: [default]}\n"
    )
    with pytest.raises(InputError, match="two judges named 'a'"):
        plan_cells(load_grid(path), tmp_path / "out")


def test_grid_cells_and_their_run_overrides(tmp_path: Path) -> None:
    path = tmp_path / "grid.yaml"
    path.write_text(
        f"base: {REPO / 'configs' / 'spilling.yaml'}\nlabels: h.csv\n"
        "judges:\n  - {model: local/smollm2-135m, name: tiny, timeout: 600}\n"
        "prompts: {key: spilling.judge_prompt, values: [default, strict]}\n"
        "set: ['spilling.words=[head]']\n"
    )
    grid = load_grid(path, overrides=["spilling.languages=[de]"])
    cells = plan_cells(grid, tmp_path / "out")
    assert [c.name for c in cells] == ["tiny__default", "tiny__strict"]
    assert grid.labels == tmp_path / "h.csv"  # relative to the grid file
    judge = json.loads(cells[1].overrides[0].split("=", 1)[1])
    assert judge == {"model": "local/smollm2-135m", "name": "tiny", "timeout": 600.0}
    assert cells[1].overrides[1:] == (
        "spilling.words=[head]",
        "spilling.languages=[de]",
        'spilling.judge_prompt="strict"',
    )


def test_a_judge_and_humans_without_a_common_label_is_an_error(tmp_path: Path) -> None:
    from judgekit.calibration.grid.config import Cell

    cell = Cell("j", "default", tmp_path, ())
    humans = LabelTable(pd.DataFrame({"h1": ["valid", "invalid"]}, index=["i1", "i2"]))
    verdicts = pd.Series({"i1": "true", "i2": "false"})
    with pytest.raises(InputError, match="judge 'j' .* share no label"):
        score_cell(cell, verdicts, humans, GridOptions(n_resamples=0))
    # a spreadsheet's True/False are the booleans true/false (judgekit.data.vocabulary)
    humans = LabelTable(pd.DataFrame({"h1": ["True", "False"]}, index=["i1", "i2"]))
    assert score_cell(cell, verdicts, humans, GridOptions(n_resamples=0))["accuracy"] == 1.0
    humans = LabelTable(pd.DataFrame({"h1": ["true", "true"]}, index=["i1", "i2"]))
    row = score_cell(cell, verdicts, humans, GridOptions(n_resamples=0))
    assert row["accuracy"] == 0.5 and row["n_compared"] == 2 and row["accuracy_low"] is None


def test_shipped_example_grid_plans_the_embedded_judge_with_both_prompts(tmp_path: Path) -> None:
    grid = load_grid(REPO / "configs" / "grid-spilling.yaml")
    assert grid.base == REPO / "configs" / "spilling.yaml"
    assert grid.generations == REPO / "configs" / ".." / "runs" / "spilling-labelled"
    cells = plan_cells(grid, tmp_path)
    assert [c.name for c in cells] == ["smollm2-135m__default", "smollm2-135m__strict"]
    assert "spilling.backcheck=false" in cells[0].overrides
