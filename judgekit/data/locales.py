"""Locale ids and FLORES codes: ``lang_Script_Location`` as in Cultivar.

A *locale* is ``lang_Script_Location`` as in Cultivar (paper 000, Sec. 2.4: "the same language and
writing script codes as FLORES, together with the country name where the data is grounded"), e.g.
``hin_Deva_India``, ``cmn_Hans_Singapore``, ``fra_Latn_Canada``. ``lang_Script`` alone (a FLORES
code such as ``hin_Deva``) is accepted for a set grounded nowhere in particular, as the original
FLORES is. Checks: the language has the shape of an ISO 639-3 code (three lower-case letters; the
code table is not shipped), the script is in :data:`ISO15924`, the location is a name (``US``,
``Canada``, ``Hong_Kong``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from judgekit.errors import InputError

# ISO 15924 codes of the scripts in Unicode 16 (as listed by fontTools.unicodedata.Scripts), plus
# the ISO 15924 variant and combination codes used to label text (Hans, Hant, Jpan, Kore, ...).
_ISO15924_TEXT = """
    Adlm Aghb Ahom Arab Armi Armn Avst Bali Bamu Bass Batk Beng Berf Bhks Bopo Brah Brai Bugi Buhd
    Cakm Cans Cari Cham Cher Chrs Copt Cpmn Cprt Cyrl Deva Diak Dogr Dsrt Dupl Egyp Elba Elym Ethi
    Gara Geor Glag Gong Gonm Goth Gran Grek Gujr Gukh Guru Hang Hani Hano Hatr Hebr Hira Hluw Hmng
    Hmnp Hrkt Hung Ital Java Jurc Kali Kana Kawi Khar Khmr Khoj Kits Knda Krai Kthi Lana Laoo Latn
    Lepc Limb Lina Linb Lisu Lyci Lydi Mahj Maka Mand Mani Marc Medf Mend Merc Mero Mlym Modi Mong
    Mroo Mtei Mult Mymr Nagm Nand Narb Nbat Newa Nkoo Nshu Ogam Olck Onao Orkh Orya Osge Osma Ougr
    Palm Pauc Pcun Perm Phag Phli Phlp Phnx Plrd Prti Rjng Rohg Runr Samr Sarb Saur Seal Sgnw Shaw
    Shrd Sidd Sidt Sind Sinh Sogd Sogo Sora Soyo Sund Sunu Sylo Syrc Tagb Takr Tale Talu Taml Tang
    Tavt Tayo Telu Tfng Tglg Thaa Thai Tibt Tirh Tnsa Todr Tols Toto Tutg Ugar Vaii Vith Wara Wcho
    Xpeo Xsux Yezi Yiii Zanb Zinh Zyyy Zzzz
    Aran Cyrs Geok Hanb Hans Hant Jamo Jpan Kore Latf Latg Syre Syrj Syrn Zmth Zsye Zsym Zxxx
"""
ISO15924 = frozenset(_ISO15924_TEXT.split())

_LOCALE = re.compile(
    r"^(?P<lang>[^_]+)_(?P<script>[^_]+)(?:_(?P<location>[A-Z][A-Za-z-]*(?:_[A-Z][A-Za-z-]*)*))?$"
)


@dataclass(frozen=True)
class Locale:
    """``language_Script[_Location]``: ISO 639-3 language, ISO 15924 script, location name."""

    language: str
    script: str
    location: str | None = None

    @property
    def id(self) -> str:
        """The locale id, e.g. ``fra_Latn_Canada`` (``fra_Latn`` without a location)."""
        return self.flores if self.location is None else f"{self.flores}_{self.location}"

    @property
    def flores(self) -> str:
        """The FLORES language code ``language_Script``, e.g. ``fra_Latn``."""
        return f"{self.language}_{self.script}"

    def __str__(self) -> str:
        return self.id


def parse_locale(
    text: object,
    *,
    path: str | Path | None = None,
    line: int | None = None,
    field: str = "locale",
    need_location: bool = False,
) -> Locale:
    """Parse and check ``lang_Script_Location`` (or ``lang_Script`` unless ``need_location``).

    Raises:
        InputError: located at ``path``/``line``/``field``, saying which part is wrong.
    """
    match = _LOCALE.match(text) if isinstance(text, str) else None
    if match is None:
        problem = (
            "not a locale id lang_Script_Location (e.g. hin_Deva_India, cmn_Hans_Singapore) "
            "or a FLORES code lang_Script (e.g. hin_Deva)"
        )
    elif not re.fullmatch(r"[a-z]{3}", match["lang"]):
        problem = f"language {match['lang']!r} is not an ISO 639-3 code"
    elif match["script"] not in ISO15924:
        problem = f"script {match['script']!r} is not an ISO 15924 code (e.g. Latn, Deva, Hans)"
    elif need_location and match["location"] is None:
        problem = "no location; a localised set needs lang_Script_Location"
    else:
        return Locale(match["lang"], match["script"], match["location"])
    raise InputError(path, f"{text!r}: {problem}", line=line, field=field)


def parse_flores(text: object, **where) -> str:
    """Check a FLORES language code ``lang_Script`` (e.g. ``eng_Latn``) and return it.

    Raises:
        InputError: not ``lang_Script``, or a bad language or script (see :func:`parse_locale`).
    """
    locale = parse_locale(text, **where)
    if locale.location is not None:
        raise InputError(
            where.get("path"),
            f"{text!r} is a locale; a language here is lang_Script (e.g. eng_Latn)",
            line=where.get("line"),
            field=where.get("field"),
        )
    return locale.flores
