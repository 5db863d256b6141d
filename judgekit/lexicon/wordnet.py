"""Reader of the Princeton WordNet 3.0 database files as shipped by Debian ``wordnet-base``.

``/usr/share/wordnet/index.<pos>`` has one line per lemma::

    lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...

with the synset offsets in WordNet's sense order (most frequent first). ``data.<pos>`` holds
one synset per line, starting at that byte offset::

    offset lex_filenum ss_type w_cnt(hex) word lex_id ... p_cnt ptrs... | gloss

Lines starting with two spaces are the licence header. Source: WordNet 3.0 manual pages
``wndb(5WN)`` and ``wninput(5WN)``; used by paper 002 to pick its 100 words (Method §3.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from judgekit.errors import InputError

DEFAULT_WORDNET_DIR = Path("/usr/share/wordnet")
POS_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
POS_NAMES = {"n": "noun", "v": "verb", "a": "adjective", "r": "adverb"}


@dataclass(frozen=True)
class Synset:
    """One WordNet sense: ``pos`` in {n, v, a, r}, lemmas with underscores as spaces."""

    offset: int
    pos: str
    lemmas: tuple[str, ...]
    gloss: str

    @property
    def definition(self) -> str:
        """The gloss without its quoted usage examples (text before the first ``; "``)."""
        return self.gloss.split('; "')[0].strip().rstrip(";").strip()


class WordNet:
    """Look-up of an English word's synsets, per part of speech, in WordNet's sense order.

    Args:
        directory: folder with ``index.{noun,verb,adj,adv}`` and ``data.*``.

    Raises:
        FileNotFoundError: naming the first missing ``index.*`` or ``data.*`` file.
    """

    def __init__(self, directory: Path = DEFAULT_WORDNET_DIR) -> None:
        self.directory = Path(directory)
        self._index: dict[str, dict[str, list[int]]] = {}
        for name in POS_FILES.values():
            for kind in ("index", "data"):
                path = self.directory / f"{kind}.{name}"
                if not path.is_file():
                    raise FileNotFoundError(str(path))

    def _lemma_offsets(self, pos: str) -> dict[str, list[int]]:
        if pos not in self._index:
            path = self.directory / f"index.{POS_FILES[pos]}"
            table: dict[str, list[int]] = {}
            with path.open(encoding="utf-8") as handle:
                for number, line in enumerate(handle, start=1):
                    if line.startswith("  "):
                        continue
                    fields = line.split()
                    try:
                        pointer_count = int(fields[3])
                        sense_count = int(fields[4 + pointer_count])
                        offsets = fields[6 + pointer_count : 6 + pointer_count + sense_count]
                        table[fields[0]] = [int(o) for o in offsets]
                    except (IndexError, ValueError) as exc:
                        raise InputError(path, "malformed index line", line=number) from exc
            self._index[pos] = table
        return self._index[pos]

    def synsets(self, word: str, pos: str | None = None) -> list[Synset]:
        """The synsets of ``word`` (spaces or underscores, any case), nouns then verbs,
        adjectives, adverbs unless ``pos`` (one of n, v, a, r) selects one part of speech."""
        lemma = word.strip().lower().replace(" ", "_")
        found: list[Synset] = []
        for part in [pos] if pos else list(POS_FILES):
            offsets = self._lemma_offsets(part).get(lemma, [])
            if offsets:
                with (self.directory / f"data.{POS_FILES[part]}").open("rb") as handle:
                    for offset in offsets:
                        handle.seek(offset)
                        found.append(_parse_data_line(handle.readline().decode("utf-8"), part))
        return found

    def sense_count(self, word: str, pos: str) -> int:
        """Number of senses of ``word`` with part of speech ``pos`` (``bank``, ``n`` -> 10)."""
        return len(self._lemma_offsets(pos).get(word.strip().lower().replace(" ", "_"), []))


def _parse_data_line(line: str, pos: str) -> Synset:
    head, _, gloss = line.partition(" | ")
    fields = head.split()
    word_count = int(fields[3], 16)
    lemmas = tuple(fields[4 + 2 * i].replace("_", " ") for i in range(word_count))
    return Synset(offset=int(fields[0]), pos=pos, lemmas=lemmas, gloss=gloss.strip())
