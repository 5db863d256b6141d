"""The consoles of the CLI: text from users' files (words, item ids, model names) prints as it
is, never read as rich markup, emoji codes or highlighted."""

from __future__ import annotations

from rich.console import Console


def plain_console(*, stderr: bool = False) -> Console:
    """A rich console with markup, emoji and highlighting off (tables and progress still
    render; style text with ``rich.text.Text``)."""
    return Console(stderr=stderr, markup=False, emoji=False, highlight=False)
