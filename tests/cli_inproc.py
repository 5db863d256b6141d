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
    sigterm = signal.getsignal(signal.SIGTERM)
    with CliRunner().isolation(env={"COLUMNS": None, **(env or {})}) as (out, err, _):
        sys.argv = ["judgekit", *args]
        os.chdir(cwd)
        built = _fresh_consoles()
        try:
            with warnings.catch_warnings():
                _warnings_as_a_new_process()
                main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            sys.argv = argv
            signal.signal(signal.SIGTERM, sigterm)
            os.chdir(here)
            for module, name, console in built:
                setattr(module, name, console)
        sys.stdout.flush()
        sys.stderr.flush()
        said = out.getvalue().decode("utf-8", "replace"), err.getvalue().decode("utf-8", "replace")
    return Ran(args, code, *said)


def _fresh_consoles() -> list[tuple[object, str, Console]]:
    """The CLI modules' consoles built again under this command's environment, as a new
    process builds them at import: a console takes its width from ``$COLUMNS`` when built
    (pytest-xdist's workers set 80), so one built earlier would lay tables out at a width the
    command never saw. Returns (module, name, console) of those replaced, to put back."""
    replaced = []
    for name, module in list(sys.modules.items()):
        if name == "judgekit.cli" or name.startswith("judgekit.cli."):
            for attr, value in list(vars(module).items()):
                if isinstance(value, Console):
                    replaced.append((module, attr, value))
                    setattr(module, attr, plain_console(stderr=value.stderr))
    return replaced


def _warnings_as_a_new_process() -> None:
    """Python's default warning filters (deprecation, import and resource warnings hidden, any
    other shown once per location) with each warning written to the captured stderr, as in a
    new interpreter: under pytest a library warning would go to pytest's summary instead, and a
    test asserting that nothing reaches the user's stderr could not fail."""
    warnings.resetwarnings()
    warnings.simplefilter("default")
    for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
        warnings.simplefilter("ignore", category)
    warnings.showwarning = _to_stderr


def _to_stderr(message, category, filename, lineno, file=None, line=None):  # type: ignore[no-untyped-def]
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))
