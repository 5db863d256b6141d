"""``judgekit calibrate validity``: ranking agreement and incremental proxy validity (paper 001).

The command function is registered by ``judgekit/cli/calibrate.py`` as
``calibrate_app.command("validity")(validity_command)``; this module registers nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judgekit.calibration.validity import proxy_report
from judgekit.cli.output import plain_console
from judgekit.report.validity import validity_table, write_validity


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
    n_resamples: Annotated[
        int, typer.Option(min=1, help="Model-level bootstrap resamples.")
    ] = 5000,
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
    frame, rows, records = proxy_report(scores, columns, top_k, n_resamples, seed)
    console = plain_console()
    console.print(validity_table(native, len(frame), top_k, rows, records))
    for rec in records:
        for reason in rec["validity"]["reasons"]:
            console.print(f"  {rec['validity']['proxy']}: {reason}", highlight=False)
    folder = scores.parent if out is None else out
    csv_path, json_path = write_validity(scores, folder, columns, rows, records,
                                 n_resamples=n_resamples, seed=seed, top_k=top_k)  # fmt: skip
    console.print(f"wrote {csv_path} and {json_path}", highlight=False)
