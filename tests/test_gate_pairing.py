"""A difference rule is honest only over the same data with two labellings: a baseline run over
other data (other sha256 under the same ids) and one set of human labels for both runs (the
same file, or the same label on every item) are refused with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from judgekit.errors import InputError
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


def test_a_baseline_over_other_data_is_refused_with_both_hashes(tmp_path: Path, scores):
    base, cand = scores
    run_dir(tmp_path / "cand", cand, "a" * 64)
    run_dir(tmp_path / "base", base, "b" * 64)
    humans(tmp_path / "hc.csv", cand[:60])
    humans(tmp_path / "hb.csv", base[:60] + 0.1)
    with pytest.raises(InputError) as err:
        run_gate(gate(tmp_path, "hc.csv", "hb.csv"))
    assert err.value.field == "baseline_judge" and "a" * 16 in str(err.value)
    assert "b" * 16 in str(err.value) and "other data" in str(err.value)
    (tmp_path / "base/summary.json").write_text(json.dumps(
        {"signature": {"pipeline": "classify", "data": {"/d/items.jsonl": "a" * 64}}}))  # fmt: skip
    (check,) = run_gate(gate(tmp_path, "hc.csv", "hb.csv")).checks  # the same data: decided
    assert check.estimate is not None and check.verdict in ("pass", "fail", "inconclusive")


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
