"""Multiple-choice benchmark items from JSONL, CSV or TSV, and the human votes some of them carry.

An item has a question, its choices (A, B, C...), the correct answer (a letter), a subject, a
subject category and the language it is written in; every other field is kept in ``extra`` and
written back unchanged (``judgekit audit split``). Accepted spellings:

* id: ``id``, ``sample_id``, ``item_id``, ``qid`` (else the 1-based line number);
* choices: a list (JSONL), a JSON or Python list in text (CSV), or columns ``option_a``..,
  ``choice_a``.. or ``A``..;
* answer: a letter, a 0-based index, or the text of one choice (``answer_index`` otherwise);
* Global-MMLU's Python-literal list fields (``"['none', 'regional']"``) are parsed.

Human votes (:func:`human_votes`): Global-MMLU's per-annotator ``required_knowledge`` and
``time_sensitive`` lists, and the published ``cs_label`` / ``cultural_sensitivity_label``
(Singh et al. 2024, Sec. 3). Bad input raises :class:`~judgekit.errors.InputError` naming the
file, line and field.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.data import jsonl_objects
from judgekit.errors import InputError
from judgekit.labels import LabelTable

LETTERS = "ABCDEFGHIJ"
ID_FIELDS = ("id", "sample_id", "item_id", "qid")
CHOICE_PREFIXES = ("option_", "choice_", "")
PUBLISHED_CS_FIELDS = ("cs_label", "cultural_sensitivity_label")
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


def file_format(path: Path) -> str:
    """``jsonl``, ``csv`` or ``tsv`` from the suffix.

    Raises:
        InputError: another suffix.
    """
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix in (".csv", ".tsv"):
        return suffix[1:]
    raise InputError(path, "item files are .jsonl, .csv or .tsv")


def read_rows(path: Path) -> tuple[str, list[str], list[tuple[int, dict[str, Any]]]]:
    """(format, column order, [(line, row)]) of a JSONL/CSV/TSV file.

    Raises:
        InputError: missing file, invalid JSON, a JSON line that is not an object, a CSV row with
            the wrong number of fields.
    """
    if not path.is_file():
        raise InputError(path, "no such file")
    fmt = file_format(path)
    rows: list[tuple[int, dict[str, Any]]] = []
    columns: list[str] = []
    if fmt == "jsonl":
        for number, row in jsonl_objects(path):
            columns += [k for k in row if k not in columns]
            rows.append((number, row))
        return fmt, columns, rows
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, delimiter="\t" if fmt == "tsv" else ",")
        header = next(reader, [])
        for number, values in enumerate(reader, start=2):
            if not any(v.strip() for v in values):
                continue
            if len(values) != len(header):
                raise InputError(
                    path, f"expected {len(header)} fields, found {len(values)}", line=number
                )
            rows.append((number, dict(zip(header, values, strict=True))))
    return fmt, header, rows


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
    fmt, columns, rows = read_rows(path)
    name = benchmark or benchmark_name(path)
    items, seen, kept = [], {}, []
    for line, row in rows:
        question = str(row.get("question") or "").strip()
        if not question:
            raise InputError(path, "missing or empty question", line=line, field="question")
        choices, used = _choices(row, path, line)
        id_field = next((f for f in ID_FIELDS if row.get(f) not in (None, "")), None)
        item_id = str(row[id_field]) if id_field else str(line)
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
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return ItemFile(path, items, fmt, columns, digest, kept)


@dataclass(frozen=True)
class HumanVotes:
    """Human labels of a set of items, as label tables (items x annotator slots).

    Global-MMLU does not identify annotators across items: slot ``a1`` is the first vote of
    each item, not one person, so per-annotator statistics (the Alternative Annotator Test)
    do not apply; pooled ones (agreement, majority, leave-one-out ceiling) do.

    Attributes:
        knowledge: required-knowledge votes (``none``/``cultural``/``regional``/``dialect``),
            or None when the labels are CS/CA only.
        cs: CS/CA votes (from knowledge votes: CA for ``none``, else CS).
        time_sensitive: ``yes``/``no`` votes (None when the items carry none).
        published: the published CS/CA label per item (Global-MMLU: CS when at least half of
            the votes are not ``none``, ties included), or None.
    """

    knowledge: LabelTable | None
    cs: LabelTable
    time_sensitive: LabelTable | None
    published: pd.Series | None

    @property
    def items(self) -> list[str]:
        return [str(i) for i in self.cs.items]

    def reference_cs(self) -> dict[str, str]:
        """item -> the published CS/CA label where there is one, else the strict majority of
        the CS/CA votes (``<tie>`` on a tie)."""
        from judgekit.calibration import majority_vote

        out = majority_vote(self.cs).to_dict()
        if self.published is not None:
            out.update(self.published.to_dict())
        return out


def _vote_table(votes: dict[str, list[str]]) -> LabelTable:
    width = max((len(v) for v in votes.values()), default=0)
    frame = pd.DataFrame(
        [v + [None] * (width - len(v)) for v in votes.values()],
        index=pd.Index(list(votes), name="item"),
        columns=pd.Index([f"a{i + 1}" for i in range(width)], name="rater"),
        dtype=object,
    )
    return LabelTable(frame)


def human_votes(
    items: Iterable[BenchmarkItem], *, cs_of: dict[str, str] | None = None
) -> HumanVotes | None:
    """Global-MMLU-style human labels carried by the items, keyed by :attr:`BenchmarkItem.key`.

    Args:
        items: items whose ``extra`` may hold ``required_knowledge`` (a list of votes),
            ``time_sensitive`` (a list of Yes/No) and ``cs_label`` or
            ``cultural_sensitivity_label`` (CS/CA).
        cs_of: required-knowledge value -> CS/CA (default: ``none`` -> CA, anything else CS).

    Returns None when no item carries required-knowledge votes.

    Raises:
        InputError: a vote list that is not a list of text.
    """
    knowledge: dict[str, list[str]] = {}
    time: dict[str, list[str]] = {}
    published: dict[str, str] = {}
    for item in items:
        votes = item.extra.get("required_knowledge")
        if votes is None or votes == []:
            continue
        if not isinstance(votes, list) or not all(isinstance(v, str) for v in votes):
            raise InputError(
                item.benchmark,
                "expected a list of votes",
                line=item.line,
                field="required_knowledge",
            )
        knowledge[item.key] = [v.strip().lower() for v in votes]
        ts = item.extra.get("time_sensitive")
        if isinstance(ts, list) and ts:
            time[item.key] = [str(v).strip().lower() for v in ts]
        label = next((item.extra[f] for f in PUBLISHED_CS_FIELDS if item.extra.get(f)), None)
        if label in ("CS", "CA"):
            published[item.key] = label
    if not knowledge:
        return None
    mapping = cs_of or {}
    cs = {
        k: [mapping.get(v, "CA" if v == "none" else "CS") for v in vs]
        for k, vs in knowledge.items()
    }
    return HumanVotes(
        knowledge=_vote_table(knowledge),
        cs=_vote_table(cs),
        time_sensitive=_vote_table(time) if time else None,
        published=pd.Series(published, dtype=object) if published else None,
    )


def load_human_votes(
    items: list[BenchmarkItem], path: str | Path | None, cs_of: dict[str, str]
) -> HumanVotes | None:
    """Human labels for ``items``: from ``path`` when given, else carried by the items.

    ``path`` is either an item file whose rows carry ``required_knowledge`` vote lists
    (matched to ``items`` by id), or a label file (``item,rater,label`` or wide, see
    :func:`judgekit.labels.load_labels`; item = the item id) whose labels are required-knowledge
    values (the keys of ``cs_of``) or CS/CA.

    Raises:
        InputError: unreadable file, labels of neither kind, or no item in common.
    """
    if path is None:
        return human_votes(items, cs_of=cs_of)
    from judgekit.labels import load_labels

    path = Path(path)
    fmt, columns, _ = read_rows(path)
    by_id: dict[str, list[str]] = defaultdict(list)
    for it in items:
        by_id[it.id].append(it.key)
    if "required_knowledge" in columns:
        source = load_items(path, language="und")
        rows = [
            replace(it, benchmark=key.rsplit("|", 1)[0] if "|" in key else key)
            for it in source.items
            for key in by_id.get(it.id, [])
        ]
        votes = human_votes(rows, cs_of=cs_of)
    else:
        table = load_labels(path)
        labels = {str(v) for v in table.values.ravel() if v is not None and v == v}
        frame = table.frame.copy()
        frame.index = frame.index.astype(str)
        keys = [(k, i) for i in frame.index for k in by_id.get(i, [])]
        frame = frame.loc[[i for _, i in keys]]
        frame.index = pd.Index([k for k, _ in keys], name="item")
        if labels <= set(cs_of):
            knowledge = LabelTable(frame)
            cs = LabelTable(frame.apply(lambda col: col.map(lambda v: cs_of.get(v, v))))
            votes = HumanVotes(knowledge, cs, None, None)
        elif labels <= {"CS", "CA"}:
            votes = HumanVotes(None, LabelTable(frame), None, None)
        else:
            raise InputError(
                path, f"labels must be {sorted(cs_of)} or CS/CA, found {sorted(labels)[:6]}"
            )
    if votes is None or votes.cs.n_items == 0:
        raise InputError(path, "no item in common with the items being audited")
    return votes
