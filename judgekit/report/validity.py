"""Outputs of ``judgekit calibrate validity`` (paper 001): ``<stem>.validity.csv`` (one row per
proxy), ``<stem>.validity.json`` (signature and full records) and the console table.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
from rich.table import Table

from judgekit.data.atomic import write_frame
from judgekit.data.digest import file_sha256
from judgekit.data.jsonfile import write_json
from judgekit.signature import Signature


def _fmt(value: float | None, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


def _ci(ci: tuple[float, float] | None) -> str:
    return "" if ci is None else f" [{ci[0]:.2f}, {ci[1]:.2f}]"


def validity_table(
    native: str, n_models: int, k: int, rows: list[dict], records: list[dict]
) -> Table:
    """The console table: one row per proxy (tau-b, top-k, R2, Delta R2, p(F), beta, LOFO,
    label)."""
    table = Table(title=f"Proxy validity for {native!r} ({n_models} models)")
    table.add_column("proxy", no_wrap=True)
    for col in ("tau-b [CI]", f"top-{k}", "R2 base", "dR2 [CI]", "p(F)", "beta [CI]", "LOFO"):
        table.add_column(col, justify="right")
    table.add_column("label", style="bold", no_wrap=True)
    for row, rec in zip(rows, records, strict=True):
        v = rec["validity"]
        table.add_row(
            row["proxy"],
            _fmt(row["kendall_tau_b"]) + _ci(rec["ranking"]["kendall_ci"]),
            f"{round(row['top_k_overlap'] * row['top_k'])}/{row['top_k']}",
            _fmt(row["r2_base"]),
            _fmt(row["delta_r2"]) + _ci(v["delta_r2_ci"]),
            f"{row['f_p_value']:.2g}",
            _fmt(row["beta"]) + _ci(v["beta_ci"]),
            f"{row['lofo_passed']}/{row['lofo_refits']}",
            row["label"],
        )
    return table


def write_validity(
    scores: Path, folder: Path, columns: dict, rows: list[dict], records: list[dict], **params: int
) -> tuple[Path, Path]:
    """Write ``<stem>.validity.csv`` (the rows) and ``.json`` (signature and records) into
    ``folder``; returns both paths.

    Raises:
        OutputError: a file cannot be written.
    """

    folder.mkdir(parents=True, exist_ok=True)
    csv_path = folder / f"{scores.stem}.validity.csv"
    json_path = folder / f"{scores.stem}.validity.json"
    write_frame(pd.DataFrame(rows), csv_path, index=False)
    digest = file_sha256(scores)
    signature = Signature(
        pipeline="calibrate validity",
        parameters={"n_resamples": params["n_resamples"], "top_k": params["top_k"]},
        data={str(scores): digest},
        seed=params["seed"],
        scores_file=str(scores),
        scores_sha256=digest,
        columns=columns,
        n_resamples=params["n_resamples"],
        top_k=params["top_k"],
        method="paper 001 (Gold vs. Translation): nested OLS, F-test, bootstrap, LOFO",
    ).as_dict()
    write_json(json_path, {"signature": signature, "results": records})
    return csv_path, json_path
