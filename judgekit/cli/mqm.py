"""`judgekit mqm`: MQM scores from Google-format MQM annotation files."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from judgekit.cli.output import plain_console
from judgekit.cli.root import app
from judgekit.metrics import mqm

mqm_app = typer.Typer(
    help="MQM scores from human or judge error annotations.", no_args_is_help=True
)
app.add_typer(mqm_app, name="mqm")


@mqm_app.command("score")
def score(
    tsv: Annotated[Path, typer.Argument(help="MQM TSV (google/wmt-mqm-human-evaluation format).")],
    weights: Annotated[
        str | None,
        typer.Option(help="Weights as a JSON file or inline JSON object (default: Google's WMT)."),
    ] = None,
    segments: Annotated[bool, typer.Option(help="Also print one score per segment.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """System-level MQM (error weight per segment, lower is better) for each system in TSV."""
    scheme = mqm.load_weights(weights)
    rows = mqm.read_mqm_tsv(tsv)
    seg = mqm.segment_mqm(rows, scheme)
    systems = mqm.system_mqm(rows, scheme)
    if as_json:
        payload = {
            "file": str(tsv),
            "file_sha256": hashlib.sha256(tsv.read_bytes()).hexdigest(),
            "signature": scheme.signature(),
            "systems": [asdict(s) for s in systems],
        }
        if segments:
            payload["segments"] = [asdict(s) for s in seg]
        typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        return
    console = plain_console()
    table = Table(title=f"MQM per system: {tsv} (lower is better)")
    for column in ("system", "MQM", "segments", "ratings", "total weight"):
        table.add_column(column, justify="left" if column == "system" else "right")
    for s in systems:
        table.add_row(
            s.system, f"{s.score:.3f}", str(s.n_segments), str(s.n_ratings), f"{s.total:g}"
        )
    console.print(table)
    console.print(f"signature: {scheme.signature()}", highlight=False, soft_wrap=True)
    if segments:
        table = Table(title="MQM per segment")
        for column in ("system", "doc", "seg_id", "raters", "MQM"):
            table.add_column(column, justify="right" if column in ("raters", "MQM") else "left")
        for s in seg:
            table.add_row(s.system, s.doc, s.seg_id, str(len(s.rater_scores)), f"{s.score:g}")
        console.print(table)
