"""`judgekit run` for the preflight and reply tests: :func:`run_cli` runs it in the test process
(tests/cli_inproc.py), with the variables a test leaves out removed for the command's duration;
``RUN`` is the subprocess form, for the tests that read a run's output while it runs."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from cli_inproc import Ran, run_main

REPO = Path(__file__).resolve().parents[1]
RUN = (
    "import sys; from judgekit.cli import app, cache, run, _fail\n"
    "from judgekit.errors import JudgekitError\n"
    "try: app(sys.argv[1:])\nexcept JudgekitError as exc: _fail(str(exc))"
)


def run_cli(
    *args: str, env: dict[str, str] | None = None, drop: Callable[[str], bool] = lambda k: False
) -> Ran:
    """``judgekit ARGS`` from the repository root, in this process; environment variables for
    which ``drop`` is true are left out, ``env`` is added."""
    dropped: dict[str, str | None] = {k: None for k in os.environ if drop(k)}
    return run_main(*args, env={**dropped, **(env or {}), "COLUMNS": "200"})
