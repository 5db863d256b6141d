"""The ``judgekit`` command line: one module per command group, registered here."""

from __future__ import annotations

import signal
import sys

import typer
from rich.console import Console

from judgekit.errors import JudgekitError

app = typer.Typer(
    name="judgekit",
    help="LLM judges for multilingual and translation benchmarks, calibrated against humans.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _register() -> None:
    # Each module adds its commands or sub-app to `app`; imported here, not at module top,
    # so that `judgekit --help` stays cheap and the modules never import each other.
    from judgekit.cli import calibrate, contrast, dictionaries, mqm, run, score  # noqa: F401


def main() -> None:
    """Entry point: run the app and turn every JudgekitError into one clear line, exit code 2."""
    _register()
    # SIGTERM unwinds like Ctrl-C, so run logs are closed and embedded servers stopped
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        app()  # standalone: typer reports usage errors itself and exits with their code
    except JudgekitError as exc:
        Console(stderr=True).print(f"[bold red]error:[/] {exc}", highlight=False)
        sys.exit(2)
