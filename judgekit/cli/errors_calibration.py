"""``judgekit calibrate errors RUN MQM_TSV``: an errors run against human MQM annotations.

The command function is registered by ``judgekit/cli/calibrate.py`` as
``calibrate_app.command("errors")(errors_command)``; this module registers nothing. The work is
:func:`judgekit.calibration.error_typing.calibrate_errors` (span P/R/F1, category agreement,
segment Kendall tau-b and acc_eq, system pairwise accuracy).
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from judgekit.cli.output import plain_console

console = plain_console()


def errors_command(
    run: Path = typer.Argument(..., help="A finished errors run directory."),
    mqm_tsv: Path = typer.Argument(
        ..., help="Human MQM, Google's TSV (the human_mqm.tsv of `judgekit review import`)."
    ),
    gemba_dir: Path | None = typer.Option(None, help="GEMBA-MQM WMT23 scores, as a reference."),
    rubric: str = typer.Option("localisation_errors", help="The error typology (rubrics/)."),
    n_resamples: int = typer.Option(1000, min=0, help="Bootstrap resamples for the CIs."),
) -> None:
    """An errors run against human MQM: span P/R/F1, categories, segment and system agreement."""
    from judgekit.calibration.error_typing import calibrate_errors
    from judgekit.errors import InputError
    from judgekit.pipelines.localisation_schemas import load_rubric

    if not (run / "segments.jsonl").is_file():
        raise InputError(run, "not a finished errors run: no segments.jsonl in it")
    if not mqm_tsv.is_file():
        raise InputError(mqm_tsv, "no such file")
    cal = calibrate_errors(run, mqm_tsv, rubric=load_rubric(rubric), gemba_dir=gemba_dir,
                           n_resamples=n_resamples)  # fmt: skip
    console.print((run / "calibration.md").read_text(encoding="utf-8"), highlight=False)
    console.print(json.dumps(cal["headline"], indent=1), highlight=False)
    console.print(f"wrote calibration.json, calibration.csv and calibration.md to {run}")
