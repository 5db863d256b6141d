"""Test sets with locales: locale ids, manifests with line-precise errors, the NTREX-128 pairs."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from conftest import shared_path

from judgekit.data.locales import Locale, parse_flores, parse_locale
from judgekit.data.testsets import load_manifest, manifest_dict, ntrex128_manifest
from judgekit.errors import InputError


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hin_Deva_India", Locale("hin", "Deva", "India")),
        ("cmn_Hans_Singapore", Locale("cmn", "Hans", "Singapore")),
        ("fra_Latn_Canada", Locale("fra", "Latn", "Canada")),
        ("yue_Hant_Hong_Kong", Locale("yue", "Hant", "Hong_Kong")),
        ("hin_Deva", Locale("hin", "Deva", None)),
    ],
)
def test_parse_locale(text, expected):
    locale = parse_locale(text)
    assert locale == expected
    assert locale.id == text
    assert locale.flores == text[:8]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("hi_Deva_India", "language 'hi' is not an ISO 639-3 code"),
        ("hin_Dev_India", "script 'Dev' is not an ISO 15924 code"),
        ("hin_deva_India", "script 'deva' is not an ISO 15924 code"),
        ("fra-CA", "not a locale id"),
        ("fra_Latn_canada", "not a locale id"),
    ],
)
def test_parse_locale_rejects(text, problem):
    with pytest.raises(InputError, match=problem) as info:
        parse_locale(text, path="m.yaml", line=4)
    assert str(info.value).startswith("m.yaml:4: field 'locale': ")


def test_localised_set_needs_a_location_and_languages_have_none():
    with pytest.raises(InputError, match="no location"):
        parse_locale("fra_Latn", need_location=True)
    assert parse_flores("eng_Latn") == "eng_Latn"
    with pytest.raises(InputError, match="is a locale"):
        parse_flores("eng_Latn_US", field="src_lang")


def _files(tmp_path, **texts):
    for name, lines in texts.items():
        (tmp_path / name).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


MANIFEST = """\
testsets:
  - id: fra
    src_lang: eng_Latn
    tgt_lang: fra_Latn
    locale: fra_Latn_France
    source: src.txt
    reference: fra.txt
  - id: fra-CA
    src_lang: eng_Latn
    tgt_lang: fra_Latn
    locale: fra_Latn_Canada
    original: fra
    source: src.txt
    reference: fra-CA.txt
"""


def test_manifest_pairs_and_segments(tmp_path):
    _files(tmp_path, **{"src.txt": ["a", "b"], "fra.txt": ["x", "y"], "fra-CA.txt": ["x", "z"]})
    (tmp_path / "m.yaml").write_text(MANIFEST)
    manifest = load_manifest(tmp_path / "m.yaml")
    assert list(manifest.testsets) == ["fra", "fra-CA"]
    [(loc, orig)] = manifest.pairs()
    assert (loc.id, orig.id, loc.locale.id, loc.line) == ("fra-CA", "fra", "fra_Latn_Canada", 8)
    segments = loc.read()
    assert segments.references == ["x", "z"] and segments.sources == ["a", "b"]
    # JSON manifests are read by the same loader; manifest_dict round-trips.
    (tmp_path / "m.json").write_text(json.dumps(manifest_dict(manifest)))
    again = load_manifest(tmp_path / "m.json")
    assert [(t.id, t.locale, t.reference) for t in again.testsets.values()] == [
        (t.id, t.locale, t.reference) for t in manifest.testsets.values()
    ]


@pytest.mark.parametrize(
    ("edit", "line", "message"),
    [
        (("    original: fra\n", "    original: spa\n"), 8, "unknown test set 'spa'"),
        (("locale: fra_Latn_Canada", "locale: fra_Latn"), 11, "no location"),
        (("locale: fra_Latn_Canada", "locale: fra_Latx_Canada"), 11, "script 'Latx'"),
        (("locale: fra_Latn_Canada", "locale: spa_Latn_Mexico"), 11, "neither eng_Latn nor"),
        (("reference: fra-CA.txt", "reference: nope.txt"), 14, "file not found"),
        (("reference: fra-CA.txt", "referense: fra-CA.txt"), 14, "unknown key"),
        (("id: fra-CA", "id: fra"), 8, "duplicate id 'fra' (first on line 2)"),
        (("src_lang: eng_Latn", "src_lang: deu_Latn"), 8, "its original fra is eng_Latn->fra_Latn"),
    ],
)  # fmt: skip
def test_manifest_errors_name_the_line(tmp_path, edit, line, message):
    _files(tmp_path, **{"src.txt": ["a"], "fra.txt": ["x"], "fra-CA.txt": ["y"]})
    head, tail = MANIFEST.split("  - id: fra-CA")
    (tmp_path / "m.yaml").write_text(head + ("  - id: fra-CA" + tail).replace(*edit, 1))
    with pytest.raises(InputError, match=re.escape(message)) as info:
        load_manifest(tmp_path / "m.yaml")
    assert info.value.line == line


def test_line_count_mismatch_names_both_files(tmp_path):
    _files(tmp_path, **{"src.txt": ["a", "b", "c"], "fra.txt": ["x", "y"], "fra-CA.txt": ["y"]})
    (tmp_path / "m.yaml").write_text(MANIFEST)
    with pytest.raises(InputError) as info:
        load_manifest(tmp_path / "m.yaml").testsets["fra"].read()
    assert str(info.value) == (
        f"{tmp_path / 'src.txt'}: has 3 lines but the reference file {tmp_path / 'fra.txt'} has 2"
    )


def test_jsonl_data_and_its_errors(tmp_path):
    rows = [{"source": "Hallo", "reference": "Hello"}, {"source": "Welt", "reference": "world"}]
    (tmp_path / "d.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    (tmp_path / "m.yaml").write_text(
        "root: .\ntestsets:\n  - {id: d, src_lang: deu_Latn, tgt_lang: eng_Latn, "
        "locale: deu_Latn_Germany, data: d.jsonl}\n"
    )
    segments = load_manifest(tmp_path / "m.yaml").testsets["d"].read()
    assert segments.sources == ["Hallo", "Welt"] and segments.references == ["Hello", "world"]
    (tmp_path / "d.jsonl").write_text('{"reference": "a"}\n{"reference": 3}\n')
    with pytest.raises(InputError) as info:
        load_manifest(tmp_path / "m.yaml").testsets["d"].read()
    assert (info.value.line, info.value.field) == (2, "reference")
    (tmp_path / "d.jsonl").write_text('{"reference": "a"}\n{oops\n')
    with pytest.raises(InputError, match="invalid JSON") as info:
        load_manifest(tmp_path / "m.yaml").testsets["d"].read()
    assert info.value.line == 2


def test_ntrex128_pairs():
    root = shared_path("ntrex128")
    manifest = ntrex128_manifest(root)
    pairs = [(loc.id, orig.id, loc.locale.id) for loc, orig in manifest.pairs()]
    assert pairs == [
        ("fra-CA", "fra", "fra_Latn_Canada"),
        ("spa-MX", "spa", "spa_Latn_Mexico"),
        ("por-BR", "por", "por_Latn_Brazil"),
        ("zho-TW", "zho-CN", "cmn_Hant_Taiwan"),
        ("eng-GB", "eng-US", "eng_Latn_UK"),
        ("eng-IN", "eng-US", "eng_Latn_India"),
    ]
    sets = manifest.testsets
    assert (sets["zho-CN"].tgt_lang, sets["eng-IN"].src_lang) == ("cmn_Hans", "deu_Latn")
    assert {len(t.read().references) for t in sets.values()} == {1997}  # MANIFEST.md: 1,997
    gb_original = ntrex128_manifest(root, english_original="eng-GB").testsets
    assert (gb_original["eng-US"].original, gb_original["eng-GB"].original) == ("eng-GB", None)


def test_ntrex128_manifest_written_as_yaml_loads_back(tmp_path):
    manifest = ntrex128_manifest(shared_path("ntrex128"))
    (tmp_path / "ntrex.yaml").write_text(yaml.safe_dump(manifest_dict(manifest)))
    again = load_manifest(tmp_path / "ntrex.yaml")
    assert [(a.id, a.original) for a, _ in again.pairs()] == [
        (a.id, a.original) for a, _ in manifest.pairs()
    ]
