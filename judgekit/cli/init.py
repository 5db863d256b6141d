"""``judgekit init [DIR]``: the example run configs (and the inputs they name) in a folder the
user owns (:mod:`judgekit.bundled.examples`)."""

from __future__ import annotations

from pathlib import Path

import typer

from judgekit.cli.output import plain_console
from judgekit.cli.root import app

console = plain_console()


@app.command("init")
def init_command(
    folder: Path = typer.Argument(Path("."), help="Where to write configs/ (default: here)."),
    force: bool = typer.Option(False, "--force", help="Overwrite files that are there."),
) -> None:
    """Write the example run configs to FOLDER/configs/, with the example inputs they name."""
    from judgekit.bundled.examples import write_examples

    written, kept = write_examples(folder, force=force)
    for path in written:
        console.print(f"wrote {path}", soft_wrap=True)
    if kept:
        console.print(f"{len(kept)} file(s) already there, kept (--force overwrites them)")
    console.print(f"next: judgekit run {folder / 'configs' / 'classify.yaml'} --limit 3")
