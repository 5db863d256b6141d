"""``judgekit ARGS`` run by :func:`judgekit.cli.main` inside the test process, as
``python -m judgekit ARGS`` runs it (``data:`` names resolved, one-line errors with exit 2,
usage errors, Ctrl-C's exit 130), without a new interpreter importing pandas, scipy and
scikit-learn again (1.5-2.5 s of CPU per command, the suite's largest cost on 2 cores).

For tests of what a command says, writes and exits with. Tests of the process itself keep a
subprocess: signals and kill -9, a fresh interpreter's environment, output to a real pipe.
"""

from __future__ import annotations

import os
import signal
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from judgekit.cli import main
from judgekit.cli.output import plain_console

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Ran:
    """What a command did: the fields of :class:`subprocess.CompletedProcess` tests read."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


def run_main(*args: str, env: Mapping[str, str | None] | None = None, cwd: Path = REPO) -> Ran:
    """``judgekit ARGS`` in this process from ``cwd`` (default the repository root), with
    ``env`` added to the environment for the command's duration; stdout and stderr apart."""
    argv, here = sys.argv, Path.cwd()
    sigterm, show = signal.getsignal(signal.SIGTERM), warnings.showwarning
    with CliRunner().isolation(env={"COLUMNS": None, **(env or {})}) as (out, err, _):
        sys.argv = ["judgekit", *args]
        os.chdir(cwd)
        consoles = _fresh_consoles()
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            sys.argv, warnings.showwarning = argv, show
            signal.signal(signal.SIGTERM, sigterm)
            os.chdir(here)
            for module, name, console in consoles:
                setattr(module, name, console)
        sys.stdout.flush()
        sys.stderr.flush()
        said = out.getvalue().decode("utf-8", "replace"), err.getvalue().decode("utf-8", "replace")
    return Ran(args, code, *said)


def _fresh_consoles() -> list[tuple[object, str, Console]]:
    """Make the CLI modules' consoles again, as a new process makes them at import: with the
    command's ``$COLUMNS`` (one imported earlier keeps the width of then: 80 in a pytest-xdist
    worker, whose ``COLUMNS`` is 80). Returns (module, name, console it had) to put back."""
    made = []
    for module_name, module in list(sys.modules.items()):
        if module_name.startswith("judgekit.cli"):
            for name, value in list(vars(module).items()):
                if isinstance(value, Console):
                    made.append((module, name, value))
                    setattr(module, name, plain_console(stderr=value.stderr))
    return made
