"""The consoles of the CLI: text from users' files (words, item ids, model names) prints as it
is, never read as rich markup, emoji codes or highlighted."""

from __future__ import annotations

import os

from rich.console import Console

_LOG_WIDTH = 240


def plain_console(*, stderr: bool = False) -> Console:
    """A rich console with markup, emoji and highlighting off (tables and progress still
    render; style text with ``rich.text.Text``). Writing to a file or a pipe, printed lines
    are never wrapped, and tables are laid out for 240 columns unless ``$COLUMNS`` says
    otherwise."""
    console = Console(stderr=stderr, markup=False, emoji=False, highlight=False)
    if not console.is_terminal:  # a file or a pipe: a line stays one line, grep finds it
        console.soft_wrap = True
        if "COLUMNS" not in os.environ:
            console.width = _LOG_WIDTH  # tables not cut at 80 columns
    return console
