"""Reader of dictd databases: a ``.index`` file plus a ``.dict.dz`` (dictzip) or ``.dict`` file.

The dictd format (RFC 2229 servers, used by every FreeDict package in Debian) keeps one index
line per headword, ``headword<TAB>offset<TAB>length``, where offset and length are byte
positions in the uncompressed ``.dict`` text written in dictd's base64 alphabet
(``A-Z a-z 0-9 + /``, most significant digit first). ``.dict.dz`` files are gzip files with
dictzip's random-access table (gzip extra field ``RA``), so an article is read by inflating
only the chunks that hold it; a plain gzip file without the table is inflated whole.

Source: dictd(8) and dictzip(1) manual pages; FreeDict packages ``dict-freedict-*``.
"""

from __future__ import annotations

import gzip
import re
import struct
import unicodedata
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from judgekit.errors import InputError

B64_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_B64_VALUE = {c: i for i, c in enumerate(B64_ALPHABET)}
DEFAULT_DICTD_DIR = Path("/usr/share/dictd")
INFO_KEY = "00databaseinfo"


def b64_decode(text: str) -> int:
    """Decode a dictd base64 number (``"B"`` -> 1, ``"BA"`` -> 64). Raises ValueError if bad."""
    if not text:
        raise ValueError("empty base64 number")
    value = 0
    for char in text:
        if char not in _B64_VALUE:
            raise ValueError(f"not a dictd base64 digit: {char!r}")
        value = value * 64 + _B64_VALUE[char]
    return value


def b64_encode(value: int) -> str:
    """Encode a non-negative int in dictd base64 (1 -> ``"B"``, 0 -> ``"A"``)."""
    if value < 0:
        raise ValueError("dictd offsets are non-negative")
    digits = []
    while True:
        value, rest = divmod(value, 64)
        digits.append(B64_ALPHABET[rest])
        if value == 0:
            return "".join(reversed(digits))


@dataclass(frozen=True)
class IndexEntry:
    """One index line: the headword as written and the article's byte span in the text."""

    headword: str
    offset: int
    length: int


class _DictzipText:
    """Random access to the uncompressed bytes of a dictzip (or plain gzip) file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._whole: bytes | None = None
        self._chunks: dict[int, bytes] = {}
        raw = path.read_bytes()
        self._raw = raw
        self._chunk_len, self._chunk_starts = self._read_table(raw)

    @staticmethod
    def _read_table(raw: bytes) -> tuple[int, list[int]]:
        # gzip header: magic(2) method(1) flags(1) mtime(4) xfl(1) os(1), then optional fields.
        if raw[:2] != b"\x1f\x8b":
            return 0, []
        flags = raw[3]
        pos = 10
        chunk_len, sizes = 0, []
        if flags & 0x04:  # FEXTRA
            (xlen,) = struct.unpack_from("<H", raw, pos)
            extra, pos = raw[pos + 2 : pos + 2 + xlen], pos + 2 + xlen
            sub = 0
            while sub + 4 <= len(extra):
                tag, sub_len = extra[sub : sub + 2], struct.unpack_from("<H", extra, sub + 2)[0]
                body = extra[sub + 4 : sub + 4 + sub_len]
                if tag == b"RA" and len(body) >= 6:
                    _version, chunk_len, count = struct.unpack_from("<HHH", body, 0)
                    sizes = list(struct.unpack_from(f"<{count}H", body, 6))
                sub += 4 + sub_len
        for flag in (0x08, 0x10):  # FNAME, FCOMMENT: zero-terminated strings
            if flags & flag:
                pos = raw.index(b"\x00", pos) + 1
        if flags & 0x02:  # FHCRC
            pos += 2
        starts, cursor = [], pos
        for size in sizes:
            starts.append(cursor)
            cursor += size
        starts.append(cursor)
        return chunk_len, starts if sizes else []

    def _chunk(self, number: int) -> bytes:
        if number not in self._chunks:
            start, end = self._chunk_starts[number], self._chunk_starts[number + 1]
            self._chunks[number] = zlib.decompressobj(-zlib.MAX_WBITS).decompress(
                self._raw[start:end]
            )
        return self._chunks[number]

    def read(self, offset: int, length: int) -> bytes:
        if not self._chunk_starts:
            if self._whole is None:
                self._whole = (
                    gzip.decompress(self._raw) if self._raw[:2] == b"\x1f\x8b" else (self._raw)
                )
            return self._whole[offset : offset + length]
        first, last = offset // self._chunk_len, (offset + max(length, 1) - 1) // self._chunk_len
        last = min(last, len(self._chunk_starts) - 2)
        data = b"".join(self._chunk(n) for n in range(first, last + 1))
        start = offset - first * self._chunk_len
        return data[start : start + length]


class DictdDictionary:
    """A dictd database opened for look-up and iteration.

    Args:
        index_path: the ``.index`` file (UTF-8, one ``headword<TAB>b64 offset<TAB>b64 length``
            line per article; FreeDict keys are lower-cased).
        dict_path: the ``.dict.dz`` or ``.dict`` file holding the article texts.

    Raises:
        InputError: an index line without three tab-separated fields or with a bad offset
            (names the file and line).
        FileNotFoundError: either file is missing.
    """

    def __init__(self, index_path: Path, dict_path: Path) -> None:
        self.index_path = Path(index_path)
        self.dict_path = Path(dict_path)
        self._text = _DictzipText(self.dict_path)
        self._entries: list[IndexEntry] = []
        self._by_key: dict[str, list[IndexEntry]] = {}
        with self.index_path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                parts = line.rstrip("\n").split("\t")
                if len(parts) < 3:
                    raise InputError(
                        self.index_path, "expected 'headword<TAB>offset<TAB>length'", line=number
                    )
                try:
                    entry = IndexEntry(parts[0], b64_decode(parts[1]), b64_decode(parts[2]))
                except ValueError as exc:
                    raise InputError(self.index_path, str(exc), line=number) from exc
                self._entries.append(entry)
                self._by_key.setdefault(entry.headword.casefold(), []).append(entry)

    @classmethod
    def open(cls, name: str, directory: Path = DEFAULT_DICTD_DIR) -> DictdDictionary:
        """Open ``<directory>/<name>.index`` with ``<name>.dict.dz`` (or ``<name>.dict``).

        Raises:
            FileNotFoundError: naming the first missing file.
        """
        index = Path(directory) / f"{name}.index"
        if not index.is_file():
            raise FileNotFoundError(str(index))
        for suffix in (".dict.dz", ".dict"):
            data = Path(directory) / f"{name}{suffix}"
            if data.is_file():
                return cls(index, data)
        raise FileNotFoundError(str(Path(directory) / f"{name}.dict.dz"))

    def article(self, entry: IndexEntry) -> str:
        """The article text of one index entry (UTF-8 decoded, trailing blank lines removed)."""
        return self._text.read(entry.offset, entry.length).decode("utf-8").rstrip()

    def lookup(self, word: str) -> list[str]:
        """All articles whose headword equals ``word`` ignoring case, in index order."""
        return [self.article(e) for e in self._by_key.get(word.casefold(), [])]

    def __contains__(self, word: str) -> bool:
        return word.casefold() in self._by_key

    def entries(self) -> Iterator[IndexEntry]:
        """Every index entry except dictd's ``00database*`` metadata entries."""
        return (e for e in self._entries if not e.headword.startswith("00database"))

    def articles(self) -> Iterator[tuple[str, str]]:
        """Every ``(headword, article)`` pair except metadata, in index order."""
        for entry in self.entries():
            yield entry.headword, self.article(entry)

    def info(self) -> str:
        """The ``00databaseinfo`` article (edition, licence, sources), or "" if absent."""
        found = self._by_key.get(INFO_KEY) or self._by_key.get("00-database-info")
        return self.article(found[0]) if found else ""


# --- FreeDict article layout -------------------------------------------------------------
# A FreeDict article is a header line ("Kopf /kˈɔpf/ <masc, n, sg>") and a body of numbered
# senses ("1. tête"), translation or gloss lines, quoted examples, "Note:" lines and
# "Synonyms:"/"see:" cross-references. WikDict-made dictionaries (eng-jpn, deu-rus) put a
# definition line under each translation line; eng-hin writes senses from 10 on as
# '"--"10.व्यवसाय""' example lines; jpn-eng glues some notes to the next gloss
# ("Note: derogatoryhead, dome").

_JMDICT_TAGS = (
    "word usually written using kana alone", "word usually written using kanji alone",
    "honorific or respectful (sonkeigo) language", "humble (kenjougo) language",
    "polite (teineigo) language", "familiar language", "female term or language",
    "male term or language", "children's language", "colloquialism", "abbreviation", "slang",
    "archaism", "derogatory", "obscure term", "obsolete term", "idiomatic expression",
    "vulgar expression or word", "onomatopoeic or mimetic word", "jocular, humorous term",
    "poetical term", "dated term", "historical term", "yojijukugo", "proverb", "sensitive",
    "rare", "euphemistic", "manga slang", "Internet slang", "rude or X-rated term",
    "literary or formal term", "quotation",
)  # fmt: skip
_BRACKETED = re.compile(r"<[^>]*>|\[[^\]]*\]|\{[^}]*\}|\([^()]*\)")
_IPA = re.compile(r",?\s*/[^/\s]*[ˈˌːəɛɔʊɪæʃʒθðŋ][^/]*/")
_NUMBERED = re.compile(r"^(\d+)\.\s*(.*)$")
_HINDI_GLITCH = re.compile(r'^"--"(?:\d+\.)?(.*?)""$')


@dataclass
class Block:
    """One sense of an article: its first line (translations, or glosses for X->English
    dictionaries), further definition lines, examples and notes."""

    line: str = ""
    glosses: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class Article:
    """A parsed article: headwords and part of speech from the header, then its blocks."""

    headwords: tuple[str, ...]
    pos: str
    blocks: list[Block]


def parse_article(text: str, jmdict: bool = False) -> Article:
    """Split a FreeDict article into header and sense blocks (layout described above);
    ``jmdict`` (for jpn-eng) splits a JMdict note glued to the gloss that follows it."""
    lines = text.split("\n")
    header = lines[0]
    pos_match = re.search(r"<([^>]*)>", header)
    bare = re.sub(r"/+[^/]*/+", "", header)
    bare = re.sub(r"\[[^\]]*\]|<[^>]*>|\([^)]*\)", "", bare)
    headwords = tuple(w.strip() for w in bare.split(",") if w.strip())
    blocks: list[Block] = []
    for raw in lines[1:]:
        line = raw.strip()
        if not line or re.match(r"^(Synonyms?|Antonyms?|see):", line):
            continue
        glitch = _HINDI_GLITCH.match(line)
        numbered = _NUMBERED.match(line)
        if glitch:
            blocks.append(Block(line=glitch.group(1).strip()))
        elif line.startswith('"'):
            _current(blocks).examples.append(line)
        elif line.startswith("Note:"):
            _add_note(_current(blocks), line[5:].strip(), jmdict)
        elif numbered and numbered.group(2):
            blocks.append(Block(line=re.sub(r"\s+\d+\.$", "", numbered.group(2)).strip()))
        elif numbered and raw[:1].isspace():
            continue  # WikDict's indented " 3.": the next line is one more definition
        elif numbered:
            blocks.append(Block())  # jpn-eng's "3." alone: a sense whose gloss comes later
        elif not _current(blocks).line:
            blocks[-1].line = re.sub(r"\s+\d+\.$", "", line)
        else:
            blocks[-1].glosses.append(line)
    return Article(headwords, pos_match.group(1) if pos_match else "", blocks)


def _current(blocks: list[Block]) -> Block:
    if not blocks:
        blocks.append(Block())
    return blocks[-1]


def _add_note(block: Block, note: str, jmdict: bool) -> None:
    for tag in _JMDICT_TAGS if jmdict else ():
        if note.startswith(tag) and len(note) > len(tag) and not note[len(tag)].isspace():
            block.notes.append(tag)
            block.glosses.append(note[len(tag) :].strip())
            return
    block.notes.append(note)


def match_key(word: str) -> str:
    """The form under which a word is matched in a translation list: case-folded, spaces
    collapsed, ``~`` read as a space, stress accents dropped (deu-rus writes ``ли́ния``), and
    for Devanagari the nukta dropped and a nasal consonant + virama before a consonant read as
    anusvara (eng-hin writes ``आवाज`` for ``आवाज़``, ``केन्द्र`` for ``केंद्र``)."""
    text = unicodedata.normalize("NFD", word).replace("\u0301", "").replace("\u093c", "")
    text = re.sub("[\u0919\u091e\u0923\u0928\u092e]\u094d(?=[\u0915-\u0939])", "\u0902", text)
    return unicodedata.normalize("NFC", " ".join(text.replace("~", " ").split())).casefold()


def gloss_items(text: str) -> list[str]:
    """The items of a translation or gloss list: bracketed parts dropped, split on , and ;,
    ``~`` read as a space, a leading ``to `` dropped (``"to lead, guide <v>"`` -> lead, guide)."""
    previous = None
    while previous != text:
        previous, text = text, _BRACKETED.sub(" ", text)
    items = []
    for part in re.split(r"[,;]", text.replace("~", " ")):
        part = " ".join(part.split())
        part = re.sub(r"^to ", "", part)
        if part:
            items.append(part)
    return items


def translation_items(article: Article) -> list[str]:
    """Every translation item of an English->X article (first line of each block)."""
    return [item for block in article.blocks for item in gloss_items(block.line)]


def _is_grammar(line: str) -> bool:
    # jpn-eng grammar lines: "(noun (common) (futsuumeishi))", "(suffix)", "(after a noun)".
    return line.startswith("(") and line.endswith(")") and line.isascii()


def direct_senses(articles: list[Article], japanese: bool = False) -> list[str]:
    """One sense per block of X->English articles: the English glosses with their domain
    labels and notes, grammar tags (``<n>``) dropped; for jpn-eng also grammar lines."""
    senses = []
    for article in articles:
        for block in article.blocks:
            parts = [block.line, *block.glosses]
            if japanese:
                parts = [p for p in parts if not _is_grammar(p)]
            text = re.sub(r"<[^>]*>", "", " ".join(parts))
            text = _IPA.sub("", text)  # Ding: "point pt, /pˌeːtˈeː/" (pronounced abbreviation)
            text = re.sub(r"\s+([,;])", r"\1", " ".join(text.split()))
            text = re.sub(r"\{([^}]*)\}", r"(\1) ", text).strip()
            notes = list({n.casefold(): n for n in block.notes if n}.values())
            if text and notes:
                text += " (" + "; ".join(notes) + ")"
            if text:
                senses.append(" ".join(text.split()))
    return senses


def reverse_senses(article: Article) -> list[tuple[str, str, bool]]:
    """``(translation item, sense, plain)`` triples of an English->X (or German->X) article: a
    sense per block and definition, ``"line (N): लाइन, रेखा — \\"A horizontal line.\\""``;
    ``plain`` marks a sense with neither definition nor example (``"head: tête"``)."""
    headword = article.headwords[0] if article.headwords else ""
    label = f"{headword} ({article.pos})" if article.pos else headword
    triples = []
    for block in article.blocks:
        items = gloss_items(block.line)
        if not items:
            continue
        shown = ", ".join(items)
        if block.glosses:
            senses = [f"{label}: {shown} — {gloss}" for gloss in block.glosses]
        elif block.examples:
            senses = [f"{label}: {shown} — e.g. {block.examples[0]}"]
        else:
            senses = [f"{label}: {shown}"]
        plain = not (block.glosses or block.examples)
        for item in dict.fromkeys(items):
            key = match_key(item)
            triples += [(key, sense, plain) for sense in senses]
    return triples
