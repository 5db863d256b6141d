"""Writing a ``judgekit calibrate judge`` result (:class:`judgekit.calibration.judge_report.
JudgeCalibration`) to its output folder: JSON, CSV tables and the reliability diagram."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.calibration.judge_report import JudgeCalibration
from judgekit.data.atomic import write_frame
from judgekit.data.jsonfile import write_json
from judgekit.report.reliability import RELIABILITY_PNG, reliability_diagram


def write_judge_calibration(result: JudgeCalibration, signature: dict[str, Any], out: Path) -> None:
    """Write ``judge_calibration.json`` (signature and every view), ``judge_calibration.csv``
    (the rows, CI as ``ci_low``/``ci_high``), ``confusion_matrix.csv``, ``per_class.csv`` and,
    when the alt-test ran, ``alt_test.csv`` to ``out``; with the confidence view,
    ``reliability.csv`` (the bins) and ``reliability.png`` (the reliability diagram)."""
    out.mkdir(parents=True, exist_ok=True)
    payload = {
        "signature": signature,
        "judge_vs_humans": result.report.to_dict(),
        "human_ceiling": (
            result.ceiling.to_dict() if result.ceiling else {"note": result.ceiling_note}
        ),
        "alt_test": result.alt.to_dict() if result.alt else {"note": result.alt_note},
        "confidence": (
            result.confidence.to_dict() if result.confidence else {"note": result.confidence_note}
        ),
    }
    write_json(out / "judge_calibration.json", payload)
    csv_rows = [
        {k: v for k, v in r.items() if k != "ci"}
        | {"ci_low": r["ci"][0] if r["ci"] else None, "ci_high": r["ci"][1] if r["ci"] else None}
        for r in result.rows
    ]
    write_frame(pd.DataFrame(csv_rows), out / "judge_calibration.csv", index=False)
    write_frame(result.report.confusion, out / "confusion_matrix.csv")
    write_frame(result.report.per_class, out / "per_class.csv", index=False)
    if result.alt is not None:
        write_frame(result.alt.per_annotator, out / "alt_test.csv", index=False)
    if result.confidence is not None:
        write_frame(pd.DataFrame(result.confidence.bins), out / "reliability.csv", index=False)
        reliability_diagram(result.confidence, out / RELIABILITY_PNG)
