"""``judgekit cache stats|clear``: inspect or empty the response cache."""

from __future__ import annotations

from pathlib import Path

import typer

from judgekit.cli.output import plain_console
from judgekit.cli.root import app
from judgekit.data.jsonfile import print_json

console = plain_console()
cache_app = typer.Typer(help="Inspect or empty the response cache.", no_args_is_help=True)
app.add_typer(cache_app, name="cache")

_DIR_HELP = "Cache directory (default: $JUDGEKIT_CACHE_DIR or ~/.cache/judgekit)."


@cache_app.command("stats")
def stats_command(
    dir: Path | None = typer.Option(None, "--dir", help=_DIR_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Entries and size of the cache."""
    from judgekit.llm.cache import ResponseCache

    cache = ResponseCache(dir)
    try:
        info = cache.stats()
    finally:
        cache.close()
    if as_json:
        print_json(info, indent=2)
        return
    console.print(
        f"cache {info['directory']}: {info['entries']} entries, "
        f"{info['bytes'] / 1e6:.1f} MB on disk"
    )
    if info["pickled"]:
        console.print(
            f"{info['pickled']} entries are in the pickle format of earlier judgekit versions: "
            "never read (a pickle can run code); `judgekit cache clear` removes them"
        )


@cache_app.command("clear")
def clear_command(
    dir: Path | None = typer.Option(None, "--dir", help=_DIR_HELP),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Remove every entry of the cache (runs' records are not touched)."""
    from judgekit.llm.cache import ResponseCache

    cache = ResponseCache(dir)
    try:
        if not yes and not typer.confirm(f"remove every entry of {cache.directory}?"):
            raise typer.Exit(1)
        removed = cache.clear()
    finally:
        cache.close()
    console.print(f"removed {removed} entries from {cache.directory}")
