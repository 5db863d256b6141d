"""``judgekit localise``: localise a source/English test set to a locale with an LLM (Cultivar,
Figure 4 prompt); the ``localise`` pipeline run through ``judgekit run``'s machinery."""

from __future__ import annotations

from pathlib import Path

import typer

from judgekit.cli.root import app


@app.command("localise")
def localise_command(
    config: Path = typer.Argument(
        Path("configs/localise.yaml"), help="Run config with `pipeline: localise`."
    ),
    set_: list[str] = typer.Option([], "--set", help="Override any config field (dotted)."),
    limit: int | None = typer.Option(None, help="Pairs to localise; 0 = all."),
    out: Path | None = typer.Option(None, help="Output directory."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Count calls and tokens; send none."),
) -> None:
    """Localise source/English pairs to a target locale; writes localised.jsonl and aligned
    text files (see docs/localisation.md). Same as `judgekit run CONFIG` for a localise config.
    """
    from judgekit.cli.run import execute

    execute(config, [*set_, "pipeline=localise"], limit=limit, out=out, dry_run=dry_run)
