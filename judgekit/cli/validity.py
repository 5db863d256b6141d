"""``judgekit calibrate validity``: ranking agreement and incremental proxy validity (paper 001).

The command function is registered by ``judgekit/cli/calibrate.py`` as
``calibrate_app.command("validity")(validity_command)``; this module registers nothing.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import pandas as pd
import typer
from rich.table import Table

from judgekit.cli.output import plain_console
from judgekit.data.atomic import write_frame
from judgekit.data.digest import file_sha256

if TYPE_CHECKING:
    from judgekit.metrics.validity import ValidityResult


def _fmt(value: float | None, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


def _ci(ci: tuple[float, float] | None) -> str:
    return "" if ci is None else f" [{ci[0]:.2f}, {ci[1]:.2f}]"


def _row(result: ValidityResult, ranking: dict) -> dict:
    """One flat CSV row per proxy."""
    lofo_pass = sum(
        1
        for r in result.lofo
        if math.copysign(1, r.beta) == math.copysign(1, result.beta) and r.p_value < result.alpha
    )
    ci = result.beta_ci or (math.nan, math.nan)
    dci = result.delta_r2_ci or (math.nan, math.nan)
    kci = ranking["kendall_ci"] or (math.nan, math.nan)
    return {
        "native": result.native,
        "proxy": result.proxy,
        "controls": ";".join(result.controls),
        "n_models": result.n_models,
        "kendall_tau_b": ranking["kendall_tau_b"],
        "kendall_ci_low": kci[0],
        "kendall_ci_high": kci[1],
        "kendall_p": ranking["kendall_p"],
        "spearman": ranking["spearman"],
        "top_k": ranking["k"],
        "top_k_overlap": ranking["top_k_overlap"],
        "r2_base": result.r2_base,
        "r2_full": result.r2_full,
        "delta_r2": result.delta_r2,
        "delta_r2_ci_low": dci[0],
        "delta_r2_ci_high": dci[1],
        "f_stat": result.f_stat,
        "f_p_value": result.f_p_value,
        "df_num": result.df_num,
        "df_denom": result.df_denom,
        "beta": result.beta,
        "beta_se": result.beta_se,
        "beta_p": result.beta_p,
        "beta_ci_low": ci[0],
        "beta_ci_high": ci[1],
        "lofo_refits": len(result.lofo),
        "lofo_passed": lofo_pass,
        "label": result.label,
    }


def _table(native: str, n_models: int, k: int, rows: list[dict], records: list[dict]) -> Table:
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


def validity_command(
    scores: Annotated[
        Path,
        typer.Argument(
            help="CSV, one row per model: model, family, parameter count, proficiency, "
            "native score and proxy score columns.",
            exists=True,
            dir_okay=False,
            readable=True,
        ),
    ],
    native: Annotated[str, typer.Option(help="Column of the native benchmark score.")] = "native",
    proxy: Annotated[
        list[str] | None,
        typer.Option(
            "--proxy", metavar="COLUMN", help="Proxy score column; repeatable (default: proxy)."
        ),
    ] = None,
    params: Annotated[
        str, typer.Option(help="Column of total parameter counts (> 0; log is taken).")
    ] = "params",
    proficiency: Annotated[
        str, typer.Option(help="Column of the language-proficiency control (e.g. Belebele).")
    ] = "proficiency",
    family: Annotated[str, typer.Option(help="Column of model families (for LOFO).")] = "family",
    model: Annotated[str, typer.Option(help="Column of model names.")] = "model",
    controls: Annotated[
        list[str] | None,
        typer.Option(
            "--control",
            metavar="COLUMN",
            help="Extra control column (e.g. English MMLU); repeatable.",
        ),
    ] = None,
    top_k: Annotated[int, typer.Option(help="k of the top-k overlap.")] = 5,
    n_resamples: Annotated[int, typer.Option(help="Model-level bootstrap resamples.")] = 5000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Output folder for SCORES-stem.validity.csv and .json (default: the folder "
            "of SCORES)."
        ),
    ] = None,
) -> None:
    """Does a proxy benchmark score predict the native score beyond size and proficiency?

    Paper 001 ("Gold vs. Translation"), for each proxy column:

    * ranking agreement: Kendall tau-b with bootstrap CI, top-k overlap;

    * nested OLS native ~ log(params) + proficiency [+ controls] [+ proxy]: Delta R^2,
    nested F-test, bootstrap CI of beta, leave-one-family-out refits;

    * evidence label: robust, marginal, null or inconclusive.
    """
    proxies = list(proxy or ["proxy"])
    extra = list(controls or [])
    columns = {"model": model, "family": family, "native": native, "params": params,
               "proficiency": proficiency, "controls": extra, "proxies": proxies}  # fmt: skip
    frame, rows, records = _compute(scores, columns, top_k, n_resamples, seed)
    console = plain_console()
    console.print(_table(native, len(frame), top_k, rows, records))
    for rec in records:
        for reason in rec["validity"]["reasons"]:
            console.print(f"  {rec['validity']['proxy']}: {reason}", highlight=False)
    folder = scores.parent if out is None else out
    csv_path, json_path = _write(scores, folder, columns, rows, records,
                                 n_resamples=n_resamples, seed=seed, top_k=top_k)  # fmt: skip
    console.print(f"wrote {csv_path} and {json_path}", highlight=False)


def _compute(
    scores: Path, columns: dict, top_k: int, n_resamples: int, seed: int
) -> tuple[pd.DataFrame, list[dict], list[dict]]:
    """(score table, one summary row per proxy, one full record per proxy)."""
    from judgekit.metrics.ranking import ranking_agreement
    from judgekit.metrics.validity import proxy_validity, read_scores_csv

    c = columns
    frame = read_scores_csv(
        scores, model=c["model"], family=c["family"],
        numeric=[c["native"], c["params"], c["proficiency"], *c["controls"], *c["proxies"]],
        positive=[c["params"]],
    )  # fmt: skip
    indexed = frame.set_index(c["model"])
    rows, records = [], []
    for name in c["proxies"]:
        ranking = ranking_agreement(
            indexed[c["native"]], indexed[name], k=top_k, n_resamples=n_resamples, seed=seed
        ).to_dict()
        result = proxy_validity(
            frame, name, native=c["native"], params=c["params"], proficiency=c["proficiency"],
            family=c["family"], controls=c["controls"], n_resamples=n_resamples, seed=seed,
        )  # fmt: skip
        rows.append(_row(result, ranking))
        records.append({"ranking": ranking, "validity": result.to_dict()})
    return frame, rows, records


def _write(
    scores: Path, folder: Path, columns: dict, rows: list[dict], records: list[dict], **params: int
) -> tuple[Path, Path]:
    """Write ``<stem>.validity.csv`` (the rows) and ``.json`` (signature and records)."""
    from judgekit.data.jsonfile import write_json
    from judgekit.signature import Signature

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
