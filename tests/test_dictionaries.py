"""Words, translations and dictionary excerpts of the language-spilling benchmark (paper 002).

Tests that read an installed Debian dictionary skip when it is absent; CI installs
dict-freedict-{eng-hin,fra-eng,eng-fra,spa-eng,eng-spa,ita-eng,eng-ita,por-eng,eng-por,
eng-rus,deu-rus} and wordnet-base (see dictionaries/SOURCES.md).
"""

from __future__ import annotations

import gzip
import json
import re
import struct
import zlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

import judgekit.cli.dictionaries  # noqa: F401  (registers the command group)
from judgekit.cli import app
from judgekit.errors import InputError, JudgekitError
from judgekit.lexicon.build import (
    LANGS,
    MAX_CHARS,
    MAX_SENSES,
    SOURCES,
    Source,
    Sources,
    attested_source,
    cap,
    entry_for,
    wordnet_senses,
)
from judgekit.lexicon.dictd import (
    DictdDictionary,
    b64_decode,
    b64_encode,
    direct_senses,
    match_key,
    parse_article,
    reverse_senses,
)
from judgekit.lexicon.store import (
    dictionaries_dir,
    load_dictionary,
    load_translations,
    load_words,
)
from judgekit.lexicon.wordnet import WordNet

DICTD = Path("/usr/share/dictd")
WORDNET = Path("/usr/share/wordnet")
TARGETS = ("ru", "fr", "zh", "ja", "it", "de", "pt", "es", "hi")


def need_dictd(name: str) -> None:
    if not (DICTD / f"{name}.index").is_file():
        pytest.skip(f"{DICTD / name}.index absent: apt-get install dict-{name}")


def write_dictd(folder: Path, name: str, articles: list[tuple[str, str]], dz: int = 0) -> None:
    """A dictd pair: plain ``.dict`` (dz=0) or dictzip ``.dict.dz`` with dz-byte chunks."""
    text, lines = b"", []
    for headword, article in articles:
        data = (article + "\n").encode("utf-8")
        lines.append(f"{headword.lower()}\t{b64_encode(len(text))}\t{b64_encode(len(data))}\n")
        text += data
    (folder / f"{name}.index").write_text("".join(lines), encoding="utf-8")
    if not dz:
        (folder / f"{name}.dict").write_bytes(text)
        return
    deflate, sizes, body = zlib.compressobj(9, zlib.DEFLATED, -15), [], b""
    for start in range(0, len(text), dz):
        chunk = deflate.compress(text[start : start + dz]) + deflate.flush(zlib.Z_FULL_FLUSH)
        sizes.append(len(chunk))
        body += chunk
    body += deflate.flush(zlib.Z_FINISH)
    ra = struct.pack("<HHH", 1, dz, len(sizes)) + struct.pack(f"<{len(sizes)}H", *sizes)
    extra = b"RA" + struct.pack("<H", len(ra)) + ra
    header = b"\x1f\x8b\x08\x04" + b"\x00" * 4 + b"\x02\x03" + struct.pack("<H", len(extra))
    trailer = struct.pack("<II", zlib.crc32(text), len(text))
    (folder / f"{name}.dict.dz").write_bytes(header + extra + body + trailer)


# --- words and translations (paper 002, appendix "Top-100 Highly Polysemous Words") -------


def test_words_are_the_papers_100_in_order():
    words = load_words()
    assert len(words) == 100
    assert words[:5] == ["head", "line", "point", "case", "base"]
    assert words[-3:] == ["king", "force", "review"]
    assert "defense" in words and "defence" in words  # the paper lists both spellings


def test_every_word_has_one_translation_per_language_with_a_source():
    rows = load_translations()
    assert len(rows) == 900
    assert {(r.word, r.lang) for r in rows} == {(w, lang) for w in load_words() for lang in TARGETS}
    for row in rows:
        assert re.fullmatch(r"freedict:[a-z]{3}-[a-z]{3}|cc-cedict|curated", row.source), row
    tie_like = {(r.word, r.lang): r.translation for r in rows}
    assert tie_like[("head", "fr")] == "tête" and tie_like[("key", "de")] == "Schlüssel"


def test_japanese_translations_avoid_katakana():
    # Paper 002 §3.1: the translation model was told not to use katakana for Japanese.
    for row in load_translations():
        if row.lang == "ja":
            assert not re.search(r"[\u30a0-\u30ff]", row.translation), row


@pytest.mark.parametrize("lang", ["fr", "es", "it", "pt", "hi", "ru"])
def test_freedict_sources_are_attested_in_the_installed_dictionaries(lang):
    pairs = {"fr": "fra", "es": "spa", "it": "ita", "pt": "por", "hi": "hin", "ru": "rus"}
    need_dictd(f"freedict-eng-{pairs[lang]}")
    if lang not in ("hi", "ru"):
        need_dictd(f"freedict-{pairs[lang]}-eng")
    sources = Sources()
    for row in load_translations():
        if row.lang == lang:
            assert attested_source(row, sources) == row.source, row


# --- dictd reader ---------------------------------------------------------------------------


def test_b64_offsets_round_trip():
    assert b64_decode("A") == 0 and b64_decode("B") == 1 and b64_decode("BA") == 64
    assert b64_decode("5S") == 57 * 64 + 18
    assert all(b64_decode(b64_encode(n)) == n for n in (0, 1, 63, 64, 4095, 10**7))
    with pytest.raises(ValueError):
        b64_decode("a-b")


def test_dictd_reader_on_installed_eng_hin():
    need_dictd("freedict-eng-hin")
    hin = DictdDictionary.open("freedict-eng-hin", DICTD)
    head = parse_article(hin.lookup("head")[0])
    assert head.headwords == ("head",) and head.pos == "N"
    assert head.blocks[0].line == "सिर"
    line = parse_article(hin.lookup("Line")[0])  # case-insensitive key
    assert [b.line for b in line.blocks][:2] == ["लाइन, रेखा", "सीमा-रेखा"]
    assert line.blocks[0].examples == ['"A horizontal line."']
    assert line.blocks[9].line == "व्यवसाय"  # sense 10, written as an example line
    assert "English-Hindi" in hin.info()


def test_dictd_reader_on_installed_fra_eng():
    need_dictd("freedict-fra-eng")
    fra = DictdDictionary.open("freedict-fra-eng", DICTD)
    articles = [parse_article(a) for a in fra.lookup("cravate")]
    assert direct_senses(articles) == ["tie, necktie"]
    assert "cravate" in fra and "xyzzy" not in fra


@pytest.mark.parametrize("dz", [0, 7, 64])
def test_dictd_reader_plain_and_dictzip(tmp_path, dz):
    articles = [(f"w{i}", f"w{i} /x/\n1. eins {i}\n2. zwei {i}") for i in range(30)]
    write_dictd(tmp_path, "tiny", articles, dz=dz)
    tiny = DictdDictionary.open("tiny", tmp_path)
    assert tiny.lookup("W17") == ["w17 /x/\n1. eins 17\n2. zwei 17"]
    assert [h for h, _ in tiny.articles()] == [f"w{i}" for i in range(30)]
    if dz:
        assert gzip.decompress((tmp_path / "tiny.dict.dz").read_bytes()).startswith(b"w0 /x/")


def test_missing_dictionary_names_the_package(tmp_path):
    with pytest.raises(JudgekitError, match="apt-get install dict-freedict-fra-eng"):
        entry_for("fr", "tête", Sources(dictd_dir=tmp_path))


# --- article layouts and the reverse look-up ------------------------------------------------


def test_jmdict_notes_glued_to_glosses_are_split():
    text = "ど頭 /x/, 頭 /y/\n(noun (common) (futsuumeishi))\n\n Note: derogatoryhead, nob"
    article = parse_article(text, jmdict=True)
    assert direct_senses([article], japanese=True) == ["head, nob (derogatory)"]
    ding = parse_article("Tinte <f>\nink\n Note: slangy form of address")
    assert direct_senses([ding]) == ["ink (slangy form of address)"]


def test_wikdict_sub_senses_each_become_a_sense():
    text = "head //hɛd// <n>\n2. 頭 2.\nend of hammer\n 3.\nblunt end of a nail"
    assert [(k, s) for k, s, _ in reverse_senses(parse_article(text))] == [
        ("頭", "head (n): 頭 — end of hammer"),
        ("頭", "head (n): 頭 — blunt end of a nail"),
    ]


def test_hindi_spellings_match_across_nukta_and_anusvara():
    assert match_key("केंद्र") == match_key("केन्द्र")
    assert match_key("आवाज़") == match_key("आवाज")
    assert match_key("ли́ния") == match_key("линия")
    assert match_key("Kopf") != match_key("Kapf")


def test_reverse_look_up_on_a_tiny_dictd_pair(tmp_path, monkeypatch):
    write_dictd(
        tmp_path,
        "tiny-eng-deu",
        [
            ("bank", 'bank /bæŋk/ <n>\n1. Ufer\n      "the river bank"\n2. Bank, Geldinstitut'),
            ("bench", "bench /bɛntʃ/ <n>\nBank"),
            ("shore", "shore /ʃɔː/ <n>\nUfer, Küste"),
        ],
        dz=16,
    )
    source = Source("reverse", "tiny-eng-deu", "dict-tiny", "GPL-2+", "Tiny eng-deu")
    monkeypatch.setitem(SOURCES, "xx", [source])
    sources = Sources(dictd_dir=tmp_path)
    bank = entry_for("xx", "Bank", sources)
    assert bank.senses == ["bank (n): Bank, Geldinstitut", "bench (n): Bank"]
    assert bank.licence == "GPL-2+" and "Tiny eng-deu" in bank.source
    assert "reverse look-up" in bank.source
    ufer = entry_for("xx", "ufer", sources)
    assert ufer.senses == ['bank (n): Ufer — e.g. "the river bank"', "shore (n): Ufer, Küste"]
    assert entry_for("xx", "Tisch", sources) is None


def test_cap_limits_senses_and_characters():
    assert cap(["a", "A", " b  c ", ""]) == ["a", "b c"]
    assert len(cap(f"sense {i}" for i in range(100))) == MAX_SENSES
    assert sum(map(len, cap("x" * 290 + str(i) for i in range(10)))) <= MAX_CHARS


# --- WordNet --------------------------------------------------------------------------------


def test_wordnet_reader_counts_and_glosses():
    if not (WORDNET / "index.noun").is_file():
        pytest.skip("WordNet absent: apt-get install wordnet-base")
    wordnet = WordNet(WORDNET)
    assert wordnet.sense_count("bank", "n") == 10
    assert wordnet.sense_count("bank", "v") == 8
    first = wordnet.synsets("bank", "n")[0]
    assert first.definition == "sloping land (especially the slope beside a body of water)"
    assert wordnet.sense_count("head", "n") == 33
    senses = wordnet_senses(wordnet, "head")
    assert len(senses) == MAX_SENSES and senses[0].startswith("(noun) the upper part")
    assert any(s.startswith("(verb)") for s in senses)  # verbs keep their main senses


# --- loaders --------------------------------------------------------------------------------


def entry_line(**fields) -> str:
    base = {"lang": "de", "word": "Kopf", "senses": ["head"], "source": "s", "licence": "GPL-3+"}
    return json.dumps({**base, **fields}, ensure_ascii=False)


def test_load_dictionary_absent_file_is_empty(tmp_path):
    assert load_dictionary("de", tmp_path) == {}


def test_load_dictionary_reads_entries(tmp_path):
    (tmp_path / "de.jsonl").write_text(entry_line() + "\n\n" + entry_line(word="Bank") + "\n")
    entries = load_dictionary("de", tmp_path)
    assert list(entries) == ["Kopf", "Bank"] and entries["Kopf"].senses == ["head"]


@pytest.mark.parametrize(
    ("second_line", "line", "field", "message"),
    [
        ('{"lang": "de", "word": ', 2, None, "invalid JSON"),
        (entry_line(), 2, "word", "duplicate entry (de, Kopf), first on line 1"),
        (
            json.dumps({"lang": "de", "word": "Bank", "senses": ["x"], "source": "s"}),
            2,
            "licence",
            "Field required",
        ),
        (entry_line(word="Bank", senses=[]), 2, "senses", "at least one sense"),
        (entry_line(word="Bank", senses=["ok", " "]), 2, "senses.1", "empty sense"),
        (entry_line(word="Bank", lang="fr"), 2, "lang", "expected 'de'"),
        ("[1, 2]", 2, None, "expected a JSON object"),
    ],
)
def test_load_dictionary_errors_name_file_line_and_field(
    tmp_path, second_line, line, field, message
):
    path = tmp_path / "de.jsonl"
    path.write_text(entry_line() + "\n" + second_line + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_dictionary("de", tmp_path)
    assert caught.value.path == str(path) and caught.value.line == line
    assert caught.value.field == field and message in caught.value.message


def test_load_translations_errors(tmp_path):
    path = tmp_path / "t.tsv"
    header = "word\tlang\ttranslation\tsource\tnote\n"
    path.write_text(header + "tie\tfr\tcravate\tcurated\t\ntie\tfr\tlien\tcurated\n")
    with pytest.raises(InputError, match=r"t.tsv:3: duplicate \(tie, fr\), first on line 2"):
        load_translations(path)
    path.write_text(header + "tie\tfr\tcravate\t\tnote\n")
    with pytest.raises(InputError) as caught:
        load_translations(path)
    assert (caught.value.line, caught.value.field) == (2, "source")
    path.write_text("word\tlang\n")
    with pytest.raises(InputError, match="header must be"):
        load_translations(path)
    path.write_text(header + "tie\tfr\tcravate\tcurated\n")
    assert load_translations(path)[0].note == ""


def test_load_words_rejects_repeats(tmp_path):
    path = tmp_path / "words.txt"
    path.write_text("head\n# comment\nline\nhead\n")
    with pytest.raises(InputError, match="'head' repeats line 1") as caught:
        load_words(path)
    assert caught.value.line == 4


# --- the shipped excerpts and the build command ---------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_shipped_excerpts_load_and_fit_a_prompt(lang):
    entries = load_dictionary(lang)
    assert entries, f"dictionaries/{lang}.jsonl is missing or empty"
    wanted = (
        set(load_words())
        if lang == "en"
        else {r.translation for r in load_translations() if r.lang == lang}
    )
    for word, entry in entries.items():
        assert word in wanted
        assert 1 <= len(entry.senses) <= MAX_SENSES
        assert sum(map(len, entry.senses)) <= MAX_CHARS
        assert entry.source and entry.licence


def test_build_reproduces_the_committed_files(tmp_path):
    langs = ["fr", "es", "it", "pt", "hi", "ru"]
    for name in (
        "fra-eng",
        "eng-fra",
        "spa-eng",
        "eng-spa",
        "ita-eng",
        "eng-ita",
        "por-eng",
        "eng-por",
        "eng-hin",
        "eng-rus",
        "deu-rus",
    ):
        need_dictd(f"freedict-{name}")
    result = CliRunner().invoke(
        app, ["dictionaries", "build", "--out", str(tmp_path), "--langs", ",".join(langs)]
    )
    assert result.exit_code == 0, result.output
    assert "covered" in result.output and "hi" in result.output
    for lang in langs:
        built = (tmp_path / f"{lang}.jsonl").read_text(encoding="utf-8")
        assert built == (dictionaries_dir() / f"{lang}.jsonl").read_text(encoding="utf-8"), lang


def test_build_rejects_unknown_language_and_missing_dictionary(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["dictionaries", "build", "--langs", "fr,xx"])
    assert isinstance(result.exception, InputError) and "--langs" in str(result.exception)
    result = runner.invoke(
        app,
        [
            "dictionaries",
            "build",
            "--langs",
            "fr",
            "--out",
            str(tmp_path),
            "--dictd-dir",
            str(tmp_path),
        ],
    )
    assert isinstance(result.exception, JudgekitError)
    assert "freedict-fra-eng.index" in str(result.exception)
    assert "apt-get install dict-freedict-fra-eng" in str(result.exception)
    assert not (tmp_path / "fr.jsonl").exists()  # checked before anything is written
