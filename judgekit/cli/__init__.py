"""The ``judgekit`` command line: one module per command group (``judgekit.cli.root`` lists
them; each is imported when its command runs)."""

from __future__ import annotations

import signal
import sys

from judgekit.cli.root import COMMANDS, app, load_command
from judgekit.errors import JudgekitError
from judgekit.interrupt import request_stop

__all__ = ["app", "main"]


def _register() -> None:
    """Import every command module now (tools and tests that want the full click tree)."""
    for name in COMMANDS:
        load_command(name)


def main() -> None:
    """Entry point: run the app and turn every JudgekitError into one clear line, exit code 2."""
    # SIGTERM stops a run as Ctrl-C does (its tasks are cancelled cleanly, run logs closed,
    # embedded servers stopped), then exits 143, not 130. It is handled here, not turned into
    # a SIGINT: a job started in the background by a script has SIGINT ignored.
    terminated: list[bool] = []

    def on_sigterm(*_: object) -> None:
        terminated.append(True)
        request_stop()

    signal.signal(signal.SIGTERM, on_sigterm)
    _print_warnings()
    try:
        sys.argv[1:] = data_args(sys.argv[1:])
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


def data_args(args: list[str]) -> list[str]:
    """``args`` with each file given as ``data:NAME/path`` (an argument, or ``--option=``'s
    value) replaced by its local path, the data set's file fetched first where needed
    (:func:`judgekit.datasets.refs.resolve_ref`): every command takes data set files by name.
    ``judgekit data ...`` names sets itself, and ``--set KEY=data:...`` and the compare specs
    (``NAME=data:...,data:...``, ``{lp}``) are resolved where they are read.

    Raises:
        InputError, JudgekitError: an unknown set or file, or a failed download.
    """
    if args[:1] == ["data"]:
        return args
    from judgekit.datasets.refs import SCHEME, resolve_ref

    out = []
    for arg in args:
        option, eq, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
        if value.startswith(SCHEME) and not any(c in value for c in ",{}="):
            arg = f"{option}{eq}{resolve_ref(value)}"
        out.append(arg)
    return out


def _print_warnings() -> None:
    """Show each :class:`~judgekit.errors.JudgekitWarning` once, as ``warning: MESSAGE`` on
    stderr (user text never read as markup); other warnings as Python shows them."""
    import warnings

    from judgekit.errors import JudgekitWarning

    shown: set[str] = set()
    default = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):  # type: ignore[no-untyped-def]
        if not issubclass(category, JudgekitWarning):
            return default(message, category, filename, lineno, file, line)
        if str(message) not in shown:
            from rich.text import Text

            from judgekit.cli.output import plain_console

            shown.add(str(message))
            console = plain_console(stderr=True)
            console.print(Text("warning: ", style="bold yellow") + Text(str(message)))

    warnings.showwarning = show


def _fail(message: str) -> None:
    """Print ``error: MESSAGE`` to stderr (user text is never read as markup) and exit 2."""
    from rich.text import Text

    from judgekit.cli.output import plain_console

    console = plain_console(stderr=True)
    console.print(Text("error: ", style="bold red") + Text(message))
    sys.exit(2)
