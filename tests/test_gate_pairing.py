"""A difference rule pairs items by id: a baseline run over other data (other sha256 under the
same ids: a system regression check) is said with both hashes; one set of human labels for both
runs (the same file, or the same label on every item) is refused with exit 2."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml

from judgekit.errors import InputError, JudgekitWarning
from judgekit.gate import run_gate


def run_dir(folder: Path, values: np.ndarray, data_sha: str) -> Path:
    """A run directory as judgekit writes it: ``labels.csv`` and a ``summary.json`` whose
    signature names its data file with its sha256."""
    folder.mkdir()
    (folder / "labels.csv").write_text("item,rater,label\n" + "".join(
        f"s{i},judge,{v:.3f}\n" for i, v in enumerate(values)))  # fmt: skip
    signature = {"pipeline": "classify", "data": {"/data/items.jsonl": data_sha}}
    (folder / "summary.json").write_text(json.dumps({"signature": signature}))
    return folder


def humans(path: Path, values: np.ndarray) -> Path:
    path.write_text("item,rater,label\n" + "".join(
        f"s{i},ann,{v:.3f}\n" for i, v in enumerate(values)))  # fmt: skip
    return path


def gate(tmp_path: Path, human: str, baseline_human: str) -> Path:
    rule = {"name": "noreg", "kind": "difference", "judge": "cand", "human": human,
            "baseline_judge": "base", "baseline_human": baseline_human, "target": "mean",
            "margin": 0.5}  # fmt: skip
    path = tmp_path / "gate.yaml"
    path.write_text(yaml.safe_dump({"rules": [rule]}))
    return path


@pytest.fixture
def scores() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    base = rng.normal(0, 1, 200)
    return base, base + rng.normal(0, 0.3, 200)


def test_a_baseline_over_other_data_is_said_with_both_hashes(tmp_path: Path, scores):
    base, cand = scores
    run_dir(tmp_path / "cand", cand, "a" * 64)
    run_dir(tmp_path / "base", base, "b" * 64)
    humans(tmp_path / "hc.csv", cand[:60])
    humans(tmp_path / "hb.csv", base[:60] + 0.1)
    with pytest.warns(JudgekitWarning) as said:
        (check,) = run_gate(gate(tmp_path, "hc.csv", "hb.csv")).checks
    message = " ".join(str(w.message) for w in said)
    assert "a" * 16 in message and "b" * 16 in message and "other data" in message
    assert check.estimate is not None and check.verdict in ("pass", "fail", "inconclusive")
    (tmp_path / "base/summary.json").write_text(json.dumps(
        {"signature": {"pipeline": "classify", "data": {"/d/items.jsonl": "a" * 64}}}))  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error", JudgekitWarning)  # the same data: nothing to say
        (same,) = run_gate(gate(tmp_path, "hc.csv", "hb.csv")).checks
    assert same.estimate == check.estimate


def test_one_labelling_for_both_runs_is_refused(tmp_path: Path, scores):
    base, cand = scores
    run_dir(tmp_path / "cand", cand, "a" * 64)
    run_dir(tmp_path / "base", base, "a" * 64)
    humans(tmp_path / "hc.csv", cand[:60])
    with pytest.raises(InputError, match="the same file: the humans' difference is 0") as err:
        run_gate(gate(tmp_path, "hc.csv", "hc.csv"))
    assert err.value.field == "baseline_human"
    humans(tmp_path / "copy.csv", cand[:60]).write_text(
        (tmp_path / "hc.csv").read_text().replace("ann", "other")
    )
    with pytest.raises(InputError, match="the same label on every labelled item"):
        run_gate(gate(tmp_path, "hc.csv", "copy.csv"))


def test_labels_of_items_labelled_in_one_run_only_are_said(tmp_path: Path, scores):
    base, cand = scores
    run_dir(tmp_path / "cand", cand, "a" * 64)
    run_dir(tmp_path / "base", base, "a" * 64)
    humans(tmp_path / "hc.csv", cand[:60])
    (tmp_path / "hb.csv").write_text("item,rater,label\n" + "".join(
        f"s{i},ann,{base[i] + 0.1:.3f}\n" for i in range(30, 90)))  # fmt: skip
    with pytest.warns(JudgekitWarning, match=r"30 of the 60 candidate labels and 30 of the 60 "
                      r"baseline labels .* left out \(30 paired\)"):  # fmt: skip
        (check,) = run_gate(gate(tmp_path, "hc.csv", "hb.csv")).checks
    assert check.n_labelled == 30
    (tmp_path / "same.csv").write_text((tmp_path / "hc.csv").read_text())
    with pytest.raises(InputError, match="files of the same content"):
        run_gate(gate(tmp_path, "hc.csv", "same.csv"))
