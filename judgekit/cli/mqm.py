"""`judgekit mqm`: MQM scores from Google-format MQM annotation files."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from judgekit.cli.output import plain_console
from judgekit.cli.root import app
from judgekit.data.digest import file_sha256
from judgekit.data.jsonfile import print_json
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
            "file_sha256": file_sha256(tsv),
            "signature": scheme.signature(),
            "systems": [asdict(s) for s in systems],
        }
        if segments:
            payload["segments"] = [asdict(s) for s in seg]
        print_json(payload, indent=2)
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


@mqm_app.command("items")
def items(
    tsv: Annotated[Path, typer.Argument(help="MQM TSV (google/wmt-mqm-human-evaluation format).")],
    out: Annotated[Path, typer.Argument(help="The JSONL item file to write.")],
    systems: Annotated[str, typer.Option(help="Comma-separated system names.")],
    n_segments: Annotated[int, typer.Option(help="Source segments to draw.")],
    seed: Annotated[int, typer.Option(help="Random seed of the draw.")] = 0,
    min_chars: Annotated[int, typer.Option(help="Shortest translation kept.")] = 20,
    max_chars: Annotated[int, typer.Option(help="Longest translation kept.")] = 200,
    source_lang: Annotated[str | None, typer.Option(help="Source language name.")] = None,
    target_lang: Annotated[str | None, typer.Option(help="Target language name.")] = None,
) -> None:
    """Items of an errors run sampled from an MQM TSV, as its `mqm_sample:` section samples them:
    N_SEGMENTS segments rated for every system, one item per (system, segment)."""
    from judgekit.data.atomic import write_text
    from judgekit.pipelines.error_typing import items_from_mqm

    chosen = items_from_mqm(
        tsv, systems=systems.split(","), n_segments=n_segments, seed=seed, min_chars=min_chars,
        max_chars=max_chars, source_lang=source_lang, target_lang=target_lang,
    )  # fmt: skip
    write_text(out, "".join(item.model_dump_json(exclude_none=True) + "\n" for item in chosen))
    plain_console().print(f"wrote {len(chosen)} items to {out}", highlight=False)
