"""The spilling benchmark's lexical data: words, translations and dictionary excerpts.

Files (under ``dictionaries/`` at the repository root, shipped as package data; see
``dictionaries/SOURCES.md``):

* ``words.txt``: the 100 polysemous English words of paper 002 (appendix "Top-100 Highly
  Polysemous Words"), one per line, in the paper's order.
* ``translations.tsv``: header ``word  lang  translation  source  note`` (tab-separated), one
  row per (English word, target language).
* ``<lang>.jsonl``: one :class:`DictEntry` per line, the dictionary excerpt the judge sees
  for ``word`` in language ``lang`` (``en.jsonl`` holds the English words' WordNet senses).

Every loader validates where the data enters and raises :class:`judgekit.errors.InputError`
naming the file, the 1-based line and the field.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ValidationError

from judgekit.bundled import bundled_dir
from judgekit.data import jsonl_objects, text_lines
from judgekit.errors import InputError

TRANSLATION_COLUMNS = ("word", "lang", "translation", "source", "note")


class DictEntry(BaseModel):
    """A dictionary excerpt: the senses of ``word`` in language ``lang``.

    ``senses`` holds one short string per dictionary sense (at most about 25 senses and
    1,500 characters in all for the shipped files); ``source`` names the dictionary and its
    version, ``licence`` its licence.
    """

    lang: str
    word: str
    senses: list[str]
    source: str
    licence: str


class Translation(BaseModel):
    """The translation of one English word into one language, with where it came from.

    ``source`` is ``freedict:<dict>`` (attested in that FreeDict dictionary), ``cc-cedict``
    (attested in CC-CEDICT) or ``curated`` (chosen by hand, not attested).
    """

    word: str
    lang: str
    translation: str
    source: str
    note: str = ""


def dictionaries_dir() -> Path:
    """The shipped ``dictionaries/`` folder (package data; ``dictionaries/`` of the repository)."""
    return bundled_dir("dictionaries")


def load_words(path: Path | None = None) -> list[str]:
    """Read ``words.txt``: one English word per line, blank lines and ``#`` comments skipped.

    Raises:
        InputError: the file is missing, or a word is repeated (names the line).
    """
    path = Path(path) if path else dictionaries_dir() / "words.txt"
    lines = _read_lines(path)
    words: list[str] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        word = line.strip()
        if not word or word.startswith("#"):
            continue
        if word in seen:
            raise InputError(path, f"'{word}' repeats line {seen[word]}", line=number, field="word")
        seen[word] = number
        words.append(word)
    return words


def load_translations(path: Path | None = None) -> list[Translation]:
    """Read ``translations.tsv`` (header row, then ``word lang translation source note``).

    Returns rows in file order. Raises:
        InputError: missing file, wrong header, a row with too few columns, an empty
            word/lang/translation/source, or a repeated (word, lang) pair.
    """
    path = Path(path) if path else dictionaries_dir() / "translations.tsv"
    lines = _read_lines(path)
    if not lines or tuple(lines[0].rstrip("\r").split("\t")) != TRANSLATION_COLUMNS:
        raise InputError(path, f"header must be {'<TAB>'.join(TRANSLATION_COLUMNS)}", line=1)
    rows: list[Translation] = []
    seen: dict[tuple[str, str], int] = {}
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = line.rstrip("\r").split("\t")
        if len(cells) < 4:
            raise InputError(
                path, f"expected at least 4 tab-separated columns, got {len(cells)}", line=number
            )
        values = dict(zip(TRANSLATION_COLUMNS, [c.strip() for c in cells], strict=False))
        for field in TRANSLATION_COLUMNS[:4]:
            if not values.get(field):
                raise InputError(path, "must not be empty", line=number, field=field)
        key = (values["word"], values["lang"])
        if key in seen:
            raise InputError(
                path, f"duplicate ({key[0]}, {key[1]}), first on line {seen[key]}", line=number
            )
        seen[key] = number
        rows.append(Translation(**values))
    return rows


def load_dictionary(lang: str, directory: Path | None = None) -> dict[str, DictEntry]:
    """Read ``<directory>/<lang>.jsonl`` into ``{word: DictEntry}``; ``{}`` if the file is absent.

    Raises:
        InputError: a line that is not a JSON object, a missing or mistyped field, a ``lang``
            other than ``lang``, empty ``senses`` or an empty sense, or a repeated word.
    """
    path = Path(directory or dictionaries_dir()) / f"{lang}.jsonl"
    if not path.exists():
        return {}
    entries: dict[str, DictEntry] = {}
    first_line: dict[str, int] = {}
    for number, data in jsonl_objects(path):
        try:
            entry = DictEntry.model_validate(data)
        except ValidationError as exc:
            error = exc.errors()[0]
            field = ".".join(str(part) for part in error["loc"]) or None
            raise InputError(path, error["msg"], line=number, field=field) from exc
        if entry.lang != lang:
            raise InputError(
                path, f"expected '{lang}', got '{entry.lang}'", line=number, field="lang"
            )
        if not entry.senses:
            raise InputError(path, "must hold at least one sense", line=number, field="senses")
        for index, sense in enumerate(entry.senses):
            if not sense.strip():
                raise InputError(path, "empty sense", line=number, field=f"senses.{index}")
        if entry.word in entries:
            raise InputError(
                path,
                f"duplicate entry ({lang}, {entry.word}), first on line {first_line[entry.word]}",
                line=number,
                field="word",
            )
        entries[entry.word] = entry
        first_line[entry.word] = number
    return entries


def _read_lines(path: Path) -> list[str]:
    return text_lines(path)
