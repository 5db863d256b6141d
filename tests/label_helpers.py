"""Helpers of the label vocabulary tests: a judgekit command in this process, a long label file,
the accuracy a calibrate judge run wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from cli_inproc import Ran, run_main

REPO = Path(__file__).resolve().parents[1]


def judgekit(*args: str, cwd: Path = REPO, env: dict | None = None) -> Ran:
    """The command in this process (tests/cli_inproc.py): no new interpreter per call."""
    return run_main(*args, cwd=cwd, env={"COLUMNS": "200", **(env or {})})


def write_long(path: Path, rows: list[tuple]) -> Path:
    pd.DataFrame(rows, columns=["item", "rater", "label"]).to_csv(path, index=False)
    return path


def accuracy_of(out: Path) -> float:
    return json.loads((out / "judge_calibration.json").read_text("utf-8"))["judge_vs_humans"][
        "accuracy"
    ]["value"]
