"""Test sets with locales: aligned source/reference data, a locale id and its unlocalised twin.

Locale ids (``hin_Deva_India``) and FLORES codes (``hin_Deva``) are parsed and checked by
:mod:`judgekit.data.locales`.

A *test set* is a reference file (and optionally its aligned source file), or one JSONL file with
``source``/``reference`` fields, plus its translation direction (``src_lang``, ``tgt_lang``, FLORES
codes), its locale and optionally ``original``: the id of its unlocalised counterpart. A localised
set and its original form one *pair* of Cultivar's mean pairwise Delta (Sec. 3.2).

Manifest (YAML, or JSON read as YAML; relative paths from the manifest's folder or ``root``,
which may name a data set: ``data:ntrex128``)::

    root: data:ntrex128
    testsets:
      - {id: fra, src_lang: eng_Latn, tgt_lang: fra_Latn, locale: fra_Latn_France,
         reference: newstest2019-ref.fra.txt, source: newstest2019-src.eng.txt}
      - {id: fra-CA, src_lang: eng_Latn, tgt_lang: fra_Latn, locale: fra_Latn_Canada,
         original: fra, data: fra-CA.jsonl}
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from judgekit.data import jsonl_objects, resolve_path
from judgekit.data.lines import read_lines
from judgekit.data.locales import Locale, parse_flores, parse_locale
from judgekit.errors import InputError, JudgekitError

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
FIELDS = ("id", "src_lang", "tgt_lang", "locale", "original", "source", "reference", "data")


@dataclass(frozen=True)
class Segments:
    """The aligned lines of one test set: ``references[i]`` translates ``sources[i]``."""

    references: list[str]
    sources: list[str] | None


@dataclass(frozen=True)
class TestSet:
    """One test set: direction, locale, optional unlocalised counterpart, and its files.

    Attributes:
        id: unique in its manifest; also the hypothesis file name (``<hyp-dir>/<model>/<id>.txt``).
        src_lang, tgt_lang: FLORES codes of the direction, e.g. ``eng_Latn`` -> ``fra_Latn``.
        locale: where the set is grounded (see :class:`judgekit.data.locales.Locale`).
        original: id of the unlocalised counterpart (None for an original set).
        reference, source: aligned line files (``source`` optional), or ``data``: one JSONL file.
        line: the manifest line that defines the set, for error messages.
    """

    __test__ = False  # not a pytest test class

    id: str
    src_lang: str
    tgt_lang: str
    locale: Locale
    original: str | None = None
    reference: Path | None = None
    source: Path | None = None
    data: Path | None = None
    line: int | None = None

    def read(self) -> Segments:
        """Read the references (and sources).

        Raises:
            InputError: a missing or non-UTF-8 file, a source file whose line count differs from
                the reference file's (naming both files), or a JSONL line that is not an object
                with a string ``reference`` (and, if any line has one, a string ``source``).
        """
        if self.data is not None:
            return _read_jsonl(self.data)
        assert self.reference is not None
        refs = read_lines(self.reference)
        if self.source is None:
            return Segments(refs, None)
        srcs = read_lines(self.source)
        if len(srcs) != len(refs):
            raise InputError(
                self.source,
                f"has {len(srcs)} lines but the reference file {self.reference} has {len(refs)}",
            )
        return Segments(refs, srcs)


def _read_jsonl(path: Path) -> Segments:
    refs: list[str] = []
    srcs: list[str | None] = []
    for number, record in jsonl_objects(path):
        for key in ("reference", "source"):
            value = record.get(key)
            if (key == "reference" or value is not None) and not isinstance(value, str):
                raise InputError(path, "missing or not a string", line=number, field=key)
        refs.append(record["reference"].rstrip())
        srcs.append(record["source"].rstrip() if "source" in record else None)
    have = [s is not None for s in srcs]
    if any(have) and not all(have):
        raise InputError(path, "some lines have a source and others do not", field="source")
    return Segments(refs, [s for s in srcs if s is not None] if any(have) else None)


@dataclass(frozen=True)
class Manifest:
    """Test sets by id, in file order; ``path`` is the manifest file (None when built in code)."""

    testsets: dict[str, TestSet]
    path: Path | None = None

    def pairs(self) -> list[tuple[TestSet, TestSet]]:
        """``(localised, original)`` for every set with an ``original``, in manifest order."""
        return [(t, self.testsets[t.original]) for t in self.testsets.values() if t.original]


def _scalar(node: yaml.Node, path: Path, field: str) -> str:
    if not isinstance(node, yaml.ScalarNode) or not node.value:
        raise InputError(path, "expected a non-empty string", line=_line(node), field=field)
    return node.value


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def load_manifest(path: str | Path) -> Manifest:
    """Read a YAML/JSON manifest of test sets and check it (files exist, ids, links, codes).

    Raises:
        InputError: with the manifest line and field: not a mapping with a ``testsets`` list,
            unknown or missing keys, a duplicate id, a bad code, a missing file, an ``original``
            that is unknown, is itself localised, or has another direction.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "manifest not found")
    try:
        root_node = yaml.compose(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise InputError(path, f"not valid YAML/JSON: {exc}", line=line) from None
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not valid UTF-8 ({exc.reason})") from None
    if not isinstance(root_node, yaml.MappingNode):
        raise InputError(path, "expected a mapping with a 'testsets' list")
    top = {k.value: v for k, v in root_node.value}
    for key_node, _ in root_node.value:
        if key_node.value not in ("root", "testsets"):
            raise InputError(path, "unknown key (expected root, testsets)", line=_line(key_node))
    base = path.parent
    if "root" in top:
        root = _scalar(top["root"], path, "root")
        base = resolve_path(root) if root.startswith("data:") else base / root
    entries = top.get("testsets")
    if not isinstance(entries, yaml.SequenceNode) or not entries.value:
        line = _line(entries) if entries is not None else None
        raise InputError(path, "expected a non-empty list", line=line, field="testsets")
    testsets: dict[str, TestSet] = {}
    for node in entries.value:
        testset = _testset(node, path, base)
        if testset.id in testsets:
            first = testsets[testset.id].line
            raise InputError(
                path, f"duplicate id {testset.id!r} (first on line {first})", line=testset.line
            )
        testsets[testset.id] = testset
    manifest = Manifest(testsets, path)
    check_links(manifest)
    return manifest


def _testset(node: yaml.Node, path: Path, base: Path) -> TestSet:
    if not isinstance(node, yaml.MappingNode):
        raise InputError(path, "each test set must be a mapping", line=_line(node))
    values: dict[str, str] = {}
    lines: dict[str, int] = {}
    for key_node, value_node in node.value:
        key = key_node.value
        if key not in FIELDS:
            raise InputError(
                path, f"unknown key; expected {', '.join(FIELDS)}", line=_line(key_node), field=key
            )
        values[key] = _scalar(value_node, path, key)
        lines[key] = _line(value_node)
    line = _line(node)
    for key in ("id", "src_lang", "tgt_lang", "locale"):
        if key not in values:
            raise InputError(path, "missing", line=line, field=key)
    if not _ID.match(values["id"]):
        raise InputError(
            path, "use letters, digits, '.', '_' and '-' only", line=lines["id"], field="id"
        )
    if ("data" in values) == ("reference" in values):
        raise InputError(path, "give either 'reference' (+ 'source') or 'data'", line=line)
    if "data" in values and "source" in values:
        raise InputError(path, "'data' holds the sources; drop 'source'", line=lines["source"])
    files: dict[str, Path] = {}
    for key in ("reference", "source", "data"):
        if key in values:
            files[key] = base / values[key]
            if not files[key].is_file():
                raise InputError(path, f"file not found: {files[key]}", line=lines[key], field=key)
    where = {"path": path}
    src = parse_flores(values["src_lang"], line=lines["src_lang"], field="src_lang", **where)
    tgt = parse_flores(values["tgt_lang"], line=lines["tgt_lang"], field="tgt_lang", **where)
    locale = parse_locale(
        values["locale"], line=lines["locale"], need_location="original" in values, **where
    )
    if locale.flores not in (src, tgt):
        raise InputError(
            path,
            f"locale {locale} is in neither {src} nor {tgt}; it names the localised side",
            line=lines["locale"],
            field="locale",
        )
    return TestSet(
        id=values["id"],
        src_lang=src,
        tgt_lang=tgt,
        locale=locale,
        original=values.get("original"),
        line=line,
        **files,
    )


def check_links(manifest: Manifest) -> None:
    """Check every ``original``: it exists, is not localised itself, and has the same source and
    target languages (scripts may differ: ``cmn_Hant_Taiwan`` pairs with ``cmn_Hans``).

    Raises:
        InputError: located at the localised set's manifest line.
    """
    for t in manifest.testsets.values():
        if t.original is None:
            continue
        where = {"line": t.line, "field": "original"}
        orig = manifest.testsets.get(t.original)
        if orig is None:
            raise InputError(manifest.path, f"unknown test set {t.original!r}", **where)
        if orig.original is not None:
            raise InputError(
                manifest.path, f"{orig.id!r} is itself localised (from {orig.original!r})", **where
            )
        if (orig.src_lang[:3], orig.tgt_lang[:3]) != (t.src_lang[:3], t.tgt_lang[:3]):
            raise InputError(
                manifest.path,
                f"{t.id} is {t.src_lang}->{t.tgt_lang} but its original {orig.id} is "
                f"{orig.src_lang}->{orig.tgt_lang}; a locale pairs with its own language",
                **where,
            )


def manifest_dict(manifest: Manifest) -> dict:
    """The manifest as a plain dict that :func:`load_manifest` reads back once written as YAML."""
    rows = [
        {k: str(v) for k in FIELDS if (v := getattr(t, k)) is not None}
        for t in manifest.testsets.values()
    ]
    return {"testsets": rows}


# NTREX-128 (Federmann et al. 2022): file code -> locale. The unmarked fra/spa/por references are
# taken as the European varieties; Chinese is cmn (FLORES+ style) in Simplified and Traditional.
NTREX128_LOCALES = {
    "fra": "fra_Latn_France",
    "fra-CA": "fra_Latn_Canada",
    "spa": "spa_Latn_Spain",
    "spa-MX": "spa_Latn_Mexico",
    "por": "por_Latn_Portugal",
    "por-BR": "por_Latn_Brazil",
    "zho-CN": "cmn_Hans_China",
    "zho-TW": "cmn_Hant_Taiwan",
    "eng-US": "eng_Latn_US",
    "eng-GB": "eng_Latn_UK",
    "eng-IN": "eng_Latn_India",
}
NTREX128_PAIRS = {"fra-CA": "fra", "spa-MX": "spa", "por-BR": "por", "zho-TW": "zho-CN"}
"""localised variant -> its original, for the English->X references."""

NTREX128_SRC = "newstest2019-src.eng.txt"


def ntrex128_dir() -> Path:
    """The ``ntrex128`` data set's folder (``data:ntrex128``), fetched first where needed."""
    return resolve_path("data:ntrex128")


def ntrex128_manifest(
    root: str | Path | None = None,
    *,
    english_original: str = "eng-US",
    english_source: str = "deu",
) -> Manifest:
    """The NTREX-128 locale pairs as test sets (data set ``ntrex128``; ``root`` defaults to it).

    English->X: ``fra``/``fra-CA``, ``spa``/``spa-MX``, ``por``/``por-BR``, ``zho-CN``/``zho-TW``
    (ids are NTREX's file codes; the second of each pair is localised). The English variants
    ``eng-US``, ``eng-GB``, ``eng-IN`` (rewrites of the WMT19 source) become references of an
    X->English set with ``english_source``'s NTREX reference as source; ``english_original`` is
    their original (default ``eng-US``, the reference of the variant rows in
    ``locale_variant_overlap_sacrebleu2.6.0.tsv``).

    Raises:
        JudgekitError: the folder or one of its files is absent, or an unknown variant code.
    """
    folder = Path(root) if root is not None else ntrex128_dir()
    if not folder.is_dir():
        raise JudgekitError(f"NTREX-128 folder not found: {folder}")
    english = ("eng-US", "eng-GB", "eng-IN")
    if english_original not in english:
        raise JudgekitError(f"english_original must be one of {english}, got {english_original}")
    flores = {"deu": "deu_Latn", "hin": "hin_Deva", "rus": "rus_Cyrl", "ita": "ita_Latn"}
    if english_source not in flores:
        raise JudgekitError(f"english_source must be one of {sorted(flores)}")

    def ref(code: str) -> Path:
        file = folder / f"newstest2019-ref.{code}.txt"
        if not file.is_file():
            raise JudgekitError(f"NTREX-128 file not found: {file}")
        return file

    sets: dict[str, TestSet] = {}
    for loc, orig in NTREX128_PAIRS.items():
        for code, link in ((orig, None), (loc, orig)):
            locale = parse_locale(NTREX128_LOCALES[code])
            sets[code] = TestSet(
                code, "eng_Latn", locale.flores, locale, link, ref(code), folder / NTREX128_SRC
            )
    src_lang = flores[english_source]
    for code in sorted(english, key=lambda c: c != english_original):
        link = None if code == english_original else english_original
        locale = parse_locale(NTREX128_LOCALES[code])
        sets[code] = TestSet(
            code, src_lang, "eng_Latn", locale, link, ref(code), ref(english_source)
        )
    return Manifest(sets)
