"""The consoles of the CLI: text from users' files (words, item ids, model names) prints as it
is, never read as rich markup, emoji codes or highlighted."""

from __future__ import annotations

import os

from rich.console import Console

_LOG_WIDTH = 240


def plain_console(*, stderr: bool = False) -> Console:
    """A rich console with markup, emoji and highlighting off (tables and progress still
    render; style text with ``rich.text.Text``). Writing to a file or a pipe, it is 240
    columns wide unless ``$COLUMNS`` says otherwise, so log lines and tables stay whole."""
    console = Console(stderr=stderr, markup=False, emoji=False, highlight=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console.width = _LOG_WIDTH  # a file or a pipe: lines and tables not cut at 80 columns
    return console
