"""``judgekit data list|get|path|verify``: the public data sets judgekit reads by name
(``data:NAME/path``; see :mod:`judgekit.datasets`)."""

from __future__ import annotations

import typer
from rich.table import Table

from judgekit.cli.output import plain_console
from judgekit.cli.root import app

console = plain_console()
errors = plain_console(stderr=True)
data_app = typer.Typer(
    help="Public data sets by name: list, get (download, checked), path, verify.",
    no_args_is_help=True,
)
app.add_typer(data_app, name="data")


def _size(size: int | None) -> str:
    return "unknown" if size is None else f"{size / 1e6:.1f} MB"


@data_app.command("list")
def list_command() -> None:
    """Every registered data set: licence, files, size, and what of it is here."""
    from judgekit.datasets.home import data_home
    from judgekit.datasets.registry import REGISTRY
    from judgekit.datasets.status import file_states, summary

    table = Table("name", "licence", "files", "size", "here", box=None)
    for dataset in REGISTRY.values():
        table.add_row(
            dataset.name,
            dataset.licence,
            str(len(dataset.files)),
            _size(dataset.size),
            summary(file_states(dataset)),
        )
    console.print(table)
    console.print(f"data home: {data_home()} (JUDGEKIT_DATA overrides)")


@data_app.command("get")
def get_command(
    names: list[str] = typer.Argument(..., help="Data set names (see `judgekit data list`)."),
    trust: bool = typer.Option(
        False, "--trust", help="Accept a set without a pinned checksum (its sha256 is recorded)."
    ),
) -> None:
    """Download data sets into the data home, each file checked against its pinned sha256."""
    from judgekit.datasets.fetch import ensure_set
    from judgekit.datasets.registry import get_set

    for name in names:
        dataset = get_set(name)
        folder = ensure_set(dataset, trust=trust, echo=errors.out)
        console.print(f"{name}: {len(dataset.files)} files in {folder}")


@data_app.command("path")
def path_command(
    ref: str = typer.Argument(..., help="NAME or NAME/FILE (as in data:NAME/FILE)."),
) -> None:
    """Print where a data set (or one of its files) is kept; nothing is downloaded. Exit 1 when
    it is not all there yet."""
    from judgekit.datasets.home import set_folder
    from judgekit.datasets.refs import split_ref
    from judgekit.datasets.registry import get_set
    from judgekit.datasets.status import file_states

    name, path = split_ref(ref if ref.startswith("data:") else f"data:{ref}")
    dataset = get_set(name)
    if path:
        dataset.file(path)
    console.print(str(set_folder(name) / path if path else set_folder(name)), soft_wrap=True)
    missing = [s for s in file_states(dataset) if s.state == "absent" and s.path.startswith(path)]
    if missing:
        errors.out(f"not here yet: {len(missing)} file(s); `judgekit data get {name}` fetches them")
        raise typer.Exit(1)


@data_app.command("verify")
def verify_command(
    names: list[str] = typer.Argument(None, help="Data set names (default: every set here)."),
) -> None:
    """Hash every file that is here and compare it with what was checked when it came (and
    with the pinned official file). Exit 1 when a file changed."""
    from judgekit.datasets.registry import REGISTRY, get_set
    from judgekit.datasets.status import verify

    chosen = [get_set(n) for n in names] if names else list(REGISTRY.values())
    changed = seen = 0
    for dataset in chosen:
        states = verify(dataset)
        here = [s for s in states if s.state != "absent"]
        if not here:
            if names:
                console.print(f"{dataset.name}: nothing here")
            continue
        seen += 1
        counts: dict[str, int] = {}
        for state in here:
            counts[state.state] = counts.get(state.state, 0) + 1
        parts = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        console.print(f"{dataset.name}: {len(here)}/{len(states)} here: {parts}")
        for state in here:
            if state.state in ("changed", "unchecked", "local copy"):
                console.print(f"  {state.path}: {state.state} ({state.detail})", soft_wrap=True)
        changed += counts.get("changed", 0)
    if not seen and not names:
        console.print("nothing to verify: no data set is here yet (judgekit data list)")
    if changed:
        errors.out(f"{changed} file(s) changed since they were checked: the next use fetches them")
        raise typer.Exit(1)
