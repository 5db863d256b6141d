"""The ``judgekit`` command line: one module per command group, registered here."""

from __future__ import annotations

import signal
import sys

import typer
from rich.text import Text

from judgekit.cli.output import plain_console
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
    from judgekit.cli import (  # noqa: F401
        audit,
        cache,
        calibrate,
        contrast,
        dictionaries,
        localise,
        mqm,
        run,
        score,
        view,
    )


def main() -> None:
    """Entry point: run the app and turn every JudgekitError into one clear line, exit code 2."""
    _register()
    # SIGTERM takes Ctrl-C's way (inside a run, asyncio cancels the run's tasks cleanly; run
    # logs are closed and embedded servers stopped), then exits 143, not 130
    terminated: list[bool] = []

    def on_sigterm(*_: object) -> None:
        terminated.append(True)
        signal.raise_signal(signal.SIGINT)

    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        app()  # standalone: typer reports usage errors itself and exits with their code
    except SystemExit:
        if terminated:
            sys.exit(143)
        raise
    except KeyboardInterrupt:
        sys.exit(143 if terminated else 130)
    except JudgekitError as exc:
        _fail(str(exc))
    except UnicodeDecodeError as exc:  # a reader that does not locate the bad byte itself
        _fail(f"an input file is not UTF-8 text ({exc.reason} at byte {exc.start})")
    except OSError as exc:  # unreadable input, unwritable output directory
        _fail(f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc))


def _fail(message: str) -> None:
    """Print ``error: MESSAGE`` to stderr (user text is never read as markup) and exit 2."""
    console = plain_console(stderr=True)
    console.print(Text("error: ", style="bold red") + Text(message))
    sys.exit(2)
