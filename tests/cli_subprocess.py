"""`judgekit run` in a subprocess with main()'s one-line errors, without the other command
groups' imports (shared by the preflight and reply tests)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RUN = (
    "import sys; from judgekit.cli import app, cache, run, _fail\n"
    "from judgekit.errors import JudgekitError\n"
    "try: app(sys.argv[1:])\nexcept JudgekitError as exc: _fail(str(exc))"
)


def run_cli(
    *args: str, env: dict[str, str] | None = None, drop: Callable[[str], bool] = lambda k: False
) -> subprocess.CompletedProcess:
    """``judgekit ARGS`` from the repository root; environment variables for which ``drop`` is
    true are left out, ``env`` is added."""
    full = {k: v for k, v in os.environ.items() if not drop(k)}
    full.update(env or {}, PYTHONUNBUFFERED="1", COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-c", RUN, *args], cwd=REPO, env=full, capture_output=True, text=True,
        timeout=100,
    )  # fmt: skip
