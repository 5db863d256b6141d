"""Multiple-choice benchmark items from JSONL, CSV or TSV.

An item has a question, its choices (A, B, C...), the correct answer (a letter), a subject, a
subject category and the language it is written in; every other field is kept in ``extra`` and
written back unchanged (``judgekit audit split``). Accepted spellings:

* id: ``id``, ``sample_id``, ``item_id``, ``qid`` (else the 1-based line number), as NFC text
  (:func:`judgekit.data.vocabulary.canonical_id`: a JSON ``1.0`` is ``"1"``);
* choices: a list (JSONL), a JSON or Python list in text (CSV), or columns ``option_a``..,
  ``choice_a``.. or ``A``..;
* answer: a letter, a 0-based index, or the text of one choice (``answer_index`` otherwise);
* Global-MMLU's Python-literal list fields (``"['none', 'regional']"``) are parsed.

The human votes some items carry are read by :mod:`judgekit.labels.human_votes`. Bad input raises
:class:`~judgekit.errors.InputError` naming the file, line and field.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgekit.data.digest import file_sha256
from judgekit.data.tables import read_table
from judgekit.data.vocabulary import canonical_id
from judgekit.errors import InputError

LETTERS = "ABCDEFGHIJ"
ID_FIELDS = ("id", "sample_id", "item_id", "qid")
CHOICE_PREFIXES = ("option_", "choice_", "")
LANGUAGE_NAMES = {
    "ar": "Arabic", "bn": "Bengali", "cs": "Czech", "da": "Danish", "de": "German",
    "el": "Greek", "en": "English", "es": "Spanish", "et": "Estonian", "fa": "Persian",
    "fi": "Finnish", "fr": "French", "he": "Hebrew", "hi": "Hindi", "id": "Indonesian",
    "it": "Italian", "ja": "Japanese", "ko": "Korean", "lt": "Lithuanian", "nb": "Norwegian Bokmål",
    "nl": "Dutch", "pl": "Polish", "pt": "Portuguese", "ru": "Russian", "sv": "Swedish",
    "sw": "Swahili", "tr": "Turkish", "uk": "Ukrainian", "vi": "Vietnamese", "zh": "Chinese",
}  # fmt: skip


def language_name(code: str) -> str:
    """English name of an ISO 639-1 code (``ja`` -> ``Japanese``); the code itself if unknown."""
    return LANGUAGE_NAMES.get(code.split("-")[0].split("_")[0].lower(), code)


@dataclass(frozen=True)
class BenchmarkItem:
    """One multiple-choice item.

    Attributes:
        id: the item's id in its file (unique there).
        benchmark: name of the item set (default: the file name without suffixes).
        question: the question text. choices: the options in order (A, B, ...).
        answer: letter of the correct choice, or None when the file has no answer.
        subject, subject_category: as in the file (None when absent).
        language: language code of the text (the ``language`` field, else the loader's default).
        extra: every other field, as read (Global-MMLU list strings parsed).
        line: 1-based line (JSONL) or row (CSV, header = line 1) in the file.
    """

    id: str
    benchmark: str
    question: str
    choices: tuple[str, ...]
    answer: str | None
    subject: str | None
    subject_category: str | None
    language: str
    extra: dict[str, Any] = field(default_factory=dict, compare=False)
    line: int = 0

    @property
    def key(self) -> str:
        """Unique key across item files: ``<benchmark>|<id>``."""
        return f"{self.benchmark}|{self.id}"

    def choices_text(self) -> str:
        """Choices as shown to a judge: one ``A. text`` line each."""
        return "\n".join(f"{LETTERS[i]}. {c}" for i, c in enumerate(self.choices))

    def text(self) -> str:
        """Question and choices as shown to a judge (where evidence quotes must come from)."""
        return f"{self.question}\n{self.choices_text()}"


@dataclass(frozen=True)
class ItemFile:
    """A loaded item file: its items in file order, format (``jsonl``/``csv``/``tsv``), the
    original column order (for writing back) and the SHA-256 of its bytes (16 hex digits)."""

    path: Path
    items: list[BenchmarkItem]
    format: str
    columns: list[str]
    sha256: str
    rows: list[dict[str, Any]]

    @property
    def benchmark(self) -> str:
        return self.items[0].benchmark if self.items else benchmark_name(self.path)


def benchmark_name(path: Path) -> str:
    """File name without its suffixes: ``global_mmlu_lite_en_test.source.jsonl`` ->
    ``global_mmlu_lite_en_test``."""
    return path.name.split(".")[0]


def _literal_list(value: Any) -> Any:
    """A list written as JSON or Python text (``"['none', 'regional']"``) as a list."""
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            try:
                return ast.literal_eval(value)
            except (ValueError, SyntaxError):
                return value
    return value


def _choices(row: dict[str, Any], path: Path, line: int) -> tuple[list[str], set[str]]:
    if "choices" in row:
        value = _literal_list(row["choices"])
        if not isinstance(value, list) or len(value) < 2:
            raise InputError(
                path, "expected a list of at least 2 choices", line=line, field="choices"
            )
        return [str(c) for c in value], {"choices"}
    for prefix in CHOICE_PREFIXES:
        for case in (str.lower, str.upper):
            names = [f"{prefix}{case(x)}" for x in LETTERS]
            present = [n for n in names if n in row]
            if len(present) >= 2 and present == names[: len(present)]:
                return [str(row[n]) for n in present], set(present)
    raise InputError(path, "no choices (expected 'choices' or option_a, option_b...)", line=line)


def _answer(row: dict[str, Any], choices: list[str], path: Path, line: int) -> str | None:
    value = row.get("answer")
    if value is None or value == "":
        value = row.get("answer_index")
        if value is None or value == "":
            return None
    text = str(value).strip()
    if len(text) == 1 and text.upper() in LETTERS[: len(choices)]:
        return text.upper()
    if text.isdigit() and int(text) < len(choices):
        return LETTERS[int(text)]
    if text in choices:
        return LETTERS[choices.index(text)]
    raise InputError(
        path, f"answer {text!r} is not a letter, an index or a choice", line=line, field="answer"
    )


def load_items(
    path: str | Path, *, language: str | None = None, benchmark: str | None = None
) -> ItemFile:
    """Read an item file.

    Args:
        path: a .jsonl, .csv or .tsv file.
        language: language code for rows without a ``language`` field.
        benchmark: item-set name (default: the file name without suffixes).

    Raises:
        InputError: unreadable file, a row without a question or choices, an unusable answer,
            a duplicate id, or no language (no ``language`` field and no default).
    """
    path = Path(path)
    table = read_table(path, what="item files")
    fmt, columns, rows = table.format, table.columns, table.rows
    name = benchmark or benchmark_name(path)
    items, seen, kept = [], {}, []
    for line, row in rows:
        question = str(row.get("question") or "").strip()
        if not question:
            raise InputError(path, "missing or empty question", line=line, field="question")
        choices, used = _choices(row, path, line)
        id_field = next((f for f in ID_FIELDS if row.get(f) not in (None, "")), None)
        item_id = (canonical_id(row[id_field]) if id_field else None) or str(line)
        if item_id in seen:
            first = f"first on line {seen[item_id]}"
            raise InputError(path, f"duplicate id '{item_id}' ({first})", line=line)
        seen[item_id] = line
        lang = str(row.get("language") or language or "").strip()
        if not lang:
            raise InputError(path, "no language: add a 'language' field or a default", line=line)
        core = {"question", "answer", "subject", "subject_category", "language", *used}
        text = {k: str(row[k]) for k in ("subject", "subject_category") if row.get(k)}
        items.append(
            BenchmarkItem(
                id=item_id,
                benchmark=name,
                question=question,
                choices=tuple(choices),
                answer=_answer(row, choices, path, line),
                subject=text.get("subject"),
                subject_category=text.get("subject_category"),
                language=lang,
                extra={k: _literal_list(v) for k, v in row.items() if k not in core},
                line=line,
            )
        )
        kept.append(row)
    digest = file_sha256(path, 16)
    return ItemFile(path, items, fmt, columns, digest, kept)
