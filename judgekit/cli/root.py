"""The ``judgekit`` app, whose commands are imported only when used.

Each command module (``judgekit.cli.run``, ``judgekit.cli.calibrate``...) imports ``app`` from
here and registers its command or sub-app on it; nothing here imports them at load time. The
app's click group lists every command from :data:`COMMANDS` (name -> module and one-line help),
so ``judgekit --help`` imports no command module, and ``judgekit calibrate agreement`` imports
``judgekit.cli.calibrate`` and what it uses, nothing else. A new command is one entry in
:data:`COMMANDS` (``tests/test_cli.py`` checks each entry's help against the command's own).
"""

from __future__ import annotations

import importlib
from typing import Any

import click
import typer
from typer.core import TyperGroup

COMMANDS: dict[str, tuple[str, str]] = {
    "audit": (
        "judgekit.cli.audit",
        "Cultural-sensitivity (CS/CA) audit of benchmark items: annotate, validate, split.",
    ),
    "batch": (
        "judgekit.cli.batch",
        "Batch requests of a run (OpenAI batch JSONL, vllm run-batch) and their answers back.",
    ),
    "cache": ("judgekit.cli.cache", "Inspect or empty the response cache."),
    "calibrate": (
        "judgekit.cli.calibrate",
        "Calibrate judges: agreement among raters, a judge against human labels.",
    ),
    "contrast": (
        "judgekit.cli.contrast",
        "Localised vs original test sets: Delta, locale word recall, post-edit statistics.",
    ),
    "data": (
        "judgekit.cli.data",
        "Public data sets by name: list, get (download, checked), path, verify.",
    ),
    "dictionaries": (
        "judgekit.cli.dictionaries",
        "Dictionary excerpts for the language-spilling judge (paper 002).",
    ),
    "drift": (
        "judgekit.cli.drift",
        "Judge drift on a frozen anchor set: freeze, rerun the judge, compare, list stale results",
    ),
    "gate": (
        "judgekit.cli.gate",
        "Decide a gate: each rule's checks pass, fail or are inconclusive; exit 0, 1 or 3.",
    ),
    "init": (
        "judgekit.cli.init",
        "Write the example run configs to FOLDER/configs/, with the example inputs they name.",
    ),
    "localise": (
        "judgekit.cli.localise",
        "Localise source/English pairs to a target locale; writes localised.jsonl and aligned "
        "text files (see docs/localisation.md). Same as `judgekit run CONFIG` for a localise "
        "config.",
    ),
    "mqm": ("judgekit.cli.mqm", "MQM scores from human or judge error annotations."),
    "review": (
        "judgekit.cli.review",
        "Annotation pages for human labels (post-edit, meanings, CS/CA, MQM) and their import.",
    ),
    "run": (
        "judgekit.cli.run",
        "Run CONFIG's pipeline; writes records.jsonl, tables, figures and summary.json to OUT.",
    ),
    "score": (
        "judgekit.cli.score",
        "Score a hypothesis file against one or more references with sacrebleu.",
    ),
    "view": (
        "judgekit.cli.view",
        "Write one HTML file (opens from file://, no network): summary and figures, every "
        "record with filters, search and details, judges compared, and judges against --labels.",
    ),
}

_LOADED: dict[str, click.Command] = {}


class _Listed(click.Command):
    """A command not imported yet, as ``--help`` lists it (its name and one-line help)."""


class LazyGroup(TyperGroup):
    """The root group: commands from :data:`COMMANDS`, each imported when it is run."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name) or _LOADED.get(cmd_name)
        if found is not None or cmd_name not in COMMANDS:
            return found
        return _Listed(cmd_name, help=COMMANDS[cmd_name][1])  # listing only: nothing imported

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] in COMMANDS:
            load_command(args[0])
        return super().resolve_command(ctx, args)


def load_command(name: str) -> click.Command:
    """Import the module of command ``name`` and return its click command.

    Raises:
        KeyError: no such command.
    """
    if name not in _LOADED:
        importlib.import_module(COMMANDS[name][0])
        group: Any = typer.main.get_command(app)
        _LOADED.update({k: v for k, v in group.commands.items() if k not in _LOADED})
    return _LOADED[name]


app = typer.Typer(
    name="judgekit",
    cls=LazyGroup,
    help="LLM judges for multilingual and translation benchmarks, calibrated against humans.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """LLM judges for multilingual and translation benchmarks, calibrated against humans."""
