"""Writing a ``judgekit calibrate estimate`` result (:mod:`judgekit.calibration.estimate`).

:func:`write_estimate` writes ``estimate.json`` (the ``--json`` payload: signature and one row
per facet and method), ``estimate.csv`` (the rows) and ``estimate.md`` (a table with the
signature line and the human label file's sha256). Written into a run directory,
``estimate.md`` is shown by ``judgekit view`` with the run's other notes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judgekit.data.atomic import write_frame, write_text
from judgekit.data.jsonfile import json_safe, write_json
from judgekit.signature import Signature

METHOD_NAMES = {"classical": "humans only", "judge_only": "judge only (biased, no CI)",
                "ppi": "PPI", "ppi++": "PPI++"}  # fmt: skip


def _num(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def estimate_markdown(payload: dict[str, Any]) -> str:
    """The estimate as a markdown table (facet, method, estimate, CI, n labelled / unlabelled,
    effective n, interval), under its signature line and the human labels' file and sha256,
    with the fallback notes of the rows marked ``*`` under it."""
    sig = payload["signature"]
    human = sig["inputs"]["human"]
    lines = [
        f"# Estimate: {sig['target']} ({1 - sig['alpha']:g} CIs)",
        "",
        f"`{Signature.model_validate(sig).format()}`",
        "",
        f"Human labels: `{human['path']}` (sha256 `{human['sha256'][:16]}`)",
        "",
        "| facet | method | estimate | CI | n labelled | n unlabelled | effective n | interval |",
        "|---|---|---|---|---|---|---|---|",
    ]
    notes = []
    for e in payload["estimates"]:
        ci = "-" if e["ci_low"] is None else f"[{_num(e['ci_low'])}, {_num(e['ci_high'])}]"
        method = METHOD_NAMES.get(e["method"], e["method"])
        mark = "\\*" if e.get("note") else ""
        if e.get("note"):
            notes.append(f"\\* {e['facet']}, {method}: {e['note']}")
        lines.append(
            f"| {e['facet']} | {method} | "
            f"{_num(e['estimate'])} | {ci} | {e['n_labelled']} | {e['n_unlabelled']} | "
            f"{_num(e['effective_n'], 1)} | {e.get('interval') or '-'}{mark} |"
        )
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n"


def write_estimate(payload: dict[str, Any], out: Path) -> list[Path]:
    """Write ``estimate.json``, ``estimate.csv`` and ``estimate.md`` of ``payload`` (an
    :meth:`EstimateResult.to_dict`, made JSON-safe) into ``out`` (created); return the paths."""
    import pandas as pd

    out.mkdir(parents=True, exist_ok=True)
    payload = json_safe(payload)
    paths = [out / "estimate.json", out / "estimate.csv", out / "estimate.md"]
    write_json(paths[0], payload)
    write_frame(pd.DataFrame(payload["estimates"]), paths[1], index=False)
    write_text(paths[2], estimate_markdown(payload))
    return paths
